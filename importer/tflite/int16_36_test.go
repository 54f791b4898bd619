package tflite_test

import (
	"math"
	"strings"
	"testing"

	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Session 36: TFLite Micro's int16 BATCH_MATMUL, SQUARED_DIFFERENCE and
// PRELU, which mcugen refused. Each test runs its cases in the interpreter
// and through the generated C on the host (sanitizers) and the M4 under
// QEMU. The TFLite Micro unit tests' values are quantized as its
// test helpers do (FloatToQuantizedType: round(v / scale) in float,
// clamped); their expected integers are those of a program built on
// TFLite Micro's reference kernels (agreeing with its tests' goldens within
// their tolerances), which also agreed with the interpreter on 3,000
// random cases of each op.

// tflmQ quantizes v as TFLite Micro's tests do.
func tflmQ(scale float32, lo, hi float64, v ...float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Max(lo, math.Min(hi, math.Round(float64(x/scale))))
	}
	return out
}

func q16(scale float32, shape ...int32) spec {
	return spec{typ: tg.Int16, shape: shape, scale: []float32{scale}, zp: []int64{0}}
}

func bmmOpts(adjX, adjY bool) *tg.Options {
	return &tg.Options{Type: tg.OptBatchMatMul, Fields: []tg.Field{tg.Bool(0, adjX), tg.Bool(1, adjY)}}
}

// TestInt16BatchMatMul36: reference_ops::BatchMatMul<int16_t, int64_t>.
//   - TFLite Micro's QuantizedBatchMatMulOpTestSimpleTestQuantizedInt16:
//     [2, 10] x [10, 3] at 10/32767, output scale 1: 23 23 23 57 57 57;
//   - scales 1 (multiplier 1: Q31 2^30, shift 1, rounded to 16 bits 2^14,
//     x·2^14 >> 14 is x), adj_x and adj_y, B broadcast over A's batch of
//     2: A^T = [[1 2 3] [4 5 6]], [[-1 0 1] [2 -2 2]] stored [k, m],
//     B = [[1 0] [0 1] [1 1]] stored [n, k]: 4 5 10 11 / 0 1 4 0;
//   - a 64-bit accumulator: [30000 -30000 20000 12345] x columns
//     [30000 30000 25000 1] and [32767 -32768 32767 32767] is 500012345 and
//     3025898615 (past int32), scaled by 2^-8·2^-8/4 = 2^-18 (2^30 shift
//     -17; 2^14 >> 32 in 64 bits): 1907.40 → 1907, 11542.89 → 11543.
func TestInt16BatchMatMul36(t *testing.T) {
	s := float32(10.0) / 32767
	lhs := tflmQ(s, -32768, 32767, 1, 2, 3, 4, 5, 6, 7, 8, -9, -10, 1, 2, 3, 4, 5, 6, 7, -8, 9, -10)
	rhs := tflmQ(s, -32768, 32767, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 10, 10, 10)
	cases := []opCase{
		{name: "tflm_int16", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(s, 2, 10), q16(s, 10, 3)}, out: q16(1, 2, 3),
			feed: [][]float64{lhs, rhs}, want: f64(23, 23, 23, 57, 57, 57)},
		{name: "adj_broadcast", code: tg.OpBatchMatMul, opts: bmmOpts(true, true), ins: []spec{q16(1, 2, 3, 2), q16(1, 2, 3)}, out: q16(1, 2, 2, 2),
			feed: [][]float64{{1, 4, 2, 5, 3, 6, -1, 2, 0, -2, 1, 2}, {1, 0, 1, 0, 1, 1}}, want: f64(4, 5, 10, 11, 0, 1, 4, 0)},
		{name: "wide_accumulator", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(1.0/256, 1, 4), q16(1.0/256, 4, 2)}, out: q16(4, 1, 2),
			feed: [][]float64{{30000, -30000, 20000, 12345}, {30000, 32767, 30000, -32768, 25000, 32767, 1, 32767}}, want: f64(1907, 11543)},
	}
	opCasesOnBoards(t, "bmm16_", cases)
}

// TestInt16SquaredDifference36: TFLite Micro's int16 branch (zero points
// 0, no left shift; PrepareQuantized's multipliers in double).
//   - TFLite Micro's three quantized tests, int16 halves (narrow-range
//     symmetric scales r/32767: ChooseQuantizationParams): same shape
//     (0.49 0 0.09 0.09 at 0.5/32767), various shapes (9 0 0.09 0.16 4.41
//     4 at 9/32767; ranks 1 and 4), a scalar broadcast (0.09 0.01 0.16
//     0.49 0.0001 1 at 1/32767);
//   - hand-worked at equal input scales 2^-10 and output 2^-18: each input
//     is halved (Q31 2^30, shift 0: SaturatingRoundingDoublingHighMul
//     rounds a half up) and the output multiplier is 1, so y = (⌈a/2⌋ -
//     ⌈b/2⌋)²: 7, -2 → (4 + 1)² = 25; 3, 2 → (2 - 1)² = 1 (not the real
//     0.25); 362, 0 → 181² = 32761; 364, 0 → 33124, saturated 32767.
func TestInt16SquaredDifference36(t *testing.T) {
	const sqd = mathOpSquaredDifference
	sym := func(r float32) float32 { return float32(2 * float64(r) / 65534) }
	qa := func(r float32, v ...float32) []float64 { return tflmQ(sym(r), -32768, 32767, v...) }
	a1, b1 := []float32{-0.2, 0.2, -1.2, 0.8}, []float32{0.5, 0.2, -1.5, 0.5}
	a2, b2 := []float32{-2.0, 0.2, 0.3, 0.8, 1.1, -2.0}, []float32{1.0, 0.2, 0.6, 0.4, -1.0, -0.0}
	a3, b3 := []float32{-0.2, 0.2, 0.5, 0.8, 0.11, 1.1}, []float32{0.1}
	cases := []opCase{
		{name: "tflm_same_shape", code: sqd, ins: []spec{q16(sym(1.2), 1, 2, 2, 1), q16(sym(1.5), 1, 2, 2, 1)}, out: q16(sym(0.5), 1, 2, 2, 1),
			feed: [][]float64{qa(1.2, a1...), qa(1.5, b1...)}, want: f64(32115, 0, 5896, 5899)},
	}
	for _, shape := range [][]int32{{6}, {2, 3}, {2, 1, 3}, {1, 3, 1, 2}} {
		cases = append(cases, opCase{name: "tflm_various_" + strings.Repeat("r", len(shape)), code: sqd,
			ins: []spec{q16(sym(2), shape...), q16(sym(1), shape...)}, out: q16(sym(9), shape...),
			feed: [][]float64{qa(2, a2...), qa(1, b2...)}, want: f64(32766, 0, 328, 583, 16056, 14562)})
		cases = append(cases, opCase{name: "tflm_broadcast_" + strings.Repeat("r", len(shape)), code: sqd,
			ins: []spec{q16(sym(1.1), shape...), q16(sym(1), 1)}, out: q16(sym(1), shape...),
			feed: [][]float64{qa(1.1, a3...), qa(1, b3...)}, want: f64(2950, 327, 5242, 16056, 3, 32767)})
	}
	cases = append(cases, opCase{name: "hand_halves", code: sqd, ins: []spec{q16(1.0/1024, 4), q16(1.0/1024, 4)}, out: q16(1.0/(1<<18), 4),
		feed: [][]float64{{7, 3, 362, 364}, {-2, 2, 0, 0}}, want: f64(25, 1, 32761, 32767)})
	// The goldens, dequantized, within TFLite Micro's tolerances.
	for _, c := range cases[:len(cases)-1] {
		golden, tol := f64(0.49, 0, 0.09, 0.09), 6.0/32768
		switch {
		case strings.HasPrefix(c.name, "tflm_various"):
			golden, tol = f64(9, 0, 0.09, 0.16, 4.41, 4), 18.0/32768
		case strings.HasPrefix(c.name, "tflm_broadcast"):
			golden, tol = f64(0.09, 0.01, 0.16, 0.49, 0.0001, 1), 2.0/32768
		}
		for i, w := range c.want {
			if d := w * float64(c.out.scale[0]); math.Abs(d-golden[i]) > tol {
				t.Errorf("%s [%d]: %v dequantizes to %v, TFLite Micro's golden %v", c.name, i, w, d, golden[i])
			}
		}
	}
	opCasesOnBoards(t, "sqd16_", cases)
}

// TestInt16Prelu36: TFLite Micro's int16 PRELU (int16 input and output,
// int8 alpha, CalculatePreluParams' double multipliers).
//   - TFLite Micro's QuantizedInt16PreluActivationsOpTest: input at
//     2/65535, alpha (0, 0.5, -0.5) at 2/255 (0, 64, -64), output at
//     2/65535: 0 0 0 / 16384 ×3 / 0 -16448 16448 / 0 -4112 4112 (the
//     goldens 0.5, -0.5, 0.5, -0.125, 0.125 within 2/256);
//   - hand-worked with zero points: x at 0.5 (zx 100), alpha 4 at 0.25
//     (za -4: 2.0), y at 0.5 (zy -50). x >= 100: multiplier 1, y is
//     x less 150; below: (x - 100)·8 at 0.25 is 2(x - 100), exact, plus
//     zy: 150 → 0, 100 → -50, 99 → -52, 60 → -130, -32768 → -65786
//     saturated -32768, 32767 → 32617.
func TestInt16Prelu36(t *testing.T) {
	sx, sa := float32(2.0/65535.0), float32(2.0/255.0)
	x := tflmQ(sx, -32768, 32767, 0, 0, 0, 0.5, 0.5, 0.5, -1, -1, -1, -0.25, -0.25, -0.25)
	alpha := tflmQ(sa, -128, 127, 0, 0.5, -0.5)
	al := qc(tg.Int8, []int32{1, 1, 3}, []float32{sa}, []int64{0}, 0, int64(alpha[0]), int64(alpha[1]), int64(alpha[2]))
	zq := func(typ int8, scale float32, zp int64, shape ...int32) spec {
		return spec{typ: typ, shape: shape, scale: []float32{scale}, zp: []int64{zp}}
	}
	cases := []opCase{
		{name: "tflm_int16", code: mathOpPrelu, ins: []spec{q16(sx, 2, 2, 3), al}, out: q16(sx, 2, 2, 3),
			feed: [][]float64{x}, want: f64(0, 0, 0, 16384, 16384, 16384, 0, -16448, 16448, 0, -4112, 4112)},
		{name: "zero_points", code: mathOpPrelu, ins: []spec{zq(tg.Int16, 0.5, 100, 6), zq(tg.Int8, 0.25, -4, 1)}, out: zq(tg.Int16, 0.5, -50, 6),
			feed: [][]float64{{150, 100, 99, 60, -32768, 32767}, {4}}, want: f64(0, -50, -52, -130, -32768, 32617)},
	}
	golden := f64(0, 0, 0, 0.5, 0.5, 0.5, 0, -0.5, 0.5, 0, -0.125, 0.125)
	for i, w := range cases[0].want {
		if d := w * float64(sx); math.Abs(d-golden[i]) > 2.0/256 {
			t.Errorf("[%d]: %v dequantizes to %v, TFLite Micro's golden %v", i, w, d, golden[i])
		}
	}
	opCasesOnBoards(t, "prelu16_", cases)
}

// TestInt16Refusals36: what TFLite Micro's kernels refuse, or would read
// otherwise, is refused with the reason.
func TestInt16Refusals36(t *testing.T) {
	zp := func(typ int8, z int64, shape ...int32) spec {
		return spec{typ: typ, shape: shape, scale: []float32{0.5}, zp: []int64{z}}
	}
	for _, c := range []struct {
		oc   opCase
		want string
	}{
		{opCase{name: "bmm_mixed", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(1, 2, 2), qin(1, 0, 2, 2)}, out: q16(1, 2, 2)},
			`int16 BATCH_MATMUL needs int16 operands and output`},
		{opCase{name: "bmm_zero_point", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(1, 2, 2), zp(tg.Int16, 3, 2, 2)}, out: q16(1, 2, 2)},
			`has zero point 3: TFLite Micro's int16 BATCH_MATMUL wants 0`},
		{opCase{name: "bmm_rank6", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(1, 1, 1, 1, 1, 2, 2), q16(1, 2, 2)}, out: q16(1, 1, 1, 1, 1, 2, 2)},
			`rank 6: TFLite Micro takes 2 to 5`},
		{opCase{name: "bmm_big_multiplier", code: tg.OpBatchMatMul, opts: bmmOpts(false, false), ins: []spec{q16(1, 2, 2), q16(1, 2, 2)}, out: q16(1.0/65536, 2, 2)},
			`takes less than 2^7`},
		{opCase{name: "sqd_zero_point", code: mathOpSquaredDifference, ins: []spec{q16(1, 2), q16(1, 2)}, out: zp(tg.Int16, -1, 2)},
			`zero point -1: TFLite Micro's int16 SQUARED_DIFFERENCE wants 0`},
		{opCase{name: "sqd_mixed", code: mathOpSquaredDifference, ins: []spec{q16(1, 2), qin(1, 0, 2)}, out: q16(1, 2)},
			`int16 SQUARED_DIFFERENCE needs per-tensor quantized int16 inputs and output ("in1" is not)`},
		{opCase{name: "prelu_int16_alpha", code: mathOpPrelu, ins: []spec{q16(1, 2), q16(1, 1)}, out: q16(1, 2)},
			`int16 PRELU needs an int8 alpha`},
		{opCase{name: "prelu_int8_output", code: mathOpPrelu, ins: []spec{q16(1, 2), qin(1, 0, 1)}, out: qin(1, 0, 2)},
			`int16 PRELU needs int16 input and output`},
	} {
		t.Run(c.oc.name, func(t *testing.T) { c.oc.mustRefuse(t, c.want) })
	}
}
