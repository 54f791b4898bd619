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
