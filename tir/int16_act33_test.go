package tir_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// act33Case is one int16 LEAKY_RELU or int8 -> int16 SOFTMAX: x -> op -> y.
type act33Case struct {
	name   string
	op     graph.Op
	xt, yt graph.DType
	sx, sy float32
	zx, zy int32
	alpha  float32 // LeakyRelu
	beta   float32 // Softmax
	shape  []int
}

var leaky16Cases = []act33Case{
	// seanet's: equal scales, alpha 0.2.
	{name: "seanet", sx: 0.0017488234, sy: 0.0017488234, alpha: 0.2},
	// Exact ratios (the hand-worked case), positive and negative alpha.
	{name: "exact", sx: 0.5, sy: 0.25, zx: 3, zy: -5, alpha: 0.25},
	{name: "exact_negative", sx: 0.5, sy: 0.25, zx: 3, zy: -5, alpha: -0.25},
	{name: "tie_negative", sx: 0.001, sy: 0.001, alpha: -0.5},
	// Ratios below and above 1, alpha above 1, zero alpha, zero points at
	// int16's ends.
	{name: "down", sx: 0.00123, sy: 0.0071, zx: 12, zy: -40, alpha: 0.3},
	{name: "up", sx: 0.00071, sy: 0.00003, zx: -100, zy: 300, alpha: -1.7},
	{name: "alpha_big", sx: 0.01, sy: 0.02, alpha: 3.5},
	{name: "alpha_zero", sx: 0.01, sy: 0.01, zx: -7, zy: 7, alpha: 0},
	{name: "zp_ends", sx: 0.01, sy: 0.013, zx: -32768, zy: 32767, alpha: 0.1},
	// A multiplier just under 2^15 (shift 15, the most taken).
	{name: "shift15", sx: 1, sy: 1.0 / 32000, zx: 1, zy: -1, alpha: -0.9},
}

var softmax16Cases = []act33Case{
	// keyword_scrambled's.
	{name: "keyword", sx: 0.06996273, sy: 1.5259022e-05, beta: 1, shape: []int{3, 2}},
	{name: "fine", sx: 0.01, sy: 1.0 / 65536, beta: 1, shape: []int{4, 10}},
	{name: "coarse", sx: 0.3, sy: 1.0 / 65536, beta: 1, shape: []int{5, 12}},
	{name: "beta", sx: 0.05, sy: 1.0 / 65536, beta: 2.5, shape: []int{2, 64}},
	{name: "deep", sx: 0.02, sy: 1.0 / 65536, beta: 0.7, shape: []int{2, 1000}},
	{name: "single", sx: 0.1, sy: 1.0 / 65536, beta: 1, shape: []int{3, 1}},
}

func init() {
	for i := range leaky16Cases {
		c := &leaky16Cases[i]
		c.op, c.xt, c.yt = graph.LeakyRelu, graph.Int16, graph.Int16
		if c.shape == nil {
			c.shape = []int{2, 32768}
		}
	}
	for i := range softmax16Cases {
		c := &softmax16Cases[i]
		c.op, c.xt, c.yt, c.zy = graph.Softmax, graph.Int8, graph.Int16, -32768
	}
}

func act33Graph(c act33Case) *graph.Graph {
	g := graph.New("act33_"+c.name, "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: c.xt, Shape: c.shape,
		Quant: &graph.Quant{Scale: []float32{c.sx}, ZeroPoint: []int32{c.zx}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: c.yt, Shape: c.shape,
		Quant: &graph.Quant{Scale: []float32{c.sy}, ZeroPoint: []int32{c.zy}}})
	var attrs any = &graph.LeakyReluAttrs{Alpha: c.alpha}
	if c.op == graph.Softmax {
		attrs = &graph.SoftmaxAttrs{Axis: -1, Beta: c.beta}
	}
	g.AddNode(&graph.Node{Name: "tensor_1", Op: c.op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: attrs})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// act33Input: the type's ends, the zero point and its neighbours, then
// random values; with kind 1 all at one end, kind 2 rows of near-equal
// values (softmax's interesting case), kind 3 random values.
func act33Input(r *rand.Rand, c act33Case, kind int) *graph.Data {
	lo, hi := c.xt.Range()
	d := graph.NewData(c.xt, c.shape)
	fixed := []int64{lo, hi, lo + 1, hi - 1, 0, 1, -1, int64(c.zx), int64(c.zx) + 1, int64(c.zx) - 1}
	for i := range d.I {
		switch {
		case kind == 0 && i < len(fixed):
			d.I[i] = max(lo, min(hi, fixed[i]))
		case kind == 1:
			d.I[i] = []int64{lo, hi}[r.Intn(2)]
		case kind == 2:
			d.I[i] = 100 + r.Int63n(7) - 3
		default:
			d.I[i] = lo + r.Int63n(hi-lo+1)
		}
	}
	return d
}

// TestInt16Act33MatchesInterp lowers int16 LEAKY_RELU and int8 -> int16
// SOFTMAX on the generic, dsp and mve targets and runs them in the TIR
// interpreter: bit-exact with graph/interp on extremes and random inputs
// (a LEAKY_RELU also on every int16 value).
func TestInt16Act33MatchesInterp(t *testing.T) {
	all := graph.NewData(graph.Int16, []int{2, 32768})
	for i := range all.I {
		all.I[i] = int64(i) - 32768
	}
	for _, c := range append(append([]act33Case{}, leaky16Cases...), softmax16Cases...) {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(len(c.name))))
			var ins []*graph.Data
			for kind := 0; kind < 4; kind++ {
				ins = append(ins, act33Input(r, c, kind))
			}
			g := act33Graph(c)
			if c.op == graph.LeakyRelu {
				ins = append(ins, all)
			}
			matchesInterpOnTargets(t, g, ins)
		})
	}
}

// TestInt16Act33HandWorked: graph/interp's hand-worked values
// (int16_act33_test.go there) through the lowered TIR.
func TestInt16Act33HandWorked(t *testing.T) {
	for _, c := range []struct {
		c        act33Case
		in, hand []int64
	}{
		// Multipliers 2^30 (identity shift 2, alpha shift 0).
		{leaky16Cases[1], []int64{10, 0, -32768, 32767}, []int64{9, -6, -16390, 32767}},
		// The alpha multiplier -2^30, applied by magnitude and negated.
		{leaky16Cases[2], []int64{0, 10, -32768}, []int64{-4, 9, 16380}},
		{act33Case{name: "sm2", op: graph.Softmax, xt: graph.Int8, yt: graph.Int16, sx: 0.05, sy: 1.0 / 65536, zy: -32768, beta: 1},
			[]int64{0, 0}, []int64{0, 0}},
		{act33Case{name: "sm_radius", op: graph.Softmax, xt: graph.Int8, yt: graph.Int16, sx: 0.1, sy: 1.0 / 65536, zy: -32768, beta: 1},
			[]int64{-128, 127}, []int64{-32768, 32767}},
		// TFLite Micro's reference kernel's outputs.
		{act33Case{name: "sm4", op: graph.Softmax, xt: graph.Int8, yt: graph.Int16, sx: 0.05, sy: 1.0 / 65536, zy: -32768, beta: 1},
			[]int64{10, 0, -20, 5}, []int64{-7644, -17529, -27162, -13201}},
	} {
		c.c.shape = []int{1, len(c.in)}
		g := act33Graph(c.c)
		x := graph.NewData(c.c.xt, c.c.shape)
		copy(x.I, c.in)
		m, err := lowerPlanned(t, g, *tir.Generic)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tir.RunModule(m, map[string]*graph.Data{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range c.hand {
			if got["y"].I[i] != h {
				t.Errorf("%s[%d] = %d, by hand %d", c.c.name, i, got["y"].I[i], h)
			}
		}
	}
}

// TestInt16Act33Refused: lowering refuses what graph/interp refuses, with
// its message.
func TestInt16Act33Refused(t *testing.T) {
	for _, c := range []struct {
		c    act33Case
		want string
	}{
		{act33Case{name: "sm_zp", op: graph.Softmax, xt: graph.Int8, yt: graph.Int16, sx: 0.1, sy: 1.0 / 65536, beta: 1},
			"TFLite Micro's kernel writes scale 1/65536 and zero point -32768"},
		{act33Case{name: "sm_scale", op: graph.Softmax, xt: graph.Int8, yt: graph.Int16, sx: 0.1, sy: 1.0 / 32768, zy: -32768, beta: 1},
			"TFLite Micro's kernel writes scale 1/65536 and zero point -32768"},
		{act33Case{name: "sm_16_8", op: graph.Softmax, xt: graph.Int16, yt: graph.Int8, sx: 0.001, sy: 1.0 / 256, zy: -128, beta: 1},
			"takes int16 to int16 and int8 to int16 only"},
		{act33Case{name: "lr_big_ratio", op: graph.LeakyRelu, xt: graph.Int16, yt: graph.Int16, sx: 1, sy: 1.0 / 65536, alpha: 0.2},
			"a multiplier of 2^15 or more"},
		{act33Case{name: "lr_mixed", op: graph.LeakyRelu, xt: graph.Int16, yt: graph.Int8, sx: 0.1, sy: 0.1, alpha: 0.2},
			"TFLite Micro's takes the same type in and out"},
	} {
		c.c.shape = []int{1, 4}
		_, err := lowerPlanned(t, act33Graph(c.c), *tir.Generic)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.c.name, err, c.want)
		}
	}
}

// TestInt16Act33HostC compiles some cases to C for the host with
// AddressSanitizer and UndefinedBehaviorSanitizer (-pedantic -Werror),
// runs them and compares with graph/interp.
func TestInt16Act33HostC(t *testing.T) {
	for _, c := range []act33Case{leaky16Cases[2], leaky16Cases[5], leaky16Cases[9], softmax16Cases[0], softmax16Cases[4]} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(len(c.name))))
			var vecs []map[string]*graph.Data
			for kind := 0; kind < 4; kind++ {
				vecs = append(vecs, map[string]*graph.Data{"x": act33Input(r, c, kind)})
			}
			sanitizedHostMatches(t, act33Graph(c), "act33_"+c.name, vecs)
		})
	}
}
