package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A QGemm whose scales are Constant nodes in their scalar form
// (value_float, as exporters write them) was refused: "input 1 (a scale)
// is not a constant" (the rewrite read only a Constant's value attribute).
// By hand: x = [1, 2] at scale 0.5 is [2, 4]; B = [[3, -1], [2, 2]] at scale
// 0.25 is [[0.75, -0.25], [0.5, 0.5]] (transB); C = [4, -8] at scale
// 0.5·0.25 is [0.5, -1]; y = [0.75 − 0.5 + 0.5, 0.5 + 1 − 1] = [0.75, 0.5]
// at scale 0.125 is [6, 4].
func TestQGemmScalesAsValueFloat50(t *testing.T) {
	bl := onnx.NewBuilder("qgemm_vf", 13, 1)
	bl.Model().OpsetImport = append(bl.Model().OpsetImport, onnx.OpsetID{Domain: "com.microsoft", Version: 1})
	x := bl.Input("x", graph.Float32, 1, 2)
	scale := func(v float32) string { return bl.Node("Constant", nil, onnx.FloatAttr("value_float", v)) }
	zero := func() string {
		return bl.Node("Constant", nil, onnx.TensorAttr("value", &graph.Data{DType: graph.Int8, Shape: []int{}, I: []int64{0}}))
	}
	xs, ws, ys := scale(0.5), scale(0.25), scale(0.125)
	q := bl.Node("QuantizeLinear", []string{x, xs, zero()})
	w := bl.Init("w", &graph.Data{DType: graph.Int8, Shape: []int{2, 2}, I: []int64{3, -1, 2, 2}})
	c := bl.Init("c", &graph.Data{DType: graph.Int32, Shape: []int{2}, I: []int64{4, -8}})
	yz := zero()
	y := msNode(bl, "QGemm", []string{q, xs, zero(), w, ws, zero(), c, ys, yz}, onnx.IntAttr("transB", 1))
	bl.Output(bl.Node("DequantizeLinear", []string{y, ys, yz}), graph.Float32)
	got := msRun(t, bl, &graph.Data{DType: graph.Float32, Shape: []int{1, 2}, F: []float32{1, 2}})
	wantFloats(t, "QGemm", got, 0.75, 0.5)
}

// A QGemm with alpha ≠ 1 ran as a float FullyConnected with Muls and an
// Add (Gemm's alpha and beta): alpha now goes into B's and C's scales and
// the layer folds to int8 (review: 3,529 → 1,988 instructions on the M4).
// By hand, alpha 0.5: x = [1, 2] at 0.5 is [2, 4]; B = [[3, -1], [2, 2]] at
// 0.25 (transB); A·B = [0.25, 1.5], times alpha [0.125, 0.75]; C = [4, -8]
// at alpha·0.5·0.25 is [0.25, -0.5]; y = [0.375, 0.25], at 0.125 [3, 2].
func TestQGemmAlphaFolds50(t *testing.T) {
	bl, q := msModel("qgemm_alpha", []int{1, 2}, 0.5, graph.Int8, 0)
	w := bl.Init("w", &graph.Data{DType: graph.Int8, Shape: []int{2, 2}, I: []int64{3, -1, 2, 2}})
	c := bl.Init("c", &graph.Data{DType: graph.Int32, Shape: []int{2}, I: []int64{4, -8}})
	ins := []string{q, "qgemm_alpha_xs", "qgemm_alpha_xz", w, bl.Scalar("ws", graph.Float32, 0.25), bl.Scalar("wz", graph.Int8, 0), c,
		bl.Scalar("ys", graph.Float32, 0.125), bl.Scalar("yz", graph.Int8, 0)}
	y := msNode(bl, "QGemm", ins, onnx.IntAttr("transB", 1), onnx.FloatAttr("alpha", 0.5))
	msOut(bl, y, 0.125, graph.Int8, 0)
	got := msRun(t, bl, &graph.Data{DType: graph.Float32, Shape: []int{1, 2}, F: []float32{1, 2}})
	wantFloats(t, "QGemm alpha 0.5", got, 0.375, 0.25)
}
