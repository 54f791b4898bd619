package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/pipeline"
)

// eval runs a QDQ model as it compiles (its pairs folded into integer
// operators), so its outputs are the ones `run` and `test` compare the
// firmware with (a user journey: eval ran the float operators between the
// pairs, and IC's outputs differed from the firmware's by up to 26 steps).
func TestEvalFoldsQDQ(t *testing.T) {
	model := "../../testdata/onnx/qdq_conv.onnx"
	b, err := pipeline.LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pipeline.Compile(model, pipeline.Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for v, in := range pipeline.RandomInputs(s.Graph, 3, 7) {
		want, err := interp.Run(s.Graph, in)
		if err != nil {
			t.Fatal(err)
		}
		x := filepath.Join(dir, "x.npy")
		f, _ := os.Create(x)
		if err := npy.Write(f, in[s.Graph.UserInputs()[0]]); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out := filepath.Join(dir, "out")
		if code, _, stderr := mcugen(t, "eval", model, "--input", x, "--out", out); code != 0 {
			t.Fatalf("eval: exit %d: %s", code, stderr)
		}
		name := s.Graph.UserOutputs()[0]
		f, err = os.Open(filepath.Join(out, fileName(name)+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := npy.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		w := want[name]
		if len(got.F) != len(w.F) || len(got.F) == 0 {
			t.Fatalf("vector %d: %d outputs, want %d", v, len(got.F), len(w.F))
		}
		for i := range w.F {
			if got.F[i] != w.F[i] {
				t.Fatalf("vector %d: output %d is %v, the compiled graph's %v", v, i, got.F[i], w.F[i])
			}
		}
	}
}

// run --keep refuses a directory that holds someone else's files (a user
// journey: --keep myproj replaced the user's build/build.sh), and builds
// again in one an earlier run kept.
func TestKeepRefusesForeignDirectory(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	dir := filepath.Join(t.TempDir(), "myproj")
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	mine := filepath.Join(dir, "build", "build.sh")
	os.WriteFile(mine, []byte("# MY OWN build script\n"), 0o644)
	code, _, stderr := mcugen(t, "run", model, "--board", "host", "--random", "1", "--keep", dir)
	oneErrorLine(t, "--keep myproj", code, stderr, 1, "--keep "+dir+": exists, is not empty and holds no build an earlier mcugen kept")
	if b, _ := os.ReadFile(mine); string(b) != "# MY OWN build script\n" {
		t.Errorf("the user's build.sh was changed: %q", b)
	}
	kept := filepath.Join(t.TempDir(), "kept")
	for i := 0; i < 2; i++ {
		if code, _, stderr := mcugen(t, "run", model, "--board", "host", "--random", "1", "--keep", kept); code != 0 {
			t.Fatalf("run %d in its own --keep directory: exit %d: %s", i, code, stderr)
		}
	}
}

// A directory a multi-case run kept takes a later single-case run (a
// review: its marker was only in the cases' subdirectories).
func TestKeepAfterMultiCaseRun(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	kept := filepath.Join(t.TempDir(), "k1")
	if code, _, stderr := mcugen(t, "test", model, model, "--board", "host", "--random", "1", "--keep", kept); code != 0 {
		t.Fatalf("test with two cases: exit %d: %s", code, stderr)
	}
	if code, _, stderr := mcugen(t, "run", model, "--board", "host", "--random", "1", "--keep", kept); code != 0 {
		t.Fatalf("run in the same --keep: exit %d: %s", code, stderr)
	}
}

// A float model's flash budget error names float32 weights (a user
// journey: it said int8).
func TestFloatFlashBudgetSaysFloat32(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_float.tflite")
	code, _, stderr := mcugen(t, "compile", model, "--board", "mps2-an386", "--flash-budget", "1KiB", "-o", filepath.Join(t.TempDir(), "x"))
	oneErrorLine(t, "float budget", code, stderr, 1, "for weights (float32, ")
}

// inspect --int8-io summarises a QDQ model as compile --int8-io builds it:
// int8 inputs and outputs (a user journey: the flag was ignored).
func TestInspectInt8IO(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/qdq_conv.onnx")
	code, out, stderr := mcugen(t, "inspect", model, "--int8-io")
	if code != 0 || !strings.Contains(out, "input    x: int8[1,3,8,8]") {
		t.Errorf("inspect --int8-io: exit %d\n%s%s", code, out, stderr)
	}
}

// Float data for an int8 input says how to quantize it (a user journey:
// the refusal gave no hint).
func TestFloatInputForInt8ModelHint(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	s, err := pipeline.Compile(model, pipeline.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	in := s.Graph.Tensors[s.Graph.UserInputs()[0]]
	x := filepath.Join(t.TempDir(), "x.npy")
	f, _ := os.Create(x)
	npy.Write(f, &graph.Data{DType: graph.Float32, Shape: in.Shape, F: make([]float32, in.NumElements())})
	f.Close()
	code, _, stderr := mcugen(t, "eval", model, "--input", x, "--out", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "float input", code, stderr, 1, "holds float32", "wants int8: quantize it as q = round(x / ", "compile --json give the scale and zero point")
}
