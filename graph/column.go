package graph

import "slices"

// ColumnConvAsRow rewrites a convolution with a K×1 window over a map one
// pixel wide (a 1-D layer along H: time down the rows of a spectrogram, one
// column) as the same convolution with a 1×K window over a map one pixel
// high, between two Reshapes. An NHWC tensor [N, H, 1, C] holds its bytes in
// the order of [N, 1, H, C], so the Reshapes are views (memplan: no bytes,
// no copy) and the weights [Co, K, 1, Cg] keep their order as [Co, 1, K, Cg].
// The schedules' fast forms lay a row's pixels out along W (a review: K×1
// convolutions over one column ran at 0.70 to 1.19 MACs an instruction on
// the Cortex-M4 against 1.06 to 1.36 laid out as 1×K; K×1 depthwise ones in
// the channel-quad schedule, where 1×K ones take the planar form).
//
// A convolution is rewritten where its input is [N, H, 1, C] with H > 1, its
// weights a constant [Co, K, 1, Cg] with K > 1, its output [N, OH, 1, Co],
// and it pads no column (left and right 0); and where neither its input
// nor its output is a recurrent state, and its output is not a graph
// output (whose Reshape, outside the arena, would be a copy: 4
// instructions a byte and an arena buffer, a review found). It returns
// how many were.
//
// Other convolutions are rewritten where a group reads at least minCg
// input channels (on the Cortex-M4 a 1×5 convolution over one channel took
// 12% more instructions as a row, its im2col staging a byte at a time
// either way; from 8 channels 2 to 27% fewer).
func ColumnConvAsRow(g *Graph, minCg int) int {
	states, outs := map[string]bool{}, map[string]bool{}
	for _, st := range g.States {
		states[st.In], states[st.Out] = true, true
	}
	for _, o := range g.Outputs {
		outs[o] = true
	}
	var rewritten int
	dropped := map[string]bool{} // the column weights, if no other node reads them
	nodes := make([]*Node, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		ca, ok := n.Attrs.(*Conv2DAttrs)
		if n.Op != Conv2D || !ok || ca == nil || len(n.Inputs) < 2 || len(n.Outputs) != 1 || states[n.Outputs[0]] || states[n.Inputs[0]] {
			nodes = append(nodes, n)
			continue
		}
		x, w, y := g.Tensors[n.Inputs[0]], g.Tensors[n.Inputs[1]], g.Tensors[n.Outputs[0]]
		if x == nil || w == nil || y == nil || !w.IsConst() || len(x.Shape) != 4 || len(w.Shape) != 4 || len(y.Shape) != 4 ||
			x.Shape[2] != 1 || x.Shape[1] < 2 || w.Shape[2] != 1 || w.Shape[1] < 2 || y.Shape[2] != 1 ||
			ca.Pad.Left != 0 || ca.Pad.Right != 0 || len(w.Data.Shape) != 4 {
			nodes = append(nodes, n)
			continue
		}
		// Depthwise layers where the 1×K planar form takes them (K odd up
		// to 15, no dilation, strides 1 and 2, a map at least K long);
		// other convolutions of minCg input channels a group or more,
		// without dilation. Elsewhere the rewrite measured no gain (a
		// review: up to 19% more where the planar form declines).
		k, h := w.Shape[1], x.Shape[1]
		dw := ca.Group > 1 && w.Shape[3] == 1
		// An even K takes one more tap of weight 0 past the end, over a
		// column of padding (the streaming wake word model's 10×1 layer:
		// the channel-quad schedule at 0.21 MACs an instruction on the
		// Cortex-M4, session 58 review): not where the weights have a zero
		// point, which a stored 0 would not be (the kernels multiply by
		// w − z), nor over int16 activations, which take no planar form
		// (the extra tap measured 7 to 15% slower there).
		evenOK := k%2 == 1 || !weightZeroPoint(w) && x.DType != Int16
		if dw && (k > 15 || ca.Dilation[0] > 1 || ca.Stride[0] > 2 || h < k || !evenOK) ||
			!dw && (w.Shape[3] < minCg || ca.Dilation[0] > 1) || outs[y.Name] {
			nodes = append(nodes, n)
			continue
		}
		view := func(t *Tensor, base string) *Tensor {
			v := *t
			v.Name = g.UniqueName(base)
			v.Shape = []int{t.Shape[0], 1, t.Shape[1], t.Shape[3]}
			v.Data = nil
			return g.AddTensor(&v)
		}
		xr, yr := view(x, x.Name+"/row"), view(y, y.Name+"/row")
		d := w.Data.Clone()
		d.Shape = []int{w.Shape[0], 1, w.Shape[1], w.Shape[3]}
		even := dw && k%2 == 0
		if even {
			d = padTap(w.Data, w.Shape[0], k)
		}
		wr := g.AddConst(g.UniqueName(w.Name+"/row"), d)
		wr.Quant = w.Quant
		dropped[w.Name] = true
		na := *ca
		na.Stride = [2]int{1, ca.Stride[0]}
		na.Dilation = [2]int{1, ca.Dilation[0]}
		na.Pad = Padding{Left: ca.Pad.Top, Right: ca.Pad.Bottom}
		if even {
			na.Pad.Right++
			na.ZeroTaps++
		}
		conv := *n
		conv.Attrs = &na
		conv.Inputs = slices.Clone(n.Inputs)
		conv.Inputs[0], conv.Inputs[1] = xr.Name, wr.Name
		conv.Outputs = []string{yr.Name}
		nodes = append(nodes,
			&Node{Name: xr.Name, Op: Reshape, Inputs: []string{x.Name}, Outputs: []string{xr.Name}},
			&conv,
			&Node{Name: g.UniqueName(n.Name + "/column"), Op: Reshape, Inputs: []string{yr.Name}, Outputs: []string{y.Name}})
		rewritten++
	}
	g.Nodes = nodes
	// Weights no node reads any more go (the rewritten layers' column
	// forms).
	if rewritten > 0 {
		readers := g.readCounts()
		for name, t := range g.Tensors {
			if t.IsConst() && readers[name] == 0 && dropped[name] {
				delete(g.Tensors, name)
			}
		}
	}
	return rewritten
}

// padTap is depthwise weights [co, k, 1, 1] as [co, 1, k+1, 1], each
// channel's taps followed by a 0: the same sums over one more column of
// padding.
func padTap(w *Data, co, k int) *Data {
	d := NewData(w.DType, []int{co, 1, k + 1, 1})
	for c := 0; c < co; c++ {
		for t := 0; t < k; t++ {
			if w.F != nil {
				d.F[c*(k+1)+t] = w.F[c*k+t]
			} else {
				d.I[c*(k+1)+t] = w.I[c*k+t]
			}
		}
	}
	return d
}

// weightZeroPoint reports whether quantized weights w have a zero point
// other than 0 (per tensor or in any channel).
func weightZeroPoint(w *Tensor) bool {
	if w.Quant == nil {
		return false
	}
	for _, z := range w.Quant.ZeroPoint {
		if z != 0 {
			return true
		}
	}
	return false
}
