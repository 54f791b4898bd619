package onnx_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// The reference interpreter's ReduceMax and ReduceMin carry a NaN through
// wherever it is, as numpy's max and min (and ONNX) do: Go's math.Max put
// +Inf over NaN, so [NaN, 1, -Inf, +Inf] gave +Inf and [-0, 3, NaN, -2]
// NaN (review finding).
func TestReduceMaxMinCarryNaN(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, op := range []string{"ReduceMax", "ReduceMin"} {
		bl := onnx.NewBuilder("r", 13, 1)
		x := bl.Input("x", graph.Float32, 1, 4)
		bl.Output(bl.Node(op, []string{x}, onnx.IntsAttr("axes", 1), onnx.IntAttr("keepdims", 0)), graph.Float32)
		for _, v := range [][]float32{{nan, 1, -inf, inf}, {-0.0, 3, nan, -2}, {inf, -inf, 1, nan}} {
			got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 4}, v...)})
			if len(got[0].F) != 1 || got[0].F[0] == got[0].F[0] {
				t.Errorf("%s %v: %v, want NaN", op, v, got[0].F)
			}
		}
		got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 4}, 2, -inf, inf, 5)})
		want := inf
		if op == "ReduceMin" {
			want = -inf
		}
		if got[0].F[0] != want {
			t.Errorf("%s without NaN: %v, want %v", op, got[0].F, want)
		}
	}
}
