package main

import (
	"os"
	"path/filepath"
	"testing"
)

// --target is checked against the board before anything is built: a
// schedule set the core cannot run (dsp on the Cortex-M3, mve on the
// Cortex-M4) and an unknown one are usage errors (exit 2, one line, nothing
// written); a set the core has, and any set for the host, compile (review
// finding: such C failed to assemble with several KB of messages).
func TestTargetCheckedAgainstBoard(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--target", "dsp", "--board", "mps2-an385"}, []string{"--target dsp needs the dsp feature", "mps2-an385 (cortex-m3)", "--target generic"}},
		{[]string{"--target", "mve", "--board", "mps2-an386"}, []string{"--target mve needs the mve feature", "cortex-m4"}},
		{[]string{"--target", "neon", "--board", "mps3-an547"}, []string{"--target neon needs the neon feature"}},
		{[]string{"--target", "foo"}, []string{"--target foo: unknown schedule set"}},
	} {
		out := filepath.Join(dir, "bad")
		code, stdout, stderr := mcugen(t, append([]string{"compile", model, "-o", out}, c.args...)...)
		oneErrorLine(t, c.args[1], code, stderr, 2, c.want...)
		if stdout != "" || exists(out) {
			t.Errorf("%v: wrote output", c.args)
		}
	}
	for _, args := range [][]string{{"--target", "generic", "--board", "mps2-an386"}, {"--target", "dsp", "--board", "mps2-an505"}, {"--target", "dsp"}} {
		if code, _, stderr := mcugen(t, append([]string{"compile", model, "-o", filepath.Join(dir, "ok"), "--force"}, args...)...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A --prefix that is not a C identifier is refused, saying what it would
// become, instead of being renamed silently (review finding: 9bad became
// t_9bad_run); a valid one in capitals is the same identifier lower-cased.
func TestPrefixMustBeIdentifier(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	dir := t.TempDir()
	for p, would := range map[string]string{"9bad": "t_9bad", "my-model": "my_model"} {
		code, _, stderr := mcugen(t, "compile", model, "--prefix", p, "-o", filepath.Join(dir, "x"))
		oneErrorLine(t, "--prefix "+p, code, stderr, 2, "is not a C identifier", `"`+would+`" would be`)
	}
	// A keyword, or a name the code or libc uses, is an identifier: the
	// message says which kind of name it is (user-journey finding: main
	// was called "not a C identifier").
	for p, would := range map[string]string{"int": "int_model", "main": "main_model", "expf": "expf_model"} {
		code, _, stderr := mcugen(t, "compile", model, "--prefix", p, "-o", filepath.Join(dir, "x"))
		oneErrorLine(t, "--prefix "+p, code, stderr, 2, "is a C or C++ keyword, or a name the generated code or the C library already uses", `"`+would+`" would do`)
	}
	// A trailing _ is an identifier: the message says why it is refused
	// (a user journey: "kws_" was "not a C identifier; "kws" would be").
	for p, would := range map[string]string{"kws_": "kws", "tvmgen__": "tvmgen", "int_": "int_model"} {
		code, _, stderr := mcugen(t, "compile", model, "--prefix", p, "-o", filepath.Join(dir, "x"))
		oneErrorLine(t, "--prefix "+p, code, stderr, 2, "ends in _", "C++ reserves", `"`+would+`" would do`)
	}
	if code, _, stderr := mcugen(t, "compile", model, "--prefix", "KWS_Model", "-o", filepath.Join(dir, "ok")); code != 0 || !exists(filepath.Join(dir, "ok", "kws_model.h")) {
		t.Errorf("--prefix KWS_Model: exit %d %s", code, stderr)
	}
}

// quantize on an integer model is one error line, without the pipeline's
// "--calib ignored" warning before it (review finding).
func TestQuantizeIntegerModelOneLine(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, _, stderr := mcugen(t, "quantize", model, "--calib-random", "2", "-o", filepath.Join(t.TempDir(), "q.onnx"))
	oneErrorLine(t, "quantize int8", code, stderr, 1, "already quantized", "quantize takes a float one")
}
