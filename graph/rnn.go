package graph

import (
	"fmt"
	"strings"
)

// Recurrent layers (ONNX RNN, GRU and LSTM; TFLite's sequence LSTM) have
// no canonical op: an importer unrolls them over their (static) time steps
// into FullyConnected, elementwise and activation nodes with RNNLayer.Run.
// Every step is then an ordinary node that quantizes, plans and lowers like
// any other, and the arithmetic is the specification's, step by step.

// RNNKind is the cell of a recurrent layer.
type RNNKind uint8

// The recurrent cells.
const (
	RNNSimple RNNKind = iota // H = f(x·W + H·R + b)
	RNNGRU                   // gates z (update), r (reset), h (candidate)
	RNNLSTM                  // gates i (input), f (forget), g (cell input), o (output)
)

// Gates is the number of gates of the cell, the length of RNNLayer.W.
func (k RNNKind) Gates() int {
	switch k {
	case RNNGRU:
		return 3
	case RNNLSTM:
		return 4
	}
	return 1
}

// Acts is the number of activation functions of the cell.
func (k RNNKind) Acts() int {
	switch k {
	case RNNGRU:
		return 2
	case RNNLSTM:
		return 3
	}
	return 1
}

// DefaultActs are ONNX's default activation functions of the cell.
func (k RNNKind) DefaultActs() []string {
	switch k {
	case RNNGRU:
		return []string{"Sigmoid", "Tanh"}
	case RNNLSTM:
		return []string{"Sigmoid", "Tanh", "Tanh"}
	}
	return []string{"Tanh"}
}

// RNNAct is one of a recurrent cell's activation functions, named as ONNX
// names them, with its constants.
type RNNAct struct {
	Fn          string
	Alpha, Beta float32
}

// rnnActConsts gives, for each activation a cell may use, whether it takes
// alpha and beta and their defaults (ONNX's).
var rnnActConsts = map[string]struct {
	alpha, beta bool
	a, b        float32
}{
	"Sigmoid":         {},
	"Tanh":            {},
	"Relu":            {},
	"Softsign":        {},
	"Softplus":        {},
	"LeakyRelu":       {alpha: true, a: 0.01},
	"ThresholdedRelu": {alpha: true, a: 1},
	"Elu":             {alpha: true, a: 1},
	"HardSigmoid":     {alpha: true, beta: true, a: 0.2, b: 0.5},
	"Affine":          {alpha: true, beta: true, a: 1},
	"ScaledTanh":      {alpha: true, beta: true, a: 1, b: 1},
}

// ParseRNNActs resolves activation names (matched without regard to case)
// and their constants. alphas and betas are consumed in order by the
// functions that take the constant, as onnxruntime does; a function whose
// constant has no value left takes ONNX's default.
func ParseRNNActs(names []string, alphas, betas []float32) ([]RNNAct, error) {
	var out []RNNAct
	for _, n := range names {
		fn := ""
		for k := range rnnActConsts {
			if strings.EqualFold(k, n) {
				fn = k
			}
		}
		if fn == "" {
			return nil, fmt.Errorf("activation %q is not supported (supported: Sigmoid, Tanh, Relu, LeakyRelu, HardSigmoid, ThresholdedRelu, Elu, Softsign, Softplus, Affine, ScaledTanh)", n)
		}
		k := rnnActConsts[fn]
		a := RNNAct{Fn: fn, Alpha: k.a, Beta: k.b}
		if k.alpha && len(alphas) > 0 {
			a.Alpha, alphas = alphas[0], alphas[1:]
		}
		if k.beta && len(betas) > 0 {
			a.Beta, betas = betas[0], betas[1:]
		}
		out = append(out, a)
	}
	return out, nil
}

// RNNLayer is one direction of a recurrent layer, its weights given as
// FullyConnected operands (constant tensors of the graph). Gate k, in the
// kind's order, has input weights W[k] ([Hidden, In]), recurrent weights
// R[k] ([Hidden, Out]) and a bias B[k] ([Hidden], "" for none) that holds
// both of the gate's biases unless the recurrent one sits inside the GRU's
// reset product (RBh).
type RNNLayer struct {
	Kind          RNNKind
	Batch, Hidden int
	W, R, B       []string
	// LSTM only: W[0] == "" couples the input gate to the forget gate,
	// i = 1 - f (TFLite's CIFG).

	// GRU: with LinearBeforeReset the candidate is g(x·Wh + r ⊙ (H·Rh +
	// RBh) + B[2]); without it, g(x·Wh + (r ⊙ H)·Rh + B[2]).
	LinearBeforeReset bool
	RBh               string

	// LSTM: the peephole weights of i, f and o ([Hidden], "" for none).
	P [3]string

	// Acts are the cell's activations: RNN f; GRU f, g; LSTM f, g, h.
	Acts []RNNAct
	// Clip > 0 clips every gate's input to [-Clip, Clip] before its
	// activation (ONNX clip).
	Clip float32

	// LSTM (TFLite): CellClip > 0 clips the cell state; Proj ([Out,
	// Hidden]) projects the output, with ProjBias and ProjClip.
	CellClip       float32
	Proj, ProjBias string
	ProjClip       float32

	// LSTM (TFLite's layer-normalized LSTM): LN[k] ([Hidden], "" for none)
	// normalizes gate k's input (x·W + h·R + peephole) over the cells of
	// each batch row, (v - mean) / sqrt(variance + 1e-8), scales it by
	// LN[k] and only then adds the gate's bias B[k].
	LN [4]string
}

// LayerNormEpsilon is the constant TFLite's layer-normalized LSTM adds to
// the variance (MeanStddevNormalization's kNormalizationConstant).
const LayerNormEpsilon = 1e-8

// Out is the size of the layer's output (and of its recurrent state H).
func (l *RNNLayer) Out(g *Graph) int {
	if l.Proj != "" {
		if t := g.Tensor(l.Proj); t != nil && len(t.Shape) == 2 {
			return t.Shape[0]
		}
	}
	return l.Hidden
}

// Emitter adds one float32 node with a new output tensor of the shape and
// returns the tensor's name; suffix tells the tensor apart in its name.
type Emitter func(op Op, ins []string, attrs any, shape []int, suffix string) string

// rnnRun carries one Run's emitter and constants.
type rnnRun struct {
	l    *RNNLayer
	g    *Graph
	emit Emitter
	base string
	one  string
	eps  string
}

func (r *rnnRun) scalar(v float32, what string) string {
	d := NewData(Float32, nil)
	d.F[0] = v
	return r.g.AddConst(r.g.UniqueName(r.base+"_"+what), d).Name
}

func (r *rnnRun) bin(op Op, a, b, s string) string {
	return r.emit(op, []string{a, b}, &BinaryAttrs{}, []int{r.l.Batch, r.l.Hidden}, s)
}

// MaxRNNSteps bounds the time steps a recurrent layer unrolls into (a
// model file can give a sequence length without any data behind it).
const MaxRNNSteps = 4096

// Run emits the recurrence over the step inputs xs ([Batch, In] each, in
// the order the layer processes them) from the state h0 and c0 ("" for
// zeros); steps[i] is the time index of xs[i]. lens, when not nil, are the
// per-sample sequence lengths of ONNX's sequence_lens: a sample's state
// holds still and its output is zero at and after its length. Run returns
// every step's output and the final H and C.
func (l *RNNLayer) Run(g *Graph, emit Emitter, base string, xs []string, h0, c0 string, lens, steps []int) (ys []string, h, c string) {
	// Every tensor of a step shares its quantization parameters with the
	// same tensor of the other steps (Tensor.QuantGroup): its suffix
	// without the step.
	add := emit
	emit = func(op Op, ins []string, attrs any, shape []int, suffix string) string {
		name := add(op, ins, attrs, shape, suffix)
		if t := g.Tensor(name); t != nil {
			role := strings.TrimLeft(strings.TrimPrefix(suffix, "t"), "0123456789")
			t.QuantGroup = base + "/" + role
		}
		return name
	}
	r := &rnnRun{l: l, g: g, emit: emit, base: base}
	h, c = h0, c0
	var zero string
	for i, x := range xs {
		s := fmt.Sprintf("t%d", steps[i])
		hn, cn := r.step(x, h, c, s)
		y := hn
		if lens != nil {
			keep := NewData(Bool, []int{l.Batch, 1})
			all := true
			for b := range keep.I {
				if steps[i] < lens[b] {
					keep.I[b] = 1
				} else {
					all = false
				}
			}
			if !all {
				if zero == "" {
					zero = r.scalar(0, "zero")
				}
				k := g.AddConst(g.UniqueName(base+"_"+s+"_live"), keep).Name
				or := func(prev string) string {
					if prev == "" {
						return zero
					}
					return prev
				}
				shape := []int{l.Batch, l.Out(g)}
				y = emit(Where, []string{k, hn, zero}, nil, shape, s+"_live_y")
				hn = emit(Where, []string{k, hn, or(h)}, nil, shape, s+"_live_h")
				if cn != "" {
					cn = emit(Where, []string{k, cn, or(c)}, nil, []int{l.Batch, l.Hidden}, s+"_live_c")
				}
			}
		}
		h, c = hn, cn
		ys = append(ys, y)
	}
	return ys, h, c
}

// pre is gate k's input: x·W[k] + B[k] (+ h·R[k]); without B[k] when the
// gate is layer-normalized (the bias comes after the normalization).
func (r *rnnRun) pre(k int, x, h, s string) string {
	l := r.l
	shape := []int{l.Batch, l.Hidden}
	b := l.B[k]
	if l.LN[k] != "" {
		b = ""
	}
	v := r.emit(FullyConnected, []string{x, l.W[k], b}, &FullyConnectedAttrs{}, shape, s+"_x")
	if h == "" {
		return v
	}
	hr := r.emit(FullyConnected, []string{h, l.R[k], ""}, &FullyConnectedAttrs{}, shape, s+"_h")
	return r.bin(Add, v, hr, s+"_sum")
}

// act applies a to v, a gate's input (clipped) or the LSTM's cell (not).
func (r *rnnRun) act(a RNNAct, v, s string, gate bool) string {
	shape := []int{r.l.Batch, r.l.Hidden}
	if gate && r.l.Clip > 0 {
		v = r.emit(Clip, []string{v}, &ClipAttrs{Min: -r.l.Clip, Max: r.l.Clip}, shape, s+"_clip")
	}
	switch a.Fn {
	case "Sigmoid":
		return r.emit(Sigmoid, []string{v}, nil, shape, s)
	case "Tanh":
		return r.emit(Tanh, []string{v}, nil, shape, s)
	case "Relu":
		return r.emit(Relu, []string{v}, nil, shape, s)
	case "LeakyRelu":
		return r.emit(LeakyRelu, []string{v}, &LeakyReluAttrs{Alpha: a.Alpha}, shape, s)
	case "HardSigmoid":
		return r.emit(HardSigmoid, []string{v}, &HardSigmoidAttrs{Alpha: a.Alpha, Beta: a.Beta}, shape, s)
	case "Affine":
		m := r.bin(Mul, v, r.scalar(a.Alpha, "alpha"), s+"_scaled")
		return r.bin(Add, m, r.scalar(a.Beta, "beta"), s)
	case "ScaledTanh":
		m := r.bin(Mul, v, r.scalar(a.Beta, "beta"), s+"_scaled")
		t := r.emit(Tanh, []string{m}, nil, shape, s+"_tanh")
		return r.bin(Mul, t, r.scalar(a.Alpha, "alpha"), s)
	}
	fn := map[string]MathFn{"ThresholdedRelu": MathThresholdedRelu, "Elu": MathElu, "Softsign": MathSoftsign, "Softplus": MathSoftplus}[a.Fn]
	return r.emit(Math, []string{v}, &MathAttrs{Fn: fn, Alpha: a.Alpha, Beta: a.Beta}, shape, s)
}

// step emits one time step and returns the new H and C.
func (r *rnnRun) step(x, h, c, s string) (string, string) {
	l := r.l
	switch l.Kind {
	case RNNSimple:
		return r.act(l.Acts[0], r.pre(0, x, h, s), s, true), ""
	case RNNGRU:
		return r.gru(x, h, s), ""
	}
	return r.lstm(x, h, c, s)
}

func (r *rnnRun) gru(x, h, s string) string {
	l := r.l
	f, g := l.Acts[0], l.Acts[1]
	z := r.act(f, r.pre(0, x, h, s+"_z"), s+"_z", true)
	rg := r.act(f, r.pre(1, x, h, s+"_r"), s+"_r", true)
	shape := []int{l.Batch, l.Hidden}
	cand := r.emit(FullyConnected, []string{x, l.W[2], l.B[2]}, &FullyConnectedAttrs{}, shape, s+"_hx")
	switch {
	case l.LinearBeforeReset && h != "":
		hr := r.emit(FullyConnected, []string{h, l.R[2], l.RBh}, &FullyConnectedAttrs{}, shape, s+"_hh")
		cand = r.bin(Add, cand, r.bin(Mul, rg, hr, s+"_rhh"), s+"_hpre")
	case l.LinearBeforeReset && l.RBh != "":
		// H = 0: r ⊙ (0·Rh + RBh).
		cand = r.bin(Add, cand, r.bin(Mul, rg, l.RBh, s+"_rhh"), s+"_hpre")
	case h != "":
		rh := r.bin(Mul, rg, h, s+"_rh")
		hr := r.emit(FullyConnected, []string{rh, l.R[2], ""}, &FullyConnectedAttrs{}, shape, s+"_hh")
		cand = r.bin(Add, cand, hr, s+"_hpre")
	}
	cand = r.act(g, cand, s+"_hc", true)
	if r.one == "" {
		r.one = r.scalar(1, "one")
	}
	// (1 - z) ⊙ h~ + z ⊙ H, in the specification's order.
	nz := r.bin(Sub, r.one, z, s+"_1mz")
	out := r.bin(Mul, nz, cand, s+"_keep")
	if h == "" {
		return out
	}
	return r.bin(Add, out, r.bin(Mul, z, h, s+"_zh"), s+"_H")
}

func (r *rnnRun) lstm(x, h, c, s string) (string, string) {
	l := r.l
	f, g, hact := l.Acts[0], l.Acts[1], l.Acts[2]
	// peep adds the peephole P[k] (k: i, f, o) to gate gs's input and, for
	// a layer-normalized gate, normalizes it and adds its bias.
	peep := func(k int, v, cs, gs string) string {
		if l.P[k] != "" && cs != "" {
			v = r.bin(Add, v, r.bin(Mul, l.P[k], cs, s+"_p"+gs), s+"_"+gs+"p")
		}
		gate := map[string]int{"i": 0, "f": 1, "o": 3}[gs]
		if l.LN[gate] != "" {
			v = r.layerNorm(v, l.LN[gate], l.B[gate], s+"_"+gs)
		}
		return v
	}
	fg := r.act(f, peep(1, r.pre(1, x, h, s+"_f"), c, "f"), s+"_f", true)
	var ig string
	if l.W[0] == "" {
		if r.one == "" {
			r.one = r.scalar(1, "one")
		}
		ig = r.bin(Sub, r.one, fg, s+"_i")
	} else {
		ig = r.act(f, peep(0, r.pre(0, x, h, s+"_i"), c, "i"), s+"_i", true)
	}
	gp := r.pre(2, x, h, s+"_g")
	if l.LN[2] != "" {
		gp = r.layerNorm(gp, l.LN[2], l.B[2], s+"_g")
	}
	gg := r.act(g, gp, s+"_g", true)
	// C = f ⊙ C + i ⊙ g.
	cn := r.bin(Mul, ig, gg, s+"_ig")
	if c != "" {
		cn = r.bin(Add, r.bin(Mul, fg, c, s+"_fc"), cn, s+"_C")
	}
	if l.CellClip > 0 {
		cn = r.emit(Clip, []string{cn}, &ClipAttrs{Min: -l.CellClip, Max: l.CellClip}, []int{l.Batch, l.Hidden}, s+"_Cclip")
	}
	og := r.act(f, peep(2, r.pre(3, x, h, s+"_o"), cn, "o"), s+"_o", true)
	hc := r.act(hact, cn, s+"_hC", false)
	hn := r.bin(Mul, og, hc, s+"_H")
	if l.Proj != "" {
		shape := []int{l.Batch, l.Out(r.g)}
		hn = r.emit(FullyConnected, []string{hn, l.Proj, l.ProjBias}, &FullyConnectedAttrs{}, shape, s+"_proj")
		if l.ProjClip > 0 {
			hn = r.emit(Clip, []string{hn}, &ClipAttrs{Min: -l.ProjClip, Max: l.ProjClip}, shape, s+"_projclip")
		}
	}
	return hn, cn
}

// layerNorm normalizes v ([Batch, Hidden]) over the cells of each row as
// TFLite's MeanStddevNormalization does, scales it by coef and adds bias
// ("" for none).
func (r *rnnRun) layerNorm(v, coef, bias, s string) string {
	l := r.l
	col := []int{l.Batch, 1}
	mean := r.emit(Mean, []string{v}, &MeanAttrs{Axes: []int{1}, KeepDims: true}, col, s+"_lnmean")
	d := r.bin(Sub, v, mean, s+"_lndiff")
	sq := r.bin(Mul, d, d, s+"_lnsq")
	vr := r.emit(Mean, []string{sq}, &MeanAttrs{Axes: []int{1}, KeepDims: true}, col, s+"_lnvar")
	if r.eps == "" {
		r.eps = r.scalar(LayerNormEpsilon, "eps")
	}
	ve := r.emit(Add, []string{vr, r.eps}, &BinaryAttrs{}, col, s+"_lnvareps")
	inv := r.emit(Math, []string{ve}, &MathAttrs{Fn: MathRsqrt}, col, s+"_lnrstd")
	out := r.bin(Mul, r.bin(Mul, d, inv, s+"_lnnorm"), coef, s+"_lnscaled")
	if bias != "" {
		out = r.bin(Add, out, bias, s+"_lnbias")
	}
	return out
}

// RowsData returns rows [from, to) of the first matrix of a constant of
// shape [n, rows, cols] at index d, as a [to-from, cols] constant.
func RowsData(w *Data, d, from, to int) *Data {
	rows, cols := w.Shape[len(w.Shape)-2], w.Shape[len(w.Shape)-1]
	out := NewData(w.DType, []int{to - from, cols})
	off := (d*rows + from) * cols
	if w.DType == Float32 {
		copy(out.F, w.F[off:off+(to-from)*cols])
	} else {
		copy(out.I, w.I[off:off+(to-from)*cols])
	}
	return out
}

// SpanData returns values [from, to) of row d of a constant of shape [n, m]
// (or [m] with d = 0) as a [to-from] constant; with add, the values
// [add, add+to-from) of the same row are added to them.
func SpanData(b *Data, d, from, to int, add int) *Data {
	m := b.Shape[len(b.Shape)-1]
	out := NewData(Float32, []int{to - from})
	for i := range out.F {
		v := b.F[d*m+from+i]
		if add >= 0 {
			v += b.F[d*m+add+i]
		}
		out.F[i] = v
	}
	return out
}
