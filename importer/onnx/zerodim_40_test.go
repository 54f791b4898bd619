package onnx

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An input axis the model gives size 0 (as exporters write an unknown
// size) is read as free, consistently (review finding: it was set to 1 with
// a "bind it with --shape" warning, and every --shape binding was refused,
// 0 as not positive and any other size as "the model fixes it to 0").
func TestZeroDimIsFree40(t *testing.T) {
	b := NewBuilder("zerodim", 13, 1)
	x := b.Input("v", graph.Float32, 1, 0, 4)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	model := b.Model().Marshal()
	var warns []string
	g, err := Decode("zerodim", model, Options{Warn: func(s string) { warns = append(warns, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Tensors["v"].Shape; !slices.Equal(got, []int{1, 1, 4}) {
		t.Errorf("unbound: shape %v, want [1 1 4]", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `input "v": axis 1 has size 0, read as a free dimension: set to 1; bind it with --shape v=...`) {
		t.Errorf("warnings %q", warns)
	}
	g, err = Decode("zerodim", model, Options{Shapes: map[string][]int{"v": {1, 3, 4}}})
	if err != nil {
		t.Fatalf("--shape v=1,3,4: %v", err)
	}
	if got := g.Tensors["v"].Shape; !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("bound: shape %v, want [1 3 4]", got)
	}
	// A negative size (some exporters write -1) is a free dimension, not
	// "size 0".
	neg := NewBuilder("negdim", 13, 1)
	nx := neg.Input("v", graph.Float32, 1, 2, 4)
	neg.Model().Graph.Input[0].Type.Shape[1] = Dim{Value: -1, HasValue: true}
	neg.Output(neg.Node("Relu", []string{nx}), graph.Float32)
	warns = nil
	if _, err := Decode("negdim", neg.Model().Marshal(), Options{Warn: func(s string) { warns = append(warns, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `input "v": a free dimension (axis 1) set to 1`) {
		t.Errorf("dim_value -1: warnings %q", warns)
	}
	// A fixed size other than 0 still binds only to itself.
	if _, err := Decode("zerodim", model, Options{Shapes: map[string][]int{"v": {1, 3, 5}}}); err == nil || !strings.Contains(err.Error(), "dimension 2 is 5, the model fixes it to 4") {
		t.Errorf("--shape v=1,3,5: %v", err)
	}
}
