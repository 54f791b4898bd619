package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/needtool"
)

// TestCompensatedSumsKeepInfinity: a ReduceSum and an AveragePool over
// values that include +Inf give +Inf, as float sums do, in the reference
// and in the C alike; the compensated (Kahan) sums made them NaN (the
// rounding error of adding Inf is Inf - Inf) once a term followed the Inf.
func TestCompensatedSumsKeepInfinity(t *testing.T) {
	needtool.Need(t, "gcc", "gcc")
	b := onnx.NewBuilder("sums", 14, 3)
	x := b.Input("x", graph.Float32, 1, 1, 2, 2)
	b.Output(b.Node("ReduceSum", []string{x, b.Ints("axes", 2, 3)}, onnx.IntAttr("keepdims", 0)), graph.Float32)
	b.Output(b.Node("AveragePool", []string{x}, onnx.IntsAttr("kernel_shape", 2, 2)), graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "sums.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	// An infinite term, and (session 44's review) finite terms whose sum
	// overflows with a term after it: the error of that step is Inf, not
	// NaN, and was kept as the compensation (then Inf - Inf).
	for k, v := range [][]float32{{float32(math.Inf(1)), 1, 2, 3}, {3e38, 3e38, 0, 0}} {
		in := &graph.Data{DType: graph.Float32, Shape: []int{1, 1, 2, 2}, F: v}
		xin := filepath.Join(dir, fmt.Sprintf("x%d.npy", k))
		if err := writeNpy(xin, in); err != nil {
			t.Fatal(err)
		}
		outs := evalNpy(t, model, xin)
		if len(outs) != 2 {
			t.Fatalf("outputs %v", outs)
		}
		for name, d := range outs {
			if len(d.F) != 1 || !math.IsInf(float64(d.F[0]), 1) {
				t.Errorf("%v: %s: %v, want +Inf", v, name, d.F)
			}
		}
		run := filepath.Join(dir, fmt.Sprintf("run%d", k))
		code, out, errs := mcugen(t, "run", model, "--board", "host", "--input", xin, "--out", run)
		if code != 0 || strings.Contains(out+errs, "MISMATCH") {
			t.Errorf("run: exit %d\n%s\n%s", code, out, errs)
		}
		fw, _ := filepath.Glob(filepath.Join(run, "*.npy"))
		for _, o := range fw {
			d, err := readNpy(o)
			if err == nil && (len(d.F) != 1 || !math.IsInf(float64(d.F[0]), 1)) {
				t.Errorf("%v: firmware %s: %v, want +Inf", v, filepath.Base(o), d.F)
			}
		}
		if len(fw) != 2 {
			t.Errorf("firmware outputs %v", fw)
		}
	}
}
