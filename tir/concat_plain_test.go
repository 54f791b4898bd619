package tir_test

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir"
)

// TestConcatPlainInt32: unquantized int32 inputs of the output's type are
// copied (TFLite Micro's audio front end concatenates int32 frames; the
// lowering asked for quantization parameters and refused the model).
// (1, -2) and (2147483647, -2147483648, 7) concatenate to the five values.
func TestConcatPlainInt32(t *testing.T) {
	g := graph.New("concat32", "tflite")
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int32, Shape: []int{2}})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int32, Shape: []int{3}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int32, Shape: []int{5}})
	g.AddNode(&graph.Node{Name: "y", Op: graph.Concat, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.ConcatAttrs{Axis: 0}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	a, b := graph.NewData(graph.Int32, []int{2}), graph.NewData(graph.Int32, []int{3})
	copy(a.I, []int64{1, -2})
	copy(b.I, []int64{2147483647, -2147483648, 7})
	in := map[string]*graph.Data{"a": a, "b": b}
	want := []int64{1, -2, 2147483647, -2147483648, 7}
	ref, err := interp.Run(g, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"generic", "dsp", "mve"} {
		target, err := tir.TargetByName(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tir.RunModule(lowerRequant(t, g, target), in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, w := range want {
			if got["y"].I[i] != w || ref["y"].I[i] != w {
				t.Fatalf("%s: y = %v, interpreter %v, want %v", name, got["y"].I, ref["y"].I, want)
			}
		}
	}
}
