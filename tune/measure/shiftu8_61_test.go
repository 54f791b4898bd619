package measure

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
)

// A uint8 model whose build keeps its layers uint8 (here a RAM budget the
// int8 form does not fit) is tuned in that form: its convolution is one
// kernel, built uint8 alone too. Cut out of the model and built under the
// tuner's options (no budget), it was shifted into three kernels, and
// Kernels passed it over without a word (review).
func TestKernelsOfAUint8Build61(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 5))
	g := graph.New("u8pw", "tflite")
	q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.UInt8, Shape: []int{1, 16, 16, 16}, Quant: q(0.02, 128)})
	w := graph.NewData(graph.UInt8, []int{16, 1, 1, 16})
	for i := range w.I {
		w.I[i] = int64(r.IntN(256))
	}
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.UInt8, Shape: w.Shape, Quant: q(0.004, 110), Data: w})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.UInt8, Shape: []int{1, 16, 16, 16}, Quant: q(0.05, 7)})
	g.AddNode(&graph.Node{Name: "pw", Op: graph.Conv2D, Inputs: []string{"x", "w"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b, Version: "test"}
	s, err := pipeline.CompileGraph(g, "u8pw", opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.RAMBudget = int64(s.Module.ArenaBytes) - 1 // the int8 form's arena, less a byte
	if s, err = pipeline.CompileGraph(g, "u8pw", opt); err != nil {
		t.Fatal(err)
	}
	if len(s.Module.Funcs) != 1 || !strings.HasSuffix(s.Module.Funcs[0].Name, "_u8") {
		t.Fatalf("the budgeted build: %d kernels, the first %s; want one uint8 convolution", len(s.Module.Funcs), s.Module.Funcs[0].Name)
	}
	ks, err := Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 1 || ks[0].Op != "conv2d" || !strings.HasSuffix(ks[0].Func, "_u8") {
		var got []string
		for _, k := range ks {
			got = append(got, k.Func)
		}
		t.Errorf("kernels %v: want the uint8 convolution", got)
	}
}
