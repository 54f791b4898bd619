package quant

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// A graph output that a Concat also reads keeps its own parameters (review
// finding): c = x·0.01 beside a = x·100 took the Concat's scale (0.78) and
// every element of c quantized to zero. Now c's scale is its own range's,
// the Concat reads c requantized to its parameters, and the int8 c
// dequantizes to within a step of the float c, while the Concat's output,
// which holds c's values too, is still as the Concat's parameters make it.
func TestConcatOutputKeepsItsScale40(t *testing.T) {
	g := graph.New("concatout", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 8}})
	for _, c := range []struct {
		name string
		k    float32
	}{{"a", 100}, {"c", 0.01}} {
		k := graph.NewData(graph.Float32, []int{1})
		k.F[0] = c.k
		g.AddConst(c.name+"_k", k)
		g.AddTensor(&graph.Tensor{Name: c.name, DType: graph.Float32, Shape: []int{1, 8}})
		g.AddNode(&graph.Node{Name: "mul_" + c.name, Op: graph.Mul, Inputs: []string{"x", c.name + "_k"}, Outputs: []string{c.name}, Attrs: &graph.BinaryAttrs{}})
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 16}})
	g.AddNode(&graph.Node{Name: "cat", Op: graph.Concat, Inputs: []string{"a", "c"}, Outputs: []string{"y"}, Attrs: &graph.ConcatAttrs{Axis: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y", "c"}
	r := rand.New(rand.NewPCG(40, 40))
	samples := make([]map[string]*graph.Data, 16)
	for i := range samples {
		x := graph.NewData(graph.Float32, []int{1, 8})
		for k := range x.F {
			x.F[k] = float32(r.Float64()*2 - 1)
		}
		samples[i] = map[string]*graph.Data{"x": x}
	}
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, zc := q.Tensors["c"].Quant.At(0)
	sy, _ := q.Tensors["y"].Quant.At(0)
	if sc > 0.0001 || sy < 0.5 {
		t.Fatalf("scales: c %g (want its own range's, about 0.01/127), y %g (about 100/127)", sc, sy)
	}
	var cat *graph.Node
	for _, n := range q.Nodes {
		if n.Op == graph.Concat {
			cat = n
		}
	}
	if cat == nil || cat.Inputs[1] == "c" {
		t.Fatalf("the Concat reads c itself, not c requantized: %+v", cat)
	}
	if rq := q.Tensors[cat.Inputs[1]]; rq == nil || rq.Quant == nil || rq.Quant.Scale[0] != q.Tensors["y"].Quant.Scale[0] {
		t.Fatalf("the Concat's input %q does not take the Concat's parameters", cat.Inputs[1])
	}
	x := samples[3]["x"]
	want, err := interp.Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	xq := q.Tensors["x"]
	s, z := xq.Quant.At(0)
	got, err := interp.Run(q, map[string]*graph.Data{"x": QuantizeData(x, s, z)})
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for i, v := range got["c"].I {
		deq := float64(sc) * float64(v-int64(zc))
		if v == int64(zc) {
			zeros++
		}
		// x's own step (1/127) times 0.01 and c's step, with rounding.
		if math.Abs(deq-float64(want["c"].F[i])) > 1.5*float64(sc)+0.01*float64(s) {
			t.Errorf("c[%d]: int8 %d is %g, float %g", i, v, deq, want["c"].F[i])
		}
	}
	if zeros == len(got["c"].I) {
		t.Errorf("c quantized to all zeros")
	}
	// The Concat's own output: a's half within a step of the float.
	sy64 := float64(sy)
	for i := 0; i < 8; i++ {
		if d := math.Abs(sy64*float64(got["y"].I[i]-int64(q.Tensors["y"].Quant.ZeroPoint[0])) - float64(want["y"].F[i])); d > 1.5*sy64+100*float64(s) {
			t.Errorf("y[%d] off by %g", i, d)
		}
	}
}

// Calibration that meets NaN names the node it starts at, in the graph's
// order (review finding: a tensor picked by map order, and no node): sqrt
// of a negative input, then an Add of that NaN.
func TestCalibNaNNamesItsNode40(t *testing.T) {
	g := graph.New("nan", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "r", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddNode(&graph.Node{Name: "root", Op: graph.Math, Inputs: []string{"x"}, Outputs: []string{"r"}, Attrs: &graph.MathAttrs{Fn: graph.MathSqrt}})
	g.AddNode(&graph.Node{Name: "twice", Op: graph.Add, Inputs: []string{"r", "r"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	x := graph.NewData(graph.Float32, []int{1, 4})
	copy(x.F, []float32{1, 4, -1, 9})
	for i := 0; i < 5; i++ { // map order varies from run to run
		_, _, err := PTQ(g, []map[string]*graph.Data{{"x": x}}, Options{}, CalibOptions{})
		if err == nil || !strings.Contains(err.Error(), `node "root" (Math) gives NaN in its output "r"`) {
			t.Fatalf("PTQ: %v", err)
		}
	}
	// A NaN in a constant is the constant's, not the inputs'.
	k := graph.NewData(graph.Float32, []int{1, 4})
	k.F[2] = float32(math.NaN())
	c := graph.New("nanconst", "test")
	c.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	c.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	c.AddConst("k", k)
	c.AddNode(&graph.Node{Name: "plus", Op: graph.Add, Inputs: []string{"x", "k"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	c.Inputs, c.Outputs = []string{"x"}, []string{"y"}
	if _, _, err := PTQ(c, []map[string]*graph.Data{{"x": x}}, Options{}, CalibOptions{}); err == nil || !strings.Contains(err.Error(), `node "plus" (Add) reads the constant "k", which holds NaN`) {
		t.Errorf("PTQ with a NaN constant: %v", err)
	}
}

// A graph output that is a constant (the model returns a weight) is written
// to the QDQ file by a Constant node, and the file reads back (review
// finding: the output was left unmade, and mcugen refused the file it
// wrote), with the constant's values.
func TestQDQConstantOutput40(t *testing.T) {
	g := graph.New("constout", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	k := graph.NewData(graph.Float32, []int{1, 4})
	copy(k.F, []float32{0.5, -1.25, 3, 7})
	g.AddConst("k", k)
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"x", "k"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y", "k"}
	x := graph.NewData(graph.Float32, []int{1, 4})
	copy(x.F, []float32{0.1, -0.2, 0.3, -0.4})
	q, _, err := PTQ(g, []map[string]*graph.Data{{"x": x}}, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back := qdqRoundTrip(t, q) // written, read back and folded
	out, err := interp.Run(back, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["k"]; got == nil || !slices.Equal(got.F, k.F) {
		t.Errorf("output k read back as %v, want %v", got, k.F)
	}
}
