package onnx_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

func lpNormModel(shape []int, attrs ...*onnx.Attribute) *onnx.Builder {
	bl := onnx.NewBuilder("lpnorm", 13, 1)
	x := bl.Input("x", graph.Float32, shape...)
	bl.Output(bl.Node("LpNormalization", []string{x}, attrs...), graph.Float32)
	return bl
}

// LpNormalization was refused ("unsupported op"). Hand-worked:
//   - rows (3, 4) and (0, −5), p = 2 over the last axis: norms 5 and 5, so
//     (0.6, 0.8) and (0, −1);
//   - the same rows, p = 1: norms 7 and 5, so (3/7, 4/7) and (0, −1);
//   - NCHW [1, 2, 1, 2] over axis 1 (the channels, which the importer keeps
//     last): pixel 0 holds (1, 2), pixel 1 (2, −2), p = 2: norms √5 and √8,
//     so x[0,0,0,:] = (1/√5, 2/√8), x[0,1,0,:] = (2/√5, −2/√8).
func TestLpNormalization(t *testing.T) {
	rows := f32([]int{2, 2}, 3, 4, 0, -5)
	got := runOne(t, lpNormModel([]int{2, 2}), map[string]*graph.Data{"x": rows})
	checkData(t, "p=2 (default), axis -1", got[0], graph.Float32, []int{2, 2}, []float64{0.6, 0.8, 0, -1})
	got = runOne(t, lpNormModel([]int{2, 2}, onnx.IntAttr("p", 1), onnx.IntAttr("axis", 1)), map[string]*graph.Data{"x": rows})
	checkData(t, "p=1, axis 1", got[0], graph.Float32, []int{2, 2}, []float64{3.0 / 7, 4.0 / 7, 0, -1})

	nchw := f32([]int{1, 2, 1, 2}, 1, 2, 2, -2)
	got = runOne(t, lpNormModel([]int{1, 2, 1, 2}, onnx.IntAttr("axis", 1)), map[string]*graph.Data{"x": nchw})
	r5, r8 := math.Sqrt(5), math.Sqrt(8)
	checkData(t, "NCHW axis 1", got[0], graph.Float32, []int{1, 2, 1, 2}, []float64{1 / r5, 2 / r8, 2 / r5, -2 / r8})

	// The generated C agrees with the interpreter (sanitized host build).
	x := sanitizedHostRun(t, lpNormModel([]int{1, 2, 1, 2}, onnx.IntAttr("axis", 1)).Model(), "lpnorm",
		[]map[string]*graph.Data{{"x": nchw}}, time.Minute)
	checkData(t, "NCHW axis 1, C", x.Outputs[0][0], graph.Float32, []int{1, 2, 1, 2}, []float64{1 / r5, 2 / r8, 2 / r5, -2 / r8})
}

// p other than 1 and 2 is refused with the node and the reason.
func TestLpNormalizationBadP(t *testing.T) {
	_, err := onnx.Import("m", lpNormModel([]int{2, 2}, onnx.IntAttr("p", 3)).Model(), onnx.Options{})
	if err == nil || !strings.Contains(err.Error(), "LpNormalization p = 3") || !strings.Contains(err.Error(), "LpNormalization") {
		t.Fatalf("p = 3: %v", err)
	}
}
