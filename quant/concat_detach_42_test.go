package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// uniformSamples are n samples of each named [1, k] input, uniform in its
// [lo, hi].
func uniformSamples(n, k int, ranges map[string][2]float64) []map[string]*graph.Data {
	r := rand.New(rand.NewPCG(42, 42))
	samples := make([]map[string]*graph.Data, n)
	for i := range samples {
		samples[i] = map[string]*graph.Data{}
		for name, lr := range ranges {
			d := graph.NewData(graph.Float32, []int{1, k})
			for j := range d.F {
				d.F[j] = float32(lr[0] + r.Float64()*(lr[1]-lr[0]))
			}
			samples[i][name] = d
		}
	}
	return samples
}

// int8Range is the real range a tensor's int8 parameters hold.
func int8Range(t *testing.T, q *graph.Graph, name string) (lo, hi float64) {
	t.Helper()
	tq := q.Tensors[name]
	if tq == nil || tq.Quant == nil {
		t.Fatalf("tensor %q is not quantized", name)
	}
	s, z := tq.Quant.At(0)
	return float64(s) * float64(-128-z), float64(s) * float64(127-z)
}

// maxErrSteps runs the float and the int8 graph on the samples and gives
// the largest difference at output out, in steps of its int8 scale.
func maxErrSteps(t *testing.T, f, q *graph.Graph, out string, samples []map[string]*graph.Data) float64 {
	t.Helper()
	s, _ := q.Tensors[out].Quant.At(0)
	worst := 0.0
	for _, in := range samples {
		want, err := interp.Run(f, in)
		if err != nil {
			t.Fatal(err)
		}
		qin := map[string]*graph.Data{}
		for name, d := range in {
			qt := q.Tensors[name]
			qd := graph.NewData(graph.Int8, d.Shape)
			sc, z := qt.Quant.At(0)
			for i, v := range d.F {
				qd.I[i] = QuantizeValue(float64(v), sc, z)
			}
			qin[name] = qd
		}
		got, err := interp.Run(q, qin)
		if err != nil {
			t.Fatal(err)
		}
		_, z := q.Tensors[out].Quant.At(0)
		for i, v := range want[out].F {
			worst = math.Max(worst, math.Abs(float64(s)*float64(got[out].I[i]-int64(z))-float64(v))/float64(s))
		}
	}
	return worst
}

// concatGraph is y = Concat(first, b) with first = op(a) (a Sigmoid) or a
// Relu of a that an Add also reads (y2 = a' + a'): inputs a and b, [1, 8].
func concatGraph(op graph.Op) *graph.Graph {
	g := graph.New("cat", "test")
	for _, n := range []string{"a", "b", "p"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Float32, Shape: []int{1, 8}})
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 16}})
	g.AddNode(&graph.Node{Name: "first", Op: op, Inputs: []string{"a"}, Outputs: []string{"p"}})
	g.AddNode(&graph.Node{Name: "cat", Op: graph.Concat, Inputs: []string{"p", "b"}, Outputs: []string{"y"}, Attrs: &graph.ConcatAttrs{Axis: 1}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	if op == graph.Relu {
		g.AddTensor(&graph.Tensor{Name: "y2", DType: graph.Float32, Shape: []int{1, 8}})
		g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"p", "p"}, Outputs: []string{"y2"}, Attrs: &graph.BinaryAttrs{}})
		g.Outputs = append(g.Outputs, "y2")
	}
	return g
}

// Review findings, each against its hand-worked bound:
//   - a Concat of a Sigmoid output and an input in [-3, 3] clamped the input
//     to the Sigmoid's fixed [0, 1): 391 steps off. Now b's int8 range holds
//     [-3, 3], the Sigmoid keeps TFLite's (1/256, -128), and the Concat's
//     output is within a step and a half (two roundings) of the float one;
//   - with --float on the Concat and the Sigmoid, b keeps its own range (the
//     grouping ignored the flag);
//   - a skip connection: Relu(a) in [0, 2], read by the Concat beside b in
//     [-60, 60] and by an Add, was stored at the Concat's scale (120/255),
//     and the Add came out 14 steps off. Now it keeps its own (2/255), the
//     Add is within a step and a half.
func TestConcatInputsKeepTheirOwnParameters(t *testing.T) {
	t.Run("sigmoid", func(t *testing.T) { checkSigmoidConcat(t, concatGraph(graph.Sigmoid)) })
	t.Run("float-flag", func(t *testing.T) {
		g := concatGraph(graph.Sigmoid)
		samples := uniformSamples(16, 8, map[string][2]float64{"a": {-4, 4}, "b": {-1.5, 0.8}})
		q, _, err := PTQ(g, samples, Options{Method: MinMax, Float: map[string]bool{"cat": true, "first": true}}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// b's own range, [-1.5, 0.8] (0 included): scale 2.3/255.
		s, _ := q.Tensors["b"].Quant.At(0)
		if math.Abs(float64(s)-2.3/255) > 0.001 {
			t.Errorf("b's scale %g, want its own range's, about %g", s, 2.3/255)
		}
	})
	t.Run("skip", func(t *testing.T) { checkSkipConcat(t, concatGraph(graph.Relu)) })
}

// checkSigmoidConcat: b keeps about [-3, 3], the Sigmoid TFLite's (1/256,
// -128), and the Concat's output is within a step and a half.
func checkSigmoidConcat(t *testing.T, g *graph.Graph) {
	t.Helper()
	samples := uniformSamples(16, 8, map[string][2]float64{"a": {-4, 4}, "b": {-3, 3}})
	q, _, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := int8Range(t, q, "b"); lo > -2.9 || hi < 2.9 {
		t.Errorf("b holds [%g, %g], want about [-3, 3]", lo, hi)
	}
	if s, z := q.Tensors["p"].Quant.At(0); s != 1.0/256 || z != -128 {
		t.Errorf("sigmoid output (%g, %d), want TFLite's (1/256, -128)", s, z)
	}
	if e := maxErrSteps(t, g, q, "y", samples); e > 1.5 {
		t.Errorf("Concat output off by %.2f steps", e)
	}
}

// checkSkipConcat: the Relu output keeps its own scale (about 2/255), and
// the Add that also reads it and the Concat are within a step and a half.
func checkSkipConcat(t *testing.T, g *graph.Graph) {
	t.Helper()
	samples := uniformSamples(16, 8, map[string][2]float64{"a": {-2, 2}, "b": {-60, 60}})
	q, _, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := q.Tensors["p"].Quant.At(0); s > 2.1/255 {
		t.Errorf("Relu output scale %g, want its own range's (about 2/255)", s)
	}
	if e := maxErrSteps(t, g, q, "y2", samples); e > 1.5 {
		t.Errorf("the Add that also reads it is off by %.2f steps", e)
	}
	if e := maxErrSteps(t, g, q, "y", samples); e > 1.5 {
		t.Errorf("Concat output off by %.2f steps", e)
	}
}

// A max pool padded with -inf (or a large negative constant) before it, the
// usual export of a padded max pool: the pad value saturated at the int8
// bottom, and the input keeps its own range. Review finding: -inf made the
// range infinite and the tensors fell back to [0, 1] (246 steps off), -1000
// gave them a scale of 3.9. The pool's output is within a step of the float
// one (max picks a real value: every window holds one).
func TestPadConstantOutsideTheRange(t *testing.T) {
	for _, v := range []float64{math.Inf(-1), -1000} {
		g, samples := padPool(graph.MaxPool2D, v)
		q, _, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
		if err != nil {
			t.Fatalf("pad %v: %v", v, err)
		}
		if lo, hi := int8Range(t, q, "x"); lo > -0.95 || hi < 1.95 || hi-lo > 3.2 {
			t.Errorf("pad %v: x holds [%g, %g], want about [-1, 2]", v, lo, hi)
		}
		if e := maxErrSteps(t, g, q, "y", samples); e > 1 {
			t.Errorf("pad %v: pool output off by %.2f steps", v, e)
		}
	}
}

// padPool is x [1,4,4,2] padded by one with value v and pooled by op (3×3,
// stride 2) to y [1,2,2,2], and 8 samples of x in [-1, 2).
func padPool(op graph.Op, v float64) (*graph.Graph, []map[string]*graph.Data) {
	g := graph.New("padpool", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4, 4, 2}})
	g.AddTensor(&graph.Tensor{Name: "p", DType: graph.Float32, Shape: []int{1, 6, 6, 2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2, 2, 2}})
	g.AddNode(&graph.Node{Name: "pad", Op: graph.Pad, Inputs: []string{"x"}, Outputs: []string{"p"},
		Attrs: &graph.PadAttrs{Pads: []int{0, 1, 1, 0, 0, 1, 1, 0}, Mode: "constant", Value: v}})
	g.AddNode(&graph.Node{Name: "pool", Op: op, Inputs: []string{"p"}, Outputs: []string{"y"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]map[string]*graph.Data, 8)
	for i := range samples {
		x := graph.NewData(graph.Float32, []int{1, 4, 4, 2})
		for k := range x.F {
			x.F[k] = float32(r.Float64()*3 - 1)
		}
		samples[i] = map[string]*graph.Data{"x": x}
	}
	return g, samples
}
