package tflite_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// spec describes one tensor of a single-operator test model. A spec without
// data is an activation (a graph input, or the output).
type spec struct {
	typ    int8
	shape  []int32
	f      []float32 // float32 constant data
	q      []int64   // integer constant data
	scale  []float32
	zp     []int64
	dim    int32
	absent bool
}

func (s spec) isConst() bool { return s.f != nil || s.q != nil }

// fin is a float32 activation, fc a float32 constant.
func fin(shape ...int32) spec { return spec{typ: tg.Float32, shape: shape} }
func fc(shape []int32, v ...float32) spec {
	return spec{typ: tg.Float32, shape: shape, f: v}
}

// qin is an int8 activation with one scale and zero point.
func qin(scale float32, zp int64, shape ...int32) spec {
	return spec{typ: tg.Int8, shape: shape, scale: []float32{scale}, zp: []int64{zp}}
}

// qc is an integer constant of type typ (scale nil for none).
func qc(typ int8, shape []int32, scale []float32, zp []int64, dim int32, v ...int64) spec {
	return spec{typ: typ, shape: shape, q: v, scale: scale, zp: zp, dim: dim}
}

// i32c is an int32 constant without quantization (shapes, axes, paddings).
func i32c(shape []int32, v ...int64) spec { return qc(tg.Int32, shape, nil, nil, 0, v...) }

var none = spec{absent: true}

// opCase is one operator applied to inputs; want holds the expected output
// (float values, or integers for an integer output).
type opCase struct {
	name      string
	code      int32
	opts      *tg.Options
	ins       []spec
	out       spec
	feed      [][]float64 // values of the non-constant inputs, in order
	want      []float64
	wantShape []int
	tol       float64
	// more are further outputs (SPLIT, UNPACK) and wantMore their values.
	more     []spec
	wantMore [][]float64
}

func (c opCase) model() *tg.Model {
	m := &tg.Model{}
	var ins []int32
	for i, s := range c.ins {
		if s.absent {
			ins = append(ins, -1)
			continue
		}
		t := tg.Tensor{Name: fmt.Sprintf("in%d", i), Type: s.typ, Shape: s.shape, Scale: s.scale, ZeroPoint: s.zp, QuantDim: s.dim}
		switch {
		case s.f != nil:
			t.Data = tg.F32Bytes(s.f...)
		case s.q != nil:
			t.Data = intBytes(s.typ, s.q)
		}
		idx := m.AddTensor(t)
		if !s.isConst() {
			m.Inputs = append(m.Inputs, idx)
		}
		ins = append(ins, idx)
	}
	out := m.AddTensor(tg.Tensor{Name: "out", Type: c.out.typ, Shape: c.out.shape, Scale: c.out.scale, ZeroPoint: c.out.zp, QuantDim: c.out.dim})
	m.Outputs = []int32{out}
	for i, s := range c.more {
		m.Outputs = append(m.Outputs, m.AddTensor(tg.Tensor{Name: fmt.Sprintf("out%d", i+1), Type: s.typ, Shape: s.shape, Scale: s.scale, ZeroPoint: s.zp, QuantDim: s.dim}))
	}
	m.AddOp(c.code, c.opts, ins, m.Outputs...)
	return m
}

func intBytes(typ int8, v []int64) []byte {
	switch typ {
	case tg.Int64:
		return tg.I64Bytes(v...)
	case tg.Int16:
		w := make([]int16, len(v))
		for i, x := range v {
			w[i] = int16(x)
		}
		return tg.I16Bytes(w...)
	case tg.Int32:
		w := make([]int32, len(v))
		for i, x := range v {
			w[i] = int32(x)
		}
		return tg.I32Bytes(w...)
	default:
		w := make([]int8, len(v))
		for i, x := range v {
			w[i] = int8(x)
		}
		if typ == tg.Int4 {
			return tg.I4Bytes(w...)
		}
		return tg.I8Bytes(w...)
	}
}

// decode decodes the case's model.
func (c opCase) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode(c.name, c.model().Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return g
}

// feeds are the case's feed values for g's inputs, in order, of each
// input's type.
func (c opCase) feeds(g *graph.Graph) map[string]*graph.Data {
	feeds := map[string]*graph.Data{}
	for i, name := range g.Inputs {
		tt := g.Tensors[name]
		d := graph.NewData(tt.DType, tt.Shape)
		for k, v := range c.feed[i] {
			if tt.DType == graph.Float32 {
				d.F[k] = float32(v)
			} else {
				d.I[k] = int64(v)
			}
		}
		feeds[name] = d
	}
	return feeds
}

// run decodes the case's model, runs the interpreter and compares.
func (c opCase) run(t *testing.T) {
	t.Helper()
	g := c.decode(t)
	for _, n := range g.Nodes {
		if !interp.Supported(g, n) {
			t.Skipf("no reference kernel for %s on %s yet (written by another helper)", n.Op, g.In(n, 0).DType)
		}
	}
	outs, err := interp.Run(g, c.feeds(g))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if c.wantShape != nil && fmt.Sprint(g.Tensors[g.Outputs[0]].Shape) != fmt.Sprint(c.wantShape) {
		t.Errorf("output shape %v, want %v", g.Tensors[g.Outputs[0]].Shape, c.wantShape)
	}
	wants := append([][]float64{c.want}, c.wantMore...)
	if len(g.Outputs) != len(wants) {
		t.Fatalf("%d graph outputs, want %d", len(g.Outputs), len(wants))
	}
	for k, want := range wants {
		got := outs[g.Outputs[k]]
		if got.Len() != len(want) {
			t.Fatalf("output %d: %d values, want %d", k, got.Len(), len(want))
		}
		for i, w := range want {
			if v := got.Float(i); math.Abs(v-w) > c.tol {
				t.Errorf("output %d [%d] = %v, want %v", k, i, v, w)
			}
		}
	}
}

func f64(v ...float64) []float64 { return v }

func pad4(t, b, l, r int) spec {
	return i32c([]int32{4, 2}, 0, 0, int64(t), int64(b), int64(l), int64(r), 0, 0)
}

// floatCases: every op on float32 tensors, with hand-worked results.
var floatCases = []opCase{
	// out[i,j] = x[i,j] + x[i+1,j+1] + 1 on x = 1..9 (3x3), 2x2 kernel diag(1,1).
	{name: "conv2d_valid", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{fin(1, 3, 3, 1), fc([]int32{1, 2, 2, 1}, 1, 0, 0, 1), fc([]int32{1}, 1)}, out: fin(1, 2, 2, 1),
		feed: [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, want: f64(7, 9, 13, 15), wantShape: []int{1, 2, 2, 1}, tol: 1e-5},
	// SAME with a 2x2 kernel pads one row/column after: the last row/column sees zeros.
	{name: "conv2d_same", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Same, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{fin(1, 3, 3, 1), fc([]int32{1, 2, 2, 1}, 1, 0, 0, 1), none}, out: fin(1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, want: f64(6, 8, 3, 12, 14, 6, 7, 8, 9), tol: 1e-5},
	// Dilation 2 on 3x3 with a 2x2 kernel: x[0,0]+x[2,2] = 1+9; stride 1; RELU6 clamps to 6.
	{name: "conv2d_dilated_relu6", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActRelu6, 2, 2),
		ins: []spec{fin(1, 3, 3, 1), fc([]int32{1, 2, 2, 1}, 1, 0, 0, 1), none}, out: fin(1, 1, 1, 1),
		feed: [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, want: f64(6), tol: 1e-5},
	// Depthwise 2x2 over two channels: c0 = 1*1+2*2+3*3+4*4 = 30, c1 = 20-40 = -20.
	{name: "depthwise", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{fin(1, 2, 2, 2), fc([]int32{1, 2, 2, 2}, 1, 0, 2, 1, 3, 0, 4, -1), none}, out: fin(1, 1, 1, 2),
		feed: [][]float64{{1, 10, 2, 20, 3, 30, 4, 40}}, want: f64(30, -20), tol: 1e-5},
	// Depth multiplier 2: output channel 2c+m = x[c] * w[2c+m], plus bias.
	{name: "depthwise_mult2", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 2, tg.ActNone, 1, 1),
		ins: []spec{fin(1, 1, 1, 2), fc([]int32{1, 1, 1, 4}, 1, 2, 3, 4), fc([]int32{4}, 0, 0, 0, 0.5)}, out: fin(1, 1, 1, 4),
		feed: [][]float64{{1, 10}}, want: f64(1, 2, 30, 40.5), tol: 1e-5},
	// [1,2,3] . [[1,0,-1],[2,2,2]] + [0.5,-1] = [-1.5, 11].
	{name: "fully_connected", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{fin(1, 3), fc([]int32{2, 3}, 1, 0, -1, 2, 2, 2), fc([]int32{2}, 0.5, -1)}, out: fin(1, 2),
		feed: [][]float64{{1, 2, 3}}, want: f64(-1.5, 11), tol: 1e-5},
	// SAME 2x2 stride 1 over [[1,2],[3,4]]: windows shrink at the border (TFLite divides by the valid count).
	{name: "avg_pool", code: tg.OpAveragePool2D, opts: tg.Pool2DOptions(tg.Same, 1, 1, 2, 2, tg.ActNone),
		ins: []spec{fin(1, 2, 2, 1)}, out: fin(1, 2, 2, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(2.5, 3, 3.5, 4), tol: 1e-5},
	{name: "max_pool", code: tg.OpMaxPool2D, opts: tg.Pool2DOptions(tg.Same, 1, 1, 2, 2, tg.ActNone),
		ins: []spec{fin(1, 2, 2, 1)}, out: fin(1, 2, 2, 1),
		feed: [][]float64{{1, 4, 3, 2}}, want: f64(4, 4, 3, 2), tol: 0},
	// Broadcast [1,2,2] op [2].
	{name: "add", code: tg.OpAdd, opts: tg.ActOptions(tg.OptAdd, tg.ActNone), ins: []spec{fin(1, 2, 2), fin(2)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, 2, 3, 4}, {10, 20}}, want: f64(11, 22, 13, 24), tol: 1e-5},
	{name: "sub", code: tg.OpSub, opts: tg.ActOptions(tg.OptSub, tg.ActRelu), ins: []spec{fin(1, 2, 2), fin(2)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, 25, 3, 24}, {10, 20}}, want: f64(0, 5, 0, 4), tol: 1e-5},
	{name: "mul", code: tg.OpMul, opts: tg.ActOptions(tg.OptMul, tg.ActNone), ins: []spec{fin(1, 2, 2), fin(2)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, 2, 3, 4}, {10, 20}}, want: f64(10, 40, 30, 80), tol: 1e-5},
	// softmax([1, 1+ln 3]) = [1/4, 3/4]; softmax([0,0]) = [1/2, 1/2].
	{name: "softmax", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}},
		ins: []spec{fin(2, 2)}, out: fin(2, 2),
		feed: [][]float64{{1, 1 + math.Log(3), 0, 0}}, want: f64(0.25, 0.75, 0.5, 0.5), tol: 1e-6},
	{name: "reshape", code: tg.OpReshape, ins: []spec{fin(1, 4), i32c([]int32{2}, 2, 2)}, out: fin(2, 2),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 2, 3, 4), wantShape: []int{2, 2}},
	{name: "squeeze", code: tg.OpSqueeze, opts: &tg.Options{Type: tg.OptSqueeze}, ins: []spec{fin(1, 4, 1)}, out: fin(4),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 2, 3, 4), wantShape: []int{4}},
	{name: "expand_dims", code: tg.OpExpandDims, ins: []spec{fin(4), i32c([]int32{1}, 0)}, out: fin(1, 4),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 2, 3, 4), wantShape: []int{1, 4}},
	// Pad H by 1 before and W by 1 after.
	{name: "pad", code: tg.OpPad, ins: []spec{fin(1, 2, 2, 1), pad4(1, 0, 0, 1)}, out: fin(1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(0, 0, 0, 1, 2, 0, 3, 4, 0)},
	{name: "padv2", code: tg.OpPadV2, ins: []spec{fin(1, 2, 2, 1), pad4(1, 0, 0, 1), fc([]int32{}, 7.5)}, out: fin(1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(7.5, 7.5, 7.5, 1, 2, 7.5, 3, 4, 7.5)},
	{name: "concat", code: tg.OpConcatenation, opts: &tg.Options{Type: tg.OptConcatenation, Fields: []tg.Field{tg.I32(0, -1)}},
		ins: []spec{fin(2, 1), fin(2, 2)}, out: fin(2, 3),
		feed: [][]float64{{1, 2}, {3, 4, 5, 6}}, want: f64(1, 3, 4, 2, 5, 6)},
	// Mean over H and W, keep dims: c0 = (1+2+3+5)/4, c1 = -(1+2+3+5)/4.
	{name: "mean", code: tg.OpMean, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{fin(1, 2, 2, 2), i32c([]int32{2}, 1, 2)}, out: fin(1, 1, 1, 2),
		feed: [][]float64{{1, -1, 2, -2, 3, -3, 5, -5}}, want: f64(2.75, -2.75), tol: 1e-6},
	// SUM over axis 1 of [[1,2,3],[4,5,6]] (keep_dims): [6, 15]; REDUCE_MAX/MIN/PROD over axis 0.
	{name: "sum", code: tg.OpSum, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{fin(2, 3), i32c([]int32{1}, 1)}, out: fin(2, 1),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(6, 15), wantShape: []int{2, 1}, tol: 1e-6},
	{name: "reduce_max", code: tg.OpReduceMax, opts: &tg.Options{Type: tg.OptReducer},
		ins: []spec{fin(2, 3), i32c([]int32{1}, 0)}, out: fin(3),
		feed: [][]float64{{1, -2, 3, -4, 5, -6}}, want: f64(1, 5, 3), wantShape: []int{3}},
	{name: "reduce_min", code: tg.OpReduceMin, opts: &tg.Options{Type: tg.OptReducer},
		ins: []spec{fin(2, 3), i32c([]int32{1}, -2)}, out: fin(3),
		feed: [][]float64{{1, -2, 3, -4, 5, -6}}, want: f64(-4, -2, -6), wantShape: []int{3}},
	{name: "reduce_prod", code: tg.OpReduceProd, opts: &tg.Options{Type: tg.OptReducer},
		ins: []spec{fin(2, 3), i32c([]int32{2}, 0, 1)}, out: fin(),
		feed: [][]float64{{1, -2, 3, -4, 5, -6}}, want: f64(-720), tol: 1e-3},
	// Element-wise functions: exp(ln 2) = 2, log(e^3) = 3, sqrt(2.25) = 1.5, rsqrt(4) = 0.5, ...
	{name: "exp", code: tg.OpExp, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{math.Ln2, 0}}, want: f64(2, 1), tol: 1e-6},
	{name: "log", code: tg.OpLog, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{math.Exp(3), 1}}, want: f64(3, 0), tol: 1e-6},
	{name: "sqrt", code: tg.OpSqrt, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{2.25, 0}}, want: f64(1.5, 0)},
	{name: "rsqrt", code: tg.OpRsqrt, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{4, 0.01}}, want: f64(0.5, 10), tol: 1e-5},
	{name: "square", code: tg.OpSquare, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{-3, 0.5}}, want: f64(9, 0.25)},
	{name: "abs", code: tg.OpAbs, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{-3, 0.5}}, want: f64(3, 0.5)},
	{name: "neg", code: tg.OpNeg, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{-3, 0.5}}, want: f64(3, -0.5)},
	{name: "sin", code: tg.OpSin, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{math.Pi / 6, 0}}, want: f64(0.5, 0), tol: 1e-6},
	{name: "cos", code: tg.OpCos, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{math.Pi / 3, 0}}, want: f64(0.5, 1), tol: 1e-6},
	{name: "floor", code: tg.OpFloor, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-1.5, 2.5, 3}}, want: f64(-2, 2, 3)},
	{name: "ceil", code: tg.OpCeil, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-1.5, 2.5, 3}}, want: f64(-1, 3, 3)},
	// TFLite's ROUND goes half to even.
	{name: "round", code: tg.OpRound, ins: []spec{fin(4)}, out: fin(4), feed: [][]float64{{-1.5, 0.5, 2.5, 2.6}}, want: f64(-2, 0, 2, 3)},
	// elu(-ln 2) = 1/2 - 1.
	{name: "elu", code: tg.OpElu, ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{-math.Ln2, 2}}, want: f64(-0.5, 2), tol: 1e-6},
	// ARG_MAX / ARG_MIN over the last axis of [[1,5,5],[7,0,-1]]: the first of equal maxima.
	{name: "arg_max", code: tg.OpArgMax, ins: []spec{fin(2, 3), i32c([]int32{1}, -1)}, out: spec{typ: tg.Int32, shape: []int32{2}},
		feed: [][]float64{{1, 5, 5, 7, 0, -1}}, want: f64(1, 0)},
	{name: "arg_min", code: tg.OpArgMin, ins: []spec{fin(2, 3), i32c([]int32{1}, 0)}, out: spec{typ: tg.Int64, shape: []int32{3}},
		feed: [][]float64{{1, 5, 5, 7, 0, -1}}, want: f64(0, 1, 1)},
	// int8 ARG_MAX compares the stored values.
	{name: "arg_max_int8", code: tg.OpArgMax, ins: []spec{qin(0.1, 3, 1, 4), i32c([]int32{1}, 1)}, out: spec{typ: tg.Int32, shape: []int32{1}},
		feed: [][]float64{{-7, 100, -128, 101}}, want: f64(3)},
	// TRANSPOSE_CONV, VALID, stride 2, a diagonal 2x2 kernel: each x lands on
	// (2y, 2x) and (2y+1, 2x+1) of a 4x4 output; bias 0.5.
	{name: "transpose_conv_valid", code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Valid), tg.I32(1, 2), tg.I32(2, 2)}},
		ins:  []spec{i32c([]int32{4}, 1, 4, 4, 1), fc([]int32{1, 2, 2, 1}, 1, 0, 0, 1), fin(1, 2, 2, 1), fc([]int32{1}, 0.5)}, out: fin(1, 4, 4, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1.5, 0.5, 2.5, 0.5, 0.5, 1.5, 0.5, 2.5, 3.5, 0.5, 4.5, 0.5, 0.5, 3.5, 0.5, 4.5), tol: 1e-6},
	// SAME, stride 2, a 3x3 kernel of ones, output 4x4: the backward
	// convolution pads 0 before and 1 after, so output (y, x) sums the
	// inputs whose 3x3 footprint at (2iy, 2ix) covers it.
	{name: "transpose_conv_same", code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Same), tg.I32(1, 2), tg.I32(2, 2)}},
		ins:  []spec{i32c([]int32{4}, 1, 4, 4, 1), fc([]int32{1, 3, 3, 1}, 1, 1, 1, 1, 1, 1, 1, 1, 1), fin(1, 2, 2, 1), none}, out: fin(1, 4, 4, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 1, 3, 2, 1, 1, 3, 2, 4, 4, 10, 6, 3, 3, 7, 4), tol: 1e-6},
	// sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4.
	{name: "logistic", code: tg.OpLogistic, ins: []spec{fin(3)}, out: fin(3),
		feed: [][]float64{{0, math.Log(3), -math.Log(3)}}, want: f64(0.5, 0.75, 0.25), tol: 1e-6},
	// tanh(ln 3) = (9-1)/(9+1) = 0.8.
	{name: "tanh", code: tg.OpTanh, ins: []spec{fin(3)}, out: fin(3),
		feed: [][]float64{{0, math.Log(3), -math.Log(3)}}, want: f64(0, 0.8, -0.8), tol: 1e-6},
	{name: "relu", code: tg.OpRelu, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-1, 0.5, 7}}, want: f64(0, 0.5, 7)},
	{name: "relu6", code: tg.OpRelu6, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-1, 0.5, 7}}, want: f64(0, 0.5, 6)},
	{name: "leaky_relu", code: tg.OpLeakyRelu, opts: &tg.Options{Type: tg.OptLeakyRelu, Fields: []tg.Field{tg.F32(0, 0.1)}},
		ins: []spec{fin(2)}, out: fin(2), feed: [][]float64{{-10, 5}}, want: f64(-1, 5), tol: 1e-6},
	// x * relu6(x+3) / 6.
	{name: "hard_swish", code: tg.OpHardSwish, ins: []spec{fin(5)}, out: fin(5),
		feed: [][]float64{{-4, -1.5, 0, 1, 4}}, want: f64(0, -0.375, 0, 4.0/6, 4), tol: 1e-6},
	// x[:, 2::-1] (end_mask on axis 1) of [[1,2,3],[4,5,6]].
	{name: "strided_slice_reverse", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(1, 2)}},
		ins: []spec{fin(2, 3), i32c([]int32{2}, 0, -1), i32c([]int32{2}, 2, 0), i32c([]int32{2}, 1, -1)}, out: fin(2, 3),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(3, 2, 1, 6, 5, 4)},
	// x[1, 0:3:2] with shrink_axis_mask on axis 0.
	{name: "strided_slice_shrink", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(4, 1)}},
		ins: []spec{fin(2, 3), i32c([]int32{2}, 1, 0), i32c([]int32{2}, 2, 3), i32c([]int32{2}, 1, 2)}, out: fin(2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(4, 6), wantShape: []int{2}},
	// x[tf.newaxis, :, 1:] of [[1,2,3],[4,5,6]]: new_axis_mask on entry 0,
	// begin and end masks on entry 1 -> [1,2,2] [[[2,3],[5,6]]].
	{name: "strided_slice_new_axis", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(0, 2), tg.I32(1, 2), tg.I32(3, 1)}},
		ins: []spec{fin(2, 3), i32c([]int32{3}, 0, 0, 1), i32c([]int32{3}, 0, 0, 3), i32c([]int32{3}, 1, 1, 1)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(2, 3, 5, 6), wantShape: []int{1, 2, 2}},
	// x[..., 1] of a [2,2,3]: an ellipsis for the first two axes, then axis
	// 2 shrunk at 1 -> [2,2] [[2,5],[8,11]].
	{name: "strided_slice_ellipsis", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(2, 1), tg.I32(4, 2)}},
		ins: []spec{fin(2, 2, 3), i32c([]int32{2}, 0, 1), i32c([]int32{2}, 0, 2), i32c([]int32{2}, 1, 1)}, out: fin(2, 2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}, want: f64(2, 5, 8, 11), wantShape: []int{2, 2}},
	// x[:, tf.newaxis, ..., ::2] of a [2,3]: the ellipsis takes no axis
	// here -> [2,1,2] [[[1,3]],[[4,6]]].
	{name: "strided_slice_new_axis_ellipsis", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(0, 9), tg.I32(1, 9), tg.I32(2, 4), tg.I32(3, 2)}},
		ins: []spec{fin(2, 3), i32c([]int32{4}, 0, 0, 0, 0), i32c([]int32{4}, 0, 0, 0, 0), i32c([]int32{4}, 1, 1, 1, 2)}, out: fin(2, 1, 2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(1, 3, 4, 6), wantShape: []int{2, 1, 2}},
	{name: "transpose", code: tg.OpTranspose, ins: []spec{fin(2, 3), i32c([]int32{2}, 1, 0)}, out: fin(3, 2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(1, 4, 2, 5, 3, 6)},
	{name: "maximum", code: tg.OpMaximum, ins: []spec{fin(2, 2), fin(1)}, out: fin(2, 2),
		feed: [][]float64{{1, -5, 3, 7}, {2}}, want: f64(2, 2, 3, 7)},
	{name: "minimum", code: tg.OpMinimum, ins: []spec{fin(2, 2), fin(1)}, out: fin(2, 2),
		feed: [][]float64{{1, -5, 3, 7}, {2}}, want: f64(1, -5, 2, 2)},
	// 2x2 -> 4x4 nearest (asymmetric, floor): each pixel becomes a 2x2 block.
	{name: "resize_nearest", code: tg.OpResizeNearestNeighbor, opts: &tg.Options{Type: tg.OptResizeNearestNeighbor},
		ins: []spec{fin(1, 2, 2, 1), i32c([]int32{2}, 4, 4)}, out: fin(1, 4, 4, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4)},
	// Half-pixel centres, 1x2 -> 1x3: (x+0.5)*2/3 = 0.33, 1.0, 1.67 -> 0, 1, 1.
	{name: "resize_nearest_half_pixel", code: tg.OpResizeNearestNeighbor, opts: &tg.Options{Type: tg.OptResizeNearestNeighbor, Fields: []tg.Field{tg.Bool(1, true)}},
		ins: []spec{fin(1, 1, 2, 1), i32c([]int32{2}, 1, 3)}, out: fin(1, 1, 3, 1),
		feed: [][]float64{{1, 2}}, want: f64(1, 2, 2)},
	// QUANTIZE float -> int8, scale 0.5, zero point 1: round half away from zero, saturate.
	{name: "quantize", code: tg.OpQuantize, ins: []spec{fin(6)}, out: qin(0.5, 1, 6),
		feed: [][]float64{{0, 0.5, -0.25, 1.26, 100, -100}}, want: f64(1, 2, 0, 4, 127, -128)},
	// DEQUANTIZE int8, scale 0.5, zero point -1.
	{name: "dequantize", code: tg.OpDequantize, ins: []spec{qin(0.5, -1, 3)}, out: fin(3),
		feed: [][]float64{{-128, 0, 127}}, want: f64(-63.5, 0.5, 64)},
	// Per-axis DEQUANTIZE of a constant [2,2] along axis 0 (scales 1 and 0.5).
	{name: "dequantize_per_axis", code: tg.OpDequantize, ins: []spec{qc(tg.Int8, []int32{2, 2}, []float32{1, 0.5}, []int64{0, 2}, 0, 1, 2, 3, 4)}, out: fin(2, 2),
		want: f64(1, 2, 0.5, 1)},
	// CAST float -> int32 truncates toward zero and (mcugen's choice where
	// TFLite leaves it undefined) saturates; int32 -> float rounds to nearest.
	{name: "cast_to_int32", code: tg.OpCast, ins: []spec{fin(5)}, out: spec{typ: tg.Int32, shape: []int32{5}},
		feed: [][]float64{{2.7, -2.7, 1e10, -0.5, 100}}, want: f64(2, -2, 2147483647, 0, 100)},
	{name: "cast_to_float", code: tg.OpCast, ins: []spec{{typ: tg.Int32, shape: []int32{3}}}, out: fin(3),
		feed: [][]float64{{-3, 16777217, 7}}, want: f64(-3, 16777216, 7)},
	{name: "batch_matmul", code: tg.OpBatchMatMul, opts: &tg.Options{Type: tg.OptBatchMatMul},
		ins: []spec{fin(1, 2, 2), fin(1, 2, 2)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, 2, 3, 4}, {5, 6, 7, 8}}, want: f64(19, 22, 43, 50), tol: 1e-5},
}

func TestFloatOps(t *testing.T) {
	for _, c := range floatCases {
		t.Run(c.name, c.run)
	}
}
