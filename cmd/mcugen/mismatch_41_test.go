package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/internal/needtool"
)

// TestTestSaysWhereOutputsDiffer: a vector whose expected output differs
// from the firmware's in one element is reported with the output, the
// element, both values, the count of differing elements and the largest
// difference, in the table, in --json and in the JUnit report (only the
// vector was named).
func TestTestSaysWhereOutputsDiffer(t *testing.T) {
	needtool.Need(t, "gcc", "gcc")
	model := "../../testdata/tflite/cnn_int8.tflite"
	dir := t.TempDir()
	vec := filepath.Join(dir, "vectors")
	os.Mkdir(vec, 0o755)
	in := graph.NewData(graph.Int8, []int{1, 8, 8, 3})
	for i := range in.I {
		in.I[i] = int64((i*29)%256 - 128)
	}
	if err := writeNpy(filepath.Join(vec, "input_000.npy"), in); err != nil {
		t.Fatal(err)
	}
	want := evalNpy(t, model, filepath.Join(vec, "input_000.npy"))["act7_softmax"]
	if want == nil {
		t.Fatal("eval wrote no act7_softmax.npy")
	}
	got3 := want.I[3]
	wrong := got3 + 2
	if wrong > 127 {
		wrong = got3 - 2
	}
	want.I[3] = wrong
	if err := writeNpy(filepath.Join(vec, "output_000.npy"), want); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "r.xml")
	code, out, errs := mcugen(t, "test", model, "--board", "host", "--random", "0", "--vectors", vec, "--json", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	var rep struct {
		Results []struct {
			Mismatches []mismatch `json:"mismatches"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 1 || len(rep.Results[0].Mismatches) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	m := rep.Results[0].Mismatches[0]
	d := float64(got3 - wrong)
	if d < 0 {
		d = -d
	}
	if m.Vector != "input_000.npy" || m.Output != "act7_softmax" || m.Against != "output_000.npy" || m.Index != 3 ||
		m.Got != jsonFloat(got3) || m.Want != jsonFloat(wrong) || m.Differ != 1 || m.Elements != 10 || m.MaxAbsDiff != jsonFloat(d) {
		t.Errorf("mismatch %+v: want element 3, %d against %d, 1 of 10 differing by %g", m, got3, wrong, d)
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), "output act7_softmax[3] is") {
		t.Errorf("JUnit report: %v\n%s", err, x)
	}
	code, out, _ = mcugen(t, "test", model, "--board", "host", "--random", "0", "--vectors", vec)
	if code != 1 || !strings.Contains(out, "first, input_000.npy: output act7_softmax[3] is") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestTestJSONWithNaN: a mismatch at a NaN still gives a --json report
// ("NaN" as a string): encoding/json refused the value and the report was
// lost.
func TestTestJSONWithNaN(t *testing.T) {
	needtool.Need(t, "gcc", "gcc")
	model := "../../testdata/onnx/mlp.onnx"
	dir := t.TempDir()
	vec := filepath.Join(dir, "vectors")
	os.Mkdir(vec, 0o755)
	in := graph.NewData(graph.Float32, []int{1, 64})
	for i := range in.F {
		in.F[i] = float32(i%7) / 7
	}
	if err := writeNpy(filepath.Join(vec, "input_000.npy"), in); err != nil {
		t.Fatal(err)
	}
	outs := evalNpy(t, model, filepath.Join(vec, "input_000.npy"))
	if len(outs) != 1 {
		t.Fatalf("outputs %v", outs)
	}
	var want *graph.Data
	for _, d := range outs {
		want = d
	}
	want.F[1] = float32(math.NaN())
	if err := writeNpy(filepath.Join(vec, "output_000.npy"), want); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "test", model, "--board", "host", "--random", "0", "--vectors", vec, "--json")
	var rep struct {
		Results []struct {
			Mismatches []mismatch `json:"mismatches"`
		} `json:"results"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Results) != 1 || len(rep.Results[0].Mismatches) != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if m := rep.Results[0].Mismatches[0]; m.Index != 1 || !math.IsNaN(float64(m.Want)) || !strings.Contains(out, `"want": "NaN"`) {
		t.Errorf("mismatch %+v", m)
	}
}

// evalNpy runs the reference interpreter (mcugen eval) on one input file
// and reads back its outputs, by output file name without ".npy".
func evalNpy(t *testing.T, model, input string) map[string]*graph.Data {
	t.Helper()
	dir := t.TempDir()
	if code, _, errs := mcugen(t, "eval", model, "--input", input, "--out", dir); code != 0 {
		t.Fatalf("eval %s: %s", model, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	out := map[string]*graph.Data{}
	for _, f := range files {
		d, err := readNpy(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".npy")] = d
	}
	return out
}
