package graph

import "slices"

// Dead output channels. A trained network can leave convolution output
// channels whose weights are all zero (VWW's MobileNet: up to 234 of 256);
// such a channel holds its bias's requantized value at every pixel.
// PermuteDeadChannels reorders channels so that, for every convolution (or
// fully connected layer) with dead channels whose output flows only through channel-wise ops (depthwise
// convolutions, pools, reshapes that keep the channel axis) into one
// channel-mixing op (a convolution or fully connected layer, whose input
// axis takes the same reordering), the dead channels come last. The
// function the graph computes is unchanged, exactly: each channel keeps its
// own weights, bias and scales, and only the order of the consumer's
// integer sum changes. Kernels can then compute the leading live channels
// as one shorter channel loop and fill the trailing dead ones with a
// constant (tir's generic and SIMD schedules do).

// DeadChannels returns, for a Conv2D (group 1) or FullyConnected node with
// constant integer weights, which output channels have all-zero weights
// (nil when none or when the node is not such a layer).
func DeadChannels(g *Graph, n *Node) []bool {
	if (n.Op != Conv2D && n.Op != FullyConnected) || len(n.Inputs) < 2 {
		return nil
	}
	if n.Op == Conv2D {
		if a, ok := n.Attrs.(*Conv2DAttrs); !ok || a.Group != 1 {
			return nil
		}
	}
	w := g.Tensors[n.Inputs[1]]
	if w == nil || w.Data == nil || !w.DType.IsInt() || len(w.Shape) < 2 || len(w.Data.I) != w.NumElements() {
		return nil
	}
	return ZeroRows(w.Data.I, w.Shape[0])
}

// ZeroRows splits w into rows equal parts and reports which are all zero;
// nil when none is (or when rows does not divide w).
func ZeroRows(w []int64, rows int) []bool {
	if rows <= 0 || len(w)%rows != 0 {
		return nil
	}
	per := len(w) / rows
	var zero []bool
	for r := 0; r < rows; r++ {
		if slices.ContainsFunc(w[r*per:(r+1)*per], func(v int64) bool { return v != 0 }) {
			continue
		}
		if zero == nil {
			zero = make([]bool, rows)
		}
		zero[r] = true
	}
	return zero
}

// chainIndex is what chanChain looks up: each tensor's consumers, how many
// node inputs read it, and the graph's outputs.
type chainIndex struct {
	consumers map[string][]*Node
	uses      map[string]int
	isOut     map[string]bool
}

func newChainIndex(g *Graph) chainIndex {
	ix := chainIndex{consumers: g.Consumers(), uses: map[string]int{}, isOut: map[string]bool{}}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			ix.uses[in]++
		}
	}
	for _, o := range g.Outputs {
		ix.isOut[o] = true
	}
	return ix
}

// axisSplit is shape's element count before axis, along it and after it.
func axisSplit(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for i := 0; i < axis; i++ {
		outer *= shape[i]
	}
	for i := axis + 1; i < len(shape); i++ {
		inner *= shape[i]
	}
	return outer, shape[axis], inner
}

// chanEdit is one constant to reorder along one axis.
type chanEdit struct {
	t    *Tensor
	axis int
}

// PermuteDeadChannels moves dead channels last where it is safe (see above)
// and returns how many convolutions it reordered.
func PermuteDeadChannels(g *Graph) int {
	ix := newChainIndex(g)
	count := 0
	for _, p := range g.Nodes {
		if p.Op != Conv2D && p.Op != FullyConnected {
			continue
		}
		dead := DeadChannels(g, p)
		if dead == nil || !slices.Contains(dead, false) {
			continue
		}
		cout := len(dead)
		perm := make([]int, 0, cout) // new channel i is old channel perm[i]
		for oc, d := range dead {
			if !d {
				perm = append(perm, oc)
			}
		}
		for oc, d := range dead {
			if d {
				perm = append(perm, oc)
			}
		}
		if !slices.IsSorted(perm) {
			if edits, ok := chanChain(g, p, cout, ix); ok {
				for _, e := range edits {
					permuteAxis(e.t, e.axis, perm)
				}
				count++
			}
		}
	}
	return count
}

// chanChain collects what reordering p's output channels must also reorder:
// p's weights (axis 0), bias and per-channel scales, each channel-wise node
// on the way and the consuming layer's input axis. ok is false when the
// output reaches anything else, more than one consumer, or a graph output,
// or when a constant to edit is shared.
func chanChain(g *Graph, p *Node, c int, ix chainIndex) ([]chanEdit, bool) {
	consumers, uses, isOut := ix.consumers, ix.uses, ix.isOut
	var edits []chanEdit
	own := func(n *Node, i, axis int) bool {
		if i >= len(n.Inputs) || n.Inputs[i] == "" {
			return true
		}
		t := g.Tensors[n.Inputs[i]]
		if t == nil || t.Data == nil || uses[t.Name] != 1 || len(t.Shape) <= axis || t.Shape[axis] != c ||
			len(t.Data.I)+len(t.Data.F) != t.NumElements() {
			return false
		}
		// Per-channel scales must lie along the reordered axis for an
		// output-channel axis (they move with it) and along another one for
		// a consumer's input axis (they stay).
		if q := t.Quant; q.PerAxis() && (q.Axis == axis) != (axis == 0) {
			return false
		}
		edits = append(edits, chanEdit{t, axis})
		return true
	}
	// The producer: weights [Cout, ...] and bias [Cout].
	if !own(p, 1, 0) || !own(p, 2, 0) {
		return nil, false
	}
	t := g.Tensors[p.Outputs[0]]
	for steps := 0; steps < len(g.Nodes); steps++ {
		if t == nil || isOut[t.Name] || len(consumers[t.Name]) != 1 || t.Quant.PerAxis() || len(t.Shape) == 0 || t.Shape[len(t.Shape)-1] != c {
			return nil, false
		}
		n := consumers[t.Name][0]
		if len(n.Inputs) == 0 || n.Inputs[0] != t.Name || slices.Contains(n.Inputs[1:], t.Name) {
			return nil, false
		}
		switch n.Op {
		case Conv2D:
			a, ok := n.Attrs.(*Conv2DAttrs)
			if !ok {
				return nil, false
			}
			w := g.Tensors[n.Inputs[1]]
			if w == nil || len(w.Shape) != 4 {
				return nil, false
			}
			switch {
			case a.Group == 1:
				// Mixes channels: its weights' input axis, and the chain ends.
				return edits, own(n, 1, 3)
			case a.Group == c && w.Shape[0] == c && w.Shape[3] == 1:
				// Depthwise, multiplier 1: channel-wise.
				if !own(n, 1, 0) || !own(n, 2, 0) {
					return nil, false
				}
			default:
				return nil, false
			}
		case FullyConnected:
			w := g.Tensors[n.Inputs[1]]
			if w == nil || len(w.Shape) != 2 || w.Shape[1] != c || t.NumElements()%c != 0 {
				return nil, false
			}
			return edits, own(n, 1, 1)
		case AvgPool2D, MaxPool2D, Relu, Clip:
		case Reshape:
			// The channel axis stays innermost and whole.
			out := g.Tensors[n.Outputs[0]]
			if out == nil || len(out.Shape) == 0 || out.Shape[len(out.Shape)-1] != c {
				return nil, false
			}
		default:
			return nil, false
		}
		if len(n.Outputs) != 1 {
			return nil, false
		}
		t = g.Tensors[n.Outputs[0]]
	}
	return nil, false
}

// permuteAxis reorders t's data (and per-axis scales along that axis) so
// that new index i along axis holds old index perm[i].
func permuteAxis(t *Tensor, axis int, perm []int) {
	outer, n, inner := axisSplit(t.Shape, axis)
	move := func(get func(int) int64, set func(int, int64)) {
		for o := 0; o < outer; o++ {
			for i := 0; i < n; i++ {
				for k := 0; k < inner; k++ {
					set((o*n+i)*inner+k, get((o*n+perm[i])*inner+k))
				}
			}
		}
	}
	if t.Data.I != nil {
		old := slices.Clone(t.Data.I)
		move(func(i int) int64 { return old[i] }, func(i int, v int64) { t.Data.I[i] = v })
	}
	if t.Data.F != nil {
		old := slices.Clone(t.Data.F)
		move(func(i int) int64 { return int64(i) }, func(i int, v int64) { t.Data.F[i] = old[v] })
	}
	if q := t.Quant; q.PerAxis() && q.Axis == axis {
		s := slices.Clone(q.Scale)
		for i := range perm {
			q.Scale[i] = s[perm[i]]
		}
		if len(q.ZeroPoint) == n {
			z := slices.Clone(q.ZeroPoint)
			for i := range perm {
				q.ZeroPoint[i] = z[perm[i]]
			}
		}
	}
}
