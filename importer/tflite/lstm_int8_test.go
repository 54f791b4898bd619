package tflite_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// lstmInt8Case is an integer UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's
// "8x8_16": int8 input, weights and hidden state, int32 biases, an int16
// cell state; with act16, the 16x8 scheme: int16 input and hidden state,
// int64 biases in bias64) with its inputs and TFLite Micro's outputs.
// Gates in TFLite's order: input, forget, cell, output. xs and want are
// batch-major ([batch][time][...]) whatever the model's layout.
type lstmInt8Case struct {
	name                  string
	b, t, in, cells       int
	timeMajor             bool
	sx                    float32
	zx                    int64
	sw, sr                [4]float32
	sh                    float32
	zh                    int64
	sc, clip              float32
	w, r                  [4][]int8
	bias                  [4][]int32
	act16                 bool
	bias64                [4][]int64
	xs, want              [][]int64 // per inference
	peep, proj, ln, noRec bool      // refusal variants
}

// The expected outputs come from a C++ oracle built on TFLite Micro's own
// kernel code (tflite-micro's lstm_eval.h LstmStep sequence over
// reference_integer_ops::FullyConnected, Logistic, Tanh and MulElementwise,
// with the parameters of lstm_eval_common.cc's
// PrepareGateParametersInteger and CreateLstmCellStateInfo), fed these
// weights and inputs: two inferences each, the states carried.
var lstmInt8Cases = []lstmInt8Case{
	{
		name: "batch_major", b: 2, t: 3, in: 3, cells: 4,
		sx: 0.0392, zx: -5,
		sw: [4]float32{0.0071, 0.0063, 0.0082, 0.0055}, sr: [4]float32{0.0049, 0.0058, 0.0061, 0.0044},
		sh: 0.0078125, zh: 3, sc: 1.0 / 2048,
		w: [4][]int8{
			{-41, 5, -5, 127, 24, 26, -12, 28, -66, 23, -8, 24},
			{-85, -68, -39, 112, -31, 28, 40, 4, -77, -61, 16, 6},
			{110, -90, -75, 81, 53, 23, -111, 11, -50, 19, 47, -116},
			{-55, 84, -82, 29, -24, 93, 27, -79, -84, 125, -9, -33},
		},
		r: [4][]int8{
			{87, -4, 95, -66, -43, 2, 78, 123, -44, -109, -24, 43, -26, -37, 38, 44},
			{-126, -104, 79, -20, 121, 49, 6, 14, 10, -44, 95, -43, -90, -24, -21, 88},
			{-109, -79, 120, -24, -116, 27, -89, 46, -41, -30, -44, 114, -91, 90, 98, -114},
			{20, -34, -42, 46, -37, 24, 68, 10, 70, -92, -102, -117, -112, 15, -49, -84},
		},
		bias: [4][]int32{{2974, -1099, -633, 567}, {1193, 2957, -1525, -1306}, {671, 2031, -2418, 2395}, {1713, -1395, 2937, -57}},
		xs: [][]int64{
			{-37, 37, -92, 119, -75, 14, 123, 53, 56, -78, -96, 79, -40, -29, -20, 60, -64, 79},
			{44, 26, 107, -68, 72, -57, 60, 92, 113, -113, -15, -6, 34, -30, -9, 127, -118, -70},
		},
		want: [][]int64{
			{0, 3, 71, 20, 6, 79, 42, 6, 12, 105, 3, 52, -8, -2, 4, -3, -38, -2, 30, 3, 4, 78, 1, -64},
			{-6, 117, 2, -37, -97, 9, 35, 0, -15, 103, 3, -53, -55, 6, 31, 0, 11, 45, -14, 42, 8, 56, -60, 79},
		},
	},
	{
		// Time-major, a cell scale of 2^-14 (the cell Tanh's shift is
		// negative: multiplier 3, shift 2) and a cell clip of 1.0 that
		// binds (the oracle clipped -23210, -16390, -21333, -18917 to
		// -16384).
		name: "time_major_clip", b: 2, t: 4, in: 2, cells: 3, timeMajor: true,
		sx: 0.02, zx: 10,
		sw: [4]float32{0.011, 0.0123, 0.0097, 0.0131}, sr: [4]float32{0.0088, 0.0102, 0.0093, 0.0079},
		sh: 0.01, zh: -2, sc: 1.0 / 16384, clip: 1.0,
		w: [4][]int8{
			{-36, -121, 35, 73, 67, -23},
			{-117, -58, 114, -16, 118, 2},
			{-112, 120, 34, -110, -87, 2},
			{-33, 30, -41, -124, -44, -36},
		},
		r: [4][]int8{
			{-88, 32, 21, -67, 2, -3, 68, 18, -33},
			{-84, 84, -48, 82, -69, -1, -81, 15, 76},
			{58, 87, -53, 41, -104, -66, -116, -5, 72},
			{105, -70, -18, 15, 86, 34, 29, 113, 23},
		},
		bias: [4][]int32{{1132, 1556, -2896}, {2932, 623, 1085}, {1861, 2522, -1462}, {-84, -1331, -2305}},
		xs: [][]int64{
			{-11, 95, 65, 121, -86, 62, 61, -49, 68, 62, 40, -37, -61, 18, -97, -63},
			{64, -6, 46, 31, -28, 40, -65, -70, 88, -105, 126, 81, -16, 124, 28, 88},
		},
		want: [][]int64{
			{7, -5, -2, 1, -3, -5, 30, -16, 1, -20, -11, -18, 0, -3, -8, -22, 17, -24, 1, -8, -1, 36, 11, 8},
			{-22, 14, -18, -12, 6, -20, 12, -6, -11, 20, 11, 7, -12, 31, -28, -3, -2, -8, 2, -4, -9, 6, -5, -9},
		},
	},
}

// seqShape is [batch, time, n] or, time-major, [time, batch, n].
func (c lstmInt8Case) seqShape(n int) []int {
	if c.timeMajor {
		return []int{c.t, c.b, n}
	}
	return []int{c.b, c.t, n}
}

// layout moves batch-major values ([b][t][n]) to the model's layout.
func (c lstmInt8Case) layout(v []int64, n int) []int64 {
	if !c.timeMajor {
		return v
	}
	out := make([]int64, len(v))
	for b := 0; b < c.b; b++ {
		for t := 0; t < c.t; t++ {
			copy(out[(t*c.b+b)*n:(t*c.b+b+1)*n], v[(b*c.t+t)*n:(b*c.t+t+1)*n])
		}
	}
	return out
}

// actType is the activations' TFLite type (input, hidden state, output).
func (c lstmInt8Case) actType() (int8, graph.DType) {
	if c.act16 {
		return tg.Int16, graph.Int16
	}
	return tg.Int8, graph.Int8
}

func (c lstmInt8Case) model() *tg.Model {
	m := &tg.Model{}
	at, _ := c.actType()
	i32 := func(s []int) []int32 {
		out := make([]int32, len(s))
		for i, v := range s {
			out[i] = int32(v)
		}
		return out
	}
	q := func(t tg.Tensor, s float32, z int64) int32 {
		t.Scale, t.ZeroPoint = []float32{s}, []int64{z}
		return m.AddTensor(t)
	}
	x := q(tg.Tensor{Name: "x", Type: at, Shape: i32(c.seqShape(c.in))}, c.sx, c.zx)
	ins := make([]int32, 24)
	for i := range ins {
		ins[i] = -1
	}
	ins[0] = x
	for g := 0; g < 4; g++ {
		ins[1+g] = q(tg.Tensor{Name: fmt.Sprintf("w%d", g), Type: tg.Int8, Shape: []int32{int32(c.cells), int32(c.in)}, Data: tg.I8Bytes(c.w[g]...)}, c.sw[g], 0)
		ins[5+g] = q(tg.Tensor{Name: fmt.Sprintf("r%d", g), Type: tg.Int8, Shape: []int32{int32(c.cells), int32(c.cells)}, Data: tg.I8Bytes(c.r[g]...)}, c.sr[g], 0)
		bias := tg.Tensor{Name: fmt.Sprintf("b%d", g), Type: tg.Int32, Shape: []int32{int32(c.cells)}, Data: tg.I32Bytes(c.bias[g]...)}
		if c.act16 {
			bias.Type, bias.Data = tg.Int64, tg.I64Bytes(c.bias64[g]...)
		}
		ins[12+g] = q(bias, c.sx*c.sw[g], 0)
	}
	vec16 := func(name string) int32 {
		return q(tg.Tensor{Name: name, Type: tg.Int16, Shape: []int32{int32(c.cells)}, Data: tg.I16Bytes(make([]int16, c.cells)...)}, 1.0/32768, 0)
	}
	if c.peep {
		for k := 0; k < 3; k++ {
			ins[9+k] = vec16(fmt.Sprintf("peep%d", k))
		}
	}
	if c.proj {
		ins[16] = q(tg.Tensor{Name: "proj", Type: tg.Int8, Shape: []int32{int32(c.cells), int32(c.cells)}, Data: tg.I8Bytes(make([]int8, c.cells*c.cells)...)}, 0.01, 0)
	}
	if c.ln {
		for k := 0; k < 4; k++ {
			ins[20+k] = vec16(fmt.Sprintf("ln%d", k))
		}
	}
	if c.noRec {
		ins[1], ins[5], ins[12] = -1, -1, -1
	}
	ins[18] = q(tg.Tensor{Name: "h", Type: at, Shape: []int32{int32(c.b), int32(c.cells)}, Variable: true}, c.sh, c.zh)
	ins[19] = q(tg.Tensor{Name: "c", Type: tg.Int16, Shape: []int32{int32(c.b), int32(c.cells)}, Variable: true}, c.sc, 0)
	y := q(tg.Tensor{Name: "y", Type: at, Shape: i32(c.seqShape(c.cells))}, c.sh, c.zh)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(tg.OpUnidirectionalSequenceLSTM, &tg.Options{Type: tg.OptUnidirectionalSequenceLSTM, Fields: []tg.Field{
		tg.I8(0, tg.ActTanh), tg.F32(1, c.clip), tg.F32(2, 0), tg.Bool(3, c.timeMajor)}}, ins, y)
	return m
}

func (c lstmInt8Case) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode("lstm_int8_"+c.name, c.model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (c lstmInt8Case) input(k int) map[string]*graph.Data {
	_, dt := c.actType()
	return map[string]*graph.Data{"x": {DType: dt, Shape: c.seqShape(c.in), I: c.layout(c.xs[k], c.in)}}
}

// TestLSTMInt8MatchesTFLM runs the unrolled layer in the reference
// interpreter: every output of every step of both inferences (the states
// carried between them) equals TFLite Micro's.
func TestLSTMInt8MatchesTFLM(t *testing.T) { lstmMatchesTFLM(t, lstmInt8Cases) }

func lstmMatchesTFLM(t *testing.T, cases []lstmInt8Case) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.decode(t)
			if len(g.States) != 2 {
				t.Fatalf("states %+v: want the hidden and the cell state", g.States)
			}
			s := interp.NewSession(g)
			for k := range c.xs {
				out, err := s.Run(c.input(k))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := out["y"].I, c.layout(c.want[k], c.cells); !slices.Equal(got, want) {
					t.Fatalf("inference %d: %v, TFLite Micro's %v", k+1, got, want)
				}
			}
			// A reset session starts again from the zero point and 0.
			s = interp.NewSession(g)
			out, err := s.Run(c.input(0))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out["y"].I, c.layout(c.want[0], c.cells); !slices.Equal(got, want) {
				t.Fatalf("a new session: %v, TFLite Micro's %v", got, want)
			}
		})
	}
}

// TestLSTMInt8GeneratedC compiles the layer to C and runs it on the host
// (with the sanitizers) and, outside -short, on the Cortex-M4 under QEMU:
// the firmware's outputs over two inferences are TFLite Micro's.
func TestLSTMInt8GeneratedC(t *testing.T) { lstmGeneratedC(t, lstmInt8Cases) }

func lstmGeneratedC(t *testing.T, cases []lstmInt8Case) {
	var fc []firmwareCase
	for _, c := range cases {
		fc = append(fc, firmwareCase{name: c.name, graph: c.decode, vecs: []map[string]*graph.Data{c.input(0), c.input(1)},
			want: [][][]int64{{c.layout(c.want[0], c.cells)}, {c.layout(c.want[1], c.cells)}}})
	}
	matchesOnBoards(t, "lstm_int8_", fc)
}

// lstmRefusal is an edit of a valid LSTM case that must be refused with
// want in its message.
type lstmRefusal struct {
	name string
	edit func(*lstmInt8Case)
	want string
}

// lstmRefuses decodes base under each edit: one line naming the operator,
// also (when not empty) and the refusal's reason.
func lstmRefuses(t *testing.T, base lstmInt8Case, also string, refusals []lstmRefusal) {
	t.Helper()
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			c := base
			r.edit(&c)
			_, err := tflite.Decode("bad", c.model().Bytes())
			if err == nil {
				t.Fatal("decoded")
			}
			msg := err.Error()
			if !strings.Contains(msg, r.want) || !strings.Contains(msg, "UNIDIRECTIONAL_SEQUENCE_LSTM") || !strings.Contains(msg, also) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the operator, %q and %q", msg, also, r.want)
			}
		})
	}
}

// TestLSTMInt8Refusals: what TFLite Micro's integer LSTM does not take is
// refused with one line naming the operator and the reason.
func TestLSTMInt8Refusals(t *testing.T) {
	lstmRefuses(t, lstmInt8Cases[0], "", []lstmRefusal{
		{"peephole", func(c *lstmInt8Case) { c.peep = true }, "peephole weights"},
		{"projection", func(c *lstmInt8Case) { c.proj = true }, "a projection"},
		{"layer_norm", func(c *lstmInt8Case) { c.ln = true }, "layer norm coefficients"},
		{"cifg", func(c *lstmInt8Case) { c.noRec = true }, "coupled-gate (CIFG)"},
		{"cell_scale", func(c *lstmInt8Case) { c.sc = 0.0003 }, "wants a power of two"},
	})
}
