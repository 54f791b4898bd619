package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// plan on a board the model does not fit still prints the plan (it is the
// answer to "how much RAM?"), then the one-line fit error, exit 1
// (user-journey finding: only the error was printed).
func TestPlanThatDoesNotFitIsShown(t *testing.T) {
	dir := sharedModels(t)
	model := filepath.Join(dir, "vww/vww_96_int8.tflite")
	code, out, errs := mcugen(t, "plan", model, "--board", "microbit")
	oneErrorLine(t, "plan on microbit", code, errs, 1, "does not fit on microbit")
	if !strings.Contains(out, "arena 37,440 B") {
		t.Errorf("no plan printed:\n%s", out)
	}
	code, out, _ = mcugen(t, "plan", model, "--board", "microbit", "--json")
	if code != 1 || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"arena_bytes": 37440`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

// --quantize on a float model that only moves data says so, not that it
// is "already an integer model" (user-journey finding); an int8 model
// still gets that.
func TestQuantizeDataMovementWarning(t *testing.T) {
	for model, want := range map[string]string{
		"../../testdata/tflite/op_float_transpose.tflite": "only moves float data (no arithmetic to quantize); --calib/--quantize ignored",
		"../../testdata/tflite/op_int8_reshape.tflite":    "is already an integer model; --calib/--quantize ignored",
	} {
		code, _, errs := mcugen(t, "compile", model, "--quantize", "int8", "-o", filepath.Join(t.TempDir(), "o"))
		if code != 0 || strings.Count(errs, "warning:") != 1 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q", model, code, errs)
		}
	}
}

// A --shape naming no input is the one error line: the importer's
// warnings about the dimensions it fixed wait for the model to load, and a
// model that fails drops them (user-journey finding: two warnings, then
// the error).
func TestShapeErrorAlone(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8_dynamic_batch.tflite")
	code, _, errs := mcugen(t, "compile", model, "--shape", "nosuch=1,4", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "--shape nosuch", code, errs, 1, `--shape nosuch: the model has no input named "nosuch"`)
}

// run on a model mcugen quantizes takes a float32 input file (quantized
// for the int8 input) or an int8 one holding the raw values (it was
// refused: "wants float32", user-journey finding); another type is
// refused with a line saying both.
func TestRunQuantizedTakesInt8Input(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	files := map[graph.DType]string{}
	for _, dt := range []graph.DType{graph.Float32, graph.Int8, graph.Int16} {
		d := graph.NewData(dt, []int{1, 64})
		for i := range 64 {
			if dt == graph.Float32 {
				d.F[i] = float32(i%7) / 7
			} else {
				d.I[i] = int64(i%11 - 5)
			}
		}
		files[dt] = filepath.Join(dir, dt.String()+".npy")
		if err := writeNpy(files[dt], d); err != nil {
			t.Fatal(err)
		}
	}
	for _, dt := range []graph.DType{graph.Float32, graph.Int8} {
		code, out, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", files[dt])
		if code != 0 || !strings.Contains(out, "bit-exact") {
			t.Errorf("%s input: exit %d\n%s\n%s", dt, code, out, errs)
		}
	}
	code, _, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", files[graph.Int16])
	_, errLine, _ := strings.Cut(errs, "better ranges\n") // after the random-calibration warning
	oneErrorLine(t, "int16 input", code, errLine, 1, "holds int16", "a float32 file is quantized for its int8 input, an int8 file must hold the input's raw values")
}
