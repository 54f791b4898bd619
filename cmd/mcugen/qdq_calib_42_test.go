package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// --calib (or --calib-random) on a QDQ model is ignored with a warning,
// whatever float nodes its folding leaves (review finding: a Sigmoid whose
// output is quantized otherwise than TFLite's stayed float, and --calib then
// failed with quant's internal "fold it with FoldQDQ"). Such a Sigmoid folds
// to an int8 table since session 59; a Softmax quantized so still stays.
func TestCalibOnQDQModelIsIgnored(t *testing.T) {
	b := onnx.NewBuilder("qdqsig", 13, 1)
	scalar := b.Scalar
	x := b.Input("x", graph.Float32, 1, 8)
	s1, z1 := scalar("s1", graph.Float32, 0.02), scalar("z1", graph.Int8, 0)
	s2, z2 := scalar("s2", graph.Float32, 0.003), scalar("z2", graph.Int8, 5) // not TFLite's softmax parameters
	q := b.Node("QuantizeLinear", []string{x, s1, z1})
	d := b.Node("DequantizeLinear", []string{q, s1, z1})
	sg := b.Node("Softmax", []string{d})
	q2 := b.Node("QuantizeLinear", []string{sg, s2, z2})
	b.Output(b.Node("DequantizeLinear", []string{q2, s2, z2}), graph.Float32)
	model := writeBuilt(t, b, "qdqsig")
	code, _, errs := mcugen(t, "compile", model, "--calib-random", "4", "-o", filepath.Join(t.TempDir(), "o"))
	if code != 0 || !strings.Contains(errs, "is already quantized; --calib/--quantize ignored") || strings.Contains(errs, "FoldQDQ") || !strings.Contains(errs, "Softmax") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
