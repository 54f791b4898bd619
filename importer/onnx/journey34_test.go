package onnx_test

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Resize of inputs of rank 1 to 3 was refused ("1-D Resize (input rank
// 3)", "Resize of a rank-2 input": onnx2c's 1-D linear Resize tests, audio
// decoders). Hand-worked values:
//   - [1,5] = 1..5 to [1,4], linear, half_pixel: source (i + 0.5)·5/4 − 0.5
//     = 0.125, 1.375, 2.625, 3.875, so 1.125, 2.375, 3.625, 4.875 (onnx2c's
//     expected output, from ONNX Runtime);
//   - [1,2,2] = ((1, 2), (3, 4)) by scales (1, 1, 2), nearest, asymmetric,
//     floor: each value twice along the last axis;
//   - [4] = (0, 3, 6, 9) to [2], linear, align_corners: sources 0 and 3,
//     so 0 and 9.
func TestResizeLowRank(t *testing.T) {
	str := func(name, v string) *onnx.Attribute {
		return &onnx.Attribute{Name: name, Type: onnx.AttrString, S: []byte(v)}
	}
	bl := onnx.NewBuilder("resize2", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 5)
	bl.Output(bl.Node("Resize", []string{x, "", "", bl.Ints("sizes", 1, 4)}, str("mode", "linear")), graph.Float32)
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 5}, 1, 2, 3, 4, 5)})
	checkData(t, "rank 2, linear", got[0], graph.Float32, []int{1, 4}, []float64{1.125, 2.375, 3.625, 4.875})

	bl = onnx.NewBuilder("resize3", 13, 1)
	x = bl.Input("x", graph.Float32, 1, 2, 2)
	bl.Output(bl.Node("Resize", []string{x, "", bl.Floats("scales", 1, 1, 2)},
		str("mode", "nearest"), str("coordinate_transformation_mode", "asymmetric"), str("nearest_mode", "floor")), graph.Float32)
	got = runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 2, 2}, 1, 2, 3, 4)})
	checkData(t, "rank 3, nearest", got[0], graph.Float32, []int{1, 2, 4}, []float64{1, 1, 2, 2, 3, 3, 4, 4})

	bl = onnx.NewBuilder("resize1", 13, 1)
	x = bl.Input("x", graph.Float32, 4)
	bl.Output(bl.Node("Resize", []string{x, "", "", bl.Ints("sizes", 2)},
		str("mode", "linear"), str("coordinate_transformation_mode", "align_corners")), graph.Float32)
	got = runOne(t, bl, map[string]*graph.Data{"x": f32([]int{4}, 0, 3, 6, 9)})
	checkData(t, "rank 1, align_corners", got[0], graph.Float32, []int{2}, []float64{0, 9})
}
