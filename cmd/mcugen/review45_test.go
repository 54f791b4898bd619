package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A model too big for the board is one stderr line: the out-of-place
// warning that came before the fit error (which repeats it) is dropped
// when the compile fails, and said when it succeeds.
func TestTooBigIsOneLine(t *testing.T) {
	model := filepath.Join(sharedModels(t), "vww/vww_96_int8.tflite")
	code, _, errs := mcugen(t, "compile", model, "--board", "microbit", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "VWW on microbit", code, errs, 1, "does not fit on microbit", "in-place forms need more stack")
}

// --shape: one input bound twice to two shapes is a usage error; ONNX's
// named dimensions (dim_param) take one size across the inputs, so binding
// a's N binds b's.
func TestShapeBindings(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/matmul.onnx")
	code, _, errs := mcugen(t, "inspect", model, "--shape", "a=2,4,8", "--shape", "a=3,4,8")
	oneErrorLine(t, "a bound twice", code, errs, 2, `input "a" is bound twice`)
	code, out, errs := mcugen(t, "inspect", model, "--shape", "a=3,4,8", "--json")
	var r inspectJSON
	if code != 0 || errs != "" || json.Unmarshal([]byte(out), &r) != nil || len(r.Inputs) != 2 || !equalInts(r.Inputs[1].Shape, []int{3, 8, 5}) {
		t.Errorf("a=3,4,8: exit %d, stderr %q; want b bound to [3 8 5] through N, no warning:\n%s", code, errs, out)
	}
	// Each input's own flag wins (an exporter may give every free
	// dimension one name).
	code, out, errs = mcugen(t, "inspect", model, "--shape", "a=3,4,8", "--shape", "b=2,8,5")
	if code != 1 || !strings.Contains(errs, "MatMul") {
		t.Errorf("N bound to 3 and 2: exit %d, stderr %q; want the MatMul's shape error", code, errs)
	}
}

// eval runs a model without inputs with no --input (it asked for a file
// nothing could be); one with inputs and no --input is a usage error.
func TestEvalWithoutInputs(t *testing.T) {
	needBackend(t)
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := mcugen(t, "eval", filepath.Join(backend, "node/test_constant/model.onnx"), "--out", out)
	if code != 0 || errs != "" {
		t.Fatalf("test_constant: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "values.npy")); err != nil || !strings.Contains(stdout, "values.npy") {
		t.Errorf("test_constant: %v\n%s", err, stdout)
	}
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, _, errs = mcugen(t, "eval", cnn, "--out", filepath.Join(t.TempDir(), "o2"))
	oneErrorLine(t, "cnn_int8 without --input", code, errs, 2, "missing flags: --input")
}

// --json: a float tensor's scale and zero_point are there, null; the
// boards' cpu is the table's (host native, aarch64-linux its
// architecture); plan's --align is a power of two; compile takes one board.
func TestJSONAndFlagContracts(t *testing.T) {
	fp, _ := filepath.Abs("../../testdata/tflite/mlp_float.tflite")
	code, out, _ := mcugen(t, "inspect", fp, "--json")
	var raw struct {
		Inputs []map[string]json.RawMessage `json:"inputs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &raw) != nil || len(raw.Inputs) == 0 {
		t.Fatalf("inspect --json: exit %d\n%s", code, out)
	}
	for _, k := range []string{"scale", "zero_point"} {
		if v, ok := raw.Inputs[0][k]; !ok || string(v) != "null" {
			t.Errorf("float input's %s: %q (present %v), want null", k, v, ok)
		}
	}
	code, out, _ = mcugen(t, "boards", "--json")
	var bs struct {
		Boards []struct {
			Name string `json:"name"`
			CPU  string `json:"cpu"`
		} `json:"boards"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &bs) != nil {
		t.Fatalf("boards --json: exit %d", code)
	}
	want := map[string]string{"host": "native", "aarch64-linux": "armv8.2-a+dotprod", "mps2-an386": "cortex-m4"}
	for _, b := range bs.Boards {
		if w, ok := want[b.Name]; ok && b.CPU != w {
			t.Errorf("boards --json: %s cpu %q, want %q", b.Name, b.CPU, w)
		}
	}
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, a := range []string{"0", "3", "8192"} {
		code, _, errs := mcugen(t, "plan", cnn, "--align", a)
		oneErrorLine(t, "--align "+a, code, errs, 2, "want a power of two from 1 to 4096")
	}
	code, _, errs := mcugen(t, "compile", cnn, "--board", "host,mps2-an386", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "compile on two boards", code, errs, 2, "this command takes one board")
	if got := onnx.DTypeName(16); got != "BFLOAT16" {
		t.Errorf("DTypeName(16) = %q, want BFLOAT16 (onnx.proto)", got)
	}
}

// tune --resume without a journal says that it starts from the beginning.
func TestResumeWithoutJournalNoted(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes")
	}
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out := filepath.Join(t.TempDir(), "recs.json")
	code, _, errs := mcugen(t, "tune", cnn, "--board", "mps2-an386", "--trials", "1", "--resume", "-o", out)
	if code != 0 || !strings.Contains(errs, "no journal of an interrupted run there") {
		t.Errorf("exit %d, stderr %q; want a note that --resume found no journal", code, errs)
	}
}

// The held warnings are said where the command goes on: a compile that
// succeeds, and plan's fit error, which prints the plan they speak of (the
// random calibration's warning). A plan the lowering refuses is the first
// plan, with a note.
func TestHeldWarningsSaid(t *testing.T) {
	model := filepath.Join(sharedModels(t), "vww/vww_96_float.tflite")
	const calib = "random calibration"
	code, _, errs := mcugen(t, "compile", model, "--calib-random", "1", "--board", "mps2-an386", "-o", filepath.Join(t.TempDir(), "o"))
	if code != 0 || !strings.Contains(errs, calib) {
		t.Errorf("compile: exit %d, stderr %q; want the %s warning", code, errs, calib)
	}
	code, out, errs := mcugen(t, "plan", model, "--calib-random", "1", "--board", "microbit")
	if code != 1 || !strings.Contains(errs, calib) || !strings.Contains(errs, "does not fit on microbit") || !strings.Contains(out, "arena ") {
		t.Errorf("plan on microbit: exit %d, stderr %q; want the plan, the %s warning and the fit error", code, errs, calib)
	}
	dir := t.TempDir()
	bl := onnx.NewBuilder("gconv", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 4, 5, 5)
	w := bl.Input("w", graph.Float32, 4, 1, 3, 3)
	bl.Output(bl.Node("Conv", []string{x, w}, onnx.IntAttr("group", 4), onnx.IntsAttr("pads", 1, 1, 1, 1)), graph.Float32)
	gconv := filepath.Join(dir, "gconv.onnx")
	if err := os.WriteFile(gconv, bl.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = mcugen(t, "plan", gconv)
	if code != 0 || !strings.Contains(out, "arena 800 B") || !strings.Contains(errs, `the plan before the kernels' lowering, which refused the model`) {
		t.Errorf("plan of run-time weights: exit %d, stderr %q\n%s", code, errs, out)
	}
}
