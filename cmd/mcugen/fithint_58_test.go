package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A float model whose weights do not fit says, on its one error line, how
// many of the bytes are float32 weights and that quantizing cuts them to a
// quarter (review: a dynamic-range TFLite model, 275,728 B on disk, needed
// 1,063,456 B of weights, and the importer's note that its int8 weights are
// read as float32 was dropped with the failure). An int8 model, and a float
// model being quantized, get no such hint.
func TestFitErrorFloatHint58(t *testing.T) {
	hint := "1,864 B of them are float32 weights: --calib DIR (or --calib-random N) quantizes the model to int8"
	for _, c := range []struct {
		model string
		extra []string
		want  bool
	}{
		{"cnn_float.tflite", nil, true},
		{"cnn_float.tflite", []string{"--calib-random", "4"}, false},
		{"cnn_int8.tflite", nil, false},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"compile", "../../testdata/tflite/" + c.model, "--board", "mps2-an386", "--flash-budget", "1000", "-o", out}, c.extra...)
		code, _, stderr := mcugen(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != 1 || !strings.Contains(last, "does not fit the flash budget") {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if strings.Contains(last, hint) != c.want {
			t.Errorf("%v: %q; want the float32 hint: %v", args, last, c.want)
		}
	}
}
