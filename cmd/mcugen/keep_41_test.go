package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeepCheckedFirst: a --keep directory of the user's (not empty, not
// one mcugen kept a build in) is refused before anything is built, one
// line, exit 2, by test, bench and run alike; it was each case's error
// after the compile ("1 of 1 model/board cases stopped with an error").
func TestKeepCheckedFirst(t *testing.T) {
	mine := t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, args := range [][]string{
		{"test", model, "--board", "host", "--keep", mine},
		{"bench", model, "--board", "host", "--keep", mine},
		{"run", model, "--board", "host", "--keep", mine},
	} {
		code, _, errs := mcugen(t, args...)
		oneErrorLine(t, args[0]+" --keep", code, errs, 1, "exists, is not empty and holds no build an earlier mcugen kept")
	}
	if b, err := os.ReadFile(filepath.Join(mine, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt: %q, %v", b, err)
	}
}
