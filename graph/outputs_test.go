package graph

import (
	"slices"
	"testing"
)

// CopyAliasedOutputs: an output that is an input, and an output listed a second time,
// each get a fresh tensor written by a same-shape Reshape from the aliased one (names
// picked by UniqueName, so an existing x_1 is skipped); the first listing of an output
// and other outputs stay as they are; a second call changes nothing.
func TestCopyAliasedOutputs(t *testing.T) {
	g := New("m", "onnx")
	for _, n := range []string{"x", "x_1", "y"} {
		g.AddTensor(&Tensor{Name: n, DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.5}, ZeroPoint: []int32{3}}})
	}
	g.AddNode(&Node{Name: "neg", Op: Reshape, Inputs: []string{"x"}, Outputs: []string{"x_1"}})
	g.AddNode(&Node{Name: "r", Op: Reshape, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs = []string{"x"}
	g.Outputs = []string{"x", "x_1", "y", "y"}
	g.CopyAliasedOutputs()
	if want := []string{"x_2", "x_1", "y", "y_1"}; !slices.Equal(g.Outputs, want) {
		t.Fatalf("outputs %v, want %v", g.Outputs, want)
	}
	for out, src := range map[string]string{"x_2": "x", "y_1": "y"} {
		p := g.Producers()[out]
		if p == nil || p.Op != Reshape || p.Inputs[0] != src {
			t.Errorf("%s: producer %+v, want a Reshape of %s", out, p, src)
		}
		if ct, st := g.Tensors[out], g.Tensors[src]; ct.DType != st.DType || !slices.Equal(ct.Shape, st.Shape) || ct.Quant != st.Quant {
			t.Errorf("%s: %+v, want %s's dtype, shape and quantization", out, ct, src)
		}
	}
	nodes := len(g.Nodes)
	g.CopyAliasedOutputs()
	if len(g.Nodes) != nodes {
		t.Errorf("a second call added %d nodes", len(g.Nodes)-nodes)
	}
}
