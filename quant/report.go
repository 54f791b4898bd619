package quant

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// MaxSQNR caps reported SQNRs: a bit-exact result (no noise) reads as this
// many dB instead of +Inf, which JSON cannot carry.
const MaxSQNR = 999

// LayerReport is the quality of one quantized activation.
type LayerReport struct {
	Name   string  `json:"name"`   // the node that computes it ("conv1+relu1": relu1 fused into conv1; an input's own name)
	Op     string  `json:"op"`     // the node's op ("Conv2D+Relu"; "Input" for a model input)
	Tensor string  `json:"tensor"` // the tensor compared
	SQNRdB float64 `json:"sqnr_db"`
	// ChannelSQNRdB is the median over the tensor's channels (its last
	// axis: NHWC's C, a fully connected layer's features) of each
	// channel's own SQNR, dead channels (no signal) left out; nil for a
	// tensor of one channel. A layer whose one wide channel stretches the
	// tensor's int8 scale keeps a high SQNR, the wide channel's, while its
	// other channels get a few steps each: this figure falls then
	// (user-journey finding: a channel with a bias of 500 hid the damage
	// to its layer, and the report pointed at a later one).
	ChannelSQNRdB *float64 `json:"channel_sqnr_db,omitempty"`
	// Range is the real interval the int8 tensor covers (its scale and zero
	// point: SCALE * (-128 - ZERO_POINT) to SCALE * (127 - ZERO_POINT));
	// nil for a tensor that stays float.
	Range *[2]float64 `json:"range,omitempty"`
	// Float: the node computes in float32 (an op without an int8 kernel,
	// or one kept float with Options.Float); its output is quantized for
	// the int8 layers that read it.
	Float bool `json:"float,omitempty"`
}

// Report compares a quantized graph with its float original.
type Report struct {
	Method string        `json:"method"`
	Layers []LayerReport `json:"layers"`
	// OutputSQNRdB pools signal and noise of every graph output over all
	// samples; OutputSQNRMedianDB is the median of the per-sample SQNRs.
	OutputSQNRdB       float64 `json:"output_sqnr_db"`
	OutputSQNRMedianDB float64 `json:"output_sqnr_median_db"`
	// Outputs is each float output's own SQNR over all samples (the pooled
	// figure is the largest output's: a small output quantized to zeros
	// beside a large one left it at 42.6 dB: review finding).
	Outputs []OutputReport `json:"outputs,omitempty"`
	// Top1Agree counts the rows whose arg-max agrees, for classifiers (a
	// graph whose first output comes from a Softmax): one row per sample,
	// or per batch element and position where the Softmax has several
	// (argmax along the Softmax's axis). Top1Total is 0 otherwise.
	Top1Agree int `json:"top1_agree"`
	Top1Total int `json:"top1_total"`
	Samples   int `json:"samples"`
	// HeldOut is the same comparison on held-out samples (quantize --eval),
	// its layers included.
	HeldOut *Report `json:"held_out,omitempty"`
}

// OutputReport is one graph output's SQNR.
type OutputReport struct {
	Name   string  `json:"name"`
	SQNRdB float64 `json:"sqnr_db"`
}

// SQNR is 10·log10(Σx² / Σ(x-y)²) in dB, capped at MaxSQNR.
func SQNR(signal, noise float64) float64 {
	if noise == 0 {
		return MaxSQNR
	}
	if signal == 0 {
		return -MaxSQNR
	}
	return math.Min(MaxSQNR, 10*math.Log10(signal/noise))
}

// acc sums a tensor's signal and noise, over all its values and, when it
// has channels (c > 1), per channel of its last axis.
type acc struct {
	sig, noise     float64
	c              int
	chSig, chNoise []float64
}

func (a *acc) add(x, y []float64) {
	a.sig += floats.Dot(x, x)
	perChannel := a.c > 1 && len(x)%a.c == 0
	if perChannel && a.chSig == nil {
		a.chSig, a.chNoise = make([]float64, a.c), make([]float64, a.c)
	}
	for i := range x {
		d := x[i] - y[i]
		a.noise += d * d
		if perChannel {
			a.chSig[i%a.c] += x[i] * x[i]
			a.chNoise[i%a.c] += d * d
		}
	}
}

// channelSQNR is the median of the per-channel SQNRs of the channels with
// a signal; nil without channels.
func (a *acc) channelSQNR() *float64 {
	var v []float64
	for j := range a.chSig {
		if a.chSig[j] > 0 {
			v = append(v, SQNR(a.chSig[j], a.chNoise[j]))
		}
	}
	if len(v) < 2 {
		return nil
	}
	sort.Float64s(v)
	m := round2((v[(len(v)-1)/2] + v[len(v)/2]) / 2)
	return &m
}

// Evaluate runs both graphs on the float samples and reports per-layer SQNR
// (for every tensor name both graphs share, the float value against the
// dequantized int8 one), output SQNR and top-1 agreement. Samples are
// quantized with the int8 graph's input parameters when its inputs are int8.
func Evaluate(fg, qg *graph.Graph, samples []map[string]*graph.Data) (*Report, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("quant: evaluate: no samples")
	}
	if len(fg.Outputs) != len(qg.Outputs) {
		return nil, fmt.Errorf("quant: evaluate: float graph has %d outputs, int8 graph %d", len(fg.Outputs), len(qg.Outputs))
	}
	r := &Report{Samples: len(samples)}
	layers := map[string]*acc{}
	var out acc
	var perSample []float64
	var outs []acc      // each output's signal and noise over the samples
	var measured []bool // the outputs measured (float ones)
	cls := classifierOf(fg)
	// Both graphs run the samples as a sequence (their states, if any,
	// carried from each sample to the next).
	fsess, qsess := interp.NewSession(fg), interp.NewSession(qg)
	for si, s := range samples {
		fv, err := fsess.RunAll(s)
		if err != nil {
			return nil, fmt.Errorf("quant: evaluate: float graph, sample %d: %w", si, err)
		}
		qin := map[string]*graph.Data{}
		for i, name := range qg.Inputs {
			if qg.StateOf(name) >= 0 {
				continue // the session's
			}
			d := s[name]
			if d == nil && i < len(fg.Inputs) {
				d = s[fg.Inputs[i]] // inputs named differently: bind by position
			}
			if d == nil {
				return nil, fmt.Errorf("quant: evaluate: sample %d has no value for input %q", si, name)
			}
			t := qg.Tensors[name]
			if t != nil && t.DType.IsInt() && t.Quant != nil && d.DType == graph.Float32 {
				sc, z := t.Quant.At(0)
				qd := QuantizeInput(d, sc, z)
				qd.DType = t.DType
				qin[name] = qd
			} else {
				qin[name] = d
			}
		}
		qv, err := qsess.RunAll(qin)
		if err != nil {
			return nil, fmt.Errorf("quant: evaluate: int8 graph, sample %d: %w", si, err)
		}
		for name, t := range qg.Tensors {
			ft := fg.Tensors[name]
			if ft == nil || ft.IsConst() || ft.DType != graph.Float32 || t.IsConst() {
				continue
			}
			x, y := floatOf(fv[name], nil), floatOf(qv[name], t.Quant)
			if x == nil || y == nil || len(x) != len(y) {
				continue
			}
			a := layers[name]
			if a == nil {
				a = &acc{}
				if sh := t.Shape; len(sh) >= 2 {
					a.c = sh[len(sh)-1]
				}
				layers[name] = a
			}
			a.add(x, y)
		}
		var one acc
		if outs == nil {
			outs = make([]acc, len(fg.Outputs))
			measured = make([]bool, len(fg.Outputs))
		}
		for i, name := range fg.Outputs {
			if fg.StateOf(name) >= 0 {
				continue // a state's next value: not an output of the model
			}
			if d := fv[name]; d != nil && d.DType != graph.Float32 {
				continue // an index or mask output (ArgMax, Compare): not a signal to measure
			}
			x := floatOf(fv[name], nil)
			y := floatOf(qv[qg.Outputs[i]], qg.Tensors[qg.Outputs[i]].Quant)
			if x == nil || y == nil || len(x) != len(y) {
				return nil, fmt.Errorf("quant: evaluate: output %q: float and int8 values differ in size", name)
			}
			one.add(x, y)
			outs[i].add(x, y)
			measured[i] = true
			if i == 0 && cls.ok {
				ax, ay := cls.argmaxes(x), cls.argmaxes(y)
				for j := range ax {
					r.Top1Total++
					if ax[j] == ay[j] {
						r.Top1Agree++
					}
				}
			}
		}
		out.sig += one.sig
		out.noise += one.noise
		perSample = append(perSample, SQNR(one.sig, one.noise))
	}
	r.Layers = layerRows(fg, qg, layers)
	r.OutputSQNRdB = round2(SQNR(out.sig, out.noise))
	for i, name := range fg.Outputs {
		if i < len(measured) && measured[i] {
			r.Outputs = append(r.Outputs, OutputReport{Name: name, SQNRdB: round2(SQNR(outs[i].sig, outs[i].noise))})
		}
	}
	sort.Float64s(perSample)
	k := len(perSample)
	r.OutputSQNRMedianDB = round2((perSample[(k-1)/2] + perSample[k/2]) / 2)
	return r, nil
}

// layerRows lists the measured tensors in the float graph's order, each
// under the layer of the int8 graph that computes it: the model's inputs
// (their quantization) first, then the nodes. A node that absorbed the
// activation after it (a Conv2D and its Relu, fused by Quantize) is one row
// named after both, "conv1+relu1", op "Conv2D+Relu"; a Reshape or Transpose
// of the int8 graph that only moves int8 values (parameters unchanged: it
// adds no error, its SQNR is its input's) has no row of its own.
func layerRows(fg, qg *graph.Graph, layers map[string]*acc) []LayerReport {
	var rows []LayerReport
	row := func(name, op, t string, channels bool, float bool) {
		if a := layers[t]; a != nil {
			r := LayerReport{Name: name, Op: op, Tensor: t, SQNRdB: round2(SQNR(a.sig, a.noise)), Float: float}
			if channels {
				r.ChannelSQNRdB = a.channelSQNR()
			}
			if qt := qg.Tensors[t]; qt != nil && qt.Quant != nil && len(qt.Quant.Scale) == 1 && len(qt.Quant.ZeroPoint) == 1 {
				lo, hi := qt.DType.Range()
				sc, z := qt.Quant.At(0)
				r.Range = &[2]float64{float64(sc) * float64(lo-int64(z)), float64(sc) * float64(hi-int64(z))}
			}
			rows = append(rows, r)
		}
	}
	for _, in := range fg.Inputs {
		if t := qg.Tensors[in]; t != nil && t.DType.IsInt() && t.Quant != nil {
			// The int8 graph takes it quantized. An input's last axis
			// need not be its channels (an ONNX image is NCHW): no
			// per-channel figure.
			row(in, "Input", in, false, false)
		}
	}
	qprod := qg.Producers()
	for _, n := range fg.Nodes {
		for _, o := range n.Outputs {
			if layers[o] == nil {
				continue
			}
			name, op := n.Name, string(n.Op)
			qn := computedBy(qprod, o)
			if qn != nil && relayout(qg, qn) {
				continue
			}
			if a, ok := actOfNode(qn); ok && a != graph.ActNone && qn.Name != n.Name {
				// The int8 node computing o is another float node's, with n
				// fused into it (its activation).
				name, op = qn.Name+"+"+n.Name, string(qn.Op)+"+"+string(n.Op)
			}
			fl := false
			if qn != nil && len(qn.Outputs) > 0 {
				if qt := qg.Tensors[qn.Outputs[0]]; qt != nil && qt.DType == graph.Float32 {
					fl = true
				}
			}
			row(name, op, o, true, fl)
		}
	}
	return rows
}

// computedBy returns the node of q that computes tensor t, looking through
// the Quantize and Dequantize nodes Quantize adds around a float node.
func computedBy(prod map[string]*graph.Node, t string) *graph.Node {
	n := prod[t]
	for i := 0; n != nil && (n.Op == graph.Quantize || n.Op == graph.Dequantize) && i < 4; i++ {
		p := prod[n.Inputs[0]]
		if p == nil {
			break
		}
		n = p
	}
	return n
}

func actOfNode(n *graph.Node) (graph.Activation, bool) {
	if n == nil {
		return graph.ActNone, false
	}
	return actOf(n)
}

// relayout reports whether n is a Reshape or Transpose of an int8 activation
// into a tensor of the same parameters.
func relayout(q *graph.Graph, n *graph.Node) bool {
	if n.Op != graph.Reshape && n.Op != graph.Transpose || len(n.Inputs) == 0 || len(n.Outputs) != 1 {
		return false
	}
	x, y := q.Tensors[n.Inputs[0]], q.Tensors[n.Outputs[0]]
	return x != nil && y != nil && !x.IsConst() && x.DType == graph.Int8 && y.DType == graph.Int8 &&
		x.Quant != nil && x.Quant.Equal(y.Quant)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// floatOf returns d as float64, dequantized with q when d is an integer tensor.
func floatOf(d *graph.Data, q *graph.Quant) []float64 {
	if d == nil {
		return nil
	}
	if d.DType == graph.Float32 {
		return toF64(nil, d.F)
	}
	if q == nil || len(q.Scale) != 1 {
		return nil
	}
	s, z := q.At(0)
	out := make([]float64, len(d.I))
	for i, v := range d.I {
		out[i] = float64(s * float32(v-int64(z)))
	}
	return out
}

// classifier describes the rows of a classifier's first output: its
// Softmax's axis splits the values into outer × n × inner, and each of the
// outer × inner rows (n values, inner apart) has one arg-max.
type classifier struct {
	ok       bool
	n, inner int
}

// argmaxes returns the arg-max of each row of x (the whole of x as one
// row when x's size does not match the Softmax's).
func (c classifier) argmaxes(x []float64) []int {
	n, inner := c.n, c.inner
	if n <= 0 || inner <= 0 || len(x)%(n*inner) != 0 {
		n, inner = len(x), 1
	}
	var out []int
	for o := 0; o+n*inner <= len(x); o += n * inner {
		for in := 0; in < inner; in++ {
			best := 0
			for k := 1; k < n; k++ {
				if x[o+k*inner+in] > x[o+best*inner+in] {
					best = k
				}
			}
			out = append(out, best)
		}
	}
	return out
}

// classifierOf finds whether g's first output comes from a Softmax,
// possibly through Reshape (which keeps the values' order), and the rows
// of that Softmax's output.
func classifierOf(g *graph.Graph) classifier {
	if len(g.Outputs) == 0 {
		return classifier{}
	}
	prod := g.Producers()
	name := g.Outputs[0]
	for {
		p := prod[name]
		switch {
		case p == nil:
			return classifier{}
		case p.Op == graph.Softmax:
			c := classifier{ok: true}
			t := g.Tensors[p.Outputs[0]]
			a, ok := p.Attrs.(*graph.SoftmaxAttrs)
			if t == nil || !ok {
				return c
			}
			axis := a.Axis
			if axis < 0 {
				axis += len(t.Shape)
			}
			if axis < 0 || axis >= len(t.Shape) {
				return c
			}
			c.n, c.inner = t.Shape[axis], 1
			for _, d := range t.Shape[axis+1:] {
				c.inner *= d
			}
			if c.n < 2 {
				// A Softmax over one class: every row "agrees" (it said
				// 64/64: quantizer review). No top-1 then.
				return classifier{}
			}
			return c
		case p.Op == graph.Reshape:
			name = p.Inputs[0]
		default:
			return classifier{}
		}
	}
}
