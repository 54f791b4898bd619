package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/needtool"
)

// run --json printed nothing, only "json: unsupported value: +Inf", when the
// C and the reference differed by a non-finite amount (a NaN input the C's
// Relu makes 0; review finding): the difference is now written as test
// --json writes it, a string.
func TestRunJSONNonFiniteDiff(t *testing.T) {
	needtool.Need(t, "gcc", "gcc")
	b := onnx.NewBuilder("relu", 13, 1)
	x := b.Input("x", graph.Float32, 1, 2)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "relu.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "x.npy")
	if err := writeNpy(in, &graph.Data{DType: graph.Float32, Shape: []int{1, 2}, F: []float32{float32(math.NaN()), 1}}); err != nil {
		t.Fatal(err)
	}
	_, out, errs := mcugen(t, "run", model, "--board", "host", "--input", in, "--json")
	var r struct {
		Match bool   `json:"match_reference"`
		Diff  any    `json:"max_abs_diff"`
		Board string `json:"board"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Board != "host" {
		t.Fatalf("stdout is not run's JSON (%v): %q; stderr %q", err, out, errs)
	}
	if d, ok := r.Diff.(string); r.Match || !ok || (d != "Infinity" && d != "NaN") {
		t.Errorf("match %v, max_abs_diff %#v; want a mismatch of Infinity or NaN written as a string (protobuf JSON)", r.Match, r.Diff)
	}
}
