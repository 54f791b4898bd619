package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A make project whose example program cannot link for want of RAM is
// written with a warning: float cnn.onnx on the micro:bit fits (arena
// 11,264 B + stack 2,048 B of 16,384 B) but its example's buffers (a
// 3·32·32 float input, 3,072 B, and a 10-float output, 40 B) and the
// runtime's data do not (review finding: the link failed without a word).
// A project with room gets no warning.
func TestExampleRAMWarning(t *testing.T) {
	dir := t.TempDir()
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	code, _, stderr := mcugen(t, "compile", model, "--board", "microbit", "--project", "make", "-o", filepath.Join(dir, "mb"))
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "warning: the example program may not link") ||
		!strings.Contains(stderr, "input and output buffers (3,112 B)") || !strings.Contains(stderr, "region RAM, which has 16,384 B") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", filepath.Join(dir, "an386"))
	if code != 0 || stderr != "" {
		t.Errorf("mps2-an386: exit %d, stderr %q", code, stderr)
	}
}

// A model whose inputs all fold into constants compiles, and run and test
// handle it too: its harness has no input tables to fill (review finding:
// "crt: the model needs at least one input").
func TestTestModelWithoutInputs(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/op_float_dequantize_per_axis.tflite")
	code, out, stderr := mcugen(t, "test", model, "--board", "host", "--random", "2")
	if code != 0 || !strings.Contains(out, "matches (float, within 1e-5)") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
}
