package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// failWriter takes the first n bytes, then fails as a full disk does.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errors.New("no space left on device")
}

// A report that does not reach standard output is an error: `mcugen
// inspect --ir c m > m.c` on a full disk exited 0 over a truncated file
// (review finding; --json, which checks its one write, said so already).
func TestStdoutWriteErrorFails50(t *testing.T) {
	model := "../../testdata/onnx/mlp.onnx"
	for _, args := range [][]string{{"inspect", "--ir", "c", model}, {"inspect", model}, {"plan", model}, {"inspect", "--json", model}} {
		var errs bytes.Buffer
		code := run(args, &failWriter{n: 40}, &errs)
		if code != 1 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "no space left on device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
		var out bytes.Buffer
		errs.Reset()
		if code := run(args, &out, &errs); code != 0 || out.Len() == 0 {
			t.Errorf("%v to a working stdout: exit %d, stderr %q", args, code, errs.String())
		}
	}
}

// An output that cannot be written (a full disk; here a directory where
// the second file goes) takes back the files the same eval wrote, and says
// the output's name, not its temporary file's (review: an empty or
// partial --out directory was left, the message named ".out.npy.tmp123").
func TestEvalOutputWriteFailureTakesBack50(t *testing.T) {
	model := "../../testdata/tflite/op_float_split.tflite"
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	mustWriteNpy(t, in, graph.NewData(graph.Float32, []int{2, 4}))
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "out1.npy", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "eval", model, "--input", in, "--out", out)
	if code != 1 || strings.Contains(errs, ".tmp") || !strings.Contains(errs, filepath.Join(out, "out1.npy")+":") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "out.npy")); !os.IsNotExist(err) {
		t.Errorf("out.npy, written before the failure, is left: %v", err)
	}
	// Into a directory of its own, both written.
	out2 := filepath.Join(dir, "a", "b")
	if code, _, errs := mcugen(t, "eval", model, "--input", in, "--out", out2); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"out.npy", "out1.npy"} {
		if _, err := os.Stat(filepath.Join(out2, f)); err != nil {
			t.Error(err)
		}
	}
}

// plan --svg into a missing directory names the file, not its temporary
// one; eval --out whose directory cannot be made leaves none of the
// directories it made on the way (review).
func TestOutputErrorsNameTheFile50(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := mcugen(t, "plan", "../../testdata/onnx/mlp.onnx", "--svg", filepath.Join(dir, "nodir", "p.svg"))
	if code != 1 || strings.Contains(errs, ".tmp") || !strings.Contains(errs, filepath.Join(dir, "nodir", "p.svg")+":") {
		t.Errorf("plan --svg: exit %d, stderr %q", code, errs)
	}
	in := filepath.Join(dir, "in.npy")
	mustWriteNpy(t, in, graph.NewData(graph.Float32, []int{2, 4}))
	out := filepath.Join(dir, "newd", strings.Repeat("x", 300))
	code, _, errs = mcugen(t, "eval", "../../testdata/tflite/op_float_split.tflite", "--input", in, "--out", out)
	if code != 1 {
		t.Errorf("eval --out with a name too long: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "newd")); !os.IsNotExist(err) {
		t.Errorf("newd is left: %v", err)
	}
}
