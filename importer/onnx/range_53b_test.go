package onnx

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// rangeModel is a model whose output is ONNX Range(start, limit, delta) of
// int64 scalars.
func rangeModel(start, limit, delta int64) *Builder {
	b := NewBuilder("range", 13, 1)
	s := func(name string, v int64) string {
		return b.Init(name, &graph.Data{DType: graph.Int64, Shape: []int{}, I: []int64{v}})
	}
	b.Output(b.Node("Range", []string{s("a", start), s("l", limit), s("d", delta)}), graph.Int64)
	return b
}

// An int64 Range is computed in integers: from INT64_MAX − 2 to INT64_MAX
// by 1 is [INT64_MAX − 2, INT64_MAX − 1] (in float64 all three bounds were
// 2^63: no elements, and a start of 2^63 converted back as the build
// machine does); down from INT64_MIN + 5 by −2 to INT64_MIN is
// [INT64_MIN + 5, INT64_MIN + 3, INT64_MIN + 1]; across the whole int64
// range by 2^62 it is [INT64_MIN, −2^62, 0, 2^62] (the elements' i·delta
// wraps, their sum does not); 2^53 + 1 by 1 to 2^53 + 3 keeps its odd
// low bit (float64 does not). Its count is still bounded.
func TestRangeInt64Exact53b(t *testing.T) {
	for _, c := range []struct {
		start, limit, delta int64
		want                []int64
	}{
		{math.MaxInt64 - 2, math.MaxInt64, 1, []int64{math.MaxInt64 - 2, math.MaxInt64 - 1}},
		{math.MinInt64 + 5, math.MinInt64, -2, []int64{math.MinInt64 + 5, math.MinInt64 + 3, math.MinInt64 + 1}},
		{math.MinInt64, math.MaxInt64, 1 << 62, []int64{math.MinInt64, -1 << 62, 0, 1 << 62}},
		{1<<53 + 1, 1<<53 + 3, 1, []int64{1<<53 + 1, 1<<53 + 2}},
		{3, 10, 3, []int64{3, 6, 9}},
		{-1, -7, -2, []int64{-1, -3, -5}},
	} {
		b := rangeModel(c.start, c.limit, c.delta)
		g, err := Import("range", b.Model(), Options{})
		if err != nil {
			t.Errorf("Range(%d, %d, %d): %v", c.start, c.limit, c.delta, err)
			continue
		}
		out := g.Tensors[g.Outputs[0]]
		if out == nil || out.Data == nil {
			t.Errorf("Range(%d, %d, %d): the output is not a constant", c.start, c.limit, c.delta)
			continue
		}
		if fmt.Sprint(out.Data.I) != fmt.Sprint(c.want) {
			t.Errorf("Range(%d, %d, %d) = %v, want %v", c.start, c.limit, c.delta, out.Data.I, c.want)
		}
	}
	refused(t, rangeModel(math.MinInt64, math.MaxInt64, 1), "Range_1", "more than 16777216 elements")
	refused(t, rangeModel(0, 5, 0), "Range_1", "Range delta is 0")
}
