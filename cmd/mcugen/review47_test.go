package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
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

// eval and run --out wrote each .npy in place (os.Create): a failed write
// left a truncated file where the last run's had been. They now replace
// it whole through a temporary file: a hard link to the earlier output
// keeps the earlier contents (an in-place write would change them too),
// and nothing else is left in the directory.
func TestOutputsReplacedWhole47(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	dir := t.TempDir()
	in := graph.NewData(graph.Int8, []int{1, 16})
	for i := range in.I {
		in.I[i] = int64(i*9 - 70)
	}
	a := filepath.Join(dir, "a.npy")
	mustWriteNpy(t, a, in)
	for i := range in.I {
		in.I[i] = int64(60 - i*7)
	}
	b := filepath.Join(dir, "b.npy")
	mustWriteNpy(t, b, in)
	for _, cmd := range []string{"eval", "run"} {
		out := filepath.Join(dir, cmd)
		args := func(input string) []string {
			if cmd == "run" {
				return []string{cmd, model, "--board", "host", "--input", input, "--out", out}
			}
			return []string{cmd, model, "--input", input, "--out", out}
		}
		if code, _, errs := mcugen(t, args(a)...); code != 0 {
			t.Fatalf("%s a: exit %d, %s", cmd, code, errs)
		}
		files, _ := filepath.Glob(filepath.Join(out, "*"))
		if len(files) != 1 {
			t.Fatalf("%s wrote %v, want one .npy", cmd, files)
		}
		first, _ := os.ReadFile(files[0])
		link := filepath.Join(dir, cmd+"-first.npy")
		if err := os.Link(files[0], link); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		if code, _, errs := mcugen(t, args(b)...); code != 0 {
			t.Fatalf("%s b: exit %d, %s", cmd, code, errs)
		}
		second, _ := os.ReadFile(files[0])
		kept, _ := os.ReadFile(link)
		if string(second) == string(first) {
			t.Fatalf("%s: inputs a and b gave the same output; the test needs them to differ", cmd)
		}
		if string(kept) != string(first) {
			t.Errorf("%s: the earlier output was rewritten in place (its hard link changed)", cmd)
		}
		if after, _ := filepath.Glob(filepath.Join(out, "*")); len(after) != 1 {
			t.Errorf("%s left %v, want the one .npy", cmd, after)
		}
	}
}

// quantize and plan write no C, but said the C prefix a keyword file name
// would get (exp.onnx: "the C prefix is exp_model"); compile still says it.
func TestPrefixNoteOnlyWhereCIsWritten47(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", "mlp.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "int.onnx")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"quantize", model, "--calib-random", "2", "-o", filepath.Join(dir, "q.onnx")},
		{"plan", model},
	} {
		if code, _, errs := mcugen(t, args...); code != 0 || strings.Contains(errs, "C prefix") {
			t.Errorf("%s: exit %d, stderr %q, want no word on the C prefix", args[0], code, errs)
		}
	}
	if code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", filepath.Join(dir, "o")); code != 0 || !strings.Contains(errs, "the C prefix is int_model, not int") {
		t.Errorf("compile: exit %d, stderr %q, want the C prefix said", code, errs)
	}
}

// quantize --calib-random 0 said it needed --calib-random N, as if none
// had been given; the line now says N must be at least 1.
func TestQuantizeCalibRandomZero47(t *testing.T) {
	code, _, errs := mcugen(t, "quantize", filepath.Join("..", "..", "testdata", "onnx", "mlp.onnx"), "--calib-random", "0", "-o", filepath.Join(t.TempDir(), "q.onnx"))
	if code != 2 || !strings.Contains(errs, "--calib-random N, with N at least 1") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
