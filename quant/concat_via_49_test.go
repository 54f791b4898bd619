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
	t.Run("sigmoid", func(t *testing.T) { checkSigmoidConcat(t, concatGraphVia(graph.Sigmoid)) })
	t.Run("skip", func(t *testing.T) { checkSkipConcat(t, concatGraphVia(graph.Relu)) })
}
