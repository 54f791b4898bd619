package graph

// MaterializeConstOutputs gives every graph output that is a compile-time
// constant (a shape, a folded expression, Dropout's mask) a producer: the
// constant moves to a new tensor and a Reshape copies it into the output, so
// generated code writes the output like any other. It returns how many
// outputs it changed.
func MaterializeConstOutputs(g *Graph) int {
	changed := 0
	for _, name := range g.Outputs {
		t := g.Tensors[name]
		if t == nil || !t.IsConst() {
			continue
		}
		src := g.UniqueName(name + "/const")
		g.AddTensor(&Tensor{Name: src, DType: t.DType, Shape: append([]int{}, t.Shape...), Quant: t.Quant, Data: t.Data})
		for _, n := range g.Nodes {
			for i, in := range n.Inputs {
				if in == name {
					n.Inputs[i] = src
				}
			}
		}
		t.Data = nil
		g.AddNode(&Node{Name: g.UniqueName(name + "/copy"), Op: Reshape, Inputs: []string{src}, Outputs: []string{name}})
		changed++
	}
	return changed
}
