package tflite_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

func i8c(shape []int32, scale float32, zp int64, v ...int64) spec {
	return qc(tg.Int8, shape, []float32{scale}, []int64{zp}, 0, v...)
}

// intCases: every op on int8 tensors. The expectations are worked by hand
// from TFLite's integer semantics; the comments show the arithmetic.
// SRDHM(a, b) rounds the doubled high product half up, so -1.5 -> -1 and
// 1.5 -> 2; RoundingDivideByPOT rounds half away from zero.
var intCases = []opCase{
	// x real = (q-1)*0.5 = [1,2,-1,0]; w per-channel scales [0.25,0.5]:
	// w0 = diag(1,1), w1 = [1,1,-1,1]; bias real [1,-1] (scales 0.125, 0.25).
	// c0: acc = 2*4 + 8 = 16, mult 0.5 -> 8, -10 -> -2 (real 2.0).
	// c1: acc = 2*2+4*2+(-2)(-2) - 4 = 12, mult 1.0 -> 12, -10 -> 2 (real 3.0).
	{name: "conv2d_per_channel", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin(0.5, 1, 1, 2, 2, 1),
			qc(tg.Int8, []int32{2, 2, 2, 1}, []float32{0.25, 0.5}, []int64{0, 0}, 0, 4, 0, 0, 4, 2, 2, -2, 2),
			qc(tg.Int32, []int32{2}, []float32{0.125, 0.25}, []int64{0, 0}, 0, 8, -4)},
		out: qin(0.25, -10, 1, 1, 1, 2), feed: [][]float64{{3, 5, -1, 1}}, want: f64(-2, 2)},
	// SAME padding (one zero row/column after) with a fused RELU. x real
	// [[1,2],[-1,0]], w real [[1,0],[0,-1]] (scale 0.5): outputs real
	// [1-0, 2, -1, 0]; multiplier 0.5*0.5/0.25 = 1, so q = 4*real - 10 =
	// [-6, -2, -14, -10], and RELU clamps at the zero point -10.
	{name: "conv2d_same_relu", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Same, 1, 1, tg.ActRelu, 1, 1),
		ins: []spec{qin(0.5, 1, 1, 2, 2, 1),
			qc(tg.Int8, []int32{1, 2, 2, 1}, []float32{0.5}, []int64{0}, 0, 2, 0, 0, -2)},
		out: qin(0.25, -10, 1, 2, 2, 1), feed: [][]float64{{3, 5, -1, 1}}, want: f64(-6, -2, -10, -10)},
	// Depthwise: c0 scale 1: 1+4+9+16 = 30; c1 scale 0.5: 20*2 + 40*(-2) = -40 -> -20.
	{name: "depthwise_per_channel", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin(1, 0, 1, 2, 2, 2),
			qc(tg.Int8, []int32{1, 2, 2, 2}, []float32{1, 0.5}, []int64{0, 0}, 3, 1, 0, 2, 2, 3, 0, 4, -2), none},
		out: qin(1, 0, 1, 1, 1, 2), feed: [][]float64{{1, 10, 2, 20, 3, 30, 4, 40}}, want: f64(30, -20)},
	// FC, x zp -1 (raw [0,1] is real [1,2]), w scale 1/8, out scale 1: multiplier 1/8 = 2^30 * 2^-33.
	// row 0: acc = 1+2 = 3: SRDHM(3, 2^30) = 2 (1.5 rounded), then /4 -> 0.5 -> 1.
	// TFLite's double rounding gives 1 where exact rounding of 3/8 would give 0.
	// row 1: acc = 2+6+4(bias) = 12: SRDHM -> 6, /4 -> 1.5 -> 2.
	{name: "fully_connected_double_rounding", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin(1, -1, 1, 2), i8c([]int32{2, 2}, 0.125, 0, 1, 1, 2, 3), qc(tg.Int32, []int32{2}, []float32{0.125}, []int64{0}, 0, 0, 4)},
		out: qin(1, 0, 1, 2), feed: [][]float64{{0, 1}}, want: f64(1, 2)},
	// TRANSPOSE_CONV, VALID, stride 1: x real [[1,2],[-1,0]] (scale 0.5, zp 1),
	// w real diag(1,1) (scale 0.5), so out (y, x) = x[y][x] + x[y-1][x-1]:
	// [1,2,0; -1,1,2; 0,-1,0]; multiplier 0.5*0.5/0.25 = 1, q = 4*real - 10,
	// and the fused RELU clamps at the zero point -10.
	{name: "transpose_conv_relu", code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Valid), tg.I32(1, 1), tg.I32(2, 1), tg.I8(3, tg.ActRelu)}},
		ins:  []spec{i32c([]int32{4}, 1, 3, 3, 1), qc(tg.Int8, []int32{1, 2, 2, 1}, []float32{0.5}, []int64{0}, 0, 2, 0, 0, 2), qin(0.5, 1, 1, 2, 2, 1)},
		out:  qin(0.25, -10, 1, 3, 3, 1), feed: [][]float64{{3, 5, -1, 1}}, want: f64(-6, -2, -10, -10, -6, -2, -10, -10, -10)},
	// Average: (1+2+4-3)=4 -> (4+2)/4 = 1; [2,-3] -> -1 -> (-1-1)/2 = -1; [4,-3] -> 1 -> (1+1)/2 = 1; [-3].
	{name: "avg_pool", code: tg.OpAveragePool2D, opts: tg.Pool2DOptions(tg.Same, 1, 1, 2, 2, tg.ActNone),
		ins: []spec{qin(0.5, 0, 1, 2, 2, 1)}, out: qin(0.5, 0, 1, 2, 2, 1),
		feed: [][]float64{{1, 2, 4, -3}}, want: f64(1, -1, 1, -3)},
	// Max with a fused RELU: zero point 3, so the clamp is at 3.
	{name: "max_pool_relu", code: tg.OpMaxPool2D, opts: tg.Pool2DOptions(tg.Same, 1, 1, 2, 2, tg.ActRelu),
		ins: []spec{qin(0.5, 3, 1, 2, 2, 1)}, out: qin(0.5, 3, 1, 2, 2, 1),
		feed: [][]float64{{1, 4, 3, 2}}, want: f64(4, 4, 3, 3)},
	// a scale 0.5, b scale 0.25, out scale 1: real a [1,-2,50,0] + b [1,1,1,-32].
	{name: "add", code: tg.OpAdd, opts: tg.ActOptions(tg.OptAdd, tg.ActNone), ins: []spec{qin(0.5, 0, 4), qin(0.25, 0, 4)}, out: qin(1, 0, 4),
		feed: [][]float64{{2, -4, 100, 0}, {4, 4, 4, -128}}, want: f64(2, -1, 51, -32)},
	{name: "sub", code: tg.OpSub, opts: tg.ActOptions(tg.OptSub, tg.ActNone), ins: []spec{qin(0.5, 0, 4), qin(0.25, 0, 4)}, out: qin(1, 0, 4),
		feed: [][]float64{{2, -4, 100, 0}, {4, 4, 4, -128}}, want: f64(0, -3, 49, 32)},
	// a real [1,2,-1,0] (scale 0.5, zp 1) times b real [2,-1] broadcast; out scale 0.5.
	{name: "mul_broadcast", code: tg.OpMul, opts: tg.ActOptions(tg.OptMul, tg.ActNone), ins: []spec{qin(0.5, 1, 1, 2, 2), qin(0.25, 0, 2)}, out: qin(0.5, 0, 1, 2, 2),
		feed: [][]float64{{3, 5, -1, 1}, {8, -4}}, want: f64(4, -4, -4, 0)},
	// Softmax: four equal inputs -> 1/4 -> 64/256 -> -64; a row with two maxima and two
	// values 20 below -> 1/2 -> 0, and ~0 -> -128.
	{name: "softmax", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}},
		ins: []spec{qin(0.1, 0, 2, 4)}, out: qin(1.0/256, -128, 2, 4),
		feed: [][]float64{{5, 5, 5, 5, 100, -100, 100, -100}}, want: f64(-64, -64, -64, -64, 0, -128, 0, -128)},
	{name: "reshape", code: tg.OpReshape, ins: []spec{qin(0.5, 2, 1, 4), i32c([]int32{2}, 2, 2)}, out: qin(0.5, 2, 2, 2),
		feed: [][]float64{{-128, 0, 1, 127}}, want: f64(-128, 0, 1, 127)},
	{name: "squeeze", code: tg.OpSqueeze, opts: &tg.Options{Type: tg.OptSqueeze}, ins: []spec{qin(0.5, 2, 1, 4, 1)}, out: qin(0.5, 2, 4),
		feed: [][]float64{{-128, 0, 1, 127}}, want: f64(-128, 0, 1, 127)},
	{name: "expand_dims", code: tg.OpExpandDims, ins: []spec{qin(0.5, 2, 4), i32c([]int32{1}, 0)}, out: qin(0.5, 2, 1, 4),
		feed: [][]float64{{-128, 0, 1, 127}}, want: f64(-128, 0, 1, 127)},
	// Requantize int8 -> int8: scale 1 -> 2 (multiplier 0.5), zero point 0 -> 10:
	// -128 -> -64, -3 -> SRDHM gives -1 (-1.5 rounds up), 3 -> 2, 127 -> 64; then +10.
	{name: "quantize_requantize", code: tg.OpQuantize, ins: []spec{qin(1, 0, 4)}, out: qin(2, 10, 4),
		feed: [][]float64{{-128, -3, 3, 127}}, want: f64(-54, 9, 12, 74)},
	// PAD fills with the output zero point (-5).
	{name: "pad", code: tg.OpPad, ins: []spec{qin(0.5, -5, 1, 2, 2, 1), pad4(1, 0, 0, 1)}, out: qin(0.5, -5, 1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(-5, -5, -5, 1, 2, -5, 3, 4, -5)},
	{name: "padv2", code: tg.OpPadV2, ins: []spec{qin(0.5, -5, 1, 2, 2, 1), pad4(1, 0, 0, 1), i8c([]int32{}, 0.5, -5, 7)}, out: qin(0.5, -5, 1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(7, 7, 7, 1, 2, 7, 3, 4, 7)},
	// a has the output's quantization (copied); b (scale 0.5, zp 2) is requantized:
	// (5-2)*0.5 = 1.5 -> 2, (-2-2)*0.5 = -2.
	{name: "concat_requantize", code: tg.OpConcatenation, opts: &tg.Options{Type: tg.OptConcatenation, Fields: []tg.Field{tg.I32(0, 1)}},
		ins: []spec{qin(1, 0, 1, 2), qin(0.5, 2, 1, 2)}, out: qin(1, 0, 1, 4),
		feed: [][]float64{{1, 2}, {5, -2}}, want: f64(1, 2, 2, -2)},
	// Mean over H,W: real c0 [1,2,3,5] -> 2.75 -> 3, c1 -> -2.75 -> -3; out zp -1.
	// TFLite: sum 11 with multiplier 2^30, shift -1: SRDHM(11,2^30) = 6, /2 -> 3.
	{name: "mean", code: tg.OpMean, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(1, 1, 1, 2, 2, 2), i32c([]int32{2}, 1, 2)}, out: qin(1, -1, 1, 1, 1, 2),
		feed: [][]float64{{2, 0, 3, -1, 4, -2, 6, -4}}, want: f64(2, -4), wantShape: []int{1, 1, 1, 2}},
	// Mean with the output quantized as the input, not over 4-D height and
	// width: TFLite Micro's QuantizedMeanOrSum folds 1/37 into the
	// multiplier and rounds once: row 0, Σ(q+20) = 36·4 + 2 = 146, 3.95 ->
	// 4 -> -16; row 1, 36·(-2) + 5 = -67, -1.81 -> -2 -> -22. (TFLite's
	// reference_ops::Mean truncates: 3 and -1; session 49 review.)
	{name: "mean_same_quant_rounds_once", code: tg.OpMean, opts: &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, false)}},
		ins: []spec{qin(0.1, -20, 2, 37), i32c([]int32{1}, 1)}, out: qin(0.1, -20, 2),
		feed: [][]float64{{-16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -16, -18, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -22, -15}}, want: f64(-16, -22), wantShape: []int{2}},
	// Logistic, input scale 0.1: 0 -> 0.5 -> 0; radius is 120, so 127 -> 127 and -128 -> -128.
	{name: "logistic", code: tg.OpLogistic, ins: []spec{qin(0.1, 0, 3)}, out: qin(1.0/256, -128, 3),
		feed: [][]float64{{0, 127, -128}}, want: f64(0, 127, -128)},
	{name: "tanh", code: tg.OpTanh, ins: []spec{qin(0.1, 0, 3)}, out: qin(1.0/128, 0, 3),
		feed: [][]float64{{0, 127, -128}}, want: f64(0, 127, -128)},
	// ReluX with requantization: in (0.5, -3) -> out (0.25, 10), multiplier 2:
	// real [-3.5, 0, 2, 51.5] -> [0, 0, 2, 51.5] -> 10 + [0, 0, 8, 206 -> clamp].
	{name: "relu", code: tg.OpRelu, ins: []spec{qin(0.5, -3, 4)}, out: qin(0.25, 10, 4),
		feed: [][]float64{{-10, -3, 1, 100}}, want: f64(10, 10, 18, 127)},
	// RELU6 at scale 0.05: 6.0 is 120.
	{name: "relu6", code: tg.OpRelu6, ins: []spec{qin(0.05, 0, 4)}, out: qin(0.05, 0, 4),
		feed: [][]float64{{-10, 20, 100, 127}}, want: f64(0, 20, 100, 120)},
	// alpha 0.5: -4 -> -2; -3 -> SRDHM(-3, 2^30) = -1 (-1.5 rounds up); 5 -> 5.
	{name: "leaky_relu", code: tg.OpLeakyRelu, opts: &tg.Options{Type: tg.OptLeakyRelu, Fields: []tg.Field{tg.F32(0, 0.5)}},
		ins: []spec{qin(1, 0, 3)}, out: qin(1, 0, 3), feed: [][]float64{{-4, -3, 5}}, want: f64(-2, -1, 5)},
	// hard_swish(0) = 0, hard_swish(-5) = 0 (the reluish factor saturates to 0).
	{name: "hard_swish", code: tg.OpHardSwish, ins: []spec{qin(0.05, 0, 2)}, out: qin(0.05, 0, 2),
		feed: [][]float64{{0, -100}}, want: f64(0, 0)},
	{name: "strided_slice", code: tg.OpStridedSlice, opts: &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(1, 2)}},
		ins: []spec{qin(1, 0, 2, 3), i32c([]int32{2}, 0, -1), i32c([]int32{2}, 2, 0), i32c([]int32{2}, 1, -1)}, out: qin(1, 0, 2, 3),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(3, 2, 1, 6, 5, 4)},
	{name: "transpose", code: tg.OpTranspose, ins: []spec{qin(1, 0, 2, 3), i32c([]int32{2}, 1, 0)}, out: qin(1, 0, 3, 2),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(1, 4, 2, 5, 3, 6)},
	{name: "maximum", code: tg.OpMaximum, ins: []spec{qin(1, 0, 2, 2), qin(1, 0, 1)}, out: qin(1, 0, 2, 2),
		feed: [][]float64{{1, -5, 3, 7}, {2}}, want: f64(2, 2, 3, 7)},
	{name: "minimum", code: tg.OpMinimum, ins: []spec{qin(1, 0, 2, 2), qin(1, 0, 1)}, out: qin(1, 0, 2, 2),
		feed: [][]float64{{1, -5, 3, 7}, {2}}, want: f64(1, -5, 2, 2)},
	{name: "resize_nearest", code: tg.OpResizeNearestNeighbor, opts: &tg.Options{Type: tg.OptResizeNearestNeighbor},
		ins: []spec{qin(1, 0, 1, 2, 2, 1), i32c([]int32{2}, 4, 4)}, out: qin(1, 0, 1, 4, 4, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4)},
	// align_corners 1x2 -> 1x3: round(x * 1/2) = 0, 1 (0.5 rounds up), 1.
	{name: "resize_nearest_align_corners", code: tg.OpResizeNearestNeighbor, opts: &tg.Options{Type: tg.OptResizeNearestNeighbor, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(1, 0, 1, 1, 2, 1), i32c([]int32{2}, 1, 3)}, out: qin(1, 0, 1, 1, 3, 1),
		feed: [][]float64{{1, 2}}, want: f64(1, 2, 2)},
	// Batch matmul, scales 0.5*0.5/0.25 = 1: [[1,2],[3,4]] x [[5,6],[7,8]].
	{name: "batch_matmul", code: tg.OpBatchMatMul, opts: &tg.Options{Type: tg.OptBatchMatMul},
		ins: []spec{qin(0.5, 0, 1, 2, 2), qin(0.5, 0, 1, 2, 2)}, out: qin(0.25, 0, 1, 2, 2),
		feed: [][]float64{{1, 2, 3, 4}, {5, 6, 7, 8}}, want: f64(19, 22, 43, 50)},
}

func TestInt8Ops(t *testing.T) {
	for _, c := range intCases {
		t.Run(c.name, c.run)
	}
}

// TestInt8UnaryAgainstFloat checks the fixed-point unary kernels on all 256
// int8 inputs against the float function, computed independently in
// float64: every output must be within one step of round(f(x)/s) + zp.
func TestInt8UnaryAgainstFloat(t *testing.T) {
	type unary struct {
		name string
		code int32
		opts *tg.Options
		in   spec
		out  spec
		f    func(float64) float64
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	hs := func(x float64) float64 { return x * math.Max(0, math.Min(6, x+3)) / 6 }
	cases := []unary{
		{"logistic", tg.OpLogistic, nil, qin(0.08, 3, 256), qin(1.0/256, -128, 256), sig},
		{"tanh", tg.OpTanh, nil, qin(0.03, -7, 256), qin(1.0/128, 0, 256), math.Tanh},
		{"hard_swish", tg.OpHardSwish, nil, qin(0.04, -20, 256), qin(0.03, -40, 256), hs},
		{"leaky_relu", tg.OpLeakyRelu, &tg.Options{Type: tg.OptLeakyRelu, Fields: []tg.Field{tg.F32(0, 0.2)}}, qin(0.05, 4, 256), qin(0.04, -3, 256),
			func(x float64) float64 { return math.Max(x, 0.2*x) }},
		{"relu", tg.OpRelu, nil, qin(0.05, 4, 256), qin(0.03, -100, 256), func(x float64) float64 { return math.Max(x, 0) }},
		{"relu6", tg.OpRelu6, nil, qin(0.05, 4, 256), qin(0.05, 4, 256), func(x float64) float64 { return math.Max(0, math.Min(6, x)) }},
		{"quantize_requantize", tg.OpQuantize, nil, qin(0.05, 4, 256), qin(0.07, -9, 256), func(x float64) float64 { return x }},
	}
	for _, u := range cases {
		t.Run(u.name, func(t *testing.T) {
			feed := make([]float64, 256)
			for i := range feed {
				feed[i] = float64(i - 128)
			}
			c := opCase{name: u.name, code: u.code, opts: u.opts, ins: []spec{u.in}, out: u.out, feed: [][]float64{feed}}
			g, err := tflite.Decode(u.name, c.model().Bytes())
			if err != nil {
				t.Fatal(err)
			}
			x := graph.NewData(graph.Int8, []int{256})
			for i := range x.I {
				x.I[i] = int64(i - 128)
			}
			outs, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: x})
			if err != nil {
				t.Fatal(err)
			}
			y := outs[g.Outputs[0]]
			sx, zx := float64(u.in.scale[0]), float64(u.in.zp[0])
			sy, zy := float64(u.out.scale[0]), float64(u.out.zp[0])
			worst := 0.0
			for i := range x.I {
				want := math.Max(-128, math.Min(127, math.Round(u.f(sx*(float64(x.I[i])-zx))/sy)+zy))
				d := math.Abs(float64(y.I[i]) - want)
				worst = math.Max(worst, d)
				if d > 1 {
					t.Errorf("x=%d: got %d, float reference %v", x.I[i], y.I[i], want)
				}
			}
			t.Logf("%s: worst difference to the float reference %v step", u.name, worst)
		})
	}
}
