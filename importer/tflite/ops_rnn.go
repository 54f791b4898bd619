package tflite

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// The float recurrent operators, unrolled over their time steps like ONNX's
// (graph.RNNLayer).
const (
	opUnidirectionalSequenceRNN   = 35
	opUnidirectionalSequenceLSTM  = 44
	optSequenceRNN                = 31
	optUnidirectionalSequenceLSTM = 71
	tensorIsVariable              = 5

	opLSTM                       = 16
	opRNN                        = 24
	opBidirectionalSequenceRNN   = 46
	opBidirectionalSequenceLSTM  = 52
	optRNN                       = 7
	optLSTM                      = 14
	optBidirectionalSequenceLSTM = 69
	optBidirectionalSequenceRNN  = 70
)

func init() {
	register(func(c *opctx, n *graph.Node) error { return c.bidirectional() }, opBidirectionalSequenceLSTM, opBidirectionalSequenceRNN)
	register(func(c *opctx, n *graph.Node) error { return c.singleStep() }, opLSTM, opRNN)
}

// recurrentAct maps a fused activation to the cell activation TFLite's
// recurrent kernels apply (NONE is the identity).
func (c *opctx) recurrentAct(v uint8) (graph.RNNAct, error) {
	switch v {
	case 0:
		return graph.RNNAct{Fn: "Affine", Alpha: 1}, nil
	case 1:
		return graph.RNNAct{Fn: "Relu"}, nil
	case 4:
		return graph.RNNAct{Fn: "Tanh"}, nil
	}
	return graph.RNNAct{}, c.errorf("cell activation %d is not supported (NONE, RELU and TANH are)", v)
}

// recurrentState is input i, a recurrent operator's state: "" when it is
// absent or a constant of zeros. A variable tensor (the usual form) is a
// state of the model (graph.State), carried from one inference to the
// next as TFLite carries it, from zeros; variable reports which.
func (c *opctx) recurrentState(i int, shape []int) (name string, variable bool, err error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return "", false, nil
	}
	if k := int(c.ins[i]); k < len(c.d.tensors) && c.d.tensors[k].boolean(tensorIsVariable) {
		t, err := c.stateIn(i, graph.Float32, shape)
		if err != nil {
			return "", false, err
		}
		return t.Name, true, nil
	}
	name, err = c.fixedState(i, shape)
	return name, false, err
}

// fixedState is input i, a state that is not a variable: a constant of
// zeros ("") or a tensor the model computes.
func (c *opctx) fixedState(i int, shape []int) (string, error) {
	t, err := c.in(i)
	if err != nil {
		return "", err
	}
	if t.DType != graph.Float32 || graph.NumElements(t.Shape) != graph.NumElements(shape) {
		return "", c.errorf("state %q: %s %v, want float32 %v", t.Name, t.DType, t.Shape, shape)
	}
	if t.IsConst() && !slices.ContainsFunc(t.Data.F, func(v float32) bool { return v != 0 }) {
		return "", nil
	}
	return t.Name, nil
}

// matrix is input i as a constant float matrix of the given shape ("" when
// it is absent and may be).
func (c *opctx) matrix(i int, optional bool, shape ...int) (string, error) {
	t, err := c.optIn(i)
	if err != nil {
		return "", err
	}
	if t == nil {
		if optional {
			return "", nil
		}
		return "", c.errorf("input %d is missing", i)
	}
	if !t.IsConst() {
		return "", c.errorf("input %d (%q) must be a constant", i, t.Name)
	}
	if t.DType != graph.Float32 {
		return "", c.errorf("input %d (%q) is %s: only float recurrent layers are supported (quantize the float model with mcugen)", i, t.Name, t.DType)
	}
	if !slices.Equal(t.Shape, shape) {
		return "", c.errorf("input %d (%q) of shape %v, want %v", i, t.Name, t.Shape, shape)
	}
	return t.Name, nil
}

// lstmLayer reads one LSTM direction: the 17 weight inputs from w on in
// UNIDIRECTIONAL_SEQUENCE_LSTM's order (input weights of gates i, f, g, o,
// recurrent weights, peepholes of i, f, o, biases, projection weights and
// bias) and, when ln >= 0, the layer norm coefficients of i, f, g, o from
// input ln on. in is the size of the layer's input.
func (c *opctx) lstmLayer(w, ln, batch, in int, act graph.RNNAct, cellClip, projClip float32) (*graph.RNNLayer, error) {
	if cellClip < 0 || projClip < 0 {
		return nil, c.errorf("negative clip (cell %g, projection %g)", cellClip, projClip)
	}
	l := &graph.RNNLayer{Kind: graph.RNNLSTM, Batch: batch, CellClip: cellClip, ProjClip: projClip}
	// The cell size is the rows of the (always present) forget weights.
	fw, err := c.in(w + 1)
	if err != nil {
		return nil, err
	}
	if len(fw.Shape) != 2 {
		return nil, c.errorf("input %d: weights of shape %v, want [cells, input]", w+1, fw.Shape)
	}
	hidden := fw.Shape[0]
	l.Hidden = hidden
	out := hidden
	if p := w + 15; p < len(c.ins) && c.ins[p] >= 0 {
		pt, err := c.in(p)
		if err != nil {
			return nil, err
		}
		if len(pt.Shape) != 2 {
			return nil, c.errorf("input %d: projection of shape %v, want [output, cells]", p, pt.Shape)
		}
		out = pt.Shape[0]
		if l.Proj, err = c.matrix(p, false, out, hidden); err != nil {
			return nil, err
		}
		if l.ProjBias, err = c.matrix(p+1, true, out); err != nil {
			return nil, err
		}
	} else if pb, err := c.optIn(w + 16); err != nil || pb != nil {
		if err != nil {
			return nil, err
		}
		return nil, c.errorf("input %d: projection bias without projection weights", w+16)
	}
	// Gates i, f, g (cell), o: input weights w+0..3, recurrent w+4..7,
	// biases w+11..14, peepholes w+8..10; the input gate's are absent in a
	// CIFG cell (i = 1 - f).
	for k := 0; k < 4; k++ {
		opt := k == 0
		wn, err := c.matrix(w+k, opt, hidden, in)
		if err != nil {
			return nil, err
		}
		rn, err := c.matrix(w+4+k, opt, hidden, out)
		if err != nil {
			return nil, err
		}
		bn, err := c.matrix(w+11+k, opt, hidden)
		if err != nil {
			return nil, err
		}
		if k == 0 && ((wn == "") != (rn == "") || (wn == "" && bn != "")) {
			return nil, c.errorf("input gate: give its input weights, recurrent weights and bias, or none of them (CIFG)")
		}
		l.W, l.R, l.B = append(l.W, wn), append(l.R, rn), append(l.B, bn)
	}
	for k := range l.P {
		if l.P[k], err = c.matrix(w+8+k, true, hidden); err != nil {
			return nil, err
		}
	}
	cifg := l.W[0] == ""
	if cifg && l.P[0] != "" {
		return nil, c.errorf("input gate peephole in a CIFG cell")
	}
	if (l.P[1] == "") != (l.P[2] == "") || (!cifg && (l.P[0] == "") != (l.P[1] == "")) {
		return nil, c.errorf("peepholes: give all of them or none")
	}
	if ln >= 0 {
		for k := range l.LN {
			if l.LN[k], err = c.matrix(ln+k, true, hidden); err != nil {
				return nil, err
			}
		}
		// TFLite's kernel is layer-normalized when the forget gate's
		// coefficients are present, and then needs every other gate's.
		if l.LN[1] != "" && (l.LN[2] == "" || l.LN[3] == "" || (l.LN[0] == "") != cifg) {
			return nil, c.errorf("layer norm coefficients: give those of the forget, cell and output gates and, unless the cell is CIFG, of the input gate")
		}
		if l.LN[1] == "" && l.LN != [4]string{} {
			return nil, c.errorf("layer norm coefficients without the forget gate's")
		}
	}
	l.Acts = []graph.RNNAct{{Fn: "Sigmoid"}, act, act}
	return l, nil
}

// rnnLayer reads one basic RNN direction: input weights at w, recurrent
// weights at w+1 and the bias at w+2.
func (c *opctx) rnnLayer(w, batch, in int, act graph.RNNAct) (*graph.RNNLayer, error) {
	wt, err := c.in(w)
	if err != nil {
		return nil, err
	}
	if len(wt.Shape) != 2 {
		return nil, c.errorf("input %d: weights of shape %v, want [units, input]", w, wt.Shape)
	}
	hidden := wt.Shape[0]
	wn, err := c.matrix(w, false, hidden, in)
	if err != nil {
		return nil, err
	}
	rn, err := c.matrix(w+1, false, hidden, hidden)
	if err != nil {
		return nil, err
	}
	bn, err := c.matrix(w+2, true, hidden)
	if err != nil {
		return nil, err
	}
	return &graph.RNNLayer{Kind: graph.RNNSimple, Batch: batch, Hidden: hidden, W: []string{wn}, R: []string{rn}, B: []string{bn}, Acts: []graph.RNNAct{act}}, nil
}

// rnnBase names the operator's intermediate tensors: after output 0.
func (c *opctx) rnnBase() string {
	base := fmt.Sprintf("%s_%d", c.name, c.index)
	if len(c.outs) > 0 && c.outs[0] >= 0 {
		if name, err := c.d.tensor(int(c.outs[0])); err == nil {
			base = name
		}
	}
	return base
}

// rnnEmitter adds float32 nodes named after base.
func (c *opctx) rnnEmitter(base string) graph.Emitter {
	g := c.d.g
	return func(op graph.Op, ins []string, attrs any, shape []int, suffix string) string {
		t := g.AddTensor(&graph.Tensor{Name: g.UniqueName(base + "/" + suffix), DType: graph.Float32, Shape: slices.Clone(shape)})
		g.AddNode(&graph.Node{Name: t.Name, Op: op, Inputs: ins, Outputs: []string{t.Name}, Attrs: attrs})
		return t.Name
	}
}

// seqInput checks input i, a float sequence [batch, time, input] (or
// [time, batch, input]), and returns its sizes.
func (c *opctx) seqInput(i int, timeMajor bool) (x *graph.Tensor, batch, steps, in int, err error) {
	if x, err = c.in(i); err != nil {
		return nil, 0, 0, 0, err
	}
	if x.DType != graph.Float32 {
		return nil, 0, 0, 0, c.errorf("%s input: only float recurrent layers are supported (quantize the float model with mcugen)", x.DType)
	}
	if len(x.Shape) != 3 {
		return nil, 0, 0, 0, c.errorf("input of shape %v: want [batch, time, input] or [time, batch, input]", x.Shape)
	}
	steps, batch, in = x.Shape[1], x.Shape[0], x.Shape[2]
	if timeMajor {
		steps, batch = batch, steps
	}
	if steps > graph.MaxRNNSteps {
		return nil, 0, 0, 0, c.errorf("%d time steps: mcugen unrolls at most %d", steps, graph.MaxRNNSteps)
	}
	return x, batch, steps, in, nil
}

// seqSteps slices a sequence into its steps ([batch, input] each).
func seqSteps(emit graph.Emitter, x string, timeMajor bool, batch, steps, in int, prefix string) []string {
	reshape := func(src string, shape []int, suffix string) string {
		return emit(graph.Reshape, []string{src}, nil, shape, suffix)
	}
	xs := make([]string, steps)
	for t := range xs {
		if steps == 1 {
			xs[t] = reshape(x, []int{batch, in}, prefix+"0")
			continue
		}
		begin, end := []int{0, t, 0}, []int{batch, t + 1, in}
		if timeMajor {
			begin, end = []int{t, 0, 0}, []int{t + 1, batch, in}
		}
		sl := emit(graph.Slice, []string{x}, &graph.SliceAttrs{Begin: begin, End: end, Stride: []int{1, 1, 1}}, []int{end[0] - begin[0], end[1] - begin[1], in}, fmt.Sprintf("%s%d_slice", prefix, t))
		xs[t] = reshape(sl, []int{batch, in}, fmt.Sprintf("%s%d", prefix, t))
	}
	return xs
}

// seqStack stacks the step outputs ([batch, out] each, in time order)
// along the time axis: [batch, time, out] or [time, batch, out].
func seqStack(emit graph.Emitter, ys []string, timeMajor bool, batch, out int, prefix string) string {
	one, axis := []int{batch, 1, out}, 1
	if timeMajor {
		one, axis = []int{1, batch, out}, 0
	}
	parts := make([]string, len(ys))
	for t, y := range ys {
		parts[t] = emit(graph.Reshape, []string{y}, nil, one, fmt.Sprintf("%s%d", prefix, t))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	all := slices.Clone(one)
	all[axis] = len(ys)
	return emit(graph.Concat, parts, &graph.ConcatAttrs{Axis: axis}, all, prefix)
}

// runLayer unrolls l over xs (in time order), backwards when reverse; the
// outputs come back in time order. h0 and c0 are state inputs (-1: none).
func (c *opctx) runLayer(l *graph.RNNLayer, emit graph.Emitter, base string, xs []string, hi, ci int, reverse bool) (ys []string, h, cs string, err error) {
	g := c.d.g
	out := l.Out(g)
	h0, hVar, err := c.recurrentState(hi, []int{l.Batch, out})
	if err != nil {
		return nil, "", "", err
	}
	c0, cVar := "", false
	if ci >= 0 {
		if c0, cVar, err = c.recurrentState(ci, []int{l.Batch, l.Hidden}); err != nil {
			return nil, "", "", err
		}
	}
	hIn, cIn := h0, c0
	// States reshaped in the layer's own emitter: the emitter's names
	// start with base.
	if h0 != "" {
		h0 = emit(graph.Reshape, []string{h0}, nil, []int{l.Batch, out}, "h0")
	}
	if c0 != "" {
		c0 = emit(graph.Reshape, []string{c0}, nil, []int{l.Batch, l.Hidden}, "c0")
	}
	order := make([]int, len(xs))
	in := slices.Clone(xs)
	for t := range order {
		order[t] = t
		if reverse {
			order[t] = len(xs) - 1 - t
			in[t] = xs[order[t]]
		}
	}
	run, h, cs := l.Run(g, emit, base, in, h0, c0, nil, order)
	ys = make([]string, len(xs))
	for i, y := range run {
		ys[order[i]] = y
	}
	// The variables take the layer's last state for the next inference.
	if hVar {
		c.d.states = append(c.d.states, graph.State{In: hIn, Out: emit(graph.Reshape, []string{h}, nil, []int{l.Batch, out}, "h_next")})
	}
	if cVar {
		c.d.states = append(c.d.states, graph.State{In: cIn, Out: emit(graph.Reshape, []string{cs}, nil, []int{l.Batch, l.Hidden}, "c_next")})
	}
	return ys, h, cs, nil
}

// setOut makes output i the float tensor src (of the same elements).
func (c *opctx) setOut(i int, src string) error {
	t, err := c.out(i)
	if err != nil {
		return err
	}
	s := c.d.g.Tensors[src]
	if t.DType != graph.Float32 {
		return c.errorf("output %d (%q) is %s: only float recurrent layers are supported", i, t.Name, t.DType)
	}
	if t.NumElements() != s.NumElements() {
		return c.errorf("output %d (%q) of shape %v, the operator gives %v", i, t.Name, t.Shape, s.Shape)
	}
	c.emit(graph.Reshape, nil, []string{src}, t)
	return nil
}

// recurrent maps UNIDIRECTIONAL_SEQUENCE_LSTM and UNIDIRECTIONAL_SEQUENCE_RNN:
// the layer unrolled into the graph, n the final reshape of the stacked
// step outputs to the operator's output.
func (c *opctx) recurrent(n *graph.Node) error {
	lstm := c.code == opUnidirectionalSequenceLSTM
	var (
		timeMajor          bool
		act                graph.RNNAct
		cellClip, projClip float32
	)
	if lstm {
		o, err := c.options(optUnidirectionalSequenceLSTM)
		if err != nil {
			return err
		}
		if o.boolean(5) {
			return c.errorf("diagonal recurrent weights are not supported")
		}
		if x, err := c.in(0); err == nil && (x.DType == graph.Int8 || x.DType == graph.Int16) {
			return c.lstmInt8(n, x, o.u8(0, 0), o.f32(1, 0), o.boolean(3))
		}
		if act, err = c.recurrentAct(o.u8(0, 0)); err != nil {
			return err
		}
		cellClip, projClip, timeMajor = o.f32(1, 0), o.f32(2, 0), o.boolean(3)
	} else {
		o, err := c.options(optSequenceRNN)
		if err != nil {
			return err
		}
		if act, err = c.recurrentAct(o.u8(1, 0)); err != nil {
			return err
		}
		timeMajor = o.boolean(0)
	}
	x, batch, steps, in, err := c.seqInput(0, timeMajor)
	if err != nil {
		return err
	}
	var l *graph.RNNLayer
	hi, ci := 4, -1
	if lstm {
		if l, err = c.lstmLayer(1, 20, batch, in, act, cellClip, projClip); err != nil {
			return err
		}
		hi, ci = 18, 19
	} else if l, err = c.rnnLayer(1, batch, in, act); err != nil {
		return err
	}
	base := c.rnnBase()
	emit := c.rnnEmitter(base)
	xs := seqSteps(emit, x.Name, timeMajor, batch, steps, in, "x")
	ys, _, _, err := c.runLayer(l, emit, base, xs, hi, ci, false)
	if err != nil {
		return err
	}
	// The outputs stacked along the time axis: [batch, time, out] or
	// [time, batch, out].
	n.Op = graph.Reshape
	if steps == 1 {
		n.Inputs = []string{ys[0]}
		return nil
	}
	n.Inputs = []string{seqStack(emit, ys, timeMajor, batch, l.Out(c.d.g), "y")}
	return nil
}

// bidirectional maps BIDIRECTIONAL_SEQUENCE_LSTM and _RNN: a forward and a
// backward layer over the same sequence, the backward one run from the
// last step to the first with each output stored at its step's time
// index; their outputs are two tensors or, with merge_outputs, one
// concatenated along the last axis (forward first).
func (c *opctx) bidirectional() error {
	lstm := c.code == opBidirectionalSequenceLSTM
	var (
		timeMajor, merge   bool
		act                graph.RNNAct
		cellClip, projClip float32
		err                error
	)
	if lstm {
		o, err := c.options(optBidirectionalSequenceLSTM)
		if err != nil {
			return err
		}
		if act, err = c.recurrentAct(o.u8(0, 0)); err != nil {
			return err
		}
		cellClip, projClip, merge = o.f32(1, 0), o.f32(2, 0), o.boolean(3)
		// time_major defaults to true in the schema; a model without
		// options gets TFLite's zeroed parameters (batch major).
		timeMajor = c.optType != 0 && o.u8(4, 1) != 0
	} else {
		o, err := c.options(optBidirectionalSequenceRNN)
		if err != nil {
			return err
		}
		if act, err = c.recurrentAct(o.u8(1, 0)); err != nil {
			return err
		}
		timeMajor, merge = o.boolean(0), o.boolean(2)
	}
	if want := map[bool]int{true: 1, false: 2}[merge]; len(c.outs) != want {
		return c.errorf("%d outputs, want %d (merge_outputs %v)", len(c.outs), want, merge)
	}
	x, batch, steps, in, err := c.seqInput(0, timeMajor)
	if err != nil {
		return err
	}
	var (
		fw, bw       *graph.RNNLayer
		states       [4]int
		aux, auxFrom int
	)
	bwX, bwIn := x, in
	if lstm {
		aux, auxFrom = 39, 40
		states = [4]int{35, 36, 37, 38}
	} else {
		aux, auxFrom = 9, 10
		states = [4]int{4, -1, 8, -1}
	}
	for i := auxFrom; i < len(c.ins); i++ {
		if c.ins[i] >= 0 {
			return c.errorf("auxiliary input weights (input %d: a stacked bidirectional layer with cross links) are not supported", i)
		}
	}
	if aux < len(c.ins) && c.ins[aux] >= 0 {
		if !lstm {
			// TFLite's batch-major kernel feeds the backward cell the
			// main input even then: refuse rather than pick one.
			return c.errorf("auxiliary input (input %d) is not supported", aux)
		}
		// Without auxiliary weights the auxiliary input is the backward
		// cell's input (tf.nn.static_bidirectional_rnn stacking).
		t, b, s, n, err := c.seqInput(aux, timeMajor)
		if err != nil {
			return err
		}
		if b != batch || s != steps {
			return c.errorf("auxiliary input of shape %v, want the input's batch and time %v", t.Shape, x.Shape)
		}
		bwX, bwIn = t, n
	}
	if lstm {
		if fw, err = c.lstmLayer(1, -1, batch, in, act, cellClip, projClip); err != nil {
			return err
		}
		if bw, err = c.lstmLayer(18, -1, batch, bwIn, act, cellClip, projClip); err != nil {
			return err
		}
	} else {
		if fw, err = c.rnnLayer(1, batch, in, act); err != nil {
			return err
		}
		if bw, err = c.rnnLayer(5, batch, bwIn, act); err != nil {
			return err
		}
	}
	base := c.rnnBase()
	emit := c.rnnEmitter(base)
	xs := seqSteps(emit, x.Name, timeMajor, batch, steps, in, "x")
	bwXs := xs
	if bwX != x {
		bwXs = seqSteps(emit, bwX.Name, timeMajor, batch, steps, bwIn, "xbw")
	}
	var ys [2]string
	for d, l := range []*graph.RNNLayer{fw, bw} {
		dir, in := "fw", xs
		if d == 1 {
			dir, in = "bw", bwXs
		}
		b := base + "/" + dir
		run, _, _, err := c.runLayer(l, c.rnnEmitter(b), b, in, states[2*d], states[2*d+1], d == 1)
		if err != nil {
			return err
		}
		ys[d] = seqStack(emit, run, timeMajor, batch, l.Out(c.d.g), "y"+dir)
	}
	if merge {
		fo, bo := fw.Out(c.d.g), bw.Out(c.d.g)
		shape := []int{batch, steps, fo + bo}
		if timeMajor {
			shape = []int{steps, batch, fo + bo}
		}
		y := emit(graph.Concat, ys[:], &graph.ConcatAttrs{Axis: 2}, shape, "y")
		err = c.setOut(0, y)
	} else if err = c.setOut(0, ys[0]); err == nil {
		err = c.setOut(1, ys[1])
	}
	if err != nil {
		return err
	}
	c.done = true
	return nil
}

// singleStep maps LSTM and RNN: one step from the state inputs, input
// [batch, input]. LSTM (the full kernel) has one output in TFLite since
// 1.11 (20 or 24 inputs, the states are variable inputs 18 and 19); the
// older 18-input form has the final output state, cell state and output
// as outputs 0-2 (TF 1.10) or after a scratch buffer (earlier).
func (c *opctx) singleStep() error {
	lstm := c.code == opLSTM
	var (
		act                graph.RNNAct
		cellClip, projClip float32
		err                error
	)
	if lstm {
		o, err := c.options(optLSTM)
		if err != nil {
			return err
		}
		if k := o.u8(3, 0); k != 0 {
			return c.errorf("kernel type %d (BASIC) is not supported: only the FULL kernel is", k)
		}
		if act, err = c.recurrentAct(o.u8(0, 0)); err != nil {
			return err
		}
		cellClip, projClip = o.f32(1, 0), o.f32(2, 0)
	} else {
		o, err := c.options(optRNN)
		if err != nil {
			return err
		}
		if act, err = c.recurrentAct(o.u8(0, 0)); err != nil {
			return err
		}
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	if x.DType != graph.Float32 {
		return c.errorf("%s input: only float recurrent layers are supported (quantize the float model with mcugen)", x.DType)
	}
	if len(x.Shape) != 2 {
		return c.errorf("input of shape %v: want [batch, input]", x.Shape)
	}
	batch, in := x.Shape[0], x.Shape[1]
	var l *graph.RNNLayer
	hi, ci := 4, -1
	if lstm {
		switch len(c.ins) {
		case 18, 20, 24:
		default:
			return c.errorf("%d inputs, want 20 or 24 (or 18 in models before TFLite 1.11)", len(c.ins))
		}
		ln := -1
		if len(c.ins) == 24 {
			ln = 20
		}
		if l, err = c.lstmLayer(1, ln, batch, in, act, cellClip, projClip); err != nil {
			return err
		}
		hi, ci = 18, 19
		switch {
		case len(c.outs) == 1:
		case len(c.outs) == 3 && len(c.ins) == 18:
		case len(c.outs) == 4 && len(c.ins) == 18:
			return c.errorf("the scratch buffer output (output 0 of the 4-output LSTM before TFLite 1.10) is not supported")
		default:
			return c.errorf("%d outputs with %d inputs, want 1 (or 3 with 18 inputs)", len(c.outs), len(c.ins))
		}
	} else {
		if len(c.ins) != 5 || len(c.outs) != 1 {
			return c.errorf("%d inputs and %d outputs, want 5 and 1", len(c.ins), len(c.outs))
		}
		if l, err = c.rnnLayer(1, batch, in, act); err != nil {
			return err
		}
	}
	base := c.rnnBase()
	ys, h, cs, err := c.runLayer(l, c.rnnEmitter(base), base, []string{x.Name}, hi, ci, false)
	if err != nil {
		return err
	}
	if len(c.outs) == 3 {
		// Output state, cell state, output: the final states.
		for i, src := range []string{h, cs, ys[0]} {
			if err := c.setOut(i, src); err != nil {
				return err
			}
		}
	} else if err := c.setOut(0, ys[0]); err != nil {
		return err
	}
	c.done = true
	return nil
}
