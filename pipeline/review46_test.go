package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Session 46's review of the ONNX importer, the findings that reached the
// pipeline.

// A valid QDQ model whose activation is quantized per channel (opset 21,
// axis 1) did not compile: the Dequantize was fused into the producer as
// one 256-entry table, which cannot hold three scales. Per channel c with
// scale s_c and zero point 0, x → round_half_even(x/s_c)·s_c → Relu:
// channel 0 (s 0.1): 0.26 → 3 → 0.3, -0.3 → 0 (Relu);
// channel 1 (s 0.2): 0.26 → 1 → 0.2, 0.5 → round(2.5) = 2 → 0.4;
// channel 2 (s 0.05): 0.26 → 5 → 0.25, 10 → 127 (saturated) → 6.35.
func TestPerChannelActivationQDQ46(t *testing.T) {
	b := onnx.NewBuilder("qdq_axis", 21, 1)
	x := b.Input("x", graph.Float32, 1, 3, 1, 2)
	sc := b.Floats("s", 0.1, 0.2, 0.05)
	zp := b.Init("z", &graph.Data{DType: graph.Int8, Shape: []int{3}, I: []int64{0, 0, 0}})
	q := b.Node("QuantizeLinear", []string{x, sc, zp}, onnx.IntAttr("axis", 1))
	d := b.Node("DequantizeLinear", []string{q, sc, zp}, onnx.IntAttr("axis", 1))
	b.Output(b.Node("Relu", []string{d}), graph.Float32)
	in := &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 1, 2}, F: []float32{0.26, -0.3, 0.26, 0.5, 0.26, 10}}
	want := []float32{0.3, 0, 0.2, 0.4, 0.25, 6.35}
	for _, board := range []string{"host", "mps2-an386"} {
		t.Run(board, func(t *testing.T) {
			if board != "host" {
				if testing.Short() {
					t.Skip("QEMU: not in -short")
				}
				needTools(t, board)
			}
			bd, err := LoadBoard(board, "")
			if err != nil {
				t.Fatal(err)
			}
			g, err := onnx.Import("qdq_axis", b.Model(), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := CompileGraph(g, "qdq_axis", Options{Board: bd, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if testing.Short() {
				return
			}
			ex, err := s.Execute([]map[string]*graph.Data{{"x": in}}, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !ex.AllMatch() {
				t.Errorf("the C differs from the interpreter")
			}
			for i, v := range ex.Outputs[0][0].F {
				if d := v - want[i]; d > 1e-6 || d < -1e-6 {
					t.Errorf("y[%d] = %v, want %v", i, v, want[i])
				}
			}
		})
	}
}

// 256 MiB of constants folded from four Range nodes took a host compile
// past 5 GB and Go's out-of-memory crash (exit 2, a goroutine dump).
// Constants over MaxConstBytes are refused before lowering, in one line
// that names the largest: here two of 2^23 floats (32 MiB each, named c0
// and c1, the first by name taken), a bias of 4 floats and a shape of two
// int64: 67,108,896 B.
func TestConstantsOverTheCapRefused46(t *testing.T) {
	g := graph.New("big", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1 << 23}})
	g.Inputs = []string{"x"}
	prev := "x"
	for i, name := range []string{"c1", "c0"} {
		d := graph.NewData(graph.Float32, []int{1 << 23})
		g.AddConst(name, d)
		out := []string{"y0", "y1"}[i]
		g.AddTensor(&graph.Tensor{Name: out, DType: graph.Float32, Shape: []int{1 << 23}})
		g.AddNode(&graph.Node{Name: "add_" + name, Op: graph.Add, Inputs: []string{prev, name}, Outputs: []string{out}, Attrs: &graph.BinaryAttrs{}})
		prev = out
	}
	g.AddConst("bias", graph.NewData(graph.Float32, []int{4}))
	g.AddTensor(&graph.Tensor{Name: "r", DType: graph.Float32, Shape: []int{1 << 21, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1 << 21, 4}})
	g.AddConst("shape", &graph.Data{DType: graph.Int64, Shape: []int{2}, I: []int64{1 << 21, 4}})
	g.AddNode(&graph.Node{Name: "reshape", Op: graph.Reshape, Inputs: []string{prev, "shape"}, Outputs: []string{"r"}})
	g.AddNode(&graph.Node{Name: "add_bias", Op: graph.Add, Inputs: []string{"r", "bias"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Outputs = []string{"y"}
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = CompileGraph(g, "big", Options{Board: b, Version: "test"})
	want := `the model's constants take 67,108,896 B (the largest, "c0", 33,554,432 B); mcugen generates C for at most 64 MiB of constants`
	if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want one line ending %q", err, want)
	}
}
