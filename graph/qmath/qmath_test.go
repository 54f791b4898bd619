package qmath

import (
	"math"
	"testing"
)

func TestQuantizeMultiplier(t *testing.T) {
	for _, c := range []struct {
		m     float64
		mult  int32
		shift int
	}{
		{0, 0, 0},
		{0.5, 1 << 30, 0},
		{1.0, 1 << 30, 1},
		{0.75, 1610612736, 0},         // round(0.75 * 2^31)
		{0.125, 1 << 30, -2},          // 0.5 * 2^-2
		{3.0, 1610612736, 2},          // 0.75 * 2^2
		{1e-12, 0, 0},                 // shift below -31 flushes to zero
		{1 - 1.0/(1<<40), 1 << 30, 1}, // rounds up to 2^31: renormalized
		{0.1, 1717986918, -3},         // 0.8 * 2^-3; round(0.8 * 2^31)
	} {
		m, s := QuantizeMultiplier(c.m)
		if m != c.mult || s != c.shift {
			t.Errorf("QuantizeMultiplier(%g) = (%d, %d), want (%d, %d)", c.m, m, s, c.mult, c.shift)
		}
	}
}

func TestSaturatingRoundingDoublingHighMul(t *testing.T) {
	for _, c := range []struct{ a, b, want int32 }{
		{math.MinInt32, math.MinInt32, math.MaxInt32}, // the one overflow
		{1 << 30, 1 << 30, 1 << 29},
		{3, 1 << 30, 2},   // 1.5 -> 2
		{-3, 1 << 30, -1}, // -1.5 -> -1 (the nudge rounds half up)
		{5, 1 << 30, 3},
		{-5, 1 << 30, -2},
		{-6, 1 << 30, -3},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32 - 1},
	} {
		if got := SaturatingRoundingDoublingHighMul(c.a, c.b); got != c.want {
			t.Errorf("SRDHM(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestRoundingDivideByPOT(t *testing.T) {
	for _, c := range []struct {
		x    int32
		e    int
		want int32
	}{
		{5, 1, 3}, {-5, 1, -3}, // ties away from zero
		{7, 2, 2}, {-7, 2, -2},
		{6, 2, 2}, {-6, 2, -2},
		{5, 2, 1}, {-5, 2, -1},
		{0, 5, 0}, {123, 0, 123},
		{math.MaxInt32, 31, 1}, {math.MinInt32, 31, -1},
	} {
		if got := RoundingDivideByPOT(c.x, c.e); got != c.want {
			t.Errorf("RoundingDivideByPOT(%d, %d) = %d, want %d", c.x, c.e, got, c.want)
		}
	}
}

func TestMultiplyByQuantizedMultiplier(t *testing.T) {
	for _, c := range []struct {
		x, m int32
		s    int
		want int32
	}{
		{16, 1 << 30, 0, 8},
		{12, 1 << 30, 1, 12},
		{3, 1 << 30, -2, 1},  // 3/8: SRDHM gives 2 (1.5), /4 = 0.5 -> 1 (double rounding)
		{-3, 1 << 30, -2, 0}, // -3/8: SRDHM gives -1, /4 -> 0
		{100, 1610612736, 2, 300},
		{1 << 29, 1 << 30, 3, 0}, // x << 3 wraps to 0 in int32, as in C on two's complement
	} {
		if got := MultiplyByQuantizedMultiplier(c.x, c.m, c.s); got != c.want {
			t.Errorf("MBQM(%d, %d, %d) = %d, want %d", c.x, c.m, c.s, got, c.want)
		}
	}
}

func TestSaturatingRoundingMultiplyByPOT(t *testing.T) {
	if got := SaturatingRoundingMultiplyByPOT(1<<29, 2); got != math.MaxInt32 {
		t.Errorf("saturation: %d", got)
	}
	if got := SaturatingRoundingMultiplyByPOT(-(1 << 29), 2); got != math.MinInt32 {
		t.Errorf("negative saturation: %d", got)
	}
	if got := SaturatingRoundingMultiplyByPOT(3, 2); got != 12 {
		t.Errorf("3<<2 = %d", got)
	}
	if got := SaturatingRoundingMultiplyByPOT(6, -2); got != 2 {
		t.Errorf("6/4 = %d", got)
	}
}

func TestRadiusAndSoftmaxScaling(t *testing.T) {
	if r := CalculateInputRadius(5, 23); r != 248 { // floor(31 * 2^26 / 2^23)
		t.Errorf("radius(5, 23) = %d, want 248", r)
	}
	if r := CalculateInputRadius(4, 24); r != 120 { // floor(15 * 2^27 / 2^24)
		t.Errorf("radius(4, 24) = %d, want 120", r)
	}
	// beta 1, scale 0.1: 0.1 * 2^26 = 0.8 * 2^23.
	if m, s := PreprocessSoftmaxScaling(1, 0.1, 5); m != 1717986918 || s != 23 {
		t.Errorf("PreprocessSoftmaxScaling = (%d, %d), want (1717986918, 23)", m, s)
	}
	if m := DownScaleInt32ToInt16Multiplier(1 << 30); m != 16384 {
		t.Errorf("DownScale(2^30) = %d", m)
	}
	if m := DownScaleInt32ToInt16Multiplier(math.MaxInt32); m != math.MaxInt16 {
		t.Errorf("DownScale(max) = %d", m)
	}
}

func TestActivationRange(t *testing.T) {
	for _, c := range []struct {
		act    string
		scale  float32
		zp     int32
		lo, hi int32
	}{
		{"none", 0.1, 5, -128, 127},
		{"relu", 0.1, 5, 5, 127},
		{"relu6", 0.05, -3, -3, 117},              // 6 / 0.05 = 120
		{"relu_n1_to_1", 1.0 / 128, 0, -128, 127}, // -1 -> -128, 1 -> 128 clamps
		{"relu", 0.1, -200, -128, 127},            // clamp to the dtype
	} {
		lo, hi := ActivationRange(c.act, c.scale, c.zp, -128, 127)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s scale %g zp %d: [%d, %d], want [%d, %d]", c.act, c.scale, c.zp, lo, hi, c.lo, c.hi)
		}
	}
}

// The fixed-point transcendental functions agree with float64 maths to the
// accuracy gemmlowp documents (a few ulp of Q0.31 after its polynomial).
func TestFixedPointFunctions(t *testing.T) {
	const one31 = float64(1 << 31)
	if got := ExpOnNegativeValues(0, 5); got != math.MaxInt32 {
		t.Errorf("exp(0) = %d", got)
	}
	// exp(-1) = exp(-1/4) (polynomial) * exp(-1/4) * exp(-1/2) (barrel
	// constants): within the polynomial's ~2.5e-7 of exp(-1) * 2^31 = 790015084.
	if got := ExpOnNegativeValues(-(1 << 26), 5); math.Abs(float64(got)-790015084) > 600 {
		t.Errorf("exp(-1) raw = %d, want 790015084 within 600", got)
	}
	worst := 0.0
	for i := 0; i <= 2000; i++ {
		x := -float64(i) / 100 // [-20, 0]
		raw := int32(math.Round(x * (1 << 26)))
		got := float64(ExpOnNegativeValues(raw, 5)) / one31
		worst = math.Max(worst, math.Abs(got-math.Exp(float64(raw)/(1<<26))))
	}
	if worst > 3e-7 {
		t.Errorf("exp_on_negative_values: worst error %g", worst)
	}
	for _, f := range []struct {
		name string
		fx   func(int32, int) int32
		ref  func(float64) float64
	}{{"logistic", Logistic, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }}, {"tanh", Tanh, math.Tanh}} {
		worst := 0.0
		for i := -1500; i <= 1500; i++ {
			x := float64(i) / 100 // [-15, 15] in Q4.27
			raw := int32(math.Round(x * (1 << 27)))
			got := float64(f.fx(raw, 4)) / one31
			worst = math.Max(worst, math.Abs(got-f.ref(float64(raw)/(1<<27))))
		}
		if worst > 1e-6 {
			t.Errorf("%s: worst error %g", f.name, worst)
		}
	}
	if Logistic(0, 4) != 1<<30 || Tanh(0, 4) != 0 {
		t.Errorf("logistic(0) / tanh(0) are not exactly 1/2 / 0")
	}
	// 1/4.0 and 1/3.0 in Q12.19.
	r, bits := GetReciprocal(4<<19, 12)
	if v := float64(r) / one31 / math.Exp2(float64(bits)); math.Abs(v-0.25) > 1e-8 {
		t.Errorf("1/4 = %g (raw %d, bits %d)", v, r, bits)
	}
	r, bits = GetReciprocal(3<<19, 12)
	if v := float64(r) / one31 / math.Exp2(float64(bits)); math.Abs(v-1.0/3) > 1e-8 {
		t.Errorf("1/3 = %g (raw %d, bits %d)", v, r, bits)
	}
}

// TFLite's 64-bit overload, worked by hand: the multiplier is rounded to 16
// bits first, so 1/3 (m = round(2/3 * 2^31) = 1431655765, shift -1) scales by
// 21845 / 65536, and 3,000,000 gives 999,985 where the 32-bit path gives
// 1,000,000; one rounding, half up, on either sign.
func TestMultiplyByQuantizedMultiplier64(t *testing.T) {
	for _, c := range []struct {
		x     int64
		m     int32
		shift int
		want  int32
	}{
		{3000000, 1431655765, -1, 999985},
		{-3, 1 << 30, 0, -1},                       // -1.5 -> -1
		{-5, 1 << 30, 0, -2},                       // -2.5 -> -2
		{5, 1 << 30, 0, 3},                         // 2.5 -> 3
		{3, 1 << 30, 2, 6},                         // 3 * 0.5 * 4
		{1 << 20, 0x7FFFFFFF, 0, 1048544},          // m16 = 0x7FFF: 32 * 32767 + 0.5, floored
		{1 << 40, 1 << 30, -10, 1 << 29},           // past 32 bits: 2^40 * 2^-11
		{-(1 << 40) - 1, 1 << 30, -10, -(1 << 29)}, // -2^29 - 2^-11 rounds up to -2^29
	} {
		if got := MultiplyByQuantizedMultiplier64(c.x, c.m, c.shift); got != c.want {
			t.Errorf("MultiplyByQuantizedMultiplier64(%d, %d, %d) = %d, want %d", c.x, c.m, c.shift, got, c.want)
		}
	}
	if got := MultiplyByQuantizedMultiplier(3000000, 1431655765, -1); got != 1000000 {
		t.Errorf("the 32-bit path gives %d, want 1000000", got)
	}
}

// QuantizeFloat, worked by hand: ties go to even (ONNX) or away from zero
// (TFLite), the quotient is a float32 one, NaN is the zero point, and the
// clamp is to the range given after the zero point is added.
func TestQuantizeFloat(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		x, s   float32
		z      int32
		lo, hi int64
		even   bool
		want   int64
		why    string
	}{
		{2.5, 1, 0, -128, 127, true, 2, "tie to even"},
		{2.5, 1, 0, -128, 127, false, 3, "tie away from zero"},
		{-2.5, 1, 0, -128, 127, true, -2, "negative tie to even"},
		{-2.5, 1, 0, -128, 127, false, -3, "negative tie away"},
		{3.5, 1, 1, -128, 127, true, 5, "zero point after rounding: 4 + 1"},
		{0.17, 0.02, 0, -128, 127, true, 8, "float32 quotient 8.5 ties to 8 (float64's 8.500000119 gives 9)"},
		{1000, 1, 5, -128, 127, false, 127, "clamped high"},
		{-1000, 1, 5, -128, 127, false, -128, "clamped low"},
		{-1000, 1, 5, 0, 255, false, 0, "uint8 low"},
		{nan, 0.5, -7, -128, 127, true, -7, "NaN is the zero point"},
		{0.25, 0.5, 0, 0, 255, true, 0, "0.5 ties to 0"},
		{0.75, 0.5, 0, 0, 255, true, 2, "1.5 ties to 2"},
	} {
		if got := QuantizeFloat(c.x, c.s, c.z, c.lo, c.hi, c.even); got != c.want {
			t.Errorf("%s: QuantizeFloat(%v, %v, %d, %d, %d, %v) = %d, want %d", c.why, c.x, c.s, c.z, c.lo, c.hi, c.even, got, c.want)
		}
	}
}
