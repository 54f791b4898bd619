package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/internal/needtool"
)

// The Arduino class of a model that keeps state has reset(), which starts
// the sequence again (review finding: the C API had <prefix>_reset, the
// class and its README did not mention state). The model accumulates its
// input in a variable that starts at (10, 20, 30, 40) (y = acc += x): the
// class, built on the host with g++ against a board inheriting the host,
// gives acc0 + x, then acc0 + 2x, and after reset() acc0 + x again. A model
// without state has no reset().
func TestArduinoClassResets(t *testing.T) {
	needtool.Need(t, "g++", "g++")
	needtool.Need(t, "gcc", "gcc")
	dir := t.TempDir()
	star := filepath.Join(dir, "hostduino.star")
	if err := os.WriteFile(star, []byte(`board(name = "hostduino", inherits = "host", arduino = "arduino:samd:mkrzero")`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/op_float_var_acc.tflite")
	out := filepath.Join(dir, "lib")
	if code, _, errs := mcugen(t, "compile", model, "--boards", star, "--board", "hostduino", "--project", "arduino", "-o", out); code != 0 {
		t.Fatalf("compile: %s", errs)
	}
	src := filepath.Join(out, "src")
	main := `#include "OpFloatVarAccModel.h"
#include <stdio.h>
#include <string.h>
static OpFloatVarAccModel model;
static void step(void) {
  const float x[4] = {1.0f, -2.0f, 0.5f, 3.0f};
  float y[4];
  memcpy(model.input(0), x, sizeof x);
  if (model.run() != 0) { printf("error\n"); return; }
  memcpy(y, model.output(0), sizeof y);
  printf("%g %g %g %g\n", y[0], y[1], y[2], y[3]);
}
int main() { step(); step(); model.reset(); step(); return 0; }
`
	if err := os.WriteFile(filepath.Join(dir, "t.cpp"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "m.o")
	if o, err := exec.Command("gcc", "-std=c99", "-c", filepath.Join(src, "op_float_var_acc.c"), "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, o)
	}
	bin := filepath.Join(dir, "t")
	if o, err := exec.Command("g++", "-Wall", "-Wextra", "-Werror", "-I", src, filepath.Join(dir, "t.cpp"), filepath.Join(src, "OpFloatVarAccModel.cpp"), obj, "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, o)
	}
	got, err := exec.Command(bin).Output()
	if want := "11 18 30.5 43\n12 16 31 46\n11 18 30.5 43\n"; err != nil || string(got) != want {
		t.Errorf("run, run, reset, run: %v\n%s\nwant\n%s", err, got, want)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "README.md"))
	if !strings.Contains(string(readme), "model.reset()") {
		t.Errorf("README does not mention reset()")
	}
	plain, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out2 := filepath.Join(dir, "lib2")
	if code, _, errs := mcugen(t, "compile", plain, "--boards", star, "--board", "hostduino", "--project", "arduino", "-o", out2); code != 0 {
		t.Fatalf("compile: %s", errs)
	}
	h, _ := os.ReadFile(filepath.Join(out2, "src", "CnnInt8Model.h"))
	if strings.Contains(string(h), "reset") {
		t.Errorf("a model without state has reset():\n%s", h)
	}
}
