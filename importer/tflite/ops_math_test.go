package tflite_test

import (
	"math"
	"testing"

	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Operator codes and options types of ops_math.go (the generator names
// only the older operators).
const (
	mathOpL2Norm            = 11
	mathOpL2Pool            = 12
	mathOpLRN               = 13
	mathOpResizeBilinear    = 23
	mathOpDiv               = 42
	mathOpLogSoftmax        = 50
	mathOpPrelu             = 54
	mathOpLess              = 58
	mathOpGreater           = 61
	mathOpGreaterEqual      = 62
	mathOpLessEqual         = 63
	mathOpSelect            = 64
	mathOpEqual             = 71
	mathOpNotEqual          = 72
	mathOpPow               = 78
	mathOpLogicalOr         = 84
	mathOpLogicalAnd        = 86
	mathOpLogicalNot        = 87
	mathOpFloorDiv          = 90
	mathOpFloorMod          = 95
	mathOpSquaredDifference = 99
	mathOpAddN              = 106
	mathOpSelectV2          = 123
	mathOpCumsum            = 128
	mathOpGelu              = 150
	mathOpRelu0To1          = 152
	mathOpSign              = 158

	mathOptL2Norm         = 12
	mathOptLRN            = 13
	mathOptResizeBilinear = 15
	mathOptDiv            = 29
	mathOptCumsum         = 102
	mathOptGelu           = 116

	mathBool int8 = 6 // TFLite's BOOL tensor type
)

func mathB(shape ...int32) spec   { return spec{typ: mathBool, shape: shape} }
func mathI32(shape ...int32) spec { return spec{typ: tg.Int32, shape: shape} }

// gelu and geluTanh are the two GELU formulas, in float64.
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func lrnOpts(radius int, bias, alpha, beta float32) *tg.Options {
	return &tg.Options{Type: mathOptLRN, Fields: []tg.Field{tg.I32(0, radius), tg.F32(1, bias), tg.F32(2, alpha), tg.F32(3, beta)}}
}

func bilinearOpts(align, half bool) *tg.Options {
	return &tg.Options{Type: mathOptResizeBilinear, Fields: []tg.Field{tg.Bool(2, align), tg.Bool(3, half)}}
}

// mathFloatCases and mathIntCases: the element-wise, comparison and
// normalisation operators of ops_math.go, with hand-worked results.
// Cases on int32 and bool tensors are in mathFloatCases (written as
// op_float_*), int8 ones in mathIntCases.
var mathFloatCases = []opCase{
	// [1,-6,3,8] / [2,-4] broadcast = [0.5, 1.5, 1.5, -2]; RELU clamps -2.
	{name: "div_relu", code: mathOpDiv, opts: &tg.Options{Type: mathOptDiv, Fields: []tg.Field{tg.I8(0, tg.ActRelu)}},
		ins: []spec{fin(1, 2, 2), fin(2)}, out: fin(1, 2, 2),
		feed: [][]float64{{1, -6, 3, 8}, {2, -4}}, want: f64(0.5, 1.5, 1.5, 0), tol: 1e-6},
	// int32 DIV truncates toward zero: 7/2 = 3, -7/2 = -3, 7/-2 = -3, -7/-2 = 3.
	{name: "div_int32", code: mathOpDiv, opts: &tg.Options{Type: mathOptDiv},
		ins: []spec{mathI32(4), mathI32(4)}, out: mathI32(4),
		feed: [][]float64{{7, -7, 7, -7}, {2, 2, -2, -2}}, want: f64(3, -3, -3, 3)},
	// (x - 3)^2 for x = 1..4.
	{name: "squared_difference", code: mathOpSquaredDifference, ins: []spec{fin(2, 2), fc([]int32{1}, 3)}, out: fin(2, 2),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(4, 1, 0, 1), tol: 1e-6},
	{name: "squared_difference_int32", code: mathOpSquaredDifference, ins: []spec{mathI32(2), mathI32(2)}, out: mathI32(2),
		feed: [][]float64{{5, -3}, {2, 2}}, want: f64(9, 25)},
	// 2^3, 9^0.5, 4^-1.
	{name: "pow", code: mathOpPow, ins: []spec{fin(3), fin(3)}, out: fin(3),
		feed: [][]float64{{2, 9, 4}, {3, 0.5, -1}}, want: f64(8, 3, 0.25), tol: 1e-6},
	// floor(3.5) = 3, floor(-3.5) = -4, floor(-3.5) = -4, floor(3.5) = 3, 6/3 = 2;
	// and against float32 0.1 (0.100000001490116...): 1 / 0.1f is 9.99999985
	// in double, so TFLite gives 9 (a float32 quotient is 10.0); 0.5 / 0.1f
	// gives 4, 2 / 0.1f 19, -1 / 0.1f -10.
	{name: "floor_div", code: mathOpFloorDiv, ins: []spec{fin(9), fin(9)}, out: fin(9),
		feed: [][]float64{{7, -7, 7, -7, 6, 1, 0.5, 2, -1}, {2, 2, -2, -2, 3, 0.1, 0.1, 0.1, 0.1}}, want: f64(3, -4, -4, 3, 2, 9, 4, 19, -10)},
	// The same in int32, and -6/3 = -2 exactly (no adjustment).
	{name: "floor_div_int32", code: mathOpFloorDiv, ins: []spec{mathI32(6), mathI32(6)}, out: mathI32(6),
		feed: [][]float64{{7, -7, 7, -7, 6, -6}, {2, 2, -2, -2, 3, 3}}, want: f64(3, -4, -4, 3, 2, -2)},
	// The remainder takes the divisor's sign: 7 mod 2 = 1, -7 mod 2 = 1,
	// 7 mod -2 = -1, -7 mod -2 = -1, 5.5 mod 2 = 1.5, -6 mod 3 = 0, -0.5 mod 2 = 1.5.
	{name: "floor_mod", code: mathOpFloorMod, ins: []spec{fin(7), fin(7)}, out: fin(7),
		feed: [][]float64{{7, -7, 7, -7, 5.5, -6, -0.5}, {2, 2, -2, -2, 2, 3, 2}}, want: f64(1, 1, -1, -1, 1.5, 0, 1.5)},
	{name: "floor_mod_int32", code: mathOpFloorMod, ins: []spec{mathI32(5), mathI32(5)}, out: mathI32(5),
		feed: [][]float64{{7, -7, 7, -7, 6}, {3, 3, -3, -3, -3}}, want: f64(1, 2, -2, -1, 0)},
	{name: "add_n", code: mathOpAddN, ins: []spec{fin(2), fin(2), fin(2)}, out: fin(2),
		feed: [][]float64{{1, 2}, {10, 20}, {100, 200}}, want: f64(111, 222), tol: 1e-5},
	{name: "add_n_int32", code: mathOpAddN, ins: []spec{mathI32(2), mathI32(2), mathI32(2), mathI32(2)}, out: mathI32(2),
		feed: [][]float64{{1, 2}, {10, 20}, {100, 200}, {-1000, 0}}, want: f64(-889, 222)},
	{name: "gelu", code: mathOpGelu, opts: &tg.Options{Type: mathOptGelu}, ins: []spec{fin(5)}, out: fin(5),
		feed: [][]float64{{0, 1, -1, 2, -3}}, want: f64(0, gelu(1), gelu(-1), gelu(2), gelu(-3)), tol: 1e-6},
	{name: "gelu_approximate", code: mathOpGelu, opts: &tg.Options{Type: mathOptGelu, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{fin(5)}, out: fin(5),
		feed: [][]float64{{0, 1, -1, 2, -3}}, want: f64(0, geluTanh(1), geluTanh(-1), geluTanh(2), geluTanh(-3)), tol: 1e-6},
	// log softmax([1, 1+ln 3]) = [ln 1/4, ln 3/4]; of [0, 0]: ln 1/2 twice.
	{name: "log_softmax", code: mathOpLogSoftmax, ins: []spec{fin(2, 2)}, out: fin(2, 2),
		feed: [][]float64{{1, 1 + math.Log(3), 0, 0}}, want: f64(math.Log(0.25), math.Log(0.75), -math.Ln2, -math.Ln2), tol: 1e-6},
	// [3,4]/5; [0,0] / max(0, 1e-6) = 0; [1e-7, 0] / 1e-6 (the norm is below epsilon) = [0.1, 0].
	{name: "l2_normalization", code: mathOpL2Norm, opts: &tg.Options{Type: mathOptL2Norm}, ins: []spec{fin(3, 2)}, out: fin(3, 2),
		feed: [][]float64{{3, 4, 0, 0, 1e-7, 0}}, want: f64(0.6, 0.8, 0, 0, 0.1, 0), tol: 1e-6},
	// alpha [0.5, 0.25] along the last axis: -2*0.5, -4*0.25, 3, -8*0.25.
	{name: "prelu", code: mathOpPrelu, ins: []spec{fin(1, 2, 2), fc([]int32{2}, 0.5, 0.25)}, out: fin(1, 2, 2),
		feed: [][]float64{{-2, -4, 3, -8}}, want: f64(-1, -1, 3, -2), tol: 1e-6},
	// SAME 2x2 stride 1 over [[3,4],[1,7]]: sqrt of the mean square over the
	// window's elements inside the input: sqrt(75/4), sqrt(65/2), sqrt(50/2),
	// 7 clamped to 6 by RELU6.
	{name: "l2_pool_relu6", code: mathOpL2Pool, opts: tg.Pool2DOptions(tg.Same, 1, 1, 2, 2, tg.ActRelu6),
		ins: []spec{fin(1, 2, 2, 1)}, out: fin(1, 2, 2, 1),
		feed: [][]float64{{3, 4, 1, 7}}, want: f64(math.Sqrt(75.0/4), math.Sqrt(65.0/2), 5, 6), tol: 1e-5},
	{name: "l2_pool_valid", code: mathOpL2Pool, opts: tg.Pool2DOptions(tg.Valid, 2, 2, 2, 2, tg.ActNone),
		ins: []spec{fin(1, 2, 2, 1)}, out: fin(1, 1, 1, 1),
		feed: [][]float64{{1, 1, 1, 1}}, want: f64(1), tol: 1e-6},
	{name: "cumsum", code: mathOpCumsum, opts: &tg.Options{Type: mathOptCumsum}, ins: []spec{fin(2, 3), i32c([]int32{}, 1)}, out: fin(2, 3),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(1, 3, 6, 4, 9, 15), tol: 1e-6},
	// Exclusive and reverse along axis -1: [2+3, 3, 0], [5+6, 6, 0].
	{name: "cumsum_exclusive_reverse", code: mathOpCumsum, opts: &tg.Options{Type: mathOptCumsum, Fields: []tg.Field{tg.Bool(0, true), tg.Bool(1, true)}},
		ins: []spec{fin(2, 3), i32c([]int32{}, -1)}, out: fin(2, 3),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(5, 3, 0, 11, 6, 0), tol: 1e-6},
	{name: "cumsum_int32", code: mathOpCumsum, opts: &tg.Options{Type: mathOptCumsum}, ins: []spec{mathI32(2, 3), i32c([]int32{}, 0)}, out: mathI32(2, 3),
		feed: [][]float64{{1, 2, 3, 4, 5, 6}}, want: f64(1, 2, 3, 5, 7, 9)},
	{name: "sign", code: mathOpSign, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-2, 0, 3.5}}, want: f64(-1, 0, 1)},
	{name: "sign_int32", code: mathOpSign, ins: []spec{mathI32(3)}, out: mathI32(3), feed: [][]float64{{-5, 0, 7}}, want: f64(-1, 0, 1)},
	{name: "relu_0_to_1", code: mathOpRelu0To1, ins: []spec{fin(3)}, out: fin(3), feed: [][]float64{{-1, 0.25, 3}}, want: f64(0, 0.25, 1)},
	// Radius 20 covers every channel: sum of squares 4, (9 + 4·4)^-0.5 = 0.2.
	{name: "lrn_wide", code: mathOpLRN, opts: lrnOpts(20, 9, 4, 0.5), ins: []spec{fin(1, 1, 1, 6)}, out: fin(1, 1, 1, 6),
		feed: [][]float64{{-1.1, .6, .7, 1.2, -.7, .1}}, want: f64(-.22, .12, .14, .24, -.14, .02), tol: 1e-6},
	// Radius 1 over [1,2,3], bias 1, alpha 1, beta 1: windows {1,2}, {1,2,3},
	// {2,3}: 1/(1+5), 2/(1+14), 3/(1+13).
	{name: "lrn_radius1", code: mathOpLRN, opts: lrnOpts(1, 1, 1, 1), ins: []spec{fin(1, 1, 2, 3)}, out: fin(1, 1, 2, 3),
		feed: [][]float64{{1, 2, 3, 0, 0, 2}}, want: f64(1.0/6, 2.0/15, 3.0/14, 0, 0, 2.0/5), tol: 1e-6},
	// [0, 4] to width 4. Asymmetric: x/2 = 0, .5, 1, 1.5 (clamped) -> 0, 2, 4, 4.
	{name: "resize_bilinear", code: mathOpResizeBilinear, opts: bilinearOpts(false, false),
		ins: []spec{fin(1, 1, 2, 1), i32c([]int32{2}, 1, 4)}, out: fin(1, 1, 4, 1),
		feed: [][]float64{{0, 4}}, want: f64(0, 2, 4, 4), tol: 1e-6},
	// Half-pixel: (x+.5)/2 - .5 = -.25 (clamped to 0), .25, .75, 1.25 (clamped) -> 0, 1, 3, 4.
	{name: "resize_bilinear_half_pixel", code: mathOpResizeBilinear, opts: bilinearOpts(false, true),
		ins: []spec{fin(1, 1, 2, 1), i32c([]int32{2}, 1, 4)}, out: fin(1, 1, 4, 1),
		feed: [][]float64{{0, 4}}, want: f64(0, 1, 3, 4), tol: 1e-6},
	// Align corners, 2x2 -> 3x3: coordinates 0, .5, 1 on both axes.
	{name: "resize_bilinear_align_corners", code: mathOpResizeBilinear, opts: bilinearOpts(true, false),
		ins: []spec{fin(1, 2, 2, 1), i32c([]int32{2}, 3, 3)}, out: fin(1, 3, 3, 1),
		feed: [][]float64{{1, 2, 3, 4}}, want: f64(1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4), tol: 1e-6},
	// [1,2,3] against 2.
	{name: "less", code: mathOpLess, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(1, 0, 0)},
	{name: "less_equal", code: mathOpLessEqual, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(1, 1, 0)},
	{name: "greater", code: mathOpGreater, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(0, 0, 1)},
	{name: "greater_equal", code: mathOpGreaterEqual, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(0, 1, 1)},
	{name: "equal", code: mathOpEqual, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(0, 1, 0)},
	{name: "not_equal", code: mathOpNotEqual, ins: []spec{fin(3), fin(1)}, out: mathB(3), feed: [][]float64{{1, 2, 3}, {2}}, want: f64(1, 0, 1)},
	{name: "greater_int32", code: mathOpGreater, ins: []spec{mathI32(2, 2), mathI32(2)}, out: mathB(2, 2),
		feed: [][]float64{{1, -5, 3, 7}, {2, -6}}, want: f64(0, 1, 1, 1)},
	{name: "equal_bool", code: mathOpEqual, ins: []spec{mathB(4), mathB(4)}, out: mathB(4),
		feed: [][]float64{{1, 1, 0, 0}, {1, 0, 1, 0}}, want: f64(1, 0, 0, 1)},
	{name: "logical_and", code: mathOpLogicalAnd, ins: []spec{mathB(4), mathB(4)}, out: mathB(4),
		feed: [][]float64{{1, 1, 0, 0}, {1, 0, 1, 0}}, want: f64(1, 0, 0, 0)},
	{name: "logical_or", code: mathOpLogicalOr, ins: []spec{mathB(2, 2), mathB(2)}, out: mathB(2, 2),
		feed: [][]float64{{1, 1, 0, 0}, {1, 0}}, want: f64(1, 1, 1, 0)},
	{name: "logical_not", code: mathOpLogicalNot, ins: []spec{mathB(2)}, out: mathB(2), feed: [][]float64{{1, 0}}, want: f64(0, 1)},
	// cond [2,1] broadcast over x [2,2] and y [2]: row 0 from x, row 1 from y.
	{name: "select_v2", code: mathOpSelectV2, ins: []spec{mathB(2, 1), fin(2, 2), fin(2)}, out: fin(2, 2),
		feed: [][]float64{{1, 0}, {1, 2, 3, 4}, {10, 20}}, want: f64(1, 2, 10, 20)},
	// SELECT with a condition per row of x: row 0 from y, row 1 from x.
	{name: "select_rows", code: mathOpSelect, ins: []spec{mathB(2), fin(2, 2), fin(2, 2)}, out: fin(2, 2),
		feed: [][]float64{{0, 1}, {1, 2, 3, 4}, {5, 6, 7, 8}}, want: f64(5, 6, 3, 4)},
	{name: "select_int32", code: mathOpSelect, ins: []spec{mathB(3), mathI32(3), mathI32(3)}, out: mathI32(3),
		feed: [][]float64{{1, 0, 1}, {1, 2, 3}, {-1, -2, -3}}, want: f64(1, -2, 3)},
}

var mathIntCases = []opCase{
	// int8 RSQRT: TFLite Micro's elementwise_test.cc RsqrtInt8 inputs and
	// quantization (input scale 142/255, zero point -15; output 1/255,
	// -128), the outputs computed by TFLite Micro's kernel code (the test
	// compares floats with a tolerance). Value 2 (stored -13) is 2^20/√2 =
	// 741454 before the output rescale.
	{name: "rsqrt", code: tg.OpRsqrt,
		ins: []spec{qin(142.0/255, -15, 8)}, out: qin(1.0/255, -128, 8),
		feed: [][]float64{{12, 68, 125, 127, -13, 16, 73, 127}}, want: f64(-62, -90, -99, -99, 114, -67, -92, -99)},
	// int8 LOG_SOFTMAX: TFLite Micro's log_softmax_test.cc
	// (QuantizedActivationsOpTestLogSoftmaxInt8): input scale 20/255, zero
	// point -1; its literal expected output.
	{name: "log_softmax", code: mathOpLogSoftmax,
		ins: []spec{qin(20.0/255, -1, 2, 4)}, out: qin(16.0/256, 127, 2, 4),
		feed: [][]float64{{-1, -78, 25, 50, 37, -27, 126, 12}}, want: f64(61, -36, 93, 125, 15, -65, 127, -16)},
	// int8 SQUARED_DIFFERENCE: TFLite Micro's squared_difference_test.cc
	// same-shape and broadcast-free cases, their integer inputs and
	// quantization, the outputs computed by TFLite Micro's own kernel code
	// (the test compares dequantized floats with a tolerance).
	{name: "squared_difference", code: mathOpSquaredDifference,
		ins: []spec{qin(0.00784313772, 25, 1, 2, 2, 1), qin(0.00784313772, 63, 1, 2, 2, 1)}, out: qin(0.00196078443, -128, 1, 2, 2, 1),
		feed: [][]float64{{0, 50, -128, 127}, {127, 88, -128, 127}}, want: f64(121, -128, -83, -83)},
	{name: "squared_difference_scales", code: mathOpSquaredDifference,
		ins: []spec{qin(0.0145098045, 10, 1, 2, 3, 1), qin(0.00784313772, -1, 1, 2, 3, 1)}, out: qin(0.0352941193, -128, 1, 2, 3, 1),
		feed: [][]float64{{-128, 24, 31, 65, 86, -128}, {126, 24, 76, 50, -128, -1}}, want: f64(127, -128, -125, -124, -3, -14)},
	// int8 DIV: TFLite Micro's div_test.cc (every tensor on [-1, 1]: scale
	// 2/255, zero point -1), its inputs, the outputs its kernel computes
	// (the test compares floats with a tolerance); with RELU_N1_TO_1 the
	// clamp is [-128, 126] (1/scale rounds to 127 in float32).
	{name: "div", code: mathOpDiv,
		ins: []spec{qin(0.00784313772, -1, 1, 2, 2, 1), qin(0.00784313772, -1, 1, 2, 2, 1)}, out: qin(0.00784313772, -1, 1, 2, 2, 1),
		feed: [][]float64{{-103, -26, 37, 88}, {-103, 50, 101, 126}}, want: f64(126, -63, 46, 88)},
	{name: "div_relu_n1_to_1", code: mathOpDiv, opts: &tg.Options{Type: mathOptDiv, Fields: []tg.Field{tg.I8(0, tg.ActReluN1To1)}},
		ins: []spec{qin(0.00784313772, -1, 1, 2, 2, 1), qin(0.00784313772, -1, 1, 2, 2, 1)}, out: qin(0.00784313772, -1, 1, 2, 2, 1),
		feed: [][]float64{{-103, 24, 114, 88}, {76, 50, 114, -103}}, want: f64(-128, 61, 126, -112)},
	// Broadcast divisor, hand-worked: x real 0.5·q1, z real 0.25·q2, the
	// output 0.125 per step, so the stored quotient is 16·q1/q2 (zero
	// points 0). Row 1 (q2 = 12): 12 -> 16, -12 -> -16, 2 -> 2.67 -> 3,
	// 14 -> 18.67 -> 19. Row 2 (q2 = -4): -12 -> 48, 12 -> -48, 2 -> -8,
	// 14 -> -56. Row 3 (q2 = 0) saturates by the dividend's sign.
	{name: "div_broadcast", code: mathOpDiv,
		ins: []spec{qin(0.5, 0, 3, 4), qin(0.25, 0, 3, 1)}, out: qin(0.125, 0, 3, 4),
		feed: [][]float64{{12, -12, 2, 14, -12, 12, 2, 14, 5, -5, 0, 127}, {12, -4, 0}},
		want: f64(16, -16, 3, 19, 48, -48, -8, -56, 127, -128, 0, 127)},
	// int8 L2_NORMALIZATION, hand-worked: input zero point 2, output 1/128.
	// Rows less the zero point: (3, 4) / 5 -> 0.6, 0.8 -> 76.8, 102.4 ->
	// 77, 102; (-5, 12) / 13 -> -49.2, 118.2 -> -49, 118; (0, 0, 1, 0) ->
	// 128, clamped to 127; a row of zeros stays 0 (the kernel's multiplier
	// for a sum <= 1 is INT32_MAX).
	{name: "l2_norm", code: mathOpL2Norm,
		ins: []spec{qin(0.1, 2, 4, 4)}, out: qin(1.0/128, 0, 4, 4),
		feed: [][]float64{{5, 6, 2, 2, -3, 14, 2, 2, 2, 2, 3, 2, 2, 2, 2, 2}},
		want: f64(77, 102, 0, 0, -49, 118, 0, 0, 0, 0, 127, 0, 0, 0, 0, 0)},
	// int8 GELU: TFLite's table (LUTPopulate in float32), input 0.05 and 0,
	// output 0.025 and -20; the entries TFLite's own LUTPopulate computes
	// for these inputs, the exact (erf) form and the tanh approximation,
	// which differ at -42 (-22, -21) and 42 (62, 63: y/s_out = 82.4994 with
	// erf).
	{name: "gelu", code: mathOpGelu, opts: &tg.Options{Type: mathOptGelu},
		ins: []spec{qin(0.05, 0, 18)}, out: qin(0.025, -20, 18),
		feed: [][]float64{{-128, -60, -40, -30, -20, -10, -1, 0, 1, 10, 20, 30, 40, 60, 100, 127, -42, 42}},
		want: f64(-20, -20, -22, -24, -26, -26, -21, -20, -19, -6, 14, 36, 58, 100, 127, 127, -22, 62)},
	{name: "gelu_tanh", code: mathOpGelu, opts: &tg.Options{Type: mathOptGelu, Fields: []tg.Field{tg.Bool(0, true)}},
		ins: []spec{qin(0.05, 0, 18)}, out: qin(0.025, -20, 18),
		feed: [][]float64{{-128, -60, -40, -30, -20, -10, -1, 0, 1, 10, 20, 30, 40, 60, 100, 127, -42, 42}},
		want: f64(-20, -20, -22, -24, -26, -26, -21, -20, -19, -6, 14, 36, 58, 100, 127, 127, -21, 63)},
	// int8 ELU, hand-worked on TFLite Micro's table (input 0.05 and 0,
	// output 0.025 and -20): q 0 -> 0 -> -20; 10 -> 0.5 -> 20 -> 0; -1 ->
	// e^-0.05 - 1 = -0.0488 -> -1.95 -> -22; -20 -> e^-1 - 1 = -0.632 ->
	// -25.3 -> -45; -128 -> -0.9983 -> -39.9 -> -60; 127 -> 254 -> 127.
	{name: "elu", code: tg.OpElu,
		ins: []spec{qin(0.05, 0, 6)}, out: qin(0.025, -20, 6),
		feed: [][]float64{{0, 10, -1, -20, -128, 127}}, want: f64(-20, 0, -22, -45, -60, 127)},
	// TFLite's integer kernel on stored values, 10-bit weights. Asymmetric,
	// width 2 -> 3: scale (2048+1)/3 = 683; output 1 at 683/1024 (weights
	// 341, 683): 10·341 - 20·683 = -10250, /1024 = -10.01 -> -10; output 2
	// at 1366 reads input 1 only.
	{name: "resize_bilinear", code: mathOpResizeBilinear, opts: bilinearOpts(false, false),
		ins: []spec{qin(0.5, 2, 1, 1, 2, 1), i32c([]int32{2}, 1, 3)}, out: qin(0.5, 2, 1, 1, 3, 1),
		feed: [][]float64{{10, -20}}, want: f64(10, -10, -20)},
	// Half-pixel, 2 -> 4: scale 512, positions -256, 256, 768, 1280 (1/1024);
	// 1·768 + 4·256 = 1792 -> 1.75 -> 2, 1·256 + 4·768 -> 3.25 -> 3; and
	// negated, rounding away from zero: -2, -3.
	{name: "resize_bilinear_half_pixel", code: mathOpResizeBilinear, opts: bilinearOpts(false, true),
		ins: []spec{qin(0.5, 0, 1, 2, 2, 1), i32c([]int32{2}, 2, 4)}, out: qin(0.5, 0, 1, 2, 4, 1),
		feed: [][]float64{{1, 4, -1, -4}}, want: f64(1, 2, 3, 4, -1, -2, -3, -4)},
	// Output scale 1/64: 1.0 is 64; in and out share parameters (multiplier 1).
	{name: "relu_0_to_1", code: mathOpRelu0To1, ins: []spec{qin(1.0/64, 0, 4)}, out: qin(1.0/64, 0, 4),
		feed: [][]float64{{-10, 30, 64, 100}}, want: f64(0, 30, 64, 64)},
	// Requantized: in (0.5, -3) -> out (1/128, -128): real [-0.5, 0, 0.5, 2]
	// -> clamp [0, 0, 0.5, 1] -> -128 + 128·[0, 0, .5, 1] = [-128, -128, -64, 0].
	{name: "relu_0_to_1_requantize", code: mathOpRelu0To1, ins: []spec{qin(0.5, -3, 4)}, out: qin(1.0/128, -128, 4),
		feed: [][]float64{{-4, -3, -2, 1}}, want: f64(-128, -128, -64, 0)},
	// Same parameters: the stored values compare as the real ones.
	{name: "less", code: mathOpLess, ins: []spec{qin(0.5, 3, 3), qin(0.5, 3, 3)}, out: mathB(3),
		feed: [][]float64{{1, 5, 3}, {3, 3, 3}}, want: f64(1, 0, 0)},
	{name: "equal", code: mathOpEqual, ins: []spec{qin(0.5, 3, 3), i8c([]int32{1}, 0.5, 3, 5)}, out: mathB(3),
		feed: [][]float64{{1, 5, 3}}, want: f64(0, 1, 0)},
	// TFLite copies the stored values.
	{name: "select_v2", code: mathOpSelectV2, ins: []spec{mathB(3), qin(0.5, 1, 3), qin(0.5, 1, 3)}, out: qin(0.5, 1, 3),
		feed: [][]float64{{1, 0, 1}, {-128, 2, 127}, {9, 8, 7}}, want: f64(-128, 8, 127)},
	// x (0.5, -1), alpha stored [2, 1] at scale 0.25 (real 0.5, 0.25), out (0.25, 3).
	// Multipliers: positive 0.5/0.25 = 2, negative 0.5·0.25/0.25 = 0.5.
	// x=-1: x-z = 0 -> 0 + 3 = 3. x=3: 4·2 = 8 -> 11.
	// x=-5 (alpha 2): -4·2 = -8, ·0.5 -> -4 -> -1.
	// x=-4 (alpha 1): -3·1 = -3, ·0.5 = -1.5, which TFLite's rounding
	// (SRDHM rounds half up) makes -1 -> 2.
	{name: "prelu", code: mathOpPrelu, ins: []spec{qin(0.5, -1, 2, 2), i8c([]int32{2}, 0.25, 0, 2, 1)}, out: qin(0.25, 3, 2, 2),
		feed: [][]float64{{-1, 3, -5, -4}}, want: f64(3, 11, -1, 2)},
}

func TestMathOps(t *testing.T) {
	for _, c := range append(append([]opCase{}, mathFloatCases...), mathIntCases...) {
		t.Run(c.name, c.run)
	}
}

// TestMathRefusals: the operators refuse, with one line naming the reason,
// the types and attributes whose TFLite semantics they do not reproduce.
func TestMathRefusals(t *testing.T) {
	for _, c := range []struct {
		oc   opCase
		want string
	}{
		{opCase{code: mathOpDiv, ins: []spec{qin(0.5, 0, 2), mathI32(2)}, out: qin(0.5, 0, 2)}, "per-tensor quantized int8"},
		{opCase{code: mathOpDiv, ins: []spec{qin(1, 0, 2), qin(1e-4, 0, 2)}, out: qin(1e-4, 0, 2)}, "out of TFLite's int8 DIV's range"},
		{opCase{code: mathOpDiv, opts: &tg.Options{Type: mathOptDiv, Fields: []tg.Field{tg.I8(0, tg.ActRelu)}}, ins: []spec{mathI32(2), mathI32(2)}, out: mathI32(2)}, "int32 DIV with fused activation"},
		{opCase{code: mathOpDiv, ins: []spec{fin(2), fin(3)}, out: fin(3)}, "do not broadcast"},
		{opCase{code: mathOpSquaredDifference, ins: []spec{qin(0.5, 0, 2), mathI32(2)}, out: qin(0.5, 0, 2)}, "int8 SQUARED_DIFFERENCE needs"},
		{opCase{code: mathOpPow, ins: []spec{mathI32(2), mathI32(2)}, out: mathI32(2)}, "float32 only"},
		{opCase{code: mathOpFloorMod, ins: []spec{qin(0.5, 0, 2), qin(0.5, 0, 2)}, out: qin(0.5, 0, 2)}, "raw integers"},
		{opCase{code: mathOpAddN, ins: []spec{fin(2), fin(1)}, out: fin(2)}, "does not broadcast"},
		{opCase{code: mathOpAddN, ins: []spec{qin(0.5, 0, 2), qin(0.25, 0, 2)}, out: qin(0.5, 0, 2)}, "quantized otherwise than input 0"},
		{opCase{code: mathOpGelu, ins: []spec{qin(0.5, 0, 2)}, out: mathI32(2)}, "int8 GELU needs"},
		{opCase{code: mathOpLogSoftmax, ins: []spec{qin(0.5, 0, 2)}, out: qin(0.25, 127, 2)}, "needs 16/256 and 127"},
		{opCase{code: mathOpLogSoftmax, ins: []spec{qin(0.5, 0, 4096)}, out: qin(1.0/16, 127, 4096)}, "at most 4,095"},
		{opCase{code: mathOpL2Norm, ins: []spec{qin(0.5, 0, 2)}, out: qin(1.0/64, 0, 2)}, "needs 1/128 and 0"},
		{opCase{code: mathOpL2Pool, opts: tg.Pool2DOptions(tg.Valid, 1, 1, 1, 1, tg.ActNone), ins: []spec{qin(0.5, 0, 1, 1, 1, 1)}, out: qin(0.5, 0, 1, 1, 1, 1)}, "L2_POOL_2D"},
		{opCase{code: mathOpLRN, opts: lrnOpts(1, 1, 1, 1), ins: []spec{fin(2, 3)}, out: fin(2, 3)}, "not 4-D"},
		{opCase{code: mathOpLRN, opts: lrnOpts(-1, 1, 1, 1), ins: []spec{fin(1, 1, 1, 3)}, out: fin(1, 1, 1, 3)}, "negative"},
		{opCase{code: mathOpResizeBilinear, ins: []spec{qin(0.5, 0, 1, 1, 2, 1), i32c([]int32{2}, 1, 4)}, out: qin(0.25, 0, 1, 1, 4, 1)}, "quantized differently"},
		{opCase{code: mathOpResizeBilinear, opts: bilinearOpts(true, true), ins: []spec{fin(1, 1, 2, 1), i32c([]int32{2}, 1, 4)}, out: fin(1, 1, 4, 1)}, "both set"},
		{opCase{code: mathOpResizeBilinear, ins: []spec{fin(1, 1, 2, 1), i32c([]int32{2}, 1, 3)}, out: fin(1, 1, 4, 1)}, "do not give the output shape"},
		{opCase{code: mathOpResizeBilinear, ins: []spec{fin(1, 1, 2, 1), mathI32(2)}, out: fin(1, 1, 4, 1)}, "must be a constant"},
		{opCase{code: mathOpLess, ins: []spec{qin(0.5, 3, 3), qin(0.25, 3, 3)}, out: mathB(3)}, "different scales or zero points"},
		{opCase{code: mathOpLess, ins: []spec{fin(3), fin(3)}, out: fin(3)}, "want bool"},
		{opCase{code: mathOpLogicalAnd, ins: []spec{fin(2), mathB(2)}, out: mathB(2)}, "logical operators take bool"},
		{opCase{code: mathOpSelectV2, ins: []spec{mathB(3), qin(0.5, 1, 3), qin(0.5, 1, 3)}, out: qin(0.25, 1, 3)}, "share one scale and zero point"},
		{opCase{code: mathOpSelect, ins: []spec{mathB(3), fin(2, 2), fin(2, 2)}, out: fin(2, 2)}, "does not fit"},
		{opCase{code: mathOpSign, ins: []spec{qin(0.5, 0, 2)}, out: qin(0.5, 0, 2)}, "int8 SIGN is not supported"},
		{opCase{code: mathOpCumsum, ins: []spec{fin(2), fin(1)}, out: fin(2)}, "axis"},
		{opCase{code: mathOpRelu0To1, ins: []spec{mathI32(2)}, out: mathI32(2)}, "not supported"},
		{opCase{code: mathOpPrelu, ins: []spec{mathI32(2), mathI32(1)}, out: mathI32(2)}, "not supported"},
	} {
		name := "refuse"
		mustErr(t, name, c.oc.model().Bytes(), c.want)
	}
}
