package graph

import "slices"

// FuseFCBias folds a float FullyConnected without bias and the Add of a
// constant vector over its output features that follows it (PyTorch and
// TensorFlow export a Linear layer over a sequence as MatMul then Add, in
// either operand order) into one FullyConnected with that bias. The Add's
// activation moves to the FullyConnected. An int8 build then adds the bias
// in the int32 accumulator instead of requantizing through a separate int8
// Add (user-journey finding: a keyword transformer ran 8% slower and with
// a larger arena for its bias-first Adds). It returns how many it folded.
func FuseFCBias(g *Graph) int {
	n := 0
	for {
		if !fuseOneFCBias(g) {
			return n
		}
		n++
	}
}

func fuseOneFCBias(g *Graph) bool {
	cons := g.Consumers()
	for _, fc := range g.Nodes {
		a, ok := fc.Attrs.(*FullyConnectedAttrs)
		if fc.Op != FullyConnected || !ok || a.Act != ActNone || len(fc.Inputs) < 2 || (len(fc.Inputs) > 2 && fc.Inputs[2] != "") {
			continue
		}
		y := g.Tensors[fc.Outputs[0]]
		w := g.Tensors[fc.Inputs[1]]
		if y == nil || y.DType != Float32 || w == nil || len(w.Shape) != 2 || slices.Contains(g.Outputs, y.Name) {
			continue
		}
		cs := cons[y.Name]
		if len(cs) != 1 || cs[0].Op != Add || len(cs[0].Inputs) != 2 {
			continue
		}
		add := cs[0]
		other := add.Inputs[0]
		if other == y.Name {
			other = add.Inputs[1]
		}
		b := g.Tensors[other]
		out := g.Tensors[add.Outputs[0]]
		N := w.Shape[0]
		if other == y.Name || b == nil || !b.IsConst() || b.DType != Float32 || b.Quant != nil || b.Data.Len() != N ||
			out == nil || !slices.Equal(out.Shape, y.Shape) || len(y.Shape) == 0 || y.Shape[len(y.Shape)-1] != N {
			continue
		}
		// The constant must vary along the last axis only: [N] or [1 ... 1 N].
		if len(b.Shape) > 0 && b.Shape[len(b.Shape)-1] != N {
			continue
		}
		act := ActNone
		if ba, ok := add.Attrs.(*BinaryAttrs); ok && ba != nil {
			act = ba.Act
		}
		bias := g.AddConst(g.UniqueName(fc.Name+"_bias"), &Data{DType: Float32, Shape: []int{N}, F: slices.Clone(b.Data.F)})
		na := *a
		na.Act = act
		inputs := []string{fc.Inputs[0], fc.Inputs[1], bias.Name}
		fc.Inputs, fc.Outputs, fc.Attrs = inputs, add.Outputs, &na
		g.Nodes = slices.DeleteFunc(g.Nodes, func(n *Node) bool { return n == add })
		delete(g.Tensors, y.Name)
		if len(cons[other]) == 1 && !slices.Contains(g.Outputs, other) {
			delete(g.Tensors, other)
		}
		return true
	}
	return false
}
