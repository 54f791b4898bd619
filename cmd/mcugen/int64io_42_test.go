package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/needtool"
)

// A model with an int64 output (an ONNX classifier ending in ArgMax) runs in
// the make project's example under every compiler and optimization: the
// example's buffers are aligned for their values, as the generated run
// checks. Review finding: they were uint32_t words, 4-byte aligned, and run
// returned -1 ("vector 0 error -1") wherever the linker put the int64 output
// at an address not a multiple of 8 (clang, -O0, no -fdata-sections). The
// Arduino class's members are laid out the same way.
func TestInt64OutputInProjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needtool.Need(t, "make", "make")
	needtool.Need(t, "arm-none-eabi-gcc", "gcc-arm-none-eabi")
	needtool.Need(t, "qemu-system-arm", "qemu-system-arm")
	needtool.Need(t, "clang", "clang")
	b := onnx.NewBuilder("argmax3", 13, 1)
	x := b.Input("x", graph.Float32, 1, 3)
	b.Output(b.Node("ArgMax", []string{x}, onnx.IntAttr("axis", 1), onnx.IntAttr("keepdims", 0)), graph.Int64)
	model := writeBuilt(t, b, "argmax3")
	dir := filepath.Join(t.TempDir(), "proj")
	if code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", dir); code != 0 {
		t.Fatalf("compile: %s", errs)
	}
	main, err := os.ReadFile(filepath.Join(dir, "src", "main.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(main), "static uint64_t out_") {
		t.Errorf("main.c does not hold the int64 output in uint64_t words:\n%s", main)
	}
	for _, args := range [][]string{
		{"COMPILER=clang"},
		{"OPT=-O0"},
		{"COMPILER=clang", "OPT=-O0"},
		{"OPT=-Os", "CFLAGS=-fno-data-sections"},
	} {
		if out, err := exec.Command("make", "-C", dir, "-s", "clean").CombinedOutput(); err != nil {
			t.Fatalf("make clean: %v\n%s", err, out)
		}
		out, err := exec.Command("make", append([]string{"-C", dir, "-s", "run"}, args...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "done, 0 mismatches") {
			t.Errorf("make run %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
