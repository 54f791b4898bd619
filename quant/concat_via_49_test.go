package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// concatGraphVia is concatGraph with the first input reaching the Concat
// through a Reshape (pr = Reshape(p), the same [1, 8]).
func concatGraphVia(op graph.Op) *graph.Graph {
	g := concatGraph(op)
	g.AddTensor(&graph.Tensor{Name: "pr", DType: graph.Float32, Shape: []int{1, 8}})
	reshape := &graph.Node{Name: "reshape", Op: graph.Reshape, Inputs: []string{"p"}, Outputs: []string{"pr"}}
	nodes := []*graph.Node{}
	for _, n := range g.Nodes {
		if n.Name == "cat" {
			nodes = append(nodes, reshape)
			n.Inputs[0] = "pr"
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	return g
}

// Quantizer review: the Concat inputs that keep parameters of their own (a
// Sigmoid's output beside a wider input; a skip connection) were found only
// where they fed the Concat directly. Through a Reshape (a detection head's
// sigmoid scores reshaped beside its box regressions) the group took the
// Sigmoid's fixed [0, 1) and the wide input was clamped (0.2 dB against 40.5
// without the Reshape), and a reshaped skip connection was stored at the
// Concat's scale (24.7 dB against 37.2). The same bounds as
// TestConcatInputsKeepTheirOwnParameters hold through the Reshape.
func TestConcatInputsThroughReshape49(t *testing.T) {
	t.Run("sigmoid", func(t *testing.T) {
		g := concatGraphVia(graph.Sigmoid)
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
	})
	t.Run("skip", func(t *testing.T) {
		g := concatGraphVia(graph.Relu)
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
	})
}
