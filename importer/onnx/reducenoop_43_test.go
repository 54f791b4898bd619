package onnx_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A reduction with noop_with_empty_axes and no axes reduces nothing but
// applies its function to each element (ONNX's clarified spec; it returned
// x for all of them, a review finding). Hand-worked on x = (-2, 3), and on
// (1, e) for LogSum: SumSquare (4, 9), L1 and L2 (2, 3), LogSum (0, 1),
// Sum and Max x itself.
func TestReduceNoopAppliesElementFunction(t *testing.T) {
	for _, c := range []struct {
		op   string
		x    []float32
		want []float64
	}{
		{"ReduceSumSquare", []float32{-2, 3}, []float64{4, 9}},
		{"ReduceL1", []float32{-2, 3}, []float64{2, 3}},
		{"ReduceL2", []float32{-2, 3}, []float64{2, 3}},
		{"ReduceLogSum", []float32{1, math.E}, []float64{0, 1}},
		{"ReduceSum", []float32{-2, 3}, []float64{-2, 3}},
		{"ReduceMax", []float32{-2, 3}, []float64{-2, 3}},
	} {
		bl := onnx.NewBuilder("noop", 18, 1)
		x := bl.Input("x", graph.Float32, 1, 2)
		e := bl.Init("e", &graph.Data{DType: graph.Int64, Shape: []int{0}})
		bl.Output(bl.Node(c.op, []string{x, e}, onnx.IntAttr("noop_with_empty_axes", 1)), graph.Float32, 1, 2)
		got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 2}, c.x...)})
		checkData(t, c.op, got[0], graph.Float32, []int{1, 2}, c.want)
	}
}
