package graph

import "slices"

// FoldPadIntoConv folds a constant Pad of H and W into the Conv2D that
// reads it as its input, where the Pad is the convolution's own padding
// written out: Keras' ZeroPadding2D before every stride-2 depthwise layer
// of MobileNet V1 and V2, which TFLite keeps as a PAD. The Pad goes, and
// with it its output tensor, a copy of the input a few rows and columns
// larger (review finding: MobileNetV2 0.35 at 96×96 took 12.3% more
// instructions and twice the arena with the PADs than with SAME padding).
//
// A Pad folds where it pads a 4-D NHWC tensor on H and W only, by amounts
// each under the convolution's dilated kernel extent on its axis, with
// the value that contributes nothing to the sums: 0 for float32, the zero
// point for a quantized tensor (whose Pad's input and output have the
// same parameters, one zero point); and where its output is read once,
// by that convolution, and is neither a graph output nor a state. It
// returns how many folded.
func FoldPadIntoConv(g *Graph) int {
	readers := g.readCounts()
	pads := map[string]*Node{}
	for _, n := range g.Nodes {
		if n.Op == Pad && len(n.Inputs) == 1 && len(n.Outputs) == 1 && readers[n.Outputs[0]] == 1 {
			pads[n.Outputs[0]] = n
		}
	}
	folded := map[*Node]bool{}
	for _, n := range g.Nodes {
		if n.Op != Conv2D || len(n.Inputs) < 2 {
			continue
		}
		p := pads[n.Inputs[0]]
		ca, ok := n.Attrs.(*Conv2DAttrs)
		if p == nil || !ok || ca == nil || folded[p] {
			continue
		}
		add, ok := foldablePad(g, p, g.Tensors[n.Inputs[1]], ca)
		if !ok {
			continue
		}
		na := *ca
		na.Pad.Top += add.Top
		na.Pad.Left += add.Left
		na.Pad.Bottom += add.Bottom
		na.Pad.Right += add.Right
		n.Attrs = &na
		n.Inputs = slices.Clone(n.Inputs)
		n.Inputs[0] = p.Inputs[0]
		delete(g.Tensors, p.Outputs[0])
		folded[p] = true
	}
	if len(folded) > 0 {
		g.Nodes = slices.DeleteFunc(g.Nodes, func(n *Node) bool { return folded[n] })
	}
	return len(folded)
}

// foldablePad returns the padding Pad node p adds to H and W, and whether
// a convolution with weights w and attributes ca reading p's output may
// take it as its own (FoldPadIntoConv's conditions).
func foldablePad(g *Graph, p *Node, w *Tensor, ca *Conv2DAttrs) (Padding, bool) {
	a, ok := p.Attrs.(*PadAttrs)
	x, y := g.Tensors[p.Inputs[0]], g.Tensors[p.Outputs[0]]
	if !ok || a == nil || a.Mode != "constant" || len(a.Pads) != 8 || x == nil || y == nil || w == nil ||
		len(x.Shape) != 4 || len(w.Shape) != 4 || x.DType != y.DType {
		return Padding{}, false
	}
	// NHWC pads: N, H, W, C before, then after.
	if a.Pads[0] != 0 || a.Pads[3] != 0 || a.Pads[4] != 0 || a.Pads[7] != 0 {
		return Padding{}, false
	}
	add := Padding{Top: a.Pads[1], Left: a.Pads[2], Bottom: a.Pads[5], Right: a.Pads[6]}
	if add.Top < 0 || add.Left < 0 || add.Bottom < 0 || add.Right < 0 {
		return Padding{}, false
	}
	// Every window keeps at least one row and one column of the input.
	kh := (w.Shape[1]-1)*max(ca.Dilation[0], 1) + 1
	kw := (w.Shape[2]-1)*max(ca.Dilation[1], 1) + 1
	if ca.Pad.Top+add.Top >= kh || ca.Pad.Bottom+add.Bottom >= kh || ca.Pad.Left+add.Left >= kw || ca.Pad.Right+add.Right >= kw {
		return Padding{}, false
	}
	switch {
	case x.DType == Float32:
		return add, a.Value == 0 && x.Quant == nil && y.Quant == nil
	case x.DType.IsInt():
		q := x.Quant
		return add, q != nil && q.Equal(y.Quant) && len(q.ZeroPoint) == 1 && len(q.Scale) == 1 && a.Value == float64(q.ZeroPoint[0])
	}
	return Padding{}, false
}

// readCounts counts, per tensor, the node inputs that read it, plus one
// for a graph output and one for a state's tensor (read by the next
// inference): a tensor counted once is read by one node and nothing else.
func (g *Graph) readCounts() map[string]int {
	readers := map[string]int{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			readers[in]++
		}
	}
	for _, o := range g.Outputs {
		readers[o]++
	}
	for _, s := range g.States {
		readers[s.In]++
		readers[s.Out]++
	}
	return readers
}
