package tir_test

import (
	"math"
	"os/exec"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tir"
)

// sumGraph is a float ReduceSum (or Mean) of x [2, n] over axis 1.
func sumGraph(op graph.Op, n int) *graph.Graph {
	g := graph.New("kahan", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, n}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{2, 1}})
	var attrs any = &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: []int{1}, KeepDims: true}
	if op == graph.Mean {
		attrs = &graph.MeanAttrs{Axes: []int{1}, KeepDims: true}
	}
	g.AddNode(&graph.Node{Name: "sum", Op: op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: attrs})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// TestFloatSumCompensated37: row 0 is 1 followed by 99,999 terms of 1e-8,
// row 1 is 0.1 repeated 100,000 times. A float32 sum in input order adds
// nothing after the 1 (1 + 1e-8 rounds to 1: 1.0 where the sum is
// 1.00099999) and drifts on the 0.1s (9,999.99...: float32 gives 9,998.557
// (off by 1.4e-4 relative); compensated, both are within one rounding
// (6e-8 relative) of the float64 sums, in the TIR interpreter and in the
// generated C on the host.
func TestFloatSumCompensated37(t *testing.T) {
	const n = 100000
	x := graph.NewData(graph.Float32, []int{2, n})
	x.F[0] = 1
	want := [2]float64{1, 0}
	for i := 1; i < n; i++ {
		x.F[i] = 1e-8
		want[0] += float64(float32(1e-8))
	}
	for i := 0; i < n; i++ {
		x.F[n+i] = 0.1
		want[1] += float64(float32(0.1))
	}
	check := func(what string, y *graph.Data, mean bool) {
		t.Helper()
		for r := 0; r < 2; r++ {
			w := want[r]
			if mean {
				w /= n
			}
			if got := float64(y.F[r]); math.Abs(got-w) > 1.2e-7*math.Abs(w) {
				t.Errorf("%s row %d: %.9g, want %.9g (relative %.2g)", what, r, got, w, math.Abs(got-w)/w)
			}
		}
	}
	for _, op := range []graph.Op{graph.Reduce, graph.Mean} {
		g := sumGraph(op, n)
		m := lowerRequant(t, g, *tir.Generic)
		got, err := tir.RunModule(m, map[string]*graph.Data{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		check(string(op)+" TIR", got["y"], op == graph.Mean)
		if testing.Short() {
			continue
		}
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("gcc not installed")
		}
		b, err := pipeline.LoadBoard("host", "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := pipeline.CompileGraph(g, "kahan_"+string(op), pipeline.Options{Board: b, Version: "test",
			CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-pedantic", "-Werror"}})
		if err != nil {
			t.Fatal(err)
		}
		xr, err := s.Execute([]map[string]*graph.Data{{"x": x}}, t.TempDir(), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		check(string(op)+" C", xr.Outputs[0][0], op == graph.Mean)
	}
}
