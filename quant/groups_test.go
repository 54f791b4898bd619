package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Two FullyConnected nodes of one QuantGroup whose inputs have scales 100
// apart: bias correction moves both biases by the same real amount (the
// first node's correction, in each node's own bias units), not by the same
// integer.
func TestGroupBiasCorrectionInRealUnits(t *testing.T) {
	g := graph.New("grp", "test")
	r := rand.New(rand.NewPCG(4, 4))
	w := graph.NewData(graph.Float32, []int{6, 8})
	for i := range w.F {
		w.F[i] = float32(r.NormFloat64() * 0.5)
	}
	b := graph.NewData(graph.Float32, []int{6})
	for i := range b.F {
		b.F[i] = float32(r.NormFloat64() * 0.05)
	}
	g.AddConst("w", w)
	g.AddConst("b", b)
	for _, n := range []string{"1", "2"} {
		g.AddTensor(&graph.Tensor{Name: "x" + n, DType: graph.Float32, Shape: []int{4, 8}})
		g.AddTensor(&graph.Tensor{Name: "y" + n, DType: graph.Float32, Shape: []int{4, 6}, QuantGroup: "g"})
		g.AddNode(&graph.Node{Name: "fc" + n, Op: graph.FullyConnected, Inputs: []string{"x" + n, "w", "b"}, Outputs: []string{"y" + n}, Attrs: &graph.FullyConnectedAttrs{}})
	}
	g.Inputs, g.Outputs = []string{"x1", "x2"}, []string{"y1", "y2"}
	samples := make([]map[string]*graph.Data, 16)
	for i := range samples {
		x1, x2 := graph.NewData(graph.Float32, []int{4, 8}), graph.NewData(graph.Float32, []int{4, 8})
		for k := range x1.F {
			x1.F[k] = float32(r.Float64()) // a mean of 0.5 turns weight rounding into a bias
			x2.F[k] = x1.F[k] / 100
		}
		samples[i] = map[string]*graph.Data{"x1": x1, "x2": x2}
	}
	plain, _, err := PTQ(g, samples, Options{NoBiasCorrection: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	corr, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bias := func(q *graph.Graph, node string) *graph.Tensor {
		for _, n := range q.Nodes {
			if n.Name == node {
				return q.In(n, 2)
			}
		}
		t.Fatalf("no node %q", node)
		return nil
	}
	moved := 0
	for ch := 0; ch < 6; ch++ {
		real := func(node string) (float64, float64) {
			pb, cb := bias(plain, node), bias(corr, node)
			s, _ := cb.Quant.At(ch)
			return float64(cb.Data.I[ch]-pb.Data.I[ch]) * float64(s), float64(s)
		}
		d1, s1 := real("fc1")
		d2, s2 := real("fc2")
		if d1 != 0 {
			moved++
		}
		if math.Abs(d1-d2) > (s1+s2)/2+1e-12 {
			t.Errorf("channel %d: fc1's bias moved by %g, fc2's by %g (bias scales %g, %g)", ch, d1, d2, s1, s2)
		}
	}
	if moved == 0 {
		t.Fatal("bias correction moved no channel: the test shows nothing")
	}
}

// A Concat of a Sigmoid and a Tanh output (each with fixed parameters)
// takes the parameters that hold both, the same on every run, whatever the
// map order: Tanh's (1/128, 0) cover [-1, 0.992], the sigmoid's [0, 1) with
// it, so the Concat reads the sigmoid output requantized (concatDetach)
// and neither activation's output moves off TFLite's fixed parameters.
func TestConflictingFixedParams(t *testing.T) {
	g := graph.New("fixed", "test")
	for _, n := range []string{"x", "s", "th", "y"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Float32, Shape: []int{1, 4}})
	}
	g.Tensors["y"].Shape = []int{2, 4}
	g.AddNode(&graph.Node{Name: "s", Op: graph.Sigmoid, Inputs: []string{"x"}, Outputs: []string{"s"}})
	g.AddNode(&graph.Node{Name: "th", Op: graph.Tanh, Inputs: []string{"x"}, Outputs: []string{"th"}})
	g.AddNode(&graph.Node{Name: "y", Op: graph.Concat, Inputs: []string{"s", "th"}, Outputs: []string{"y"}, Attrs: &graph.ConcatAttrs{Axis: 0}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := make([]map[string]*graph.Data, 4)
	for i := range samples {
		samples[i] = map[string]*graph.Data{"x": f32([]int{1, 4}, -3, -1, 1, float32(i))}
	}
	var first *graph.Quant
	for run := 0; run < 20; run++ {
		st, err := Calibrate(g, samples, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Quantize(g, st, Options{Method: MinMax})
		if err != nil {
			t.Fatal(err)
		}
		y := q.Tensors[q.Outputs[0]].Quant
		if y == nil {
			t.Fatal("output not quantized")
		}
		s, z := y.At(0)
		if s != 1.0/128 || z != 0 {
			t.Fatalf("run %d: the Concat took (%g, %d), want Tanh's (1/128, 0)", run, s, z)
		}
		if sq := q.Tensors["s"].Quant; sq == nil || sq.Scale[0] != 1.0/256 || sq.ZeroPoint[0] != -128 {
			t.Fatalf("run %d: the sigmoid output is not on its fixed parameters: %+v", run, sq)
		}
		if first == nil {
			first = y
		} else if fs, fz := first.At(0); fs != s || fz != z {
			t.Fatalf("run %d: parameters (%g, %d), first run (%g, %d)", run, s, z, fs, fz)
		}
	}
}

// A slice with a negative stride through index 0 (x[:, ::-1]) survives the
// QDQ round trip: ONNX reads an end of -1 as the last index.
func TestWriteQDQReversedSlice(t *testing.T) {
	g := graph.New("rev", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 5}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 5}})
	g.AddNode(&graph.Node{Name: "rev", Op: graph.Slice, Inputs: []string{"x"}, Outputs: []string{"y"},
		Attrs: &graph.SliceAttrs{Begin: []int{0, 4}, End: []int{1, -1}, Stride: []int{1, -1}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := []map[string]*graph.Data{{"x": f32([]int{1, 5}, -2, -1, 0, 1, 2)}, {"x": f32([]int{1, 5}, 3, -3, 1, 0.5, 2)}}
	q, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameFloatOutputs(t, q, qdqRoundTrip(t, q), samples)
}
