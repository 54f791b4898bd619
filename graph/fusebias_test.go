package graph_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// FuseFCBias folds MatMul's FullyConnected and the Add of a constant over
// its output features, in either operand order, moving a ReLU along; the
// graph still computes x·Wᵀ + b worked by hand. It leaves alone an Add of
// a constant that varies along another axis, and an FC output read twice.
func TestFuseFCBias(t *testing.T) {
	x := []float32{1, -2, 0.5, 3, 0, -1} // [1 2 3]
	w := []float32{0.5, 1, -1, 2, 0, 0.25}
	b := []float32{10, -20}
	// Rows of x times the rows of w, plus b.
	want := []float64{
		1*0.5 - 2*1 - 0.5*1 + 10, 1*2 + 0 + 0.5*0.25 - 20,
		3*0.5 + 0 + 1 + 10, 3*2 + 0 - 0.25 - 20,
	}
	build := func(biasFirst bool, bshape []int, act graph.Activation, readTwice bool) *graph.Graph {
		g := graph.New("fc", "onnx")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2, 3}})
		g.AddConst("w", &graph.Data{DType: graph.Float32, Shape: []int{2, 3}, F: w})
		g.AddConst("b", &graph.Data{DType: graph.Float32, Shape: bshape, F: b})
		g.AddTensor(&graph.Tensor{Name: "m", DType: graph.Float32, Shape: []int{1, 2, 2}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2, 2}})
		g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", ""}, Outputs: []string{"m"}, Attrs: &graph.FullyConnectedAttrs{KeepDims: true}})
		ins := []string{"m", "b"}
		if biasFirst {
			ins = []string{"b", "m"}
		}
		g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: ins, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{Act: act}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		if readTwice {
			g.Outputs = append(g.Outputs, "m")
		}
		return g
	}
	run := func(g *graph.Graph) []float32 {
		out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 2, 3}, F: x}})
		if err != nil {
			t.Fatal(err)
		}
		return out["y"].F
	}
	for _, c := range []struct {
		name      string
		g         *graph.Graph
		fused     int
		act       graph.Activation
		wantNodes int
	}{
		{"bias last", build(false, []int{2}, graph.ActNone, false), 1, graph.ActNone, 1},
		{"bias first, [1 1 2]", build(true, []int{1, 1, 2}, graph.ActNone, false), 1, graph.ActNone, 1},
		{"relu", build(false, []int{2}, graph.ActRelu, false), 1, graph.ActRelu, 1},
		{"bias over rows", build(false, []int{2, 1}, graph.ActNone, false), 0, graph.ActNone, 2},
		{"fc output also an output", build(false, []int{2}, graph.ActNone, true), 0, graph.ActNone, 2},
	} {
		if n := graph.FuseFCBias(c.g); n != c.fused || len(c.g.Nodes) != c.wantNodes {
			t.Errorf("%s: fused %d, %d nodes", c.name, n, len(c.g.Nodes))
			continue
		}
		if err := graph.Validate(c.g); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := run(c.g)
		for i, v := range want {
			if c.name == "bias over rows" {
				v += float64(b[i/2] - b[i%2]) // b varies along the rows there
			}
			if c.act == graph.ActRelu {
				v = math.Max(v, 0)
			}
			if math.Abs(float64(got[i])-v) > 1e-5 {
				t.Errorf("%s: y[%d] = %g, want %g", c.name, i, got[i], v)
			}
		}
	}
}
