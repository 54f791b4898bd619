package onnx_test

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// LRN and MeanVarianceNormalization were refused ("unsupported ops"); the
// backend tests test_lrn, test_lrn_default and test_mvn now pass. Their
// windows are symmetric; an even size is not, and is hand-worked here:
//   - LRN size 2 over channels (1, 2, 3): windows c..c+1, sums of squares
//     5, 13, 9; alpha 2, beta 1, bias 1 give 1 + (2/2)·sum = 6, 14, 10, so
//     1/6, 2/14, 3/10;
//   - MVN over axis 3 of (1, 2, 3, 4): mean 2.5, variance 1.25, so
//     ±1.5/√1.25 and ±0.5/√1.25.
func TestLRNAndMVN(t *testing.T) {
	fl := func(name string, v float32) *onnx.Attribute {
		return &onnx.Attribute{Name: name, Type: onnx.AttrFloat, F: v}
	}
	bl := onnx.NewBuilder("lrn2", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 3, 1, 1)
	bl.Output(bl.Node("LRN", []string{x}, &onnx.Attribute{Name: "size", Type: onnx.AttrInt, I: 2},
		fl("alpha", 2), fl("beta", 1), fl("bias", 1)), graph.Float32)
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 3, 1, 1}, 1, 2, 3)})
	checkData(t, "LRN size 2", got[0], graph.Float32, []int{1, 3, 1, 1}, []float64{1.0 / 6, 2.0 / 14, 3.0 / 10})

	bl = onnx.NewBuilder("mvn", 13, 1)
	x = bl.Input("x", graph.Float32, 1, 1, 1, 4)
	bl.Output(bl.Node("MeanVarianceNormalization", []string{x}, &onnx.Attribute{Name: "axes", Type: onnx.AttrInts, Ints: []int64{3}}), graph.Float32)
	got = runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 1, 1, 4}, 1, 2, 3, 4)})
	s := 1.1180339887498949
	checkData(t, "MVN axis 3", got[0], graph.Float32, []int{1, 1, 1, 4}, []float64{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s})
}
