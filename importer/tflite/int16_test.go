package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// qin16 is an int16 activation of TFLite's 16x8 scheme (zero point 0).
func qin16(scale float32, shape ...int32) spec {
	return spec{typ: tg.Int16, shape: shape, scale: []float32{scale}, zp: []int64{0}}
}

// w99999 is an int8 weight constant of scale 0.99999 (per channel): in
// float32 1 - 168 * 2^-24, so the multiplier is m = 2^31 - 21504 with shift
// 0. A 16x8 layer with a 64-bit accumulator requantizes with m rounded to
// 16 bits, and m >= 0x7FFF0000 gives 0x7FFF: x * 32767 / 32768, rounded
// half up. The 32-bit path keeps m: x * (1 - 1.0014e-5), rounded.
func w99999(shape []int32, v ...int64) spec {
	scales := make([]float32, shape[0])
	for i := range scales {
		scales[i] = 0.99999
	}
	if shape[0] == 1 && len(shape) == 4 && shape[3] > 1 { // depthwise: per output channel on the last axis
		scales = make([]float32, shape[3])
		for i := range scales {
			scales[i] = 0.99999
		}
		return qc(tg.Int8, shape, scales, make([]int64, len(scales)), 3, v...)
	}
	return qc(tg.Int8, shape, scales, make([]int64, len(scales)), 0, v...)
}

// int16Cases: TFLite's 16x8 kernels, worked by hand.
var int16Cases = []opCase{
	// acc = 300 * 100 = 30000 in 64 bits: (30000 * 32767 + 2^14) >> 15 =
	// 983,026,384 / 32768 = 29999.58 -> 29999.
	{name: "fully_connected_int64_bias", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin16(1, 1, 1), w99999([]int32{1, 1}, 100), qc(tg.Int64, []int32{1}, []float32{0.99999}, []int64{0}, 0, 0)},
		out: qin16(1, 1, 1), feed: [][]float64{{300}}, want: f64(29999)},
	// No bias: TFLite Micro takes the 64-bit path too.
	{name: "fully_connected_no_bias", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin16(1, 1, 1), w99999([]int32{1, 1}, 100), none},
		out: qin16(1, 1, 1), feed: [][]float64{{300}}, want: f64(29999)},
	// An int32 bias keeps the accumulator and the requantization 32-bit:
	// SRDHM(30000, 2^31 - 21504) = round(29999.6996) = 30000.
	{name: "fully_connected_int32_bias", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin16(1, 1, 1), w99999([]int32{1, 1}, 100), qc(tg.Int32, []int32{1}, []float32{0.99999}, []int64{0}, 0, 0)},
		out: qin16(1, 1, 1), feed: [][]float64{{300}}, want: f64(30000)},
	// Conv 1x1 with an int64 bias of 1000: acc 31000, (31000 * 32767 +
	// 2^14) >> 15 = 1,015,793,384 / 32768 = 30999.05 -> 30999 (32-bit: 31000).
	{name: "conv2d_int64_bias", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin16(1, 1, 1, 1, 1), w99999([]int32{1, 1, 1, 1}, 100), qc(tg.Int64, []int32{1}, []float32{0.99999}, []int64{0}, 0, 1000)},
		out: qin16(1, 1, 1, 1, 1), feed: [][]float64{{300}}, want: f64(30999)},
	// Depthwise, no bias: acc +-30000; -30000 * 32767 + 2^14 = -982,993,616,
	// / 32768 = -29998.58, floored -> -29999 (32-bit: -30000).
	{name: "depthwise_no_bias", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin16(1, 1, 1, 1, 2), w99999([]int32{1, 1, 1, 2}, 100, 100), none},
		out: qin16(1, 1, 1, 1, 2), feed: [][]float64{{300, -300}}, want: f64(29999, -29999)},
	// Depthwise over four channels with a multiplier of 1/4 (shift -1: the
	// row form's SMMULR on dsp and mve, session 38), a 1x2 window over two
	// pixels, no bias: m = 2^30 rounds to m16 = 2^14, so y = (acc * 2^14 +
	// 2^15) >> 16, acc / 4 rounded half up. Channel weights (1, 1), (3, -1),
	// (127, 127), (-127, -1) on pixels (1000, -1000, 30000, 3) and (2, 4,
	// -30000, 5): acc 1002 -> 250.5 -> 251; -3004 -> -751; 0 -> 0;
	// -386 -> -96.5 -> -96 (half up, toward +inf).
	{name: "depthwise_rows", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin16(1, 1, 1, 2, 4), qc(tg.Int8, []int32{1, 1, 2, 4}, []float32{0.25, 0.25, 0.25, 0.25}, make([]int64, 4), 3,
			1, 3, 127, -127, 1, -1, 127, -1), none},
		out: qin16(1, 1, 1, 1, 4), feed: [][]float64{{1000, -1000, 30000, 3, 2, 4, -30000, 5}}, want: f64(251, -751, 0, -96)},
	// A fully connected layer with a multiplier of 1/4 and an int64 bias:
	// the 64-bit requantization as SMMULR (session 38), acc / 4 rounded
	// half up. Weights [1, 1] and [-1, -1], bias 0 and 2, on x = [1001, 1]:
	// acc 1002 -> 250.5 -> 251; -1002 + 2 = -1000 -> -250. On x = [-1001,
	// -1]: -1002 -> -250.5 -> -250 (toward +inf); 1004 -> 251.
	{name: "fully_connected_quarter", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin16(1, 1, 2), qc(tg.Int8, []int32{2, 2}, []float32{0.25, 0.25}, []int64{0, 0}, 0, 1, 1, -1, -1),
			qc(tg.Int64, []int32{2}, []float32{0.25, 0.25}, []int64{0, 0}, 0, 0, 2)},
		out: qin16(1, 1, 2), feed: [][]float64{{1001, 1}}, want: f64(251, -250)},
	{name: "fully_connected_quarter_neg", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
		ins: []spec{qin16(1, 1, 2), qc(tg.Int8, []int32{2, 2}, []float32{0.25, 0.25}, []int64{0, 0}, 0, 1, 1, -1, -1),
			qc(tg.Int64, []int32{2}, []float32{0.25, 0.25}, []int64{0, 0}, 0, 0, 2)},
		out: qin16(1, 1, 2), feed: [][]float64{{-1001, -1}}, want: f64(-250, 251)},
	// ADD shifts int16 inputs left by 15 (20 would overflow 32 bits at
	// 30000): a scale 0.5 (multiplier 2^30, shift 0), b scale 0.25 (2^30,
	// -1), out 1 (2^-15: 2^30, -14). 30000 << 15 = 983,040,000 -> SRDHM
	// 491,520,000; 4 << 15 -> 65,536 -> /2 = 32,768; the sum 491,552,768 ->
	// SRDHM 245,776,384 -> / 2^14 = 15001. Likewise -15000 - 32 = -15032.
	{name: "add", code: tg.OpAdd, opts: tg.ActOptions(tg.OptAdd, tg.ActNone), ins: []spec{qin16(0.5, 2), qin16(0.25, 2)}, out: qin16(1, 2),
		feed: [][]float64{{30000, -30000}, {4, -128}}, want: f64(15001, -15032)},
	// TRANSPOSE_CONV is 64-bit whatever the bias (TFLite Micro's 16x8
	// kernel): one tap, 300 * 100 with an int32-free int64 bias of 0 gives
	// 29999 as the FC above, not the 32-bit path's 30000 (review finding).
	{name: "transpose_conv", code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Valid), tg.I32(1, 1), tg.I32(2, 1), tg.I8(3, tg.ActNone)}},
		ins:  []spec{i32c([]int32{4}, 1, 1, 1, 1), w99999([]int32{1, 1, 1, 1}, 100), qin16(1, 1, 1, 1, 1), qc(tg.Int64, []int32{1}, []float32{0.99999}, []int64{0}, 0, 0)},
		out:  qin16(1, 1, 1, 1, 1), feed: [][]float64{{300}}, want: f64(29999)},
	// SOFTMAX over real [0, 1, 2, 3] (scale 1/1024): e^k / 31.1929 =
	// 0.032059, 0.087144, 0.236883, 0.643914, times 32768 = 1050.5, 2855.6,
	// 7762.2, 21099.8; TFLite's tables land within a few steps (its own
	// test allows 7).
	{name: "softmax", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}},
		ins: []spec{qin16(1.0/1024, 1, 4)}, out: qin16(1.0/32768, 1, 4), feed: [][]float64{{0, 1024, 2048, 3072}},
		want: f64(1050.5, 2855.6, 7762.2, 21099.8), tol: 7},
}

func TestInt16x8Ops(t *testing.T) {
	for _, c := range int16Cases {
		t.Run(c.name, c.run)
	}
}

// TFLite's 16x8 activations are symmetric: an int16 tensor with a zero
// point is refused with its name (TFLite Micro's int16 convolutions would
// ignore it); so are an int16 depthwise convolution with an int32 bias
// (TFLite Micro reads it as int64) and an int16 batch matmul with an int8
// operand (TFLite Micro takes one type).
func TestInt16x8Refusals(t *testing.T) {
	zp := qin16(1, 1, 1)
	zp.zp = []int64{3}
	for _, c := range []struct {
		oc   opCase
		want string
	}{
		{opCase{name: "fc_zero_point", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
			ins: []spec{zp, w99999([]int32{1, 1}, 100), none}, out: qin16(1, 1, 1)}, `int16 tensor "in0" has zero point 3`},
		{opCase{name: "add_zero_point", code: tg.OpAdd, opts: tg.ActOptions(tg.OptAdd, tg.ActNone),
			ins: []spec{qin16(1, 1), qin16(1, 1)}, out: func() spec { s := qin16(1, 1); s.zp = []int64{-2}; return s }()}, `int16 tensor "out" has zero point -2`},
		{opCase{name: "depthwise_int32_bias", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
			ins: []spec{qin16(1, 1, 1, 1, 2), w99999([]int32{1, 1, 1, 2}, 100, 100), qc(tg.Int32, []int32{2}, []float32{1, 1}, []int64{0, 0}, 0, 0, 0)},
			out: qin16(1, 1, 1, 1, 2)}, `reads its bias as int64`},
		{opCase{name: "softmax_scale", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}},
			ins: []spec{qin16(1.0/1024, 1, 4)}, out: qin16(1.0/256, 1, 4)}, `has scale 0.00390625: TFLite's wants 1/32768`},
		{opCase{name: "transpose_conv_int32_bias", code: tg.OpTransposeConv,
			opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Valid), tg.I32(1, 1), tg.I32(2, 1), tg.I8(3, tg.ActNone)}},
			ins:  []spec{i32c([]int32{4}, 1, 1, 1, 1), w99999([]int32{1, 1, 1, 1}, 100), qin16(1, 1, 1, 1, 1), qc(tg.Int32, []int32{1}, []float32{1}, []int64{0}, 0, 0)},
			out:  qin16(1, 1, 1, 1, 1)}, `reads its bias as int64`},
		// A multiplier of 2^16 (output scale 1/65536): TFLite's 64-bit
		// requantization takes shifts below 8 (review finding: the rounding
		// shift went negative).
		{opCase{name: "fc_big_multiplier", code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
			ins: []spec{qin16(1, 1, 4), qc(tg.Int8, []int32{1, 4}, []float32{1}, []int64{0}, 0, 1, 1, 1, 1), none}, out: qin16(1.0/65536, 1, 1)},
			`takes less than 2^7`},
		// More than 65537 values: the 32-bit sum of exponentials overflows.
		{opCase{name: "softmax_deep", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}},
			ins: []spec{qin16(1.0/1024, 1, 70000)}, out: qin16(1.0/32768, 1, 70000)}, `over 70000 values`},
		// input scale * beta of 8: a difference of 65535 steps leaves 32 bits.
		{opCase{name: "softmax_wide_input", code: tg.OpSoftmax, opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 8)}},
			ins: []spec{qin16(1, 1, 4)}, out: qin16(1.0/32768, 1, 4)}, `past 32 bits`},
		// int16 BATCH_MATMUL runs since session 36 (TestInt16BatchMatMul36);
		// TFLite Micro takes both operands of one type.
		{opCase{name: "batch_matmul_mixed", code: tg.OpBatchMatMul, opts: &tg.Options{Type: tg.OptBatchMatMul},
			ins: []spec{qin16(1, 1, 2, 2), qin(1, 0, 1, 2, 2)}, out: qin16(1, 1, 2, 2)}, `int16 BATCH_MATMUL needs int16 operands and output`},
	} {
		t.Run(c.oc.name, func(t *testing.T) { c.oc.mustRefuse(t, c.want) })
	}
}

// mustRefuse wants c's model refused, at import or when the interpreter
// runs it on zeros, with an error that holds want.
func (c opCase) mustRefuse(t *testing.T, want string) {
	t.Helper()
	g, err := tflite.Decode(c.name, c.model().Bytes())
	if err == nil {
		feeds := map[string]*graph.Data{}
		for _, name := range g.Inputs {
			feeds[name] = graph.NewData(g.Tensors[name].DType, g.Tensors[name].Shape)
		}
		_, err = interp.Run(g, feeds)
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error with %q", err, want)
	}
}
