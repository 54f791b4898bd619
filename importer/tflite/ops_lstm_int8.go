package tflite

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// The integer UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite Micro runs it
// (micro/kernels/lstm_eval.h, LstmStep), in its two schemes: "8x8_16"
// (int8 input, hidden state and weights, int32 biases, an int16 cell
// state) and 16x8 (int16 input and hidden state with zero point 0, int8
// weights, int64 biases, an int16 cell state), unrolled over its time
// steps into quantized nodes that the interpreter and the code generator
// already run. Per step and gate k (forget, input, cell, output):
//
//	FullyConnected(x_t, W[k], bias[k]) -> int16, scale 2^-12, zero point 0
//	FullyConnected(h, R[k])            -> int16, scale 2^-12 (no bias)
//	Add                                -> int16, scale 2^-12
//	Sigmoid (Tanh for the cell gate)   -> int16, scale 2^-15
//
// TFLite Micro adds the two products with a saturating int16 add; mcugen's
// int16 ADD of three equal scales computes exactly that ((a << 15) · 1/2,
// then · 2^-14, each step exact), and its int16 LOGISTIC and TANH of input
// scale 2^p compute the LSTM's Logistic(0, 0) and Tanh(p)
// (qmath.TestLSTMAct16MatchesInt16Ops checks every input). Then
//
//	C = Add(Mul(f, C) -> int16 s_c, Mul(i, g) -> int16 s_c) -> int16 s_c
//	C = Maximum(Minimum(C, clip), -clip)      (a cell clip, quantized as TFLite's)
//	H = Mul(Tanh(C) -> int16 2^-15, o)        -> s_h, z_h (int8, or int16 and z_h 0)
//
// where the Mul multipliers are QuantizeMultiplier(double(s1)·double(s2)/
// double(s_y)), TFLite Micro's CreateInterGateMulParams. H of each step is
// the step's output; H and C are states (graph.State) carried to the next
// inference as TFLite Micro carries its variable tensors.
//
// In the 16x8 scheme TFLite Micro's gate products are
// FullyConnected<int16_t, int8_t, int16_t, int64_t>: a 64-bit accumulator
// (the recurrent product's too, without a bias) requantized by
// MultiplyByQuantizedMultiplier's int64 overload, which is what mcugen's
// 16x8 FullyConnected computes for an int16 input and an int64 bias or
// none (interp.Wide16x8); the int16 Mul to H is MulElementwise on int16
// as for the cell.

// lstmInt8Gates names the gates in TFLite Micro's order of computation,
// with the offsets of their input weights, recurrent weights and bias
// among the operator's inputs.
var lstmInt8Gates = []struct {
	name       string
	w, r, bias int
}{
	{"f", 2, 6, 13}, {"i", 1, 5, 12}, {"g", 3, 7, 14}, {"o", 4, 8, 15},
}

// lstmInt8 imports an integer UNIDIRECTIONAL_SEQUENCE_LSTM, 8x8_16 or
// 16x8 by the type of x; n becomes the reshape of the stacked step outputs
// to the operator's output.
func (c *opctx) lstmInt8(n *graph.Node, x *graph.Tensor, cellAct uint8, cellClip float32, timeMajor bool) error {
	// The activations' type (input, hidden state, output) and the biases'.
	actT, biasT, kind := graph.Int8, graph.Int32, "int8 LSTM"
	if x.DType == graph.Int16 {
		actT, biasT, kind = graph.Int16, graph.Int64, "16x8 LSTM"
	}
	if len(c.ins) != 24 {
		return c.errorf("%s with %d inputs: TFLite Micro's integer LSTM takes 24", kind, len(c.ins))
	}
	present := func(i int) bool { return i < len(c.ins) && c.ins[i] >= 0 }
	for _, r := range []struct {
		from, to int
		what     string
	}{{9, 11, "peephole weights (inputs 9-11)"}, {16, 17, "a projection (inputs 16-17)"}, {20, 23, "layer norm coefficients (inputs 20-23)"}} {
		for i := r.from; i <= r.to; i++ {
			if present(i) {
				return c.errorf("%s with %s is not supported: TFLite Micro's integer LSTM has none", kind, r.what)
			}
		}
	}
	for i := 1; i <= 8; i++ {
		if !present(i) {
			return c.errorf("%s without input %d: the coupled-gate (CIFG) form is not supported, TFLite Micro's integer LSTM needs all eight weight matrices", kind, i)
		}
	}
	if cellAct != 4 {
		return c.errorf("%s with cell activation %d: TFLite Micro's integer LSTM takes TANH (4)", kind, cellAct)
	}
	if cellClip < 0 {
		return c.errorf("negative cell clip %g", cellClip)
	}
	if len(x.Shape) != 3 {
		return c.errorf("input of shape %v: want [batch, time, input] or [time, batch, input]", x.Shape)
	}
	steps, batch, in := x.Shape[1], x.Shape[0], x.Shape[2]
	if timeMajor {
		steps, batch = batch, steps
	}
	if steps > graph.MaxRNNSteps {
		return c.errorf("%d time steps: mcugen unrolls at most %d", steps, graph.MaxRNNSteps)
	}
	perTensor := func(t *graph.Tensor, dt graph.DType, what string) error {
		if t.DType != dt {
			return c.errorf("%s %s %q is %s, want %s", kind, what, t.Name, t.DType, dt)
		}
		if t.Quant == nil || len(t.Quant.Scale) != 1 || !(t.Quant.Scale[0] > 0) {
			return c.errorf("%s %s %q is not quantized per tensor with a positive scale", kind, what, t.Name)
		}
		return nil
	}
	if err := perTensor(x, actT, "input"); err != nil {
		return err
	}
	fw, err := c.in(2)
	if err != nil {
		return err
	}
	if len(fw.Shape) != 2 {
		return c.errorf("input 2: weights of shape %v, want [cells, input]", fw.Shape)
	}
	cells := fw.Shape[0]
	type gate struct{ w, r, b *graph.Tensor }
	gates := make([]gate, len(lstmInt8Gates))
	for k, gd := range lstmInt8Gates {
		var g gate
		for _, m := range []struct {
			i     int
			shape []int
			t     **graph.Tensor
			dt    graph.DType
		}{{gd.w, []int{cells, in}, &g.w, graph.Int8}, {gd.r, []int{cells, cells}, &g.r, graph.Int8}, {gd.bias, []int{cells}, &g.b, biasT}} {
			t, err := c.in(m.i)
			if err != nil {
				return err
			}
			if !t.IsConst() || t.DType != m.dt || !slices.Equal(t.Shape, m.shape) {
				return c.errorf("%s input %d (%q): %s %v, want a constant %s %v", kind, m.i, t.Name, t.DType, t.Shape, m.dt, m.shape)
			}
			if m.dt == graph.Int8 {
				if err := perTensor(t, graph.Int8, "weights"); err != nil {
					return err
				}
				if _, z := t.Quant.At(0); z != 0 {
					return c.errorf("%s weights %q have zero point %d: TFLite's are symmetric", kind, t.Name, z)
				}
			}
			*m.t = t
		}
		gates[k] = g
	}
	// The states: TFLite Micro wants both variable (stateIn refuses
	// others), H of the input's type.
	h0, err := c.stateIn(18, actT, []int{batch, cells})
	if err != nil {
		return err
	}
	c0, err := c.stateIn(19, graph.Int16, []int{batch, cells})
	if err != nil {
		return err
	}
	if err := perTensor(h0, actT, "hidden state"); err != nil {
		return err
	}
	if err := perTensor(c0, graph.Int16, "cell state"); err != nil {
		return err
	}
	sc, zc := c0.Quant.At(0)
	if zc != 0 {
		return c.errorf("%s cell state %q has zero point %d, want 0", kind, c0.Name, zc)
	}
	frac, exp := math.Frexp(float64(sc))
	pow := exp - 1
	if frac != 0.5 {
		return c.errorf("%s cell state %q has scale %g: TFLite Micro's integer LSTM wants a power of two", kind, c0.Name, sc)
	}
	if pow < qmath.LSTMCellPowMin || pow > qmath.LSTMCellPowMax {
		return c.errorf("%s cell state %q has scale 2^%d: mcugen takes 2^%d to 2^%d", kind, c0.Name, pow, qmath.LSTMCellPowMin, qmath.LSTMCellPowMax)
	}
	y, err := c.out(0)
	if err != nil {
		return err
	}
	if err := perTensor(y, actT, "output"); err != nil {
		return err
	}
	if actT == graph.Int16 {
		// TFLite's 16x8 scheme is symmetric; mcugen's 16x8 FullyConnected
		// and TFLite Micro's reset of an int16 state (to 0) assume it.
		for _, t := range []*graph.Tensor{x, h0} {
			if _, z := t.Quant.At(0); z != 0 {
				return c.errorf("%s %q has zero point %d: TFLite's 16x8 scheme wants 0", kind, t.Name, z)
			}
		}
		// TFLite's 64-bit requantization takes a multiplier below 2^7
		// (interp.CheckShift64); refuse here rather than at the first run.
		for _, gt := range gates {
			for _, p := range [][2]*graph.Tensor{{x, gt.w}, {h0, gt.r}} {
				sa, _ := p[0].Quant.At(0)
				sw, _ := p[1].Quant.At(0)
				if _, shift := qmath.ProductMultiplier(sa, sw, 1.0/4096); shift >= 8 {
					return c.errorf("%s weights %q: the gate product's scale %g / 2^-12 is 2^7 or more, beyond TFLite's 64-bit requantization", kind, p[1].Name, float64(sa)*float64(sw))
				}
			}
		}
	}
	if !y.Quant.Equal(h0.Quant) {
		return c.errorf("%s output %q and hidden state %q are quantized differently (TFLite Micro copies the state's values to the output)", kind, y.Name, h0.Name)
	}
	if y.NumElements() != batch*steps*cells {
		return c.errorf("output %q of shape %v, the operator gives %d values", y.Name, y.Shape, batch*steps*cells)
	}

	g := c.d.g
	base := c.rnnBase()
	q := func(s float32, z int32) *graph.Quant {
		return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}}
	}
	emitter := func(dt graph.DType, qu *graph.Quant) graph.Emitter {
		return func(op graph.Op, ins []string, attrs any, shape []int, suffix string) string {
			t := g.AddTensor(&graph.Tensor{Name: g.UniqueName(base + "/" + suffix), DType: dt, Shape: slices.Clone(shape), Quant: qu})
			g.AddNode(&graph.Node{Name: t.Name, Op: op, Inputs: ins, Outputs: []string{t.Name}, Attrs: attrs})
			return t.Name
		}
	}
	var (
		xq    = emitter(actT, x.Quant)
		hq    = emitter(actT, h0.Quant)
		pre   = emitter(graph.Int16, q(1.0/4096, 0))
		act   = emitter(graph.Int16, q(1.0/32768, 0))
		cellq = emitter(graph.Int16, q(sc, 0))
		shape = []int{batch, cells}
	)
	var clipLo, clipHi string
	if cellClip > 0 {
		// TFLite Micro's quantized_cell_clip: the double ratio clamped to
		// int16 and truncated.
		qc := int64(math.Min(math.Max(float64(cellClip)/float64(sc), -32768), 32767))
		bound := func(v int64, what string) string {
			d := graph.NewData(graph.Int16, []int{1})
			d.I[0] = v
			t := g.AddConst(g.UniqueName(base+"_"+what), d)
			t.Quant = q(sc, 0)
			return t.Name
		}
		clipHi, clipLo = bound(qc, "cell_clip_max"), bound(-qc, "cell_clip_min")
	}
	xs := seqSteps(xq, x.Name, timeMajor, batch, steps, in, "x")
	h := hq(graph.Reshape, []string{h0.Name}, nil, shape, "h0")
	cs := cellq(graph.Reshape, []string{c0.Name}, nil, shape, "c0")
	ys := make([]string, steps)
	for t, xt := range xs {
		s := fmt.Sprintf("t%d", t)
		out := make([]string, len(gates))
		for k, gt := range gates {
			gs := s + "_" + lstmInt8Gates[k].name
			vx := pre(graph.FullyConnected, []string{xt, gt.w.Name, gt.b.Name}, &graph.FullyConnectedAttrs{}, shape, gs+"_x")
			vh := pre(graph.FullyConnected, []string{h, gt.r.Name, ""}, &graph.FullyConnectedAttrs{}, shape, gs+"_h")
			sum := pre(graph.Add, []string{vx, vh}, &graph.BinaryAttrs{}, shape, gs+"_sum")
			op := graph.Sigmoid
			if lstmInt8Gates[k].name == "g" {
				op = graph.Tanh
			}
			out[k] = act(op, []string{sum}, nil, shape, gs)
		}
		fg, ig, gg, og := out[0], out[1], out[2], out[3]
		fc := cellq(graph.Mul, []string{fg, cs}, &graph.BinaryAttrs{}, shape, s+"_fc")
		igg := cellq(graph.Mul, []string{ig, gg}, &graph.BinaryAttrs{}, shape, s+"_ig")
		cs = cellq(graph.Add, []string{fc, igg}, &graph.BinaryAttrs{}, shape, s+"_C")
		if cellClip > 0 {
			cs = cellq(graph.Minimum, []string{cs, clipHi}, &graph.BinaryAttrs{}, shape, s+"_Cmin")
			cs = cellq(graph.Maximum, []string{cs, clipLo}, &graph.BinaryAttrs{}, shape, s+"_Cclip")
		}
		tc := act(graph.Tanh, []string{cs}, nil, shape, s+"_tanhC")
		h = hq(graph.Mul, []string{tc, og}, &graph.BinaryAttrs{}, shape, s+"_H")
		ys[t] = h
	}
	// TFLite Micro resets an int8 variable to its zero point, int16 ones
	// (the 16x8 hidden state, the cell state) to 0.
	var hInit *graph.Data
	if _, zh := h0.Quant.At(0); zh != 0 && actT == graph.Int8 {
		hInit = graph.NewData(graph.Int8, h0.Shape)
		for i := range hInit.I {
			hInit.I[i] = int64(zh)
		}
	}
	c.d.states = append(c.d.states,
		graph.State{In: h0.Name, Out: hq(graph.Reshape, []string{h}, nil, slices.Clone(h0.Shape), "h_next"), Init: hInit},
		graph.State{In: c0.Name, Out: cellq(graph.Reshape, []string{cs}, nil, slices.Clone(c0.Shape), "c_next")})
	n.Op = graph.Reshape
	n.Attrs = nil
	n.Inputs = []string{seqStack(hq, ys, timeMajor, batch, cells, "y")}
	return nil
}
