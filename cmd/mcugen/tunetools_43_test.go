package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tune without QEMU says so in one line before it builds anything: it built
// and tried every candidate, two warnings each, first (a review finding).
// With the records complete it needs no tools at all.
func TestTuneMissingToolFirst(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite")
	out := filepath.Join(t.TempDir(), "r.json")
	t.Setenv("PATH", linkTools(t, armTools(t)...))
	code, stdout, stderr := robustRun("tune", model, "--board", "mps2-an386", "--trials", "2", "--jobs", "1", "-o", out)
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "qemu-system-arm not found in PATH: install the Debian package qemu-system-arm") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}
