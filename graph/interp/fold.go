package interp

import "github.com/mcugen/mcugen/graph"

// FoldNode computes node n of g, whose inputs must all be constants, in the
// reference interpreter (so exactly what its kernel would compute) and
// returns its outputs' values by name. It leaves g unchanged. Constant
// folding goes through it: the pipeline's last fold of constant nodes, and
// the TFLite importer's unrolling of loops, whose counters and conditions
// must be known at compile time.
func FoldNode(g *graph.Graph, n *graph.Node) (map[string]*graph.Data, error) {
	mini := graph.New("fold", g.Format)
	for _, in := range n.Inputs {
		if in != "" && mini.Tensors[in] == nil {
			mini.AddTensor(g.Tensors[in])
		}
	}
	for _, out := range n.Outputs {
		t := *g.Tensors[out]
		t.Data = nil
		mini.AddTensor(&t)
		mini.Outputs = append(mini.Outputs, out)
	}
	mini.AddNode(n)
	return Run(mini, map[string]*graph.Data{})
}
