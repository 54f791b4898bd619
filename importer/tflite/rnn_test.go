package tflite_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// The kinds of recurrent operator a seqCase writes.
const (
	seqUni  = iota // UNIDIRECTIONAL_SEQUENCE_LSTM / _RNN
	seqBidi        // BIDIRECTIONAL_SEQUENCE_LSTM / _RNN
	seqStep        // LSTM / RNN (one step, input [batch, input])
)

// seqCase is one recurrent model: a sequence LSTM or RNN (uni- or
// bidirectional) or a single-step LSTM or RNN.
type seqCase struct {
	name                 string
	lstm                 bool
	b, t, in, cells, out int
	timeMajor            bool
	act                  int
	cifg, peep, proj     bool
	cellClip, projClip   float32
	kind                 int
	merge                bool // bidirectional: one output, fw ++ bw
	ln                   bool // layer-normalized LSTM
	legacy               bool // LSTM step: 18 inputs, outputs [h, c, y]
}

type seqWeights struct {
	w, r, p  [4][]float64 // per gate i, f, c, o: [cells][in], [cells][out], [cells]
	bias     [4][]float64
	ln       [4][]float64 // layer norm coefficients, [cells]
	proj, pb []float64    // [out][cells], [out]
	x        []float64
	bw       *seqWeights // the backward direction's weights
}

func refActTF(act int, v float64) float64 {
	switch act {
	case tg.ActRelu:
		return math.Max(v, 0)
	case tg.ActTanh:
		return math.Tanh(v)
	}
	return v
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// refLayerNorm is TFLite's MeanStddevNormalization of one row.
func refLayerNorm(v []float64) {
	mean, variance := 0.0, 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	variance /= float64(len(v))
	for i := range v {
		v[i] = (v[i] - mean) / math.Sqrt(variance+1e-8)
	}
}

// steps is the number of time steps (1 for a single-step operator).
func (c seqCase) steps() int {
	if c.kind == seqStep {
		return 1
	}
	return c.t
}

// direction runs one direction of the layer (w) from a zero state, sample
// by sample, backwards in time when reverse; it returns the outputs
// y[b][t][k] at their time index and the final states h[b][k], cs[b][k].
func (c seqCase) direction(w *seqWeights, x []float64, reverse bool) (y, hs, css [][]float64) {
	steps := c.steps()
	xAt := func(b, t, k int) float64 {
		if c.timeMajor {
			return x[(t*c.b+b)*c.in+k]
		}
		return x[(b*steps+t)*c.in+k]
	}
	for b := 0; b < c.b; b++ {
		h := make([]float64, c.out)
		cs := make([]float64, c.cells)
		yb := make([]float64, steps*c.out)
		for i := 0; i < steps; i++ {
			t := i
			if reverse {
				t = steps - 1 - i
			}
			// gate is gate g's input: with layer norm, (x·W + h·R +
			// peephole) normalized, scaled, then the bias added.
			gate := func(g int, peep []float64, cell []float64) []float64 {
				v := make([]float64, c.cells)
				for u := range v {
					for k := 0; k < c.in; k++ {
						v[u] += w.w[g][u*c.in+k] * xAt(b, t, k)
					}
					for k := 0; k < c.out; k++ {
						v[u] += w.r[g][u*c.out+k] * h[k]
					}
					if peep != nil {
						v[u] += peep[u] * cell[u]
					}
				}
				if c.ln {
					refLayerNorm(v)
					for u := range v {
						v[u] *= w.ln[g][u]
					}
				}
				for u := range v {
					v[u] += w.bias[g][u]
				}
				return v
			}
			m := make([]float64, c.cells)
			if !c.lstm {
				for u, v := range gate(0, nil, nil) {
					m[u] = refActTF(c.act, v)
				}
			} else {
				fg := gate(1, w.p[1], cs)
				ig := gate(0, w.p[0], cs)
				gg := gate(2, nil, nil)
				nc := make([]float64, c.cells)
				for u := range nc {
					f := sigmoid(fg[u])
					i := 1 - f
					if !c.cifg {
						i = sigmoid(ig[u])
					}
					nc[u] = f*cs[u] + i*refActTF(c.act, gg[u])
					if c.cellClip > 0 {
						nc[u] = math.Max(-float64(c.cellClip), math.Min(float64(c.cellClip), nc[u]))
					}
				}
				og := gate(3, w.p[2], nc)
				for u := range m {
					m[u] = sigmoid(og[u]) * refActTF(c.act, nc[u])
				}
				cs = nc
			}
			if c.proj {
				for k := 0; k < c.out; k++ {
					s := w.pb[k]
					for u := 0; u < c.cells; u++ {
						s += w.proj[k*c.cells+u] * m[u]
					}
					if c.projClip > 0 {
						s = math.Max(-float64(c.projClip), math.Min(float64(c.projClip), s))
					}
					h[k] = s
				}
			} else {
				copy(h, m)
			}
			copy(yb[t*c.out:], h)
		}
		y = append(y, yb)
		hs = append(hs, h)
		css = append(css, cs)
	}
	return y, hs, css
}

// reference computes the model's outputs, in the order of its outputs,
// from the TFLite kernels' definition.
func (c seqCase) reference(w *seqWeights) [][]float64 {
	steps := c.steps()
	// flat lays out y[b][t][k0:k0+n] of a [batch, time, width] or [time,
	// batch, width] tensor.
	flat := func(dst []float64, y [][]float64, width, k0 int) {
		for b := range y {
			for t := 0; t < steps; t++ {
				row := b*steps + t
				if c.timeMajor {
					row = t*c.b + b
				}
				copy(dst[row*width+k0:], y[b][t*c.out:(t+1)*c.out])
			}
		}
	}
	fy, fh, fc := c.direction(w, w.x, false)
	switch {
	case c.kind == seqBidi:
		by, _, _ := c.direction(w.bw, w.x, true)
		if c.merge {
			out := make([]float64, c.b*steps*2*c.out)
			flat(out, fy, 2*c.out, 0)
			flat(out, by, 2*c.out, c.out)
			return [][]float64{out}
		}
		f, b := make([]float64, c.b*steps*c.out), make([]float64, c.b*steps*c.out)
		flat(f, fy, c.out, 0)
		flat(b, by, c.out, 0)
		return [][]float64{f, b}
	case c.legacy:
		return [][]float64{slices.Concat(fh...), slices.Concat(fc...), slices.Concat(fy...)}
	}
	y := make([]float64, c.b*steps*c.out)
	flat(y, fy, c.out, 0)
	return [][]float64{y}
}

// weights draws one direction's weights.
func (c seqCase) weights(vals func(int, float64) []float64) *seqWeights {
	w := &seqWeights{}
	for g := range w.p {
		w.p[g] = make([]float64, c.cells)
	}
	gates := 1
	if c.lstm {
		gates = 4
	}
	for g := 0; g < 4; g++ {
		w.w[g], w.r[g], w.bias[g] = make([]float64, c.cells*c.in), make([]float64, c.cells*c.out), make([]float64, c.cells)
		if g < gates && !(c.cifg && g == 0) {
			w.w[g], w.r[g], w.bias[g] = vals(c.cells*c.in, 0.7), vals(c.cells*c.out, 0.5), vals(c.cells, 0.4)
		}
	}
	if c.lstm && c.peep {
		for k := 0; k < 3; k++ {
			if !(c.cifg && k == 0) {
				w.p[k] = vals(c.cells, 0.6)
			}
		}
	}
	if c.lstm && c.proj {
		w.proj, w.pb = vals(c.out*c.cells, 0.6), vals(c.out, 0.2)
	}
	return w
}

// model writes the case as a TFLite model with random weights.
func (c seqCase) model(seed uint64) (*tg.Model, *seqWeights) {
	r := rand.New(rand.NewPCG(seed, 3))
	vals := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(float32((r.Float64()*2 - 1) * scale))
		}
		return v
	}
	f32 := func(v []float64) []byte {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tg.F32Bytes(f...)
	}
	m := &tg.Model{}
	konst := func(name string, v []float64, shape ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Float32, Shape: shape, Data: f32(v)})
	}
	steps := c.steps()
	seq := func(width int) []int32 {
		if c.kind == seqStep {
			return []int32{int32(c.b), int32(width)}
		}
		s := []int32{int32(c.b), int32(steps), int32(width)}
		if c.timeMajor {
			s[0], s[1] = s[1], s[0]
		}
		return s
	}
	xv := vals(c.b*steps*c.in, 1.5)
	w := c.weights(vals)
	w.x = xv
	if c.ln {
		for g := range w.ln {
			w.ln[g] = make([]float64, c.cells)
			if !(c.cifg && g == 0) {
				w.ln[g] = vals(c.cells, 1)
				for u := range w.ln[g] {
					w.ln[g][u] += 1
				}
			}
		}
	}
	if c.kind == seqBidi {
		w.bw = c.weights(vals)
	}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: seq(c.in)})
	m.Inputs = []int32{x}
	state := func(name string, n int) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Float32, Shape: []int32{int32(c.b), int32(n)}, Variable: true})
	}
	// layer adds one direction's weights: LSTM's 17 inputs (-1 where
	// absent) or RNN's 3.
	layer := func(w *seqWeights, p string) []int32 {
		if !c.lstm {
			return []int32{konst(p+"w", w.w[0], int32(c.cells), int32(c.in)), konst(p+"r", w.r[0], int32(c.cells), int32(c.out)), konst(p+"b", w.bias[0], int32(c.cells))}
		}
		idx := make([]int32, 17)
		for i := range idx {
			idx[i] = -1
		}
		for g := 0; g < 4; g++ {
			if c.cifg && g == 0 {
				continue
			}
			idx[g] = konst(fmt.Sprintf("%sw%d", p, g), w.w[g], int32(c.cells), int32(c.in))
			idx[4+g] = konst(fmt.Sprintf("%sr%d", p, g), w.r[g], int32(c.cells), int32(c.out))
			idx[11+g] = konst(fmt.Sprintf("%sb%d", p, g), w.bias[g], int32(c.cells))
		}
		if c.peep {
			for k := 0; k < 3; k++ {
				if !(c.cifg && k == 0) {
					idx[8+k] = konst(fmt.Sprintf("%sp%d", p, k), w.p[k], int32(c.cells))
				}
			}
		}
		if c.proj {
			idx[15] = konst(p+"proj", w.proj, int32(c.out), int32(c.cells))
			idx[16] = konst(p+"projb", w.pb, int32(c.out))
		}
		return idx
	}
	ins := append([]int32{x}, layer(w, "")...)
	switch {
	case c.kind == seqBidi && c.lstm:
		ins = append(ins, layer(w.bw, "bw_")...)
		ins = append(ins, state("h", c.out), state("c", c.cells), state("bw_h", c.out), state("bw_c", c.cells))
		for i := 39; i < 48; i++ {
			ins = append(ins, -1)
		}
	case c.kind == seqBidi:
		ins = append(ins, state("h", c.out))
		ins = append(append(ins, layer(w.bw, "bw_")...), state("bw_h", c.out), -1, -1, -1)
	case c.lstm:
		if !c.legacy {
			ins = append(ins, state("h", c.out), state("c", c.cells))
		}
		if c.ln {
			for g := range w.ln {
				ln := int32(-1)
				if !(c.cifg && g == 0) {
					ln = konst(fmt.Sprintf("ln%d", g), w.ln[g], int32(c.cells))
				}
				ins = append(ins, ln)
			}
		} else if !c.legacy {
			ins = append(ins, -1, -1, -1, -1)
		}
	default:
		ins = append(ins, state("h", c.out))
	}
	var outs []int32
	out := func(name string, shape []int32) {
		outs = append(outs, m.AddTensor(tg.Tensor{Name: name, Type: tg.Float32, Shape: shape}))
	}
	switch {
	case c.kind == seqBidi && c.merge:
		out("y", seq(2*c.out))
	case c.kind == seqBidi:
		out("y", seq(c.out))
		out("y_bw", seq(c.out))
	case c.legacy:
		out("h_out", seq(c.out))
		out("c_out", seq(c.cells))
		out("y", seq(c.out))
	default:
		out("y", seq(c.out))
	}
	m.Outputs = outs
	opts := []tg.Field{tg.I8(0, c.act), tg.F32(1, c.cellClip), tg.F32(2, c.projClip)}
	switch {
	case c.kind == seqUni && c.lstm:
		m.AddOp(tg.OpUnidirectionalSequenceLSTM, &tg.Options{Type: tg.OptUnidirectionalSequenceLSTM, Fields: append(opts, tg.Bool(3, c.timeMajor))}, ins, outs...)
	case c.kind == seqUni:
		m.AddOp(tg.OpUnidirectionalSequenceRNN, &tg.Options{Type: tg.OptSequenceRNN, Fields: []tg.Field{tg.Bool(0, c.timeMajor), tg.I8(1, c.act)}}, ins, outs...)
	case c.kind == seqBidi && c.lstm:
		// time_major defaults to true: the generator leaves a zero byte
		// field out, so false is written as a (zero) int32, whose first
		// byte a bool reader takes.
		tm := tg.I32(4, 0)
		if c.timeMajor {
			tm = tg.Bool(4, true)
		}
		m.AddOp(opBidiLSTM, &tg.Options{Type: optBidiLSTM, Fields: append(opts, tg.Bool(3, c.merge), tm)}, ins, outs...)
	case c.kind == seqBidi:
		m.AddOp(opBidiRNN, &tg.Options{Type: optBidiRNN, Fields: []tg.Field{tg.Bool(0, c.timeMajor), tg.I8(1, c.act), tg.Bool(2, c.merge)}}, ins, outs...)
	case c.lstm:
		m.AddOp(opLSTM, &tg.Options{Type: optLSTM, Fields: opts}, ins, outs...)
	default:
		m.AddOp(opRNN, &tg.Options{Type: optRNN, Fields: []tg.Field{tg.I8(0, c.act)}}, ins, outs...)
	}
	return m, w
}

// The operators and options tflitegen has no names for.
const (
	opLSTM, opRNN, opBidiRNN, opBidiLSTM = 16, 24, 46, 52
	optRNN, optLSTM, optBidiLSTM         = 7, 14, 69
	optBidiRNN                           = 70
)

// seqCases are written to testdata/tflite as seq_<name>.tflite (case i
// with seed i+1).
var seqCases = []seqCase{
	{name: "lstm_peep_proj_clips", lstm: true, b: 2, t: 3, in: 2, cells: 4, out: 3, act: tg.ActTanh, peep: true, proj: true, cellClip: 0.25, projClip: 0.15},
	{name: "lstm_cifg_time_major", lstm: true, b: 2, t: 4, in: 3, cells: 3, out: 3, act: tg.ActTanh, cifg: true, peep: true, timeMajor: true},
	{name: "lstm_relu_one_step", lstm: true, b: 1, t: 1, in: 3, cells: 2, out: 2, act: tg.ActRelu},
	{name: "rnn_tanh", b: 1, t: 5, in: 2, cells: 3, out: 3, act: tg.ActTanh},
	{name: "rnn_none_time_major", b: 3, t: 2, in: 2, cells: 2, out: 2, act: tg.ActNone, timeMajor: true},
	{name: "bilstm_merged_time_major", lstm: true, kind: seqBidi, merge: true, timeMajor: true, b: 2, t: 3, in: 2, cells: 3, out: 2, act: tg.ActTanh, peep: true, proj: true, projClip: 0.5},
	{name: "bilstm_batch_major", lstm: true, kind: seqBidi, b: 2, t: 4, in: 3, cells: 2, out: 2, act: tg.ActTanh, cifg: true, cellClip: 0.3},
	{name: "bilstm_merged_batch_major", lstm: true, kind: seqBidi, merge: true, b: 1, t: 3, in: 2, cells: 2, out: 2, act: tg.ActRelu},
	{name: "birnn_batch_major", kind: seqBidi, b: 2, t: 3, in: 2, cells: 3, out: 3, act: tg.ActRelu},
	{name: "birnn_merged_time_major", kind: seqBidi, merge: true, timeMajor: true, b: 2, t: 3, in: 3, cells: 2, out: 2, act: tg.ActTanh},
	{name: "lstm_step_peep_proj", lstm: true, kind: seqStep, b: 2, in: 3, cells: 4, out: 3, act: tg.ActTanh, peep: true, proj: true, cellClip: 0.8},
	{name: "lstm_step_legacy", lstm: true, kind: seqStep, legacy: true, b: 2, in: 2, cells: 3, out: 3, act: tg.ActTanh, peep: true},
	{name: "lstm_step_ln_cifg", lstm: true, kind: seqStep, ln: true, cifg: true, b: 2, in: 3, cells: 4, out: 4, act: tg.ActTanh, peep: true},
	{name: "rnn_step", kind: seqStep, b: 2, in: 3, cells: 4, out: 4, act: tg.ActTanh},
	{name: "lstm_ln_peep_proj", lstm: true, ln: true, b: 2, t: 3, in: 2, cells: 4, out: 3, act: tg.ActTanh, peep: true, proj: true},
	{name: "lstm_ln_cifg_time_major", lstm: true, ln: true, cifg: true, timeMajor: true, b: 2, t: 3, in: 3, cells: 3, out: 3, act: tg.ActTanh},
}

// TestSequenceLSTMAndRNN decodes sequence LSTMs (peepholes, CIFG,
// projection, both clips, both layouts) and RNNs and runs them in the
// interpreter against a float64 reference written from TFLite's definition.
func TestSequenceLSTMAndRNN(t *testing.T) {
	for i, c := range seqCases {
		t.Run(c.name, func(t *testing.T) {
			m, w := c.model(uint64(i + 1))

			g, err := tflite.Decode(c.name, m.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			xt := g.Tensors[g.Inputs[0]]
			if u := g.UserInputs(); len(u) != 1 || len(g.States) == 0 && !c.legacy {
				t.Fatalf("inputs %v, states %v: the variable states are states, not the application's inputs", u, g.States)
			}
			x := graph.NewData(graph.Float32, xt.Shape)
			for k, v := range w.x {
				x.F[k] = float32(v)
			}
			out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: x})
			if err != nil {
				t.Fatal(err)
			}
			wants := c.reference(w)
			outs := g.UserOutputs()
			if len(outs) != len(wants) {
				t.Fatalf("%d outputs, want %d", len(outs), len(wants))
			}
			for o, want := range wants {
				got := out[outs[o]]
				if got.Len() != len(want) {
					t.Fatalf("output %d: %d values, want %d", o, got.Len(), len(want))
				}
				for k, v := range want {
					if d := math.Abs(float64(got.F[k]) - v); d > 2e-5*(1+math.Abs(v)) {
						t.Fatalf("output %d: y[%d] = %v, want %v", o, k, got.F[k], v)
					}
				}
			}
			if c.kind == seqBidi || c.legacy {
				return
			}
			// The states carry over: a second inference on the same input
			// continues the sequence, as the reference run over the input
			// twice (from a zero state) does in its second half.
			sess := interp.NewSession(g)
			var second map[string]*graph.Data
			for range 2 {
				if second, err = sess.Run(map[string]*graph.Data{g.Inputs[0]: x}); err != nil {
					t.Fatal(err)
				}
			}
			steps := c.steps()
			c2, w2 := c, *w
			c2.kind, c2.t, w2.x = seqUni, 2*steps, nil
			for b := 0; b < c.b; b++ {
				for rep := 0; rep < 2; rep++ {
					for ts := 0; ts < steps; ts++ {
						at := (b*steps + ts) * c.in
						if c.timeMajor {
							at = (ts*c.b + b) * c.in
						}
						w2.x = append(w2.x, w.x[at:at+c.in]...)
					}
				}
			}
			c2.timeMajor = false
			ys, _, _ := c2.direction(&w2, w2.x, false)
			got := second[outs[0]].F
			for b := 0; b < c.b; b++ {
				for ts := 0; ts < steps; ts++ {
					row := b*steps + ts
					if c.timeMajor {
						row = ts*c.b + b
					}
					for k := 0; k < c.out; k++ {
						v := ys[b][(steps+ts)*c.out+k]
						if d := math.Abs(float64(got[row*c.out+k]) - v); d > 2e-5*(1+math.Abs(v)) {
							t.Fatalf("second inference: y[%d][%d][%d] = %v, the reference's continued sequence %v", b, ts, k, got[row*c.out+k], v)
						}
					}
				}
			}
		})
	}
}

// TestSequenceLSTMRefusals: what the importer does not take gets one error
// naming the operator.
func TestSequenceLSTMRefusals(t *testing.T) {
	c := seqCase{name: "ln", lstm: true, b: 1, t: 2, in: 2, cells: 2, out: 2, act: tg.ActTanh}
	m, _ := c.model(9)
	// Layer normalization coefficients: the forget gate's alone.
	ln := m.AddTensor(tg.Tensor{Name: "ln", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(1, 1)})
	m.Ops[0].Inputs[21] = ln
	if _, err := tflite.Decode("ln", m.Bytes()); err == nil || !strings.Contains(err.Error(), "UNIDIRECTIONAL_SEQUENCE_LSTM") || !strings.Contains(err.Error(), "layer norm coefficients") {
		t.Errorf("layer norm of the forget gate alone: %v", err)
	}
	// Of the cell gate alone (TFLite would ignore it: refused).
	m, _ = c.model(9)
	ln = m.AddTensor(tg.Tensor{Name: "ln", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(1, 1)})
	m.Ops[0].Inputs[22] = ln
	if _, err := tflite.Decode("ln2", m.Bytes()); err == nil || !strings.Contains(err.Error(), "without the forget gate's") {
		t.Errorf("layer norm without the forget gate's: %v", err)
	}
	// The forget gate's input weights are required.
	m, _ = c.model(9)
	m.Ops[0].Inputs[2] = -1
	if _, err := tflite.Decode("noforget", m.Bytes()); err == nil || !strings.Contains(err.Error(), "input 2 is missing") {
		t.Errorf("no forget weights: %v", err)
	}
	// Recurrent weights of the wrong width.
	m, _ = c.model(9)
	m.Ops[0].Inputs[7] = m.AddTensor(tg.Tensor{Name: "r_bad", Type: tg.Float32, Shape: []int32{2, 3}, Data: tg.F32Bytes(1, 2, 3, 4, 5, 6)})
	if _, err := tflite.Decode("rshape", m.Bytes()); err == nil || !strings.Contains(err.Error(), "of shape [2 3], want [2 2]") {
		t.Errorf("recurrent weights [2 3]: %v", err)
	}
	c.act = 3 // RELU6
	m, _ = c.model(9)
	if _, err := tflite.Decode("relu6", m.Bytes()); err == nil || !strings.Contains(err.Error(), "cell activation 3") {
		t.Errorf("RELU6 cell: %v", err)
	}
}

// decodeErr decodes m and checks that the error names the operator and
// says want.
func decodeErr(t *testing.T, what string, m *tg.Model, op, want string) {
	t.Helper()
	_, err := tflite.Decode(what, m.Bytes())
	if err == nil || !strings.Contains(err.Error(), op) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want an error of %s saying %q", what, err, op, want)
	}
}

// TestRecurrentRefusals: auxiliary inputs, the BASIC LSTM kernel, the
// scratch output of the oldest LSTM and integer variants are refused with
// the reason.
func TestRecurrentRefusals(t *testing.T) {
	bilstm := seqCase{name: "bilstm", lstm: true, kind: seqBidi, b: 1, t: 2, in: 2, cells: 2, out: 2, act: tg.ActTanh}
	birnn := seqCase{name: "birnn", kind: seqBidi, b: 1, t: 2, in: 2, cells: 2, out: 2, act: tg.ActTanh}
	step := seqCase{name: "step", lstm: true, kind: seqStep, b: 1, in: 2, cells: 2, out: 2, act: tg.ActTanh}
	konst := func(m *tg.Model, shape ...int32) int32 {
		n := int32(1)
		for _, d := range shape {
			n *= d
		}
		return m.AddTensor(tg.Tensor{Name: fmt.Sprintf("k%d", len(m.Tensors)), Type: tg.Float32, Shape: shape, Data: tg.F32Bytes(make([]float32, n)...)})
	}

	m, _ := bilstm.model(1)
	aux := m.AddTensor(tg.Tensor{Name: "aux", Type: tg.Float32, Shape: []int32{1, 2, 2}})
	m.Inputs = append(m.Inputs, aux)
	m.Ops[0].Inputs[39] = aux
	for i := 41; i < 48; i++ {
		if i != 44 {
			m.Ops[0].Inputs[i] = konst(m, 2, 2)
		}
	}
	decodeErr(t, "bilstm aux weights", m, "BIDIRECTIONAL_SEQUENCE_LSTM", "auxiliary input weights")

	m, _ = birnn.model(1)
	aux = m.AddTensor(tg.Tensor{Name: "aux", Type: tg.Float32, Shape: []int32{1, 2, 2}})
	m.Inputs = append(m.Inputs, aux)
	m.Ops[0].Inputs[9] = aux
	decodeErr(t, "birnn aux input", m, "BIDIRECTIONAL_SEQUENCE_RNN", "auxiliary input (input 9)")
	m.Ops[0].Inputs[10], m.Ops[0].Inputs[11] = konst(m, 2, 2), konst(m, 2, 2)
	decodeErr(t, "birnn aux weights", m, "BIDIRECTIONAL_SEQUENCE_RNN", "auxiliary input weights")

	// merge_outputs with two outputs.
	m, _ = bilstm.model(1)
	m.Ops[0].Options.Fields = append(m.Ops[0].Options.Fields, tg.Bool(3, true))
	decodeErr(t, "bilstm merge, 2 outputs", m, "BIDIRECTIONAL_SEQUENCE_LSTM", "2 outputs, want 1")

	// int8 sequence input (int8 hybrid weights import dequantized:
	// TestHybridLSTM).
	m, _ = bilstm.model(1)
	m.Tensors[m.Ops[0].Inputs[0]].Type = tg.Int8
	m.Tensors[m.Ops[0].Inputs[0]].Scale, m.Tensors[m.Ops[0].Inputs[0]].ZeroPoint = []float32{0.1}, []int64{0}
	decodeErr(t, "bilstm int8", m, "BIDIRECTIONAL_SEQUENCE_LSTM", "only float recurrent layers")
	m, _ = seqCase{name: "rnn", kind: seqStep, b: 1, in: 2, cells: 2, out: 2, act: tg.ActTanh}.model(1)
	m.Tensors[m.Ops[0].Inputs[0]].Type = tg.Int8
	m.Tensors[m.Ops[0].Inputs[0]].Scale, m.Tensors[m.Ops[0].Inputs[0]].ZeroPoint = []float32{0.1}, []int64{0}
	decodeErr(t, "rnn int8", m, "RNN", "only float recurrent layers")

	// The BASIC LSTM kernel.
	m, _ = step.model(1)
	m.Ops[0].Options.Fields = append(m.Ops[0].Options.Fields, tg.I8(3, 1))
	decodeErr(t, "lstm basic", m, "LSTM", "BASIC")

	// The oldest LSTM: a scratch buffer as output 0.
	legacy := step
	legacy.legacy = true
	m, _ = legacy.model(1)
	scratch := m.AddTensor(tg.Tensor{Name: "scratch", Type: tg.Float32, Shape: []int32{1, 8}})
	m.Ops[0].Outputs = append([]int32{scratch}, m.Ops[0].Outputs...)
	decodeErr(t, "lstm scratch output", m, "LSTM", "scratch buffer")

	// A bad number of inputs.
	m, _ = step.model(1)
	m.Ops[0].Inputs = m.Ops[0].Inputs[:22]
	decodeErr(t, "lstm 22 inputs", m, "LSTM", "22 inputs, want 20 or 24")
}

// TestBidirectionalLSTMAuxInput: an auxiliary input without auxiliary
// weights is the backward cell's input (stacking without cross links).
func TestBidirectionalLSTMAuxInput(t *testing.T) {
	c := seqCase{name: "bilstm_aux", lstm: true, kind: seqBidi, b: 2, t: 3, in: 2, cells: 3, out: 3, act: tg.ActTanh, peep: true}
	m, w := c.model(5)
	aux := m.AddTensor(tg.Tensor{Name: "aux", Type: tg.Float32, Shape: []int32{2, 3, 2}})
	m.Inputs = append(m.Inputs, aux)
	m.Ops[0].Inputs[39] = aux
	g, err := tflite.Decode(c.name, m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	auxV := make([]float64, 12)
	x, a := graph.NewData(graph.Float32, []int{2, 3, 2}), graph.NewData(graph.Float32, []int{2, 3, 2})
	for k := range auxV {
		auxV[k] = float64(float32(math.Sin(float64(k))))
		x.F[k], a.F[k] = float32(w.x[k]), float32(auxV[k])
	}
	out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: x, g.Inputs[1]: a})
	if err != nil {
		t.Fatal(err)
	}
	fy, _, _ := c.direction(w, w.x, false)
	by, _, _ := c.direction(w.bw, auxV, true)
	for o, want := range [][][]float64{fy, by} {
		got := out[g.Outputs[o]]
		for b := range want {
			for k, v := range want[b] {
				if d := math.Abs(float64(got.F[b*len(want[b])+k]) - v); d > 2e-5*(1+math.Abs(v)) {
					t.Fatalf("output %d: y[%d][%d] = %v, want %v", o, b, k, got.F[b*len(want[b])+k], v)
				}
			}
		}
	}
}
