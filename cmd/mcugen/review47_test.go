package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model file named in other letters got a C prefix of code points
// (modèle.tflite: modu00e8le_run) without a word; compile now says so, and
// the names it says are the ones in the files.
func TestNonASCIIPrefixSaid47(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tflite", "mlp_int8.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "modèle.tflite")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", out)
	// è is U+00E8.
	want := "the C prefix is modu00e8le, its file name's non-ASCII letters spelled as their code points"
	if code != 0 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q, want it to contain %q", code, errs, want)
	}
	if _, err := os.Stat(filepath.Join(out, "modu00e8le.h")); err != nil {
		t.Errorf("the header the warning names: %v", err)
	}
	// An ASCII name says nothing.
	plain := filepath.Join(dir, "model.tflite")
	if err := os.WriteFile(plain, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, "compile", plain, "--board", "host", "-o", filepath.Join(dir, "p")); code != 0 || strings.Contains(errs, "prefix") {
		t.Errorf("model.tflite: exit %d, stderr %q, want no word on the prefix", code, errs)
	}
}
