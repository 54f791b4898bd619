package tflite_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph/qmath"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// int8 ADD_N and CUMSUM as TFLite Micro computes them (kernels/add_n.cc,
// kernels/cumsum.cc): the values less the zero point, times 2^19, summed in
// int32 from the stray start −z_x·2^19, rescaled by 2·s_x/(2^20·s_y). The
// expected outputs are the stored values TFLite Micro's reference code gives
// (a C++ program built from reference/add_n.h and reference/cumsum.h, run on
// these inputs; 0 mismatches against graph/interp over 10,000 random cases).

// tflmQuant is TFLite Micro's test helpers' ScaleFromMinMax<int8_t> and
// ZeroPointFromMinMax<int8_t> for a range [−r, r]: scale (2r)/255 in
// float32, zero point −128 + roundf(r/scale).
func tflmQuant(r float32) (float32, int64) {
	s := (r - -r) / float32(255)
	return s, -128 + int64(math.Round(float64(r/s)))
}

// tflmQin is an int8 activation quantized as the test helpers quantize
// [−r, r].
func tflmQin(r float32, shape ...int32) spec {
	s, z := tflmQuant(r)
	return qin(s, z, shape...)
}

func cumsumOpts(exclusive, reverse bool) *tg.Options {
	return &tg.Options{Type: mathOptCumsum, Fields: []tg.Field{tg.Bool(0, exclusive), tg.Bool(1, reverse)}}
}

func cumsumCase(name string, x, y spec, axis int64, exclusive, reverse bool, feed []float64, want ...float64) opCase {
	return opCase{name: name, code: mathOpCumsum, opts: cumsumOpts(exclusive, reverse),
		ins: []spec{x, i32c([]int32{1}, axis)}, out: y, feed: [][]float64{feed}, want: want}
}

// addNCumsumTFLMCases are kernels/add_n_test.cc's and kernels/cumsum_test.cc's
// int8 tests: their float inputs quantized by the test helpers (the stored
// values below), the outputs TFLite Micro's stored values (within the
// tests' tolerance of two steps of the expected floats, the stray term
// included).
var addNCumsumTFLMCases = func() []opCase {
	x := []float64{5, 10, 15, 20, 25, 29, 34, 39} // 1..8 quantized at [−26, 26]
	cs := []opCase{
		// Int8AddNOpAddMultipleTensors: [−3, 3], {−2, .2, .7, .8} + {.1, .2, .3, .5} + {.5, .1, .1, .2}.
		{name: "tflm_addn_multiple", code: mathOpAddN, ins: []spec{tflmQin(3, 1, 2, 2, 1), tflmQin(3, 1, 2, 2, 1), tflmQin(3, 1, 2, 2, 1)}, out: tflmQin(3, 1, 2, 2, 1),
			feed: [][]float64{{-85, 9, 30, 34}, {4, 9, 13, 21}, {21, 4, 4, 9}}, want: f64(-60, 22, 47, 64)},
		cumsumCase("tflm_cumsum_simple", tflmQin(26, 2, 4), tflmQin(26, 2, 4), 1, false, false, x, 5, 15, 30, 50, 25, 54, 88, 127),
		cumsumCase("tflm_cumsum_axis0", tflmQin(12, 2, 4), tflmQin(12, 2, 4), 0, false, false,
			[]float64{11, 21, 32, 43, 53, 64, 74, 85}, 11, 21, 32, 43, 64, 85, 106, 127),
		cumsumCase("tflm_cumsum_1d", tflmQin(36, 8), tflmQin(36, 8), 0, false, false,
			[]float64{3, 6, 10, 13, 17, 20, 24, 27}, 4, 11, 22, 36, 54, 75, 100, 127),
		cumsumCase("tflm_cumsum_reverse", tflmQin(26, 2, 4), tflmQin(26, 2, 4), 1, false, true, x, 50, 45, 35, 20, 127, 102, 73, 39),
		cumsumCase("tflm_cumsum_exclusive", tflmQin(18, 2, 4), tflmQin(18, 2, 4), 1, true, false,
			[]float64{6, 13, 20, 27, 34, 41, 49, 56}, 0, 7, 21, 42, 0, 35, 77, 127),
		cumsumCase("tflm_cumsum_reverse_exclusive", tflmQin(21, 2, 4), tflmQin(21, 2, 4), -1, true, true,
			[]float64{5, 11, 17, 23, 29, 35, 42, 48}, 54, 42, 24, 0, 127, 92, 49, 0),
	}
	return cs
}()

// addNCumsumHandCases, worked by hand. At s_x = s_y and z_x = z_y = z the
// rescalings are exact: an output is the sum s = −z + Σ(q − z) plus z, so
// Σ(q − z), where the real sum would be Σ(q − z) + z (the stray −z). On
// x = [[11 12 13] [20 10 0]] at scale ½ and z = 10 (q − z: 1 2 3 / 10 0 −10):
//   - axis 1: 1 3 6 / 10 10 0;
//   - exclusive: the start, 0, then 1 3 / 0 10 10;
//   - reverse: 6 5 3 / 0 −10 −10;
//   - axis 0: 1 2 3 / 11 2 −7;
//   - axis −1 exclusive and reverse: 5 3 0 / −10 −10 0.
//
// At s_x = ½, s_y = 1, z = 0, an output is s/2 rounded half away from zero:
// the sums 1 3 0 −1 of 1 2 −3 −1 give 1 2 0 −1. Sums past 127 clamp.
// ADD_N: three inputs at ½ and z = 10, 11 20 −128 + 12 10 127 + 13 0 127:
// Σ(q − 10) = 6 0 96. Sixteen inputs of −128 at z = 127: s = −127 − 16·255
// = −4207, and s·2^19 leaves int32: TFLite Micro's sum wraps to
// (−4207 + 8192)·2^19, which at s_y = 64·s_x gives round(3985/64) = 62.
var addNCumsumHandCases = func() []opCase {
	x := []float64{11, 12, 13, 20, 10, 0}
	q10 := qin(0.5, 10, 2, 3)
	sixteen := make([]spec, 16)
	feed16 := make([][]float64, 16)
	for i := range sixteen {
		sixteen[i], feed16[i] = qin(0.5, 127, 1), []float64{-128}
	}
	return []opCase{
		cumsumCase("hand_cumsum_axis1", q10, q10, 1, false, false, x, 1, 3, 6, 10, 10, 0),
		cumsumCase("hand_cumsum_exclusive", q10, q10, 1, true, false, x, 0, 1, 3, 0, 10, 10),
		cumsumCase("hand_cumsum_reverse", q10, q10, 1, false, true, x, 6, 5, 3, 0, -10, -10),
		cumsumCase("hand_cumsum_axis0", q10, q10, 0, false, false, x, 1, 2, 3, 11, 2, -7),
		cumsumCase("hand_cumsum_exclusive_reverse", q10, q10, -1, true, true, x, 5, 3, 0, -10, -10, 0),
		cumsumCase("hand_cumsum_halves", qin(0.5, 0, 4), qin(1, 0, 4), 0, false, false, []float64{1, 2, -3, -1}, 1, 2, 0, -1),
		cumsumCase("hand_cumsum_rank3_axis1", qin(1, 0, 2, 2, 2), qin(1, 0, 2, 2, 2), 1, false, false,
			[]float64{1, 2, 3, 4, 5, 6, 7, 8}, 1, 2, 4, 6, 5, 6, 12, 14),
		cumsumCase("hand_cumsum_clamp", qin(1, 0, 2), qin(1, 0, 2), 0, false, false, []float64{100, 100}, 100, 127),
		{name: "hand_addn_stray", code: mathOpAddN, ins: []spec{qin(0.5, 10, 3), qin(0.5, 10, 3), qin(0.5, 10, 3)}, out: qin(0.5, 10, 3),
			feed: [][]float64{{11, 20, -128}, {12, 10, 127}, {13, 0, 127}}, want: f64(6, 0, 96)},
		{name: "hand_addn_halves", code: mathOpAddN, ins: []spec{qin(0.5, 0, 2), qin(0.5, 0, 2)}, out: qin(1, 0, 2),
			feed: [][]float64{{1, 3}, {2, -4}}, want: f64(2, -1)},
		{name: "hand_addn_wraps", code: mathOpAddN, ins: sixteen, out: qin(32, 0, 1), feed: feed16, want: f64(62)},
	}
}()

// TestAddNCumsumInt8: the cases above through the interpreter, and through
// the generated C on the host (ASan, UBSan) and, without -short, on the
// Cortex-M4 under QEMU.
func TestAddNCumsumInt8(t *testing.T) {
	for _, c := range []struct{ r, bits float32 }{{3, math.Float32frombits(1019265217)}, {26, math.Float32frombits(1045483729)}, {21, math.Float32frombits(1042852009)}} {
		if s, _ := tflmQuant(c.r); s != c.bits {
			t.Fatalf("scale of [−%g, %g]: %g, TFLite Micro's test helpers %g", c.r, c.r, s, c.bits)
		}
	}
	if _, z := tflmQuant(21); z != -1 {
		t.Fatalf("zero point of [−21, 21]: %d, TFLite Micro's test helpers −1", z)
	}
	opCasesOnBoards(t, "addn_cumsum_", append(append([]opCase{}, addNCumsumTFLMCases...), addNCumsumHandCases...))
}

// TestAddNCumsumInt8Refusals: what TFLite Micro's Prepare (and CUMSUM's
// Eval) refuse is refused, with the reason.
func TestAddNCumsumInt8Refusals(t *testing.T) {
	for _, c := range []struct {
		oc   opCase
		want string
	}{
		{opCase{code: mathOpAddN, ins: []spec{qin(0.5, 0, 2), qin(0.5, 1, 2)}, out: qin(0.5, 0, 2)}, "quantized otherwise than input 0"},
		{opCase{code: mathOpAddN, ins: []spec{qin(0.5, 0, 2), qin(0.5, 0, 3)}, out: qin(0.5, 0, 2)}, "does not broadcast"},
		{opCase{code: mathOpAddN, ins: []spec{qin(0.5, 0, 2), qin(0.5, 0, 2)}, out: mathI32(2)}, "needs every input and the output int8"},
		{opCase{code: mathOpAddN, ins: []spec{qin(1, 0, 2), qin(1, 0, 2)}, out: qin(1.0/(1<<19), 0, 2)}, "must lie in (0, 1)"},
		{opCase{code: mathOpAddN, ins: []spec{qin(0.5, 0, 2)}, out: qin(0.5, 0, 2)}, "at least 2 inputs"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), i32c([]int32{1}, 0)}, out: qin(1.0/(1<<19), 0, 2)}, "must lie in (0, 1)"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), i32c([]int32{1}, 1)}, out: qin(1, 0, 2)}, "out of range"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), qc(tg.Int64, []int32{1}, nil, nil, 0, 0)}, out: qin(1, 0, 2)}, "needs int32"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), i32c([]int32{2}, 0, 0)}, out: qin(1, 0, 2)}, "axis has 2 values"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), i32c([]int32{1}, 0)}, out: mathI32(2)}, "needs the input's type"},
		{opCase{code: mathOpCumsum, opts: cumsumOpts(false, false), ins: []spec{qin(1, 0, 2), i32c([]int32{1}, 0)}, out: qin(1, 0, 3)}, "differs from input"},
	} {
		mustErr(t, "refuse", c.oc.model().Bytes(), c.want)
	}
}

// TestSumInt8Start: the stray term is the rescaled −zero point, and the
// one-half input rescaling is exact (tir's C relies on it).
func TestSumInt8Start(t *testing.T) {
	for _, z := range []int32{-128, -1, 0, 10, 127} {
		p, err := qmath.SumInt8ParamsFor("CUMSUM", 0.37, z, 0.5, 3)
		if err != nil {
			t.Fatal(err)
		}
		if p.InMult != 1<<30 || p.InShift != 0 {
			t.Fatalf("input rescaling %d·2^%d, want 2^30·2^0", p.InMult, p.InShift)
		}
		if got := p.Start(); got != -z<<19 {
			t.Errorf("z = %d: start %d, want %d", z, got, -z<<19)
		}
		for q := int32(-128); q <= 127; q++ {
			if got := p.Scaled(q); got != (q-z)<<19 {
				t.Fatalf("z = %d, q = %d: scaled %d, want %d", z, q, got, (q-z)<<19)
			}
		}
	}
	if _, err := qmath.SumInt8ParamsFor("ADD_N", 1, 0, 1.0/(1<<19), 0); err == nil || !strings.Contains(err.Error(), "Prepare refuses") {
		t.Errorf("multiplier 1 accepted (%v)", err)
	}
}
