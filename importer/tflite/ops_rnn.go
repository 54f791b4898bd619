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
)

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

// recurrentState is input i, a recurrent operator's state: "" when it is a
// variable tensor or a constant of zeros (each inference starts from the
// zero state; TFLite would carry a variable's value over from the previous
// inference until the application resets it).
func (c *opctx) recurrentState(i int, shape []int) (string, error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return "", nil
	}
	if k := int(c.ins[i]); k < len(c.d.tensors) && c.d.tensors[k].boolean(tensorIsVariable) {
		return "", nil
	}
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

// recurrent maps UNIDIRECTIONAL_SEQUENCE_LSTM and UNIDIRECTIONAL_SEQUENCE_RNN:
// the layer unrolled into the graph, n the final reshape of the stacked
// step outputs to the operator's output.
func (c *opctx) recurrent(n *graph.Node) error {
	lstm := c.code == opUnidirectionalSequenceLSTM
	x, err := c.in(0)
	if err != nil {
		return err
	}
	if x.DType != graph.Float32 {
		return c.errorf("%s input: only float recurrent layers are supported (quantize the float model with mcugen)", x.DType)
	}
	if len(x.Shape) != 3 {
		return c.errorf("input of shape %v: want [batch, time, input] or [time, batch, input]", x.Shape)
	}
	var (
		timeMajor bool
		act       graph.RNNAct
		l         = &graph.RNNLayer{Kind: graph.RNNSimple}
	)
	if lstm {
		o, err := c.options(optUnidirectionalSequenceLSTM)
		if err != nil {
			return err
		}
		if act, err = c.recurrentAct(o.u8(0, 0)); err != nil {
			return err
		}
		l.Kind, l.CellClip, l.ProjClip, timeMajor = graph.RNNLSTM, o.f32(1, 0), o.f32(2, 0), o.boolean(3)
		if o.boolean(5) {
			return c.errorf("diagonal recurrent weights are not supported")
		}
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
	steps, batch, in := x.Shape[1], x.Shape[0], x.Shape[2]
	if timeMajor {
		steps, batch = batch, steps
	}
	// The cell size is the rows of the (always present) forget or input weights.
	wi := 1
	if lstm {
		wi = 2
	}
	w, err := c.in(wi)
	if err != nil {
		return err
	}
	if len(w.Shape) != 2 {
		return c.errorf("weights of shape %v: want [cells, input]", w.Shape)
	}
	hidden := w.Shape[0]
	l.Batch, l.Hidden = batch, hidden
	out := hidden
	if lstm {
		if len(c.ins) > 16 && c.ins[16] >= 0 {
			p, err := c.in(16)
			if err != nil {
				return err
			}
			if len(p.Shape) != 2 {
				return c.errorf("projection of shape %v: want [output, cells]", p.Shape)
			}
			out = p.Shape[0]
			if l.Proj, err = c.matrix(16, false, out, hidden); err != nil {
				return err
			}
			if l.ProjBias, err = c.matrix(17, true, out); err != nil {
				return err
			}
		}
		for i := 20; i < 24 && i < len(c.ins); i++ {
			if c.ins[i] >= 0 {
				return c.errorf("layer-normalized LSTM is not supported")
			}
		}
		// Gates i, f, g (cell), o: input weights 1-4, recurrent 5-8,
		// biases 12-15, peepholes 9-11; the input gate's are absent in a
		// CIFG cell (i = 1 - f).
		for k := 0; k < 4; k++ {
			opt := k == 0
			wn, err := c.matrix(1+k, opt, hidden, in)
			if err != nil {
				return err
			}
			rn, err := c.matrix(5+k, opt, hidden, out)
			if err != nil {
				return err
			}
			bn, err := c.matrix(12+k, opt, hidden)
			if err != nil {
				return err
			}
			if k == 0 && (wn == "") != (rn == "") {
				return c.errorf("input gate weights: give both input and recurrent weights or neither")
			}
			l.W, l.R, l.B = append(l.W, wn), append(l.R, rn), append(l.B, bn)
		}
		for k := range l.P {
			if l.P[k], err = c.matrix(9+k, true, hidden); err != nil {
				return err
			}
		}
		if l.W[0] == "" && l.P[0] != "" {
			return c.errorf("input gate peephole in a CIFG cell")
		}
		sig := graph.RNNAct{Fn: "Sigmoid"}
		l.Acts = []graph.RNNAct{sig, act, act}
	} else {
		wn, err := c.matrix(1, false, hidden, in)
		if err != nil {
			return err
		}
		rn, err := c.matrix(2, false, hidden, hidden)
		if err != nil {
			return err
		}
		bn, err := c.matrix(3, true, hidden)
		if err != nil {
			return err
		}
		l.W, l.R, l.B, l.Acts = []string{wn}, []string{rn}, []string{bn}, []graph.RNNAct{act}
	}
	hi, ci := 4, -1
	if lstm {
		hi, ci = 18, 19
	}
	h0, err := c.recurrentState(hi, []int{batch, out})
	if err != nil {
		return err
	}
	c0 := ""
	if ci >= 0 {
		if c0, err = c.recurrentState(ci, []int{batch, hidden}); err != nil {
			return err
		}
	}

	g := c.d.g
	base := fmt.Sprintf("%s_%d", c.name, c.index)
	if len(c.outs) > 0 {
		if name, err := c.d.tensor(int(c.outs[0])); err == nil {
			base = name
		}
	}
	emit := func(op graph.Op, ins []string, attrs any, shape []int, suffix string) string {
		t := g.AddTensor(&graph.Tensor{Name: g.UniqueName(base + "/" + suffix), DType: graph.Float32, Shape: slices.Clone(shape)})
		g.AddNode(&graph.Node{Name: t.Name, Op: op, Inputs: ins, Outputs: []string{t.Name}, Attrs: attrs})
		return t.Name
	}
	reshape := func(src string, shape []int, suffix string) string {
		return emit(graph.Reshape, []string{src}, nil, shape, suffix)
	}
	if h0 != "" {
		h0 = reshape(h0, []int{batch, out}, "h0")
	}
	if c0 != "" {
		c0 = reshape(c0, []int{batch, hidden}, "c0")
	}
	xs := make([]string, steps)
	order := make([]int, steps)
	for t := range xs {
		order[t] = t
		if steps == 1 {
			xs[t] = reshape(x.Name, []int{batch, in}, "x0")
			continue
		}
		begin, end := []int{0, t, 0}, []int{batch, t + 1, in}
		if timeMajor {
			begin, end = []int{t, 0, 0}, []int{t + 1, batch, in}
		}
		sl := emit(graph.Slice, []string{x.Name}, &graph.SliceAttrs{Begin: begin, End: end, Stride: []int{1, 1, 1}}, []int{end[0] - begin[0], end[1] - begin[1], in}, fmt.Sprintf("x%d_slice", t))
		xs[t] = reshape(sl, []int{batch, in}, fmt.Sprintf("x%d", t))
	}
	ys, _, _ := l.Run(g, emit, base, xs, h0, c0, nil, order)
	// The outputs stacked along the time axis: [batch, time, out] or
	// [time, batch, out].
	n.Op = graph.Reshape
	if steps == 1 {
		n.Inputs = []string{ys[0]}
		return nil
	}
	one, axis := []int{batch, 1, out}, 1
	if timeMajor {
		one, axis = []int{1, batch, out}, 0
	}
	parts := make([]string, steps)
	for t, y := range ys {
		parts[t] = reshape(y, one, fmt.Sprintf("y%d", t))
	}
	all := slices.Clone(one)
	all[axis] = steps
	n.Inputs = []string{emit(graph.Concat, parts, &graph.ConcatAttrs{Axis: axis}, all, "y")}
	return nil
}
