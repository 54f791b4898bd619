package onnx_test

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// ConvTranspose with output_shape and auto_pad SAME_UPPER or SAME_LOWER was
// refused ("auto_pad \"SAME_UPPER\""). Hand-worked: x and w all ones, 3×3,
// stride 2: the full 7×7 output holds n[r]·n[c] with n = 1 1 2 1 2 1 1
// (the taps landing on row r); output_shape 6×6 drops one row and column,
// at the end for SAME_UPPER and at the start for SAME_LOWER.
func TestConvTransposeSameWithOutputShape(t *testing.T) {
	n := []float64{1, 1, 2, 1, 2, 1, 1}
	for _, c := range []struct {
		pad   string
		first int
	}{{"SAME_UPPER", 0}, {"SAME_LOWER", 1}} {
		bl := onnx.NewBuilder("ct", 13, 1)
		x := bl.Input("x", graph.Float32, 1, 1, 3, 3)
		w := bl.Init("w", f32([]int{1, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1))
		bl.Output(bl.Node("ConvTranspose", []string{x, w}, onnx.IntsAttr("strides", 2, 2), onnx.IntsAttr("output_shape", 6, 6),
			onnx.StringAttr("auto_pad", c.pad)), graph.Float32)
		ones := f32([]int{1, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1)
		var want []float64
		for r := 0; r < 6; r++ {
			for q := 0; q < 6; q++ {
				want = append(want, n[r+c.first]*n[q+c.first])
			}
		}
		got := runOne(t, bl, map[string]*graph.Data{"x": ones})
		checkData(t, c.pad, got[0], graph.Float32, []int{1, 1, 6, 6}, want)
		xc := sanitizedHostRun(t, bl.Model(), "ct_"+c.pad, []map[string]*graph.Data{{"x": ones}}, time.Minute)
		checkData(t, c.pad+", C", xc.Outputs[0][0], graph.Float32, []int{1, 1, 6, 6}, want)
	}
}
