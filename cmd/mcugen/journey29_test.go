package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/tune"
)

// quantize -o replaces an earlier model, never a file that is not one
// (found in session 28's notes: a user's notes.txt became a QDQ model,
// with only a warning about the extension).
func TestQuantizeKeepsAFileNotAModel(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)
	code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", notes)
	oneErrorLine(t, "-o notes.txt", code, errs, 1, "notes.txt: exists and is not an ONNX model; mcugen replaces only a file of that kind")
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Errorf("notes.txt now holds %q", b)
	}
	// An earlier quantize's output is replaced, as is an empty file.
	q := filepath.Join(dir, "q.onnx")
	for i := 0; i < 2; i++ {
		if code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", q); code != 0 {
			t.Fatalf("quantize run %d: exit %d: %s", i+1, code, errs)
		}
	}
	empty := filepath.Join(dir, "empty.onnx")
	os.WriteFile(empty, nil, 0o644)
	if code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", empty); code != 0 {
		t.Fatalf("quantize over an empty file: exit %d: %s", code, errs)
	}
}

// A CMake project's model library is a target named after the prefix: a
// prefix CMake reserves (all) or the project's own target takes (size) is
// refused when given and renamed when it comes from the file name
// (template journey finding: size.tflite's project did not configure).
func TestProjectPrefixNotATarget(t *testing.T) {
	src, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	b, _ := os.ReadFile(src)
	dir := t.TempDir()
	model := filepath.Join(dir, "size.tflite")
	os.WriteFile(model, b, 0o644)
	code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "cmake", "--prefix", "all", "-o", filepath.Join(dir, "a"))
	oneErrorLine(t, "--prefix all", code, errs, 2, "--prefix all: the CMake project's model library is a target named after the prefix", "all_model would do")
	out := filepath.Join(dir, "b")
	code, _, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "cmake", "-o", out)
	if code != 0 || !strings.Contains(errs, "the C prefix is size_model, not size") {
		t.Fatalf("size.tflite: exit %d, %q", code, errs)
	}
	cm, _ := os.ReadFile(filepath.Join(out, "CMakeLists.txt"))
	if !strings.Contains(string(cm), "add_library(size_model STATIC") {
		t.Errorf("the library is not size_model:\n%s", cm)
	}
	// A plain compile keeps the file's name.
	code, _, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "c"))
	if _, err := os.Stat(filepath.Join(dir, "c", "size.h")); code != 0 || err != nil {
		t.Errorf("plain compile: exit %d, %q, %v", code, errs, err)
	}
}

// Records tuned for a board without an emulator name that board, not the
// QEMU twin that measured them (tuning journey finding: --board
// stm32u575 wrote "board": "mps2-an505").
func TestTuneRecordNamesTheBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes under QEMU")
	}
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := mcugen(t, "tune", model, "--board", "nucleo-l4r5zi", "--trials", "2", "--jobs", "2", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs, _, err := tune.Load(out)
	if err != nil || recs.Len() == 0 {
		t.Fatalf("%v, %d records", err, recs.Len())
	}
	for _, r := range recs.Records {
		if r.Board != "nucleo-l4r5zi" || r.Core != "cortex-m4" {
			t.Errorf("record %s: board %q, core %q; want nucleo-l4r5zi, cortex-m4", r.Kernel, r.Board, r.Core)
		}
	}
}

// A float input with a NaN, run on a model mcugen quantized, is refused:
// its int8 input cannot hold it (quantization journey finding: the NaN
// became the zero point in silence, where calibration refuses NaN).
func TestRunRefusesNaNForQuantizedInput(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	d := &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 16, 16}, F: make([]float32, 768)}
	d.F[5] = float32(math.NaN())
	in := filepath.Join(t.TempDir(), "in.npy")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.Write(f, d); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, _, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", in)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if last := lines[len(lines)-1]; code != 1 || !strings.Contains(last, in+`: input "image": element 5 is NaN, which the int8 input cannot hold`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// quantize --eval: its files are checked before calibrating (a wrong
// --eval shape came after the calibration's own errors and time), and a
// held-out SQNR below 20 dB is warned about, as the in-sample one is
// (quantization journey findings).
func TestQuantizeEvalFirstAndWarned(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, scale float32, bad bool) string {
		d := filepath.Join(dir, name)
		os.Mkdir(d, 0o755)
		for s := 0; s < 6; s++ {
			x := graph.NewData(graph.Float32, []int{1, 64})
			for i := range x.F {
				x.F[i] = scale * (float32((s*131+i*29)%41)/20 - 1)
			}
			if bad && s == 0 {
				x.F[3] = float32(math.NaN())
			}
			if err := writeNpy(filepath.Join(d, fmt.Sprintf("features_%d.npy", s)), x); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	model := "../../testdata/onnx/mlp.onnx"
	badCalib := mk("badcalib", 1, true)
	wrong := filepath.Join(dir, "wrong")
	os.Mkdir(wrong, 0o755)
	writeNpy(filepath.Join(wrong, "features.npy"), graph.NewData(graph.Float32, []int{2, 3}))
	code, _, errs := mcugen(t, "quantize", model, "--calib", badCalib, "--eval", wrong, "-o", filepath.Join(dir, "q.onnx"))
	oneErrorLine(t, "a wrong --eval beside a bad --calib", code, errs, 1, "--eval: quant: calibration file "+filepath.Join(wrong, "features.npy")+": shape [2 3]")

	// A linear model (MatMul): held-out inputs 50 times the calibration's
	// clip at the int8 input.
	b := onnx.NewBuilder("lin", 13, 1)
	x := b.Input("features", graph.Float32, 1, 64)
	b.Output(b.Node("MatMul", []string{x, b.Rand("w", 0.1, 64, 4)}), graph.Float32)
	lin := writeBuilt(t, b, "lin")
	calib, loud := mk("calib", 1, false), mk("loud", 50, false)
	code, _, errs = mcugen(t, "quantize", lin, "--calib", calib, "--eval", loud, "-o", filepath.Join(dir, "q.onnx"))
	if code != 0 || !strings.Contains(errs, "--eval "+loud+": int8 output SQNR") || !strings.Contains(errs, "on the held-out samples: the int8 model loses accuracy") {
		t.Errorf("held-out data 50 times the calibration's: exit %d, stderr %q", code, errs)
	}
}

// microTVM journey findings: a capitalised --prefix works with --format
// mlf and projects (they looked for KWS.h); inputs whose names clash keep
// a renamed one off another tensor's name; a member name C reserves is
// made one it does not, and --format mlf takes it.
func TestMLFNamesFromAMigration(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := mcugen(t, "compile", "../../testdata/tflite/mlp_int8.tflite", "--board", "mps2-an386", "--prefix", "KWS", "--format", "mlf", "-o", filepath.Join(dir, "k"))
	if _, err := os.Stat(filepath.Join(dir, "k", "kws.tar")); code != 0 || err != nil {
		t.Fatalf("--prefix KWS --format mlf: exit %d, %v: %s", code, err, errs)
	}

	b := onnx.NewBuilder("clash", 13, 1)
	a := b.Input("Input", graph.Float32, 1, 4)
	c := b.Input("input", graph.Float32, 1, 4)
	d := b.Input("input_1", graph.Float32, 1, 4)
	e := b.Input("__x", graph.Float32, 1, 4)
	b.Output(b.Node("Add", []string{b.Node("Add", []string{a, c}), b.Node("Add", []string{d, e})}), graph.Float32)
	model := writeBuilt(t, b, "clash")
	for _, prefix := range []string{"tvmgen_default", "clash"} {
		out := filepath.Join(dir, prefix)
		code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--prefix", prefix, "--format", "mlf", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", prefix, code, errs)
		}
		h, _ := os.ReadFile(filepath.Join(out, prefix+".h"))
		want := []string{"void *Input;", "void *input_2;", "void *input_1;", "void *x;"}
		if prefix == "clash" {
			want = []string{"void *input;", "void *input_2;", "void *input_1;", "void *x;"}
		}
		for _, w := range want {
			if !strings.Contains(string(h), w) {
				t.Errorf("%s: no %q in the header:\n%s", prefix, w, h)
			}
		}
	}
}

// A model with a bool output (a Compare) makes an MLF archive and a make
// project whose example runs and matches (microTVM journey finding:
// "unsupported dtype bool").
func TestBoolOutputProject(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware")
	}
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/tflite/op_float_equal.tflite")
	dir := t.TempDir()
	if code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--format", "mlf", "-o", filepath.Join(dir, "m")); code != 0 {
		t.Fatalf("--format mlf: exit %d: %s", code, errs)
	}
	out := filepath.Join(dir, "p")
	if code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", out); code != 0 {
		t.Fatalf("--project make: exit %d: %s", code, errs)
	}
	cmd := exec.Command("make", "-s", "run")
	cmd.Dir = out
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "done, 0 mismatches") {
		t.Errorf("make run: %v\n%s", err, b)
	}
}
