package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A board whose stack cannot hold the in-place layers' local arrays gets
// the layers out of place, and compile says so and what it costs (review
// finding: KWS's arena went from 8,128 to 16,000 B on a 3 KiB stack, and
// nothing said why). Since session 53 the depthwise planes run in slices
// of their channels where their ring is past the stack, and KWS keeps its
// 8,064 B arena down to a 2 KiB stack; at 1,536 B its in-place pointwise
// layers do not fit. With the default 16 KiB stack nothing is said.
func TestOutOfPlaceSaysWhy40(t *testing.T) {
	model := filepath.Join(sharedModels(t), "kws", "kws_ref_model.tflite")
	dir := t.TempDir()
	bf := filepath.Join(dir, "b.star")
	if err := os.WriteFile(bf, []byte(`board(name = "an386-stack1k5", description = "an AN386 with a 1.5 KiB stack", inherits = ["mps2-an386"], stack_bytes = 1536)`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "compile", model, "--boards", bf, "--board", "an386-stack1k5", "-o", filepath.Join(dir, "a"))
	if code != 0 || !strings.Contains(errs, "layer(s) the plan ran in place run out of place") ||
		!strings.Contains(errs, "need more stack than the board's 1,536 B leave") || !strings.Contains(errs, "the arena is 16,000 B, where in place it would be 8,064 B") ||
		!strings.Contains(out, "arena 16,000 B") {
		t.Errorf("1.5 KiB stack: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "b"))
	if code != 0 || errs != "" {
		t.Errorf("16 KiB stack: exit %d: %q", code, errs)
	}
}

// test over several boards says a model's warning once (review finding:
// the random calibration's, once per board).
func TestWarningOncePerCommand40(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	code, _, errs := mcugen(t, "test", model, "--calib-random", "4", "--board", "host,mps2-an386", "--random", "1")
	if n := strings.Count(errs, "quantizing with 4 random calibration inputs"); code != 0 || n != 1 {
		t.Errorf("exit %d, the random calibration's warning %d times:\n%s", code, n, errs)
	}
}

// inspect --ir quant of a float model without calibration says that
// nothing was quantized (review finding: it printed the float graph without
// a word); an int8 model's says nothing.
func TestInspectQuantUncalibrated40(t *testing.T) {
	float, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	int8, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, errs := mcugen(t, "inspect", float, "--ir", "quant")
	if code != 0 || !strings.Contains(errs, "nothing is quantized, the graph below is the float one") || out == "" {
		t.Errorf("float: exit %d: %q", code, errs)
	}
	if code, _, errs := mcugen(t, "inspect", float, "--ir", "quant", "--calib-random", "2"); code != 0 || strings.Contains(errs, "nothing is quantized") {
		t.Errorf("float with --calib-random: exit %d: %q", code, errs)
	}
	if code, _, errs := mcugen(t, "inspect", int8, "--ir", "quant"); code != 0 || errs != "" {
		t.Errorf("int8: exit %d: %q", code, errs)
	}
}
