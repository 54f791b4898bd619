package graph

import (
	"math"
	"testing"
)

// TestCastData: hand-worked conversions, the edges included.
func TestCastData(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	f := &Data{DType: Float32, Shape: []int{9}, F: []float32{nan, 2.9, -2.9, 1e10, -1e10, 300.5, float32(math.Copysign(0, -1)), inf, -inf}}
	cases := []struct {
		to   DType
		want []int64
	}{
		{Int8, []int64{0, 2, -2, 127, -128, 127, 0, 127, -128}},
		{UInt8, []int64{0, 2, 0, 255, 0, 255, 0, 255, 0}},
		{Int16, []int64{0, 2, -2, 32767, -32768, 300, 0, 32767, -32768}},
		{Int32, []int64{0, 2, -2, math.MaxInt32, math.MinInt32, 300, 0, math.MaxInt32, math.MinInt32}},
		{Int64, []int64{0, 2, -2, 10000000000, -10000000000, 300, 0, math.MaxInt64, math.MinInt64}},
		{Bool, []int64{1, 1, 1, 1, 1, 1, 0, 1, 1}},
	}
	for _, c := range cases {
		got := CastData(f, c.to)
		for i, w := range c.want {
			if got.I[i] != w {
				t.Errorf("%v -> %s = %d, want %d", f.F[i], c.to, got.I[i], w)
			}
		}
	}
	// Integers wrap to narrower types and round once to float32.
	i := &Data{DType: Int64, Shape: []int{4}, I: []int64{300, -129, 16777217, math.MaxInt64}}
	for _, c := range []struct {
		to   DType
		want []int64
	}{{Int8, []int64{44, 127, 1, -1}}, {Int32, []int64{300, -129, 16777217, -1}}, {UInt8, []int64{44, 127, 1, 255}}} {
		got := CastData(i, c.to)
		for k, w := range c.want {
			if got.I[k] != w {
				t.Errorf("%d -> %s = %d, want %d", i.I[k], c.to, got.I[k], w)
			}
		}
	}
	fl := CastData(i, Float32)
	for k, w := range []float32{300, -129, 16777216, 9.223372e18} {
		if fl.F[k] != w {
			t.Errorf("%d -> float32 = %v, want %v", i.I[k], fl.F[k], w)
		}
	}
}
