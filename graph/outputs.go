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

// CopyAliasedOutputs gives each output that is also a graph input, or is
// listed again after an earlier output, a tensor of its own written by a
// copy (a same-shape Reshape): the generated entry function writes an output
// only where a node produces it, so a model that passes its input through
// left the caller's output buffer unwritten.
func (g *Graph) CopyAliasedOutputs() {
	seen := map[string]bool{}
	for _, in := range g.Inputs {
		seen[in] = true
	}
	for i, out := range g.Outputs {
		if !seen[out] {
			seen[out] = true
			continue
		}
		t := g.Tensors[out]
		if t == nil {
			continue
		}
		c := g.AddTensor(&Tensor{Name: g.UniqueName(out), DType: t.DType, Shape: append([]int(nil), t.Shape...), Quant: t.Quant})
		g.AddNode(&Node{Name: c.Name + "/copy", Op: Reshape, Inputs: []string{out}, Outputs: []string{c.Name}})
		g.Outputs[i] = c.Name
		seen[c.Name] = true
	}
}
