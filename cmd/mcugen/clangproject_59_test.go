package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/internal/needtool"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// A make project written by compile --cc clang --target generic for the
// Cortex-M55 builds with clang: the project turns clang's loop vectorizer
// off there, after the -O level (-fno-vectorize before -O2 did nothing)
// (clang 14's loop vectorizer crashed, exit status 139, on the generic
// target's padded 5×1 convolution rows; the runner's builds had the flag,
// the projects did not, a review found).
func TestClangGenericProjectM55_59(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a firmware")
	}
	needtool.Need(t, "make", "make")
	needtool.Need(t, "clang", "clang")
	needtool.Need(t, "arm-none-eabi-gcc", "gcc-arm-none-eabi")
	m := &tg.Model{}
	r := tg.NewRand(59)
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, 4, 8, 7}, Scale: []float32{0.05}, ZeroPoint: []int64{-3}})
	w := make([]int8, 12*5*7)
	for i := range w {
		w[i] = r.Int8(-127, 127)
	}
	wt := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Int8, Shape: []int32{12, 5, 1, 7}, Scale: []float32{0.01}, ZeroPoint: []int64{0}, Data: tg.I8Bytes(w...)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4, 8, 12}, Scale: []float32{0.1}, ZeroPoint: []int64{2}})
	m.AddOp(tg.OpConv2D, tg.Conv2DOptions(tg.Same, 1, 1, tg.ActNone, 1, 1), []int32{x, wt, -1}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	model := writeTFLite(t, m, "c5x1")
	dir := filepath.Join(t.TempDir(), "proj")
	code, _, stderr := mcugen(t, "compile", model, "--board", "mps3-an547", "--target", "generic", "--cc", "clang", "--project", "make", "-o", dir)
	if code != 0 {
		t.Fatalf("compile: exit %d: %s", code, stderr)
	}
	cmd := exec.Command("make", "-s")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "-mllvm -vectorize-loops=false") {
		t.Error("the Makefile does not turn the loop vectorizer off")
	}
}
