package graph

import "slices"

// Unused channels. In VWW's MobileNet a channel that dies in one pointwise
// layer (all-zero weights: a constant) keeps flowing through the depthwise
// layer after it, and the next pointwise layer gives it all-zero weights
// too (up to 225 of 256 input channels). Nothing downstream reads such a
// channel, so PruneUnusedChannels removes it from the whole chain: the
// producer's output rows, each channel-wise layer's channel and the
// consumer's input columns. The function the graph computes is unchanged,
// exactly: the removed columns had weight zero in every output of the only
// layer that reads them, so every integer sum is the same (and a bias the
// compiler folds with an input zero point sums zero weights there too);
// the removed channels of the producer and of the channel-wise layers fed
// nothing else. Only integer consumers qualify (a float zero weight times
// an infinite activation is not zero).

// PruneUnusedChannels removes unused channels along every chain of
// PermuteDeadChannels' shape (a Conv2D or FullyConnected producer, then
// only channel-wise ops, each output read once and not a graph output,
// then one channel-mixing consumer) and returns how many chains it
// shortened and how many channels it removed from them. It keeps at least
// one channel, and a multiple of four where there were.
func PruneUnusedChannels(g *Graph) (chains, channels int) {
	ix := newChainIndex(g)
	for _, p := range g.Nodes {
		if (p.Op != Conv2D && p.Op != FullyConnected) || len(p.Inputs) < 2 || len(p.Outputs) != 1 {
			continue
		}
		if a, ok := p.Attrs.(*Conv2DAttrs); p.Op == Conv2D && (!ok || a.Group != 1) {
			continue
		}
		w := g.Tensors[p.Inputs[1]]
		if w == nil || len(w.Shape) < 2 {
			continue
		}
		c := w.Shape[0]
		edits, ok := chanChain(g, p, c, ix)
		if !ok || len(edits) == 0 {
			continue
		}
		last := edits[len(edits)-1] // the consumer's weights, its input axis
		if !last.t.DType.IsInt() || last.t.Data == nil || len(last.t.Data.I) != last.t.NumElements() {
			continue
		}
		zero := zeroAlong(last.t.Data.I, last.t.Shape, last.axis)
		var keep []int
		for ch, z := range zero {
			if !z {
				keep = append(keep, ch)
			}
		}
		// Keep a multiple of four where the chain had one (the SIMD
		// schedules work on channel groups; an unused channel kept is
		// harmless), adding back the first unused ones.
		for ch := 0; ch < c && (len(keep) == 0 || c%4 == 0 && len(keep)%4 != 0); ch++ {
			if zero[ch] {
				keep = append(keep, ch)
			}
		}
		slices.Sort(keep)
		if len(keep) == c {
			continue
		}
		for _, e := range edits {
			selectAxis(e.t, e.axis, keep)
		}
		// The activations along the chain and the depthwise layers' groups.
		t := g.Tensors[p.Outputs[0]]
		for t != nil {
			t.Shape = slices.Clone(t.Shape)
			t.Shape[len(t.Shape)-1] = len(keep)
			n := ix.consumers[t.Name][0]
			if len(n.Inputs) > 1 && n.Inputs[1] == last.t.Name {
				break
			}
			if a, ok := n.Attrs.(*Conv2DAttrs); ok && n.Op == Conv2D {
				a.Group = len(keep)
			}
			t = g.Tensors[n.Outputs[0]]
		}
		chains++
		channels += c - len(keep)
	}
	return chains, channels
}

// zeroAlong reports, for each index along axis of a tensor of shape shape,
// whether every element with that index is zero.
func zeroAlong(v []int64, shape []int, axis int) []bool {
	outer, n, inner := axisSplit(shape, axis)
	zero := make([]bool, n)
	for i := range zero {
		zero[i] = true
	}
	for o := 0; o < outer; o++ {
		for i := 0; i < n; i++ {
			if zero[i] && slices.ContainsFunc(v[(o*n+i)*inner:(o*n+i+1)*inner], func(x int64) bool { return x != 0 }) {
				zero[i] = false
			}
		}
	}
	return zero
}

// selectAxis keeps only the indices keep (ascending) along axis of t's
// data, shape and per-axis quantization along that axis.
func selectAxis(t *Tensor, axis int, keep []int) {
	outer, n, inner := axisSplit(t.Shape, axis)
	pick := func(src []int64) []int64 {
		out := make([]int64, 0, outer*len(keep)*inner)
		for o := 0; o < outer; o++ {
			for _, i := range keep {
				out = append(out, src[(o*n+i)*inner:(o*n+i+1)*inner]...)
			}
		}
		return out
	}
	if t.Data.I != nil {
		t.Data.I = pick(t.Data.I)
	}
	if t.Data.F != nil {
		f := make([]float32, 0, outer*len(keep)*inner)
		for o := 0; o < outer; o++ {
			for _, i := range keep {
				f = append(f, t.Data.F[(o*n+i)*inner:(o*n+i+1)*inner]...)
			}
		}
		t.Data.F = f
	}
	t.Shape = slices.Clone(t.Shape)
	t.Shape[axis] = len(keep)
	t.Data.Shape = slices.Clone(t.Shape)
	if q := t.Quant; q.PerAxis() && q.Axis == axis {
		s := make([]float32, 0, len(keep))
		var z []int32
		for _, i := range keep {
			s = append(s, q.Scale[i])
			if len(q.ZeroPoint) == n {
				z = append(z, q.ZeroPoint[i])
			}
		}
		q.Scale = s
		if len(q.ZeroPoint) == n {
			q.ZeroPoint = z
		}
	}
}
