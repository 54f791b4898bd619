package main

import (
	"os"
	"path/filepath"
	"testing"
)

// quantize -o replaces an earlier model, never a file that is not one
// (found in session 28's notes: a user's notes.txt became a QDQ model,
// with only a warning about the extension).
func TestQuantizeKeepsAFileNotAModel(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)
	code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", notes)
	oneErrorLine(t, "-o notes.txt", code, errs, 1, "notes.txt: exists and is not an ONNX model; quantize replaces only a model file")
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Errorf("notes.txt now holds %q", b)
	}
	// An earlier quantize's output is replaced, as is an empty file.
	q := filepath.Join(dir, "q.onnx")
	for i := 0; i < 2; i++ {
		if code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", q); code != 0 {
			t.Fatalf("quantize run %d: exit %d: %s", i+1, code, errs)
		}
	}
	empty := filepath.Join(dir, "empty.onnx")
	os.WriteFile(empty, nil, 0o644)
	if code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", empty); code != 0 {
		t.Fatalf("quantize over an empty file: exit %d: %s", code, errs)
	}
}
