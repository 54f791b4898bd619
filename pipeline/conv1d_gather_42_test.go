package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// conv1x graph is a 1-D convolution (kernel 1×k, padding k/2 left and
// right) over a 1×w×cin int8 input to cout channels, weights across the
// int8 range and per-channel scales.
func conv1xGraph(w, cin, cout, k int) *graph.Graph {
	g := graph.New("conv1x", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 1, w, cin}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	wd := graph.NewData(graph.Int8, []int{cout, 1, k, cin})
	for i := range wd.I {
		wd.I[i] = int64(i*37%255 - 127)
	}
	ws := make([]float32, cout)
	for i := range ws {
		ws[i] = 0.002 + 0.001*float32(i%5)
	}
	g.AddConst("w", wd).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, cout)}
	b := graph.NewData(graph.Int32, []int{cout})
	for i := range b.I {
		b.I[i] = int64(50*i - 100)
	}
	g.AddConst("b", b)
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 1, w, cout}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{-128}}})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Left: k / 2, Right: k / 2}, Group: 1, Act: graph.ActRelu}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// A 1-D convolution in the dsp row form gathers its one window segment into
// a column by default (rows_gather): fewer instructions on the M4 than the
// segmented helper, bit-exact either way. Review finding: session 24's
// defaults left the segmented helper there, and a Conv1d 3→8 k5 net's first
// layer took 18,531 instructions where the gather takes 12,452 (the net
// 30,336 → 24,257).
func TestConv1DGathersByDefault(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct{ w, cin, cout, k int }{{64, 3, 8, 5}, {32, 8, 16, 3}} {
		t.Run(fmt.Sprintf("w%d-c%d-%d-k%d", c.w, c.cin, c.cout, c.k), func(t *testing.T) {
			count := map[string]int64{}
			for name, knobs := range map[string]map[string]map[string]int{"default": nil, "segmented": {"conv2d": {"rows_gather": 0}}} {
				s, err := CompileGraph(conv1xGraph(c.w, c.cin, c.cout, c.k), "conv1x", Options{Board: b, Target: "dsp", Knobs: knobs, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				x, err := s.Execute(append(RandomInputs(s.Graph, 3, 5), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("%s: outputs differ from the reference interpreter", name)
				}
				count[name] = x.Instructions()
			}
			if count["default"] >= count["segmented"] {
				t.Errorf("default %d instructions, the segmented helper %d: the gather should take fewer", count["default"], count["segmented"])
			}
			t.Logf("default (gather) %d, segmented %d", count["default"], count["segmented"])
		})
	}
}
