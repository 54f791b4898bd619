package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Products of constants are folded at compile time whatever their size; they
// were refused ("constant input is not supported", naming a node of the
// lowering) where a fully connected layer had no bias, or where its output
// was larger than its inputs (review findings). Hand-worked, on the host:
//   - a GRU called without hx as PyTorch exports it, its h0 constant (here
//     1, hidden size 1, one step): x = 0.5, W = (z 0, r 0, h 1), R = (0, 0,
//     1), no bias: z = r = σ(0) = 0.5, h̃ = tanh(0.5 + r·h0·1) = tanh(1),
//     h = (1 − z)·h̃ + z·h0 = 0.5·tanh(1) + 0.5;
//   - x + A·B with A = (1, 2, 3)ᵀ and B = (1, 10, 100, 1000) constant, an
//     outer product of 12 values from 7, at x = 0.
func TestConstantProductsFold(t *testing.T) {
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	needTools(t, "host")
	run := func(bl *onnx.Builder, feeds map[string]*graph.Data) []float32 {
		t.Helper()
		g, err := onnx.Import("m", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := CompileGraph(g, "m", Options{Board: b, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Execute([]map[string]*graph.Data{feeds}, t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.AllMatch() {
			t.Errorf("the C differs from the interpreter")
		}
		return x.Outputs[0][0].F
	}
	f32 := func(shape []int, v ...float32) *graph.Data {
		return &graph.Data{DType: graph.Float32, Shape: shape, F: v}
	}
	gru := onnx.NewBuilder("gru", 14, 1)
	x := gru.Input("x", graph.Float32, 1, 1, 1)
	w := gru.Init("W", f32([]int{1, 3, 1}, 0, 0, 1))
	r := gru.Init("R", f32([]int{1, 3, 1}, 0, 0, 1))
	h0 := gru.Init("h0", f32([]int{1, 1, 1}, 1))
	outs := gru.NodeN("GRU", []string{x, w, r, "", "", h0}, 2, onnx.IntAttr("hidden_size", 1))
	gru.Output(outs[1], graph.Float32, 1, 1, 1)
	got := run(gru, map[string]*graph.Data{"x": f32([]int{1, 1, 1}, 0.5)})
	if want := 0.5*math.Tanh(1) + 0.5; len(got) != 1 || math.Abs(float64(got[0])-want) > 1e-6 {
		t.Errorf("GRU with a constant h0: %v, want %.8f", got, want)
	}

	mm := onnx.NewBuilder("outer", 13, 1)
	in := mm.Input("x", graph.Float32, 3, 4)
	a := mm.Init("A", f32([]int{3, 1}, 1, 2, 3))
	bb := mm.Init("B", f32([]int{1, 4}, 1, 10, 100, 1000))
	mm.Output(mm.Node("Add", []string{in, mm.Node("MatMul", []string{a, bb})}), graph.Float32, 3, 4)
	got = run(mm, map[string]*graph.Data{"x": graph.NewData(graph.Float32, []int{3, 4})})
	want := []float32{1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("x + A·B at x = 0: %v, want %v", got, want)
		}
	}
}
