package pipeline

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// foldConstNodes replaces each node whose inputs are all constants, and
// whose outputs take no more bytes than its inputs (a Reshape, a Quantize;
// not a Dequantize, which would store 4 bytes a weight), by their values,
// computed by the reference interpreter (so exactly what the kernel would
// compute). The importers fold their constants; later passes can leave
// such a node: quantizing a model whose output is one of its weights
// (a Reshape copy of it) gave a Quantize of a Reshape of a constant, a view
// of flash that the plan gives no place (user-journey finding).
func foldConstNodes(g *graph.Graph) {
	stateful := map[string]bool{}
	for _, s := range g.States {
		stateful[s.In], stateful[s.Out] = true, true
	}
	for {
		folded := false
		for i, n := range g.Nodes {
			if !foldable(g, n, stateful) {
				continue
			}
			res, err := interp.FoldNode(g, n)
			if err != nil {
				continue // left to the kernel
			}
			for _, out := range n.Outputs {
				g.Tensors[out].Data = res[out]
			}
			g.Nodes = slices.Delete(g.Nodes, i, i+1)
			folded = true
			break
		}
		if !folded {
			g.Prune()
			return
		}
	}
}

func foldable(g *graph.Graph, n *graph.Node, stateful map[string]bool) bool {
	if len(n.Inputs) == 0 || len(n.Outputs) == 0 {
		return false
	}
	// A Dequantize of constant weights or bias that a float convolution
	// or fully connected layer reads (a QDQ node left unfolded: uint8
	// activations, a layer whose output is not quantized) is folded
	// whatever its bytes: the kernels take constant weights only, and it
	// was refused as "weights computed at run time" (QDQ journey finding).
	if n.Op == graph.Dequantize && len(n.Outputs) == 1 && weightsOf(g, n.Outputs[0]) {
		t := g.Tensors[n.Inputs[0]]
		return t != nil && t.IsConst() && !stateful[n.Inputs[0]] && !stateful[n.Outputs[0]]
	}
	var in, out int64
	for _, name := range n.Inputs {
		if name == "" {
			continue // an optional input left out (a bias-free layer)
		}
		t := g.Tensors[name]
		if t == nil || !t.IsConst() || stateful[name] {
			return false
		}
		in += int64(t.Bytes())
	}
	for _, name := range n.Outputs {
		t := g.Tensors[name]
		if name == "" || t == nil || t.IsConst() || stateful[name] {
			return false
		}
		out += int64(t.Bytes())
	}
	// A product of constants is folded whatever its size: its kernels take
	// a run-time input only (a review finding: PyTorch's GRU without hx,
	// its zero h0 times the recurrent weights, and a projected positional
	// table, were refused as "constant input is not supported").
	switch n.Op {
	case graph.FullyConnected, graph.BatchMatMul, graph.Conv2D:
		return true
	}
	return out <= in
}

// weightsOf reports whether tensor name is read as the weights or bias of
// a convolution, transposed convolution or fully connected layer.
func weightsOf(g *graph.Graph, name string) bool {
	for _, c := range g.Nodes {
		switch c.Op {
		case graph.Conv2D, graph.ConvTranspose2D, graph.FullyConnected:
			for i, in := range c.Inputs {
				if i > 0 && in == name {
					return true
				}
			}
		}
	}
	return false
}
