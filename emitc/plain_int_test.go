package emitc

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Plain int64 arithmetic at the edges, under ASan/UBSan: the C wraps modulo
// 2^64 as graph/interp does (INT64_MAX + 1, INT64_MIN * -1, INT64_MIN / -1,
// x / 0 = 0, Python's and C's remainders), with no signed overflow or trap.
func TestPlainInt64Edges(t *testing.T) {
	if testing.Short() {
		t.Skip("a gcc build")
	}
	g := graph.New("plain_int64", "onnx")
	for _, n := range []string{"a", "b"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Int64, Shape: []int{6}})
		g.Inputs = append(g.Inputs, n)
	}
	for i, op := range []graph.Op{graph.Add, graph.Sub, graph.Mul, graph.Div, graph.Mod} {
		out := string(op)
		g.AddTensor(&graph.Tensor{Name: out, DType: graph.Int64})
		var attrs any = &graph.BinaryAttrs{}
		if op == graph.Mod {
			attrs = &graph.ModAttrs{Fmod: i%2 == 0}
		}
		g.AddNode(&graph.Node{Name: out, Op: op, Inputs: []string{"a", "b"}, Outputs: []string{out}, Attrs: attrs})
		g.Outputs = append(g.Outputs, out)
	}
	g.AddTensor(&graph.Tensor{Name: "cumsum", DType: graph.Int64})
	g.AddNode(&graph.Node{Name: "cumsum", Op: graph.CumSum, Inputs: []string{"a"}, Outputs: []string{"cumsum"}, Attrs: &graph.CumSumAttrs{}})
	g.Outputs = append(g.Outputs, "cumsum")
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	edges := map[string]*graph.Data{
		"a": {DType: graph.Int64, Shape: []int{6}, I: []int64{hi, lo, lo, -7, 7, hi}},
		"b": {DType: graph.Int64, Shape: []int{6}, I: []int64{1, -1, 0, 3, -3, hi}},
	}
	checkModel(t, g, Options{Prefix: "pi", Model: "plain_int64"}, 4, edges)
}

// LogSumExp and Softplus of large inputs: the C keeps them finite (max +
// log Σ exp(x − max); max(x, 0) + log1p(exp(−|x|))) as the interpreter's
// float64 does; computed naively, expf overflows to +Inf.
func TestFloatOverflowEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("a gcc build")
	}
	g := graph.New("overflow", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, 4}})
	g.Inputs = []string{"x"}
	g.AddTensor(&graph.Tensor{Name: "lse", DType: graph.Float32})
	g.AddNode(&graph.Node{Name: "lse", Op: graph.Reduce, Inputs: []string{"x"}, Outputs: []string{"lse"},
		Attrs: &graph.ReduceAttrs{Kind: graph.ReduceLogSumExp, Axes: []int{1}}})
	g.AddTensor(&graph.Tensor{Name: "softplus", DType: graph.Float32})
	g.AddNode(&graph.Node{Name: "softplus", Op: graph.Math, Inputs: []string{"x"}, Outputs: []string{"softplus"},
		Attrs: &graph.MathAttrs{Fn: graph.MathSoftplus}})
	g.Outputs = []string{"lse", "softplus"}
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	big := map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 4}, F: []float32{100, 90, 95, 99, -100, -200, 300, 0}}}
	checkModel(t, g, Options{Prefix: "ov", Model: "overflow"}, 2, big)
}
