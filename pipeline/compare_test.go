package pipeline

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Compare's float rule, case by case: 1e-5 relative with a 1e-6 floor,
// equal infinities and NaN against NaN match, NaN against a number does not.
func TestCompareFloats(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		got, want float32
		ok        bool
	}{
		{1, 1, true},
		{1000.009, 1000, true},
		{1000.02, 1000, false},
		{5e-7, 0, true},
		{2e-6, 0, false},
		{nan, nan, true},
		{nan, 1, false},
		{1, nan, false},
		{inf, inf, true},
		{inf, -inf, false},
		{inf, 1e30, false},
	}
	for _, c := range cases {
		g := &graph.Data{DType: graph.Float32, Shape: []int{1}, F: []float32{c.got}}
		w := &graph.Data{DType: graph.Float32, Shape: []int{1}, F: []float32{c.want}}
		if ok, d := Compare(g, w); ok != c.ok {
			t.Errorf("Compare(%v, %v) = %v (diff %v), want %v", c.got, c.want, ok, d, c.ok)
		}
	}
}

// CompareModel's rule: 1e-5 of the larger of the element and the tensor's
// largest magnitude, hand-worked on a tensor whose largest value is 0.5
// (so 5e-6 + 1e-6 = 6e-6 is allowed everywhere in it), where Compare
// allows 1e-5·|b| + 1e-6 element by element.
func TestCompareModel(t *testing.T) {
	want := []float32{0.5, 0.001, 0, -0.25}
	for _, c := range []struct {
		got           []float32
		model, strict bool
	}{
		{[]float32{0.5, 0.001, 0, -0.25}, true, true},
		{[]float32{0.500005, 0.001005, 5.9e-6, -0.250005}, true, false}, // 5e-6 off an element near 0.001: 1e-5 of the tensor
		{[]float32{0.5, 0.001007, 0, -0.25}, false, false},              // 7e-6 > 6e-6
		{[]float32{0.5, 0.001, 6.5e-6, -0.25}, false, false},
		{[]float32{0.5000055, 0.001, 0, -0.25}, true, true}, // 5.5e-6 <= 1e-5·0.5 + 1e-6 either way
	} {
		g := &graph.Data{DType: graph.Float32, Shape: []int{4}, F: c.got}
		w := &graph.Data{DType: graph.Float32, Shape: []int{4}, F: want}
		if ok, _ := CompareModel(g, w); ok != c.model {
			t.Errorf("CompareModel(%v) = %v, want %v", c.got, ok, c.model)
		}
		if ok, _ := Compare(g, w); ok != c.strict {
			t.Errorf("Compare(%v) = %v, want %v", c.got, ok, c.strict)
		}
	}
	// Integers stay exact.
	gi := &graph.Data{DType: graph.Int8, Shape: []int{2}, I: []int64{1, 100}}
	wi := &graph.Data{DType: graph.Int8, Shape: []int{2}, I: []int64{1, 101}}
	if ok, _ := CompareModel(gi, wi); ok {
		t.Error("CompareModel accepts integers that differ")
	}
}
