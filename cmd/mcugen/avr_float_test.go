package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A float model's C builds for an 8-bit AVR, whose avr-libc has no
// HUGE_VALF (review finding: the max pool's -HUGE_VALF did not compile).
func TestFloatCBuildsForAVR(t *testing.T) {
	if _, err := exec.LookPath("avr-gcc"); err != nil {
		t.Skip("avr-gcc is not installed (Debian packages gcc-avr, avr-libc)")
	}
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	dir := t.TempDir()
	if code, _, stderr := mcugen(t, "compile", model, "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cmd := exec.Command("avr-gcc", "-mmcu=atmega2560", "-Os", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
		"-c", filepath.Join(dir, "cnn.c"), "-o", filepath.Join(dir, "cnn.o"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("avr-gcc: %v\n%s", err, out)
	}
}
