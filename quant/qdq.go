package quant

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
)

// FoldQDQ turns a float graph in QDQ form (Quantize->Dequantize pairs around
// float ops, as imported from a QDQ ONNX model) into the int8 graph Quantize
// would build: every float op whose activation inputs come from Dequantize
// and whose outputs all go to one Quantize each becomes the integer op, with
// the scales and zero points of the model; Dequantize of a constant int8
// weight or int32 bias hands over the constant itself. Integer ops requantize
// with TFLite's fixed-point arithmetic (not ONNX's float rounding), so the
// result matches Quantize's graph bit for bit; the Quantize nodes that stay
// (graph inputs, float fallbacks) keep QuantizeLinear's rounding, half to
// even, as Quantize's own do. Layout transposes the importer
// put around constants and activations are folded or cancelled first. Ops
// with no int8 kernel stay in float between their Dequantize and Quantize;
// graph inputs and outputs stay float (see IntIO).
func FoldQDQ(g *graph.Graph) (*graph.Graph, error) {
	if err := graph.Validate(g); err != nil {
		return nil, fmt.Errorf("quant: fold QDQ: %w", err)
	}
	f := cloneGraph(g)
	edges := shiftUint8(f, true)
	sinkConstDequantize(f)
	hoistDequantize(f)
	sinkQuantize(f)
	cancelTransposes(f)
	fuseMatMulBias(f)
	fuseActivations(f, f.KeepFloat)
	prod := f.Producers()
	cons := f.Consumers()
	isOut := outputSet(f)
	drop := map[*graph.Node]bool{}
	for i, n := range f.Nodes {
		if n.Op == graph.Quantize || n.Op == graph.Dequantize {
			continue
		}
		nn, qs, ok := foldNode(f, n, prod, cons, isOut)
		if !ok {
			continue
		}
		f.Nodes[i] = nn
		for _, q := range qs {
			drop[q] = true
		}
	}
	kept := f.Nodes[:0]
	for _, n := range f.Nodes {
		if !drop[n] {
			kept = append(kept, n)
		}
	}
	f.Nodes = kept
	foldRequantize(f)
	removeDead(f)
	undoIdleEdges(f, edges)
	// A float-to-int8 Quantize left (an input's, a float island's exit)
	// keeps the model's QuantizeLinear rounding, half to even, as ONNX
	// Runtime runs it (API journey: folding made it half away from zero,
	// 30 of 256 outputs of qdq_conv apart on inputs at ties).
	f.Prune()
	if err := graph.Validate(f); err != nil {
		return nil, fmt.Errorf("quant: folded QDQ graph is invalid: %w", err)
	}
	return f, nil
}

// ShiftUint8 returns g with its uint8 activations made int8 where shiftUint8
// can (a graph in ONNX Runtime's QOperator form with no float operator to
// fold: uint8 from QuantizeLinear through QLinearConv layers), so they run
// in the int8 kernels; g is not changed.
func ShiftUint8(g *graph.Graph) *graph.Graph {
	f := cloneGraph(g)
	_ = shiftUint8(f, false)
	return f
}

// shiftUint8 turns a QDQ graph's uint8 activations (ONNX Runtime's older
// default) into int8 ones of zero point z - 128, so they fold to the int8
// kernels: QuantizeLinear's uint8 clamp(round(x/s) + z, 0, 255) is exactly
// 128 more than the int8 clamp(round(x/s) + z - 128, -128, 127), and both
// dequantize to the same values. A Quantize's uint8 output moves with its
// copies (the importer's Transposes and Reshapes) down to the Dequantizes
// that read them; a set touching a graph input or output, or read by any
// other op, stays uint8 (and float between its pairs). A uint8 constant
// that only Dequantizes read (uint8 weights) shifts too. (QDQ journey: a
// uint8 model did not fold at all.)
//
// With edges (FoldQDQ), a uint8 graph input or output is requantized to an
// int8 copy first (edgeUint8), so that the float layer next to it folds.
// ShiftUint8's graphs have no float layer to fold: their integer layers
// read and write a uint8 edge as it is, and a requantization there would be
// a pass more (a session 50 review: +3.9% on a QOperator model).
//
// It returns the edges' requantizations that stay.
func shiftUint8(f *graph.Graph, edges bool) (kept []*graph.Node) {
	if edges {
		added := edgeUint8(f)
		defer func() { kept = dropUnshiftedEdges(f, added) }()
	}
	cons := f.Consumers()
	io := map[string]bool{}
	for _, n := range append(slices.Clone(f.Inputs), f.Outputs...) {
		io[n] = true
	}
	// moves: the output holds input values (a copy, or a max pool's
	// largest: the order survives the shift), at the input's parameters.
	moves := func(n *graph.Node) bool {
		return n.Op == graph.Transpose || n.Op == graph.Reshape || n.Op == graph.MaxPool2D
	}
	isU8 := func(name string) bool {
		t := f.Tensors[name]
		return t != nil && t.DType == graph.UInt8 && t.Quant != nil && !io[name]
	}
	shift := func(t *graph.Tensor) { *t = *shiftedTensor(t, t.Name) }
	// intReader reads a uint8 activation through its zero point alone (the
	// integer layers of QLinearConv and QLinearMatMul), so it reads the
	// shifted int8 value the same.
	intReader := func(c *graph.Node, name string) bool {
		switch c.Op {
		case graph.Conv2D, graph.FullyConnected:
			return c.Inputs[0] == name && !slices.Contains(c.Inputs[1:], name)
		case graph.BatchMatMul:
			return true
		}
		return false
	}
	// requantizes: an integer layer writing a quantized uint8 activation
	// (ONNX Runtime's QOperator models: uint8 from QLinearConv to
	// QLinearConv, and to the Dequantize of an expanded QLinearAdd), which
	// writes the same value less 128 at zero point z − 128.
	requantizes := func(n *graph.Node) bool {
		return (n.Op == graph.Conv2D || n.Op == graph.FullyConnected || n.Op == graph.BatchMatMul) && len(n.Outputs) == 1 && isU8(n.Outputs[0])
	}
	for _, n := range f.Nodes {
		switch {
		case (n.Op == graph.Quantize || requantizes(n)) && len(n.Outputs) == 1 && isU8(n.Outputs[0]):
			// The output and its copies, if every reader is a Dequantize,
			// a copy or an integer layer.
			set, ok := []string{n.Outputs[0]}, true
			for i := 0; i < len(set) && ok; i++ {
				for _, c := range cons[set[i]] {
					switch {
					case c.Op == graph.Dequantize, intReader(c, set[i]),
						c.Op == graph.Quantize && c.Inputs[0] == set[i]: // a requantization reads through the zero point
					case moves(c) && c.Inputs[0] == set[i] && len(c.Outputs) == 1 && isU8(c.Outputs[0]):
						set = append(set, c.Outputs[0])
					default:
						ok = false
					}
				}
			}
			if ok {
				for _, name := range set {
					shift(f.Tensors[name])
				}
			}
		case n.Op == graph.Dequantize && len(n.Inputs) > 0 && isU8(n.Inputs[0]) && f.Tensors[n.Inputs[0]].IsConst():
			only := true
			for _, c := range cons[n.Inputs[0]] {
				only = only && c.Op == graph.Dequantize
			}
			if only {
				shift(f.Tensors[n.Inputs[0]])
			}
		}
	}
	// uint8 weights an integer layer reads itself (QLinearConv's and
	// QLinearMatMul's in ONNX Runtime's QOperator models), through their
	// zero point: w − z is the same shifted. (Review: they stayed uint8,
	// which the dsp kernels do not take, and the layers ran the generic C
	// at 2.5x the instructions.)
	intLayer := func(c *graph.Node) bool {
		return c.Op == graph.Conv2D || c.Op == graph.FullyConnected || c.Op == graph.BatchMatMul
	}
	for _, n := range f.Nodes {
		if !intLayer(n) || len(n.Inputs) < 2 || !isU8(n.Inputs[1]) || !f.Tensors[n.Inputs[1]].IsConst() {
			continue
		}
		w, only := n.Inputs[1], true
		for _, c := range cons[w] {
			asWeights := intLayer(c) && len(c.Inputs) > 1 && c.Inputs[1] == w && c.Inputs[0] != w && !slices.Contains(c.Inputs[2:], w)
			only = only && (c.Op == graph.Dequantize || asWeights)
		}
		if only {
			shift(f.Tensors[w])
		}
	}
	return nil // the deferred dropUnshiftedEdges sets kept
}

// edgeUint8 puts a requantization at each uint8 graph input and output of
// a QDQ graph: an input becomes Quantize(input) into a copy its readers read,
// an output the Quantize of a copy its producer writes. The copies are
// inside the graph, so shiftUint8 makes them int8 with the rest and the
// layers next to the edge fold to the int8 kernels (review finding: a Conv
// writing a uint8 graph output ran in float, 48,329 instructions on the M4
// against 22,934 with a DequantizeLinear after it); the edges cost one
// elementwise pass each. It returns the requantizations it added; those
// whose copy did not shift are taken out again (dropUnshiftedEdges).
func edgeUint8(f *graph.Graph) []*graph.Node {
	isU8 := func(name string) bool {
		t := f.Tensors[name]
		return t != nil && t.DType == graph.UInt8 && t.Quant != nil && !t.IsConst()
	}
	copyOf := func(name string) string {
		c := *f.Tensors[name]
		c.Name = f.UniqueName(name + "_s8")
		c.Quant = &graph.Quant{Scale: slices.Clone(c.Quant.Scale), ZeroPoint: slices.Clone(c.Quant.ZeroPoint), Axis: c.Quant.Axis}
		f.AddTensor(&c)
		return c.Name
	}
	rename := func(n *graph.Node, from, to string) {
		for i, in := range n.Inputs {
			if in == from {
				n.Inputs[i] = to
			}
		}
	}
	var front []*graph.Node
	for _, in := range f.Inputs {
		if !isU8(in) || len(f.Tensors[in].Quant.Scale) != 1 {
			continue
		}
		c := copyOf(in)
		for _, n := range f.Nodes {
			rename(n, in, c)
		}
		front = append(front, &graph.Node{Name: f.UniqueName(in + "_requant"), Op: graph.Quantize, Inputs: []string{in}, Outputs: []string{c}})
	}
	added := slices.Clone(front)
	outs := map[string]bool{}
	for _, o := range f.Outputs {
		if isU8(o) && len(f.Tensors[o].Quant.Scale) == 1 && !slices.Contains(f.Inputs, o) {
			outs[o] = true
		}
	}
	nodes := append(front, f.Nodes...)
	f.Nodes = nil
	for _, n := range nodes {
		f.Nodes = append(f.Nodes, n)
		for i, o := range n.Outputs {
			if !outs[o] {
				continue
			}
			delete(outs, o)
			c := copyOf(o)
			n.Outputs[i] = c
			q := &graph.Node{Name: f.UniqueName(o + "_requant"), Op: graph.Quantize, Inputs: []string{c}, Outputs: []string{o}}
			f.Nodes = append(f.Nodes, q)
			added = append(added, q)
			// Later readers of the output read the copy.
			for _, m := range nodes {
				if m != n {
					rename(m, o, c)
				}
			}
		}
	}
	return added
}

// dropUnshiftedEdges takes out the requantizations edgeUint8 added whose
// copy stayed uint8 (a reader shiftUint8 cannot shift for): the graph reads
// and writes the edge tensor itself again, as it did, with no extra pass.
// It returns the requantizations that stay.
func dropUnshiftedEdges(f *graph.Graph, edges []*graph.Node) []*graph.Node {
	drop := map[*graph.Node]bool{}
	var kept []*graph.Node
	for _, q := range edges {
		in, out := q.Inputs[0], q.Outputs[0]
		if f.Tensors[in].DType != f.Tensors[out].DType {
			kept = append(kept, q) // shifted: the requantization stays
			continue
		}
		// The copy is the output (an input's edge) or the input (an
		// output's): every use of it becomes the edge tensor's.
		copyName, edge := out, in
		if slices.Contains(f.Outputs, out) {
			copyName, edge = in, out
		}
		for _, n := range f.Nodes {
			for i, x := range n.Inputs {
				if x == copyName {
					n.Inputs[i] = edge
				}
			}
			for i, x := range n.Outputs {
				if x == copyName && n != q {
					n.Outputs[i] = edge
				}
			}
		}
		delete(f.Tensors, copyName)
		drop[q] = true
	}
	if len(drop) > 0 {
		f.Nodes = slices.DeleteFunc(f.Nodes, func(n *graph.Node) bool { return drop[n] })
	}
	return kept
}

// undoIdleEdges takes out, after folding, an edge's requantization that
// bought nothing (a session 50 review: a float island next to a uint8 edge
// took a pass more): an input's copy that only Dequantizes read is read as
// the uint8 input itself, and an output's copy that a float Quantize writes
// and nothing else reads is that Quantize writing the uint8 output itself.
func undoIdleEdges(f *graph.Graph, edges []*graph.Node) {
	if len(edges) == 0 {
		return
	}
	present := map[*graph.Node]bool{}
	for _, n := range f.Nodes {
		present[n] = true
	}
	cons, prod := f.Consumers(), f.Producers()
	drop := map[*graph.Node]bool{}
	for _, q := range edges {
		if !present[q] || len(q.Inputs) != 1 || len(q.Outputs) != 1 {
			continue
		}
		in, out := q.Inputs[0], q.Outputs[0]
		switch {
		case slices.Contains(f.Inputs, in) && !slices.Contains(f.Outputs, out):
			readers := cons[out]
			idle := len(readers) > 0
			for _, r := range readers {
				idle = idle && r.Op == graph.Dequantize
			}
			if !idle {
				continue
			}
			for _, r := range readers {
				for i, x := range r.Inputs {
					if x == out {
						r.Inputs[i] = in
					}
				}
			}
			delete(f.Tensors, out)
			drop[q] = true
		case slices.Contains(f.Outputs, out) && !slices.Contains(f.Outputs, in) && !slices.Contains(f.Inputs, in):
			p := prod[in]
			if p == nil || p.Op != graph.Quantize || len(p.Inputs) == 0 {
				continue
			}
			if t := f.Tensors[p.Inputs[0]]; t == nil || t.DType != graph.Float32 {
				continue
			}
			// Other readers of the copy may be Dequantizes, which read
			// the uint8 output as well.
			idle := true
			for _, r := range cons[in] {
				idle = idle && (r == q || r.Op == graph.Dequantize)
			}
			if !idle {
				continue
			}
			for _, r := range cons[in] {
				for i, x := range r.Inputs {
					if x == in && r != q {
						r.Inputs[i] = out
					}
				}
			}
			for i, x := range p.Outputs {
				if x == in {
					p.Outputs[i] = out
				}
			}
			delete(f.Tensors, in)
			drop[q] = true
		}
	}
	if len(drop) > 0 {
		f.Nodes = slices.DeleteFunc(f.Nodes, func(n *graph.Node) bool { return drop[n] })
	}
}

// foldNode builds the integer version of n, or reports that n stays float.
func foldNode(f *graph.Graph, n *graph.Node, prod map[string]*graph.Node, cons map[string][]*graph.Node, isOut map[string]bool) (*graph.Node, []*graph.Node, bool) {
	if f.KeepFloat[n.Name] {
		return nil, nil, false // kept float on purpose (quantize --float)
	}
	nn := &graph.Node{Name: n.Name, Op: n.Op, Inputs: slices.Clone(n.Inputs), Outputs: slices.Clone(n.Outputs), Attrs: copyAttrs(n.Attrs)}
	var qs []*graph.Node
	for i, o := range n.Outputs {
		c := cons[o]
		if isOut[o] || len(c) != 1 || c[0].Op != graph.Quantize {
			return nil, nil, false
		}
		qt := f.Tensors[c[0].Outputs[0]]
		if qt.DType != graph.Int8 || qt.Quant == nil || len(qt.Quant.Scale) != 1 {
			return nil, nil, false
		}
		nn.Outputs[i] = qt.Name
		qs = append(qs, c[0])
	}
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		t := f.Tensors[in]
		if t.DType != graph.Float32 {
			continue // shape operands and the like
		}
		if t.IsConst() {
			// A float constant where the model had no Dequantize.
			var d *graph.Data
			var q *graph.Quant
			switch {
			case (n.Op == graph.Conv2D || n.Op == graph.FullyConnected || n.Op == graph.ConvTranspose2D) && i == 1:
				d, q = SymmetricWeights(t.Data, false)
			case (n.Op == graph.Conv2D || n.Op == graph.FullyConnected || n.Op == graph.ConvTranspose2D) && i == 2:
				// Quantized below, once the weight scales are known (it
				// returned here, and the layer ran in float: a review
				// finding; QAT exports leave the bias float).
				continue
			default:
				d, q = AsymmetricConst(t.Data)
			}
			name := f.UniqueName(in + "_int8")
			f.AddConst(name, d).Quant = q
			nn.Inputs[i] = name
			continue
		}
		p := prod[in]
		if p == nil || p.Op != graph.Dequantize {
			return nil, nil, false
		}
		src := f.Tensors[p.Inputs[0]]
		if src.Quant == nil || !src.DType.IsInt() {
			return nil, nil, false
		}
		nn.Inputs[i] = src.Name
	}
	switch a := nn.Attrs.(type) {
	case *graph.Conv2DAttrs:
		a.Requant = graph.RequantFixedPoint
	case *graph.FullyConnectedAttrs:
		a.Requant = graph.RequantFixedPoint
	case *graph.PadAttrs:
		s, z := f.Tensors[nn.Outputs[0]].Quant.At(0)
		a.Value = float64(QuantizeValue(a.Value, s, z))
	}
	x := f.Tensors[nn.Inputs[0]]
	if x == nil || x.DType != graph.Int8 || x.Quant == nil {
		return nil, nil, false
	}
	if n.Op == graph.Conv2D || n.Op == graph.FullyConnected || n.Op == graph.ConvTranspose2D {
		// Per-channel weights must be per output channel, the axis the
		// int8 kernels read their scales along (ONNX also allows a
		// ConvTranspose's input channels, axis 0 there: review finding,
		// it folded and the outputs were wrong); other axes stay float.
		if wt := f.Tensors[nn.Inputs[1]]; wt == nil || wt.Quant == nil || wt.Quant.PerAxis() && wt.Quant.Axis != outChannelAxis(n, wt) {
			return nil, nil, false
		}
	}
	if (n.Op == graph.Conv2D || n.Op == graph.FullyConnected || n.Op == graph.ConvTranspose2D) && len(n.Inputs) > 2 && n.Inputs[2] != "" {
		if bt := f.Tensors[n.Inputs[2]]; bt.IsConst() && bt.DType == graph.Float32 {
			sx, _ := x.Quant.At(0)
			if !biasFits(bt.Data, sx, f.Tensors[nn.Inputs[1]].Quant) {
				// An int32 bias would clamp (a tiny weight scale under a
				// large folded bias): the float layer keeps it exact
				// (review finding: 30 became 2).
				return nil, nil, false
			}
			d, q := Bias(bt.Data, sx, f.Tensors[nn.Inputs[1]].Quant)
			name := f.UniqueName(bt.Name + "_int32")
			f.AddConst(name, d).Quant = q
			nn.Inputs[2] = name
		} else if bt := f.Tensors[nn.Inputs[2]]; bt != nil && bt.IsConst() && bt.DType == graph.Int32 && bt.Quant != nil {
			// The kernels add the int32 bias at the input scale × the
			// weight scale; ONNX dequantizes it at its own. Another
			// scale is requantized to theirs (review finding: a bias at
			// scale 0.5 was added as if at 0.005, 12.7 became 0.5).
			sx, _ := x.Quant.At(0)
			wq := f.Tensors[nn.Inputs[1]].Quant
			if real, ok := rescaledBias(bt, sx, wq); ok {
				if !biasFits(real, sx, wq) {
					return nil, nil, false
				}
				d, q := Bias(real, sx, wq)
				name := f.UniqueName(bt.Name + "_rescaled")
				f.AddConst(name, d).Quant = q
				nn.Inputs[2] = name
			}
		}
	}
	if !interp.Supported(f, nn) || !copyKeepsParams(f, nn) {
		return nil, nil, false
	}
	// A bilinear Resize TFLite's integer kernel does not take (its scale
	// not out/in: 5 × 1.5 floors to 7) stays float, as quantizing keeps it;
	// folded, compile refused the model.
	if n.Op == graph.Resize && floatOnly(f, nn) {
		return nil, nil, false
	}
	// A Sigmoid, Tanh or Softmax quantized otherwise than TFLite's int8
	// kernels write stays in float (their integer form ignores the
	// output's parameters).
	if n.Op == graph.Sigmoid || n.Op == graph.Tanh || n.Op == graph.Softmax {
		beta := float32(1)
		if a, ok := nn.Attrs.(*graph.SoftmaxAttrs); ok && a != nil && a.Beta != 0 {
			beta = a.Beta
		}
		if interp.FixedOutputOK(n.Op, f.Tensors[nn.Inputs[0]], f.Tensors[nn.Outputs[0]], beta) != nil {
			// A Sigmoid or Tanh: an int8 Math table (of the function's
			// correctly rounded float32 values, below), where TFLite's kernel does
			// not take the parameters (ONNX Runtime's calibrated output
			// scale 1/255, or a zero point 0: review, they ran in float,
			// a Dequantize, the function and a Quantize an element).
			x, y := f.Tensors[nn.Inputs[0]], f.Tensors[nn.Outputs[0]]
			fn := map[graph.Op]graph.MathFn{graph.Sigmoid: graph.MathSigmoid, graph.Tanh: graph.MathTanh}[n.Op]
			if fn == "" || x.Quant.PerAxis() || y.Quant.PerAxis() {
				return nil, nil, false
			}
			nn.Op, nn.Attrs = graph.Math, &graph.MathAttrs{Fn: fn}
			if !interp.Supported(f, nn) {
				return nil, nil, false
			}
		}
	}
	// An Add or Sub whose output scale is below 2^-19 of its inputs' has
	// no TFLite integer form (its output multiplier would reach 1).
	if n.Op == graph.Add || n.Op == graph.Sub {
		a, b, y := f.Tensors[nn.Inputs[0]], f.Tensors[nn.Inputs[1]], f.Tensors[nn.Outputs[0]]
		if a != nil && b != nil && y != nil && a.Quant != nil && b.Quant != nil && y.Quant != nil {
			s1, _ := a.Quant.At(0)
			s2, _ := b.Quant.At(0)
			sy, _ := y.Quant.At(0)
			if qmath.AddSubOutputOK(s1, s2, sy, qmath.AddLeftShift(y.DType == graph.Int16), n.Op == graph.Sub) != nil {
				return nil, nil, false
			}
		}
	}
	// An integer Math table computes each value as the float nodes it
	// replaces did (MathAttrs.Float32Island), rounding as their Quantize.
	if a, ok := nn.Attrs.(*graph.MathAttrs); ok && a != nil && nn.Op == graph.Math && !a.TFLiteInt8 {
		qa, _ := cons[n.Outputs[0]][0].Attrs.(*graph.QuantizeAttrs)
		a.Float32Island, a.HalfEven = true, qa != nil && qa.RoundHalfEven
	}
	return nn, qs, true
}

// copiesStored are the ops whose integer kernels move stored values (as
// TFLite's, which require the input's parameters on the output), and the
// average pool, whose int8 kernel (TFLite's) averages them unscaled; the
// values operands are input 0, 1 and 2 for Where, and both for Max and Min
// (whose int8 kernels compare raw values).
var copiesStored = map[graph.Op]bool{
	graph.Reshape: true, graph.Transpose: true, graph.Slice: true, graph.Pad: true, graph.Gather: true,
	graph.MaxPool2D: true, graph.Resize: true, graph.Reduce: true, graph.TopK: true, graph.Where: true,
	graph.Maximum: true, graph.Minimum: true, graph.AvgPool2D: true,
}

// copyKeepsParams reports whether the folded n, if it copies stored values,
// has every values operand quantized as its outputs: a QDQ model may change
// the parameters across such an op, which a copy would ignore, so the op
// then stays in float.
func copyKeepsParams(f *graph.Graph, n *graph.Node) bool {
	if !copiesStored[n.Op] {
		return true
	}
	ins := n.Inputs[:1]
	switch n.Op {
	case graph.Where:
		ins = n.Inputs[1:3]
	case graph.Maximum, graph.Minimum:
		ins = n.Inputs[:2]
	}
	for _, o := range n.Outputs {
		ot := f.Tensors[o]
		if ot == nil || !ot.DType.IsInt() || ot.DType != graph.Int8 {
			continue // TopK's indices
		}
		for _, in := range ins {
			it := f.Tensors[in]
			if it == nil || it.Quant == nil || ot.Quant == nil || !slices.Equal(it.Quant.ZeroPoint, ot.Quant.ZeroPoint) {
				return false
			}
			// The pools take scales within 1e-6, as TFLite Micro's do
			// (tir's pool kernels); the copies equal ones.
			pool := n.Op == graph.MaxPool2D || n.Op == graph.AvgPool2D
			if !slices.EqualFunc(it.Quant.Scale, ot.Quant.Scale, func(a, b float32) bool {
				return a == b || pool && math.Abs(float64(a)-float64(b)) <= 1e-6
			}) {
				return false
			}
		}
	}
	return true
}

// sinkConstDequantize folds a Transpose or Reshape of a dequantized
// constant into the constant (adjusting its quantization axis), so that the
// op that reads it sees Dequantize(constant) directly.
func sinkConstDequantize(g *graph.Graph) {
	for changed := true; changed; {
		changed = false
		prod := g.Producers()
		for i, n := range g.Nodes {
			if n.Op != graph.Transpose && n.Op != graph.Reshape {
				continue
			}
			p := prod[n.Inputs[0]]
			if p == nil || p.Op != graph.Dequantize {
				continue
			}
			c := g.Tensors[p.Inputs[0]]
			if !c.IsConst() || c.Quant == nil {
				continue
			}
			out := g.Tensors[n.Outputs[0]]
			q := *c.Quant
			var d *graph.Data
			if n.Op == graph.Transpose {
				perm := permOf(n)
				if perm == nil {
					continue
				}
				d = transposeData(c.Data, perm)
				q.Axis = slices.Index(perm, c.Quant.Axis)
			} else {
				if c.Quant.PerAxis() {
					// A Reshape that only adds or drops dimensions of 1
					// keeps the channels' axis, at its new index (a 1-D
					// convolution's [O,C,K] weights viewed as [O,C,1,K]:
					// per-channel ones were refused, review finding).
					ax, ok := reshapedAxis(c.Shape, out.Shape, c.Quant.Axis)
					if !ok {
						continue
					}
					q.Axis = ax
				}
				d = c.Data.Clone()
				d.Shape = slices.Clone(out.Shape)
			}
			name := g.UniqueName(c.Name + "_" + string(n.Op))
			g.AddConst(name, d).Quant = &q
			g.Nodes[i] = &graph.Node{Name: n.Name, Op: graph.Dequantize, Inputs: []string{name}, Outputs: []string{out.Name}}
			changed = true
		}
	}
	removeDead(g)
}

// outputSet is the set of g's output tensors.
func outputSet(g *graph.Graph) map[string]bool {
	m := make(map[string]bool, len(g.Outputs))
	for _, o := range g.Outputs {
		m[o] = true
	}
	return m
}

// outChannelAxis is the axis of a Conv2D's, ConvTranspose2D's or
// FullyConnected's weights that holds its output channels: 0 ([Cout, KH,
// KW, Cin], [N, K]), 3 for a depthwise convolution's [1, KH, KW, C].
func outChannelAxis(n *graph.Node, w *graph.Tensor) int {
	if a, ok := n.Attrs.(*graph.Conv2DAttrs); ok && n.Op == graph.Conv2D && a.Group > 1 && len(w.Shape) == 4 && w.Shape[0] == 1 {
		return 3
	}
	return 0
}

// rescaledBias returns an int32 bias's real values, and whether its scale
// is other than the kernels' (sx × the weight scale of its channel, within
// 1e-6) or its zero point not 0.
func rescaledBias(b *graph.Tensor, sx float32, w *graph.Quant) (*graph.Data, bool) {
	real := graph.NewData(graph.Float32, b.Shape)
	other := false
	for i := range real.F {
		sb, zb := b.Quant.At(min(i, len(b.Quant.Scale)-1))
		sw, _ := w.At(min(i, len(w.Scale)-1))
		want := float64(sx * sw)
		other = other || zb != 0 || math.Abs(float64(sb)-want) > 1e-6*want
		real.F[i] = float32(float64(b.Data.I[i]-int64(zb)) * float64(sb))
	}
	return real, other
}

// biasFits reports whether every bias value quantizes within int32 on the
// scale s_x * s_w[c] (Bias clamps what does not).
func biasFits(b *graph.Data, sx float32, w *graph.Quant) bool {
	for i, v := range b.F {
		s := float64(sx) * float64(w.Scale[min(i, len(w.Scale)-1)])
		if q := math.Abs(math.Round(float64(v) / s)); q > math.MaxInt32 || math.IsNaN(q) {
			return false
		}
	}
	return true
}

// reshapedAxis maps axis of shape from to shape to when the reshape only
// adds or drops dimensions of 1 and axis is not one of them.
func reshapedAxis(from, to []int, axis int) (int, bool) {
	if axis < 0 || axis >= len(from) || from[axis] == 1 {
		return 0, false
	}
	var a, b []int // the dimensions other than 1, and where they are in to
	k := -1
	for i, d := range from {
		if d != 1 {
			if i == axis {
				k = len(a)
			}
			a = append(a, d)
		}
	}
	var pos []int
	for i, d := range to {
		if d != 1 {
			b = append(b, d)
			pos = append(pos, i)
		}
	}
	if !slices.Equal(a, b) || k < 0 {
		return 0, false
	}
	return pos[k], true
}

// sinkQuantize moves a per-tensor Quantize above the layout ops (Transpose,
// Reshape) it reads, so that it reads the float op before them:
// op→Transpose→Reshape→Quantize becomes op→Quantize→Transpose→Reshape, the
// moves now on int8 values. Quantizing commutes with moving elements, so
// the values are unchanged; the op can then fold (a 1-D convolution's
// output, viewed back as rank 3, ran in float: review finding).
func sinkQuantize(g *graph.Graph) {
	for changed := true; changed; {
		changed = false
		prod, cons := g.Producers(), g.Consumers()
		isOut := outputSet(g)
		for i, q := range g.Nodes {
			if q.Op != graph.Quantize {
				continue
			}
			qt := g.Tensors[q.Outputs[0]]
			if qt == nil || qt.Quant == nil || qt.Quant.PerAxis() {
				continue
			}
			l := prod[q.Inputs[0]]
			if l == nil || (l.Op != graph.Transpose && l.Op != graph.Reshape) || len(l.Inputs) != 1 || isOut[l.Outputs[0]] || len(cons[l.Outputs[0]]) != 1 {
				continue
			}
			src := g.Tensors[l.Inputs[0]]
			if src == nil || src.IsConst() || src.DType != graph.Float32 {
				continue
			}
			moved := g.AddTensor(&graph.Tensor{Name: g.UniqueName(l.Inputs[0] + "_q"), DType: qt.DType,
				Shape: slices.Clone(src.Shape), Quant: qt.Quant})
			quant := &graph.Node{Name: q.Name, Op: graph.Quantize, Inputs: []string{l.Inputs[0]}, Outputs: []string{moved.Name}, Attrs: q.Attrs}
			layout := &graph.Node{Name: l.Name, Op: l.Op, Inputs: []string{moved.Name}, Outputs: []string{q.Outputs[0]}, Attrs: l.Attrs}
			j := slices.Index(g.Nodes, l)
			g.Nodes[j] = quant
			g.Nodes[i] = layout
			changed = true
			break
		}
	}
	removeDead(g)
}

// cancelTransposes makes readers of Transpose(Transpose(x)) with
// inverse permutations, and of a Reshape back to x's own shape, read x.
func cancelTransposes(g *graph.Graph) {
	prod := g.Producers()
	isOut := outputSet(g)
	alias := map[string]string{}
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if a, ok := alias[in]; ok {
				n.Inputs[i] = a
			}
		}
		if isOut[n.Outputs[0]] {
			continue
		}
		src := ""
		switch n.Op {
		case graph.Transpose:
			p := prod[n.Inputs[0]]
			if p != nil && p.Op == graph.Transpose && identity(compose(permOf(p), permOf(n))) {
				src = p.Inputs[0]
			}
		case graph.Reshape:
			if slices.Equal(g.Tensors[n.Inputs[0]].Shape, g.Tensors[n.Outputs[0]].Shape) {
				src = n.Inputs[0]
			}
		}
		if src != "" {
			alias[n.Outputs[0]] = src
		}
	}
	removeDead(g)
}

// permOf returns a Transpose's permutation, nil when it has none.
func permOf(n *graph.Node) []int {
	if a, ok := n.Attrs.(*graph.TransposeAttrs); ok {
		return a.Perm
	}
	return nil
}

// compose returns the permutation of applying a then b.
func compose(a, b []int) []int {
	if a == nil || len(a) != len(b) {
		return nil
	}
	out := make([]int, len(a))
	for i := range b {
		out[i] = a[b[i]]
	}
	return out
}

func identity(p []int) bool { return p != nil && graph.IsIdentityPerm(p) }

// removeDead drops nodes none of whose outputs is read or is a graph output.
func removeDead(g *graph.Graph) {
	for {
		used := map[string]bool{}
		for _, o := range g.Outputs {
			used[o] = true
		}
		for _, n := range g.Nodes {
			for _, in := range n.Inputs {
				used[in] = true
			}
		}
		kept := g.Nodes[:0]
		for _, n := range g.Nodes {
			live := false
			for _, o := range n.Outputs {
				live = live || used[o]
			}
			if live {
				kept = append(kept, n)
			}
		}
		if len(kept) == len(g.Nodes) {
			return
		}
		g.Nodes = kept
	}
}

// transposeData permutes the axes of d.
func transposeData(d *graph.Data, perm []int) *graph.Data {
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = d.Shape[p]
	}
	out := graph.NewData(d.DType, shape)
	in := graph.Strides(d.Shape)
	os := graph.Strides(shape)
	idx := make([]int, len(shape))
	for o := 0; o < out.Len(); o++ {
		r, src := o, 0
		for k := range shape {
			idx[k] = r / os[k]
			r %= os[k]
			src += idx[k] * in[perm[k]]
		}
		if d.DType == graph.Float32 {
			out.F[o] = d.F[src]
		} else {
			out.I[o] = d.I[src]
		}
	}
	return out
}

// IntIO returns g with int8 inputs and outputs: a Quantize that is the only
// reader of a float graph input, and a Dequantize that writes a graph
// output, are removed and the int8 tensor takes the float tensor's name.
func IntIO(g *graph.Graph) *graph.Graph {
	f := cloneGraph(g)
	cons := f.Consumers()
	prod := f.Producers()
	drop := map[*graph.Node]bool{}
	for _, in := range f.Inputs {
		c := cons[in]
		if len(c) != 1 || c[0].Op != graph.Quantize || f.Tensors[in].DType != graph.Float32 {
			continue
		}
		q := c[0].Outputs[0]
		drop[c[0]] = true
		delete(f.Tensors, in)
		renameTensor(f, q, in)
	}
	isOut := outputSet(f)
	renamed := map[string]bool{}
	for _, out := range f.Outputs {
		p := prod[out]
		if p == nil || p.Op != graph.Dequantize || slices.Contains(f.Inputs, p.Inputs[0]) || isOut[p.Inputs[0]] || renamed[p.Inputs[0]] {
			continue
		}
		// The int8 tensor may feed later layers too (an output in the
		// middle of the model): they read it under the output's name
		// (review finding: such an output stayed float32 under
		// --int8-io, where the direct int8 build made it int8).
		renamed[p.Inputs[0]] = true
		drop[p] = true
		src := p.Inputs[0]
		delete(f.Tensors, out)
		renameTensor(f, src, out)
	}
	kept := f.Nodes[:0]
	for _, n := range f.Nodes {
		if !drop[n] {
			kept = append(kept, n)
		}
	}
	f.Nodes = kept
	return f
}

// fuseMatMulBias turns BatchMatMul(A [M,K], Dequantize(const W)) followed by
// Add(·, Dequantize(const bias)), as importer/onnx maps a Gemm with a
// dequantized weight, back into one FullyConnected with weights [N,K].
func fuseMatMulBias(g *graph.Graph) {
	prod := g.Producers()
	cons := g.Consumers()
	for i, n := range g.Nodes {
		a, ok := n.Attrs.(*graph.BatchMatMulAttrs)
		if n.Op != graph.BatchMatMul || !ok || a.AdjX || len(g.Tensors[n.Inputs[0]].Shape) != 2 {
			continue
		}
		p := prod[n.Inputs[1]]
		if p == nil || p.Op != graph.Dequantize {
			continue
		}
		c := g.Tensors[p.Inputs[0]]
		if !c.IsConst() || c.Quant == nil || len(c.Shape) != 2 {
			continue
		}
		w := p.Inputs[0]
		if !a.AdjY { // [K,N] -> [N,K]
			q := *c.Quant
			q.Axis = 1 - q.Axis
			w = g.UniqueName(c.Name + "_t")
			g.AddConst(w, transposeData(c.Data, []int{1, 0})).Quant = &q
		}
		wdq := g.UniqueName(w + "_dequant")
		g.AddTensor(&graph.Tensor{Name: wdq, DType: graph.Float32, Shape: g.Tensors[w].Shape})
		fc := &graph.Node{Name: n.Name, Op: graph.FullyConnected, Inputs: []string{n.Inputs[0], wdq, ""}, Outputs: n.Outputs, Attrs: &graph.FullyConnectedAttrs{}}
		dq := &graph.Node{Name: wdq, Op: graph.Dequantize, Inputs: []string{w}, Outputs: []string{wdq}}
		fused := false
		if cs := cons[n.Outputs[0]]; len(cs) == 1 && cs[0].Op == graph.Add {
			add := cs[0]
			other := add.Inputs[0]
			if other == n.Outputs[0] {
				other = add.Inputs[1]
			}
			ot := g.Tensors[other]
			nOut := g.Tensors[n.Outputs[0]].Shape[len(g.Tensors[n.Outputs[0]].Shape)-1]
			if ot.IsConst() && ot.DType == graph.Float32 && ot.Data.Len() == nOut && (len(ot.Shape) == 1 || len(ot.Shape) == 2 && ot.Shape[0] == 1) {
				// A float bias (a Gemm's C as QAT exports leave it: a
				// review finding, the layer ran in float): the
				// FullyConnected takes it as its [N] bias, which folding
				// quantizes on s_x * s_w.
				bias := g.UniqueName(other + "_bias")
				d := ot.Data.Clone()
				d.Shape = []int{nOut}
				g.AddConst(bias, d)
				fc.Inputs[2] = bias
				fc.Outputs = add.Outputs
				g.Nodes[i] = dq
				for j := range g.Nodes {
					if g.Nodes[j] == add {
						g.Nodes[j] = fc
					}
				}
				fused = true
			} else if bp := prod[other]; bp != nil && bp.Op == graph.Dequantize && g.Tensors[bp.Inputs[0]].IsConst() && len(g.Tensors[other].Shape) == 1 {
				// The FullyConnected takes the Add's place (after the bias's
				// Dequantize); the weight's Dequantize takes the BatchMatMul's.
				fc.Inputs[2] = other
				fc.Outputs = add.Outputs
				g.Nodes[i] = dq
				for j := range g.Nodes {
					if g.Nodes[j] == add {
						g.Nodes[j] = fc
					}
				}
				fused = true
			}
		}
		if !fused {
			g.Nodes[i] = fc
			g.Nodes = append(g.Nodes[:i], append([]*graph.Node{dq}, g.Nodes[i:]...)...)
		}
		fuseMatMulBias(g)
		removeDead(g)
		return
	}
}

// foldRequantize replaces Dequantize -> Quantize (what is left where the
// importer absorbed a layout op) by nothing when both sides have the same
// parameters, and by one integer-to-integer Quantize otherwise.
func foldRequantize(g *graph.Graph) {
	prod := g.Producers()
	cons := g.Consumers()
	isOut := outputSet(g)
	alias := map[string]string{}
	for i, n := range g.Nodes {
		for j, in := range n.Inputs {
			if a, ok := alias[in]; ok {
				n.Inputs[j] = a
			}
		}
		if n.Op != graph.Quantize {
			continue
		}
		dq := prod[n.Inputs[0]]
		if dq == nil || dq.Op != graph.Dequantize || isOut[dq.Outputs[0]] || len(cons[dq.Outputs[0]]) != 1 {
			continue
		}
		src, dst := g.Tensors[dq.Inputs[0]], g.Tensors[n.Outputs[0]]
		if src.Quant == nil || dst.Quant == nil || src.DType != dst.DType || src.Quant.PerAxis() || dst.Quant.PerAxis() {
			continue
		}
		ss, sz := src.Quant.At(0)
		ds, dz := dst.Quant.At(0)
		if ss == ds && sz == dz && !isOut[dst.Name] {
			alias[dst.Name] = src.Name
			continue
		}
		g.Nodes[i] = &graph.Node{Name: n.Name, Op: graph.Quantize, Inputs: []string{src.Name}, Outputs: n.Outputs}
	}
	if len(alias) > 0 {
		for i, o := range g.Outputs {
			if a, ok := alias[o]; ok {
				g.Outputs[i] = a
			}
		}
	}
}

// hoistDequantize moves a per-tensor Dequantize below the layout ops
// (Transpose, Reshape) that read it, so the float op after them sees a
// Dequantize directly: Dequantize→Transpose→Conv becomes
// Transpose(int8)→Dequantize→Conv. Per-tensor quantization commutes with
// moving elements, so the values are unchanged.
func hoistDequantize(g *graph.Graph) {
	for changed := true; changed; {
		changed = false
		prod, cons := g.Producers(), g.Consumers()
		isOut := outputSet(g)
		for i, n := range g.Nodes {
			if n.Op != graph.Transpose && n.Op != graph.Reshape {
				continue
			}
			d := prod[n.Inputs[0]]
			if d == nil || d.Op != graph.Dequantize || isOut[d.Outputs[0]] || len(cons[d.Outputs[0]]) != 1 {
				continue
			}
			q := g.Tensors[d.Inputs[0]]
			if q == nil || q.IsConst() || q.Quant == nil || q.Quant.PerAxis() {
				continue
			}
			out := g.Tensors[n.Outputs[0]]
			moved := g.AddTensor(&graph.Tensor{Name: g.UniqueName(n.Outputs[0] + "_q"), DType: q.DType,
				Shape: append([]int(nil), out.Shape...), Quant: q.Quant})
			layout := &graph.Node{Name: n.Name, Op: n.Op, Inputs: []string{q.Name}, Outputs: []string{moved.Name}, Attrs: n.Attrs}
			deq := &graph.Node{Name: d.Name, Op: graph.Dequantize, Inputs: []string{moved.Name}, Outputs: []string{n.Outputs[0]}, Attrs: d.Attrs}
			j := slices.Index(g.Nodes, d)
			g.Nodes[j] = layout
			g.Nodes[i] = deq
			changed = true
			break
		}
	}
	removeDead(g)
}
