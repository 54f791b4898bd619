package tflite_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// seqCase is one UNIDIRECTIONAL_SEQUENCE_LSTM or _RNN model.
type seqCase struct {
	name                 string
	lstm                 bool
	b, t, in, cells, out int
	timeMajor            bool
	act                  int
	cifg, peep, proj     bool
	cellClip, projClip   float32
}

type seqWeights struct {
	w, r, p  [4][]float64 // per gate i, f, c, o: [cells][in], [cells][out], [cells]
	bias     [4][]float64
	proj, pb []float64 // [out][cells], [out]
	x        []float64
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

// reference computes the output from the TFLite kernels' definition, from
// a zero state, sample by sample.
func (c seqCase) reference(w *seqWeights) []float64 {
	y := make([]float64, c.b*c.t*c.out)
	xAt := func(b, t, k int) float64 {
		if c.timeMajor {
			return w.x[(t*c.b+b)*c.in+k]
		}
		return w.x[(b*c.t+t)*c.in+k]
	}
	for b := 0; b < c.b; b++ {
		h := make([]float64, c.out)
		cs := make([]float64, c.cells)
		for t := 0; t < c.t; t++ {
			gate := func(g, u int) float64 {
				s := w.bias[g][u]
				for k := 0; k < c.in; k++ {
					s += w.w[g][u*c.in+k] * xAt(b, t, k)
				}
				for k := 0; k < c.out; k++ {
					s += w.r[g][u*c.out+k] * h[k]
				}
				return s
			}
			m := make([]float64, c.cells)
			if !c.lstm {
				for u := range m {
					m[u] = refActTF(c.act, gate(0, u))
				}
			} else {
				nc := make([]float64, c.cells)
				for u := range nc {
					f := sigmoid(gate(1, u) + w.p[1][u]*cs[u])
					i := 1 - f
					if !c.cifg {
						i = sigmoid(gate(0, u) + w.p[0][u]*cs[u])
					}
					nc[u] = f*cs[u] + i*refActTF(c.act, gate(2, u))
					if c.cellClip > 0 {
						nc[u] = math.Max(-float64(c.cellClip), math.Min(float64(c.cellClip), nc[u]))
					}
				}
				for u := range m {
					o := sigmoid(gate(3, u) + w.p[2][u]*nc[u])
					m[u] = o * refActTF(c.act, nc[u])
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
			for k := 0; k < c.out; k++ {
				if c.timeMajor {
					y[(t*c.b+b)*c.out+k] = h[k]
				} else {
					y[(b*c.t+t)*c.out+k] = h[k]
				}
			}
		}
	}
	return y
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
	w := &seqWeights{}
	m := &tg.Model{}
	konst := func(name string, v []float64, shape ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Float32, Shape: shape, Data: f32(v)})
	}
	xs := []int32{int32(c.b), int32(c.t), int32(c.in)}
	if c.timeMajor {
		xs[0], xs[1] = xs[1], xs[0]
	}
	w.x = vals(c.b*c.t*c.in, 1.5)
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: xs})
	m.Inputs = []int32{x}
	ins := []int32{x}
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
	idx := make([]int32, 24)
	for i := range idx {
		idx[i] = -1
	}
	if !c.lstm {
		ins = append(ins, konst("w", w.w[0], int32(c.cells), int32(c.in)), konst("r", w.r[0], int32(c.cells), int32(c.out)), konst("b", w.bias[0], int32(c.cells)),
			m.AddTensor(tg.Tensor{Name: "h", Type: tg.Float32, Shape: []int32{int32(c.b), int32(c.out)}, Variable: true}))
	} else {
		for g := 0; g < 4; g++ {
			if c.cifg && g == 0 {
				continue
			}
			idx[1+g] = konst(fmt.Sprintf("w%d", g), w.w[g], int32(c.cells), int32(c.in))
			idx[5+g] = konst(fmt.Sprintf("r%d", g), w.r[g], int32(c.cells), int32(c.out))
			idx[12+g] = konst(fmt.Sprintf("b%d", g), w.bias[g], int32(c.cells))
		}
		if c.peep {
			for k := 0; k < 3; k++ {
				if c.cifg && k == 0 {
					continue
				}
				w.p[k] = vals(c.cells, 0.6)
				idx[9+k] = konst(fmt.Sprintf("p%d", k), w.p[k], int32(c.cells))
			}
		}
		if c.proj {
			w.proj, w.pb = vals(c.out*c.cells, 0.6), vals(c.out, 0.2)
			idx[16] = konst("proj", w.proj, int32(c.out), int32(c.cells))
			idx[17] = konst("projb", w.pb, int32(c.out))
		}
		idx[18] = m.AddTensor(tg.Tensor{Name: "h", Type: tg.Float32, Shape: []int32{int32(c.b), int32(c.out)}, Variable: true})
		idx[19] = m.AddTensor(tg.Tensor{Name: "c", Type: tg.Float32, Shape: []int32{int32(c.b), int32(c.cells)}, Variable: true})
		ins = append(ins, idx[1:]...)
	}
	ys := []int32{int32(c.b), int32(c.t), int32(c.out)}
	if c.timeMajor {
		ys[0], ys[1] = ys[1], ys[0]
	}
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: ys})
	m.Outputs = []int32{y}
	if c.lstm {
		m.AddOp(tg.OpUnidirectionalSequenceLSTM, &tg.Options{Type: tg.OptUnidirectionalSequenceLSTM,
			Fields: []tg.Field{tg.I8(0, c.act), tg.F32(1, c.cellClip), tg.F32(2, c.projClip), tg.Bool(3, c.timeMajor)}}, ins, y)
	} else {
		m.AddOp(tg.OpUnidirectionalSequenceRNN, &tg.Options{Type: tg.OptSequenceRNN, Fields: []tg.Field{tg.Bool(0, c.timeMajor), tg.I8(1, c.act)}}, ins, y)
	}
	return m, w
}

// seqCases are written to testdata/tflite as seq_<name>.tflite (case i
// with seed i+1).
var seqCases = []seqCase{
	{name: "lstm_peep_proj_clips", lstm: true, b: 2, t: 3, in: 2, cells: 4, out: 3, act: tg.ActTanh, peep: true, proj: true, cellClip: 0.25, projClip: 0.15},
	{name: "lstm_cifg_time_major", lstm: true, b: 2, t: 4, in: 3, cells: 3, out: 3, act: tg.ActTanh, cifg: true, peep: true, timeMajor: true},
	{name: "lstm_relu_one_step", lstm: true, b: 1, t: 1, in: 3, cells: 2, out: 2, act: tg.ActRelu},
	{name: "rnn_tanh", b: 1, t: 5, in: 2, cells: 3, out: 3, act: tg.ActTanh},
	{name: "rnn_none_time_major", b: 3, t: 2, in: 2, cells: 2, out: 2, act: tg.ActNone, timeMajor: true},
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
			if len(g.Inputs) != 1 {
				t.Fatalf("inputs %v: the variable states must not be inputs", g.Inputs)
			}
			x := graph.NewData(graph.Float32, xt.Shape)
			for k, v := range w.x {
				x.F[k] = float32(v)
			}
			out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: x})
			if err != nil {
				t.Fatal(err)
			}
			got := out[g.Outputs[0]]
			want := c.reference(w)
			if got.Len() != len(want) {
				t.Fatalf("%d outputs, want %d", got.Len(), len(want))
			}
			for k, v := range want {
				if d := math.Abs(float64(got.F[k]) - v); d > 2e-5*(1+math.Abs(v)) {
					t.Fatalf("y[%d] = %v, want %v", k, got.F[k], v)
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
	// Layer normalization coefficients (input 20 on).
	ln := m.AddTensor(tg.Tensor{Name: "ln", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(1, 1)})
	for i := 20; i < 24; i++ {
		m.Ops[0].Inputs[i] = ln
	}
	if _, err := tflite.Decode("ln", m.Bytes()); err == nil || !strings.Contains(err.Error(), "UNIDIRECTIONAL_SEQUENCE_LSTM") || !strings.Contains(err.Error(), "layer-normalized") {
		t.Errorf("layer-normalized LSTM: %v", err)
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
