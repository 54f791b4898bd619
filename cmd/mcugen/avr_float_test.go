package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A float model's C builds for an 8-bit AVR, whose avr-libc has no
// HUGE_VALF (review finding: the max pool's -HUGE_VALF did not compile).
// So does the int16 softmax's, whose constants were int shifts past a
// 16-bit int's width (audit finding: 1 << 16).
func TestFloatCBuildsForAVR(t *testing.T) {
	if _, err := exec.LookPath("avr-gcc"); err != nil {
		t.Skip("avr-gcc is not installed (Debian packages gcc-avr, avr-libc)")
	}
	for _, m := range []string{"../../testdata/onnx/cnn.onnx", "../../testdata/tflite/op_int16_softmax.tflite"} {
		model, _ := filepath.Abs(m)
		dir := t.TempDir()
		if code, _, stderr := mcugen(t, "compile", model, "--prefix", "m", "-o", dir); code != 0 {
			t.Fatalf("%s: exit %d: %s", m, code, stderr)
		}
		cmd := exec.Command("avr-gcc", "-mmcu=atmega2560", "-Os", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
			"-c", filepath.Join(dir, "m.c"), "-o", filepath.Join(dir, "m.o"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: avr-gcc: %v\n%s", m, err, out)
		}
	}
}
