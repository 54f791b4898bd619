package qmath

import (
	"math"
	"testing"
)

// SatInt truncates toward zero and saturates at the bounds, NaN as 0
// clamped into them: 2^63 (INT64_MAX as a float64) is INT64_MAX, -2^63
// INT64_MIN, and beyond int64 either way the bound (Go's own conversion
// gives amd64's 0x8000... for all of them).
func TestSatInt53b(t *testing.T) {
	for _, c := range []struct {
		v      float64
		lo, hi int64
		want   int64
	}{
		{math.Ldexp(1, 63), math.MinInt64, math.MaxInt64, math.MaxInt64},
		{math.Ldexp(1, 64), math.MinInt64, math.MaxInt64, math.MaxInt64},
		{math.Inf(1), math.MinInt64, math.MaxInt64, math.MaxInt64},
		{-math.Ldexp(1, 63), math.MinInt64, math.MaxInt64, math.MinInt64},
		{-1e300, math.MinInt64, math.MaxInt64, math.MinInt64},
		{math.Inf(-1), -128, 127, -128},
		{math.NaN(), math.MinInt64, math.MaxInt64, 0},
		{math.NaN(), 5, 10, 5},
		{3.9, -128, 127, 3},
		{-3.9, -128, 127, -3},
		{1e10, math.MinInt32, math.MaxInt32, math.MaxInt32},
		{math.Ldexp(1, 62), math.MinInt64, math.MaxInt64, 1 << 62},
	} {
		if got := SatInt(c.v, c.lo, c.hi); got != c.want {
			t.Errorf("SatInt(%g, %d, %d) = %d, want %d", c.v, c.lo, c.hi, got, c.want)
		}
	}
}

// CalculateInputRadius is (2^b − 1) · 2^(31−b) / 2^shift, floored: 15 · 2^27
// (2,013,265,920) for 4 integer bits and shift 0, 15 · 2^24 for shift 3.
// A negative shift (an input scale below about 3.7e-9 for LOGISTIC and
// TANH) puts it beyond int32, where it saturates at INT32_MAX; amd64 gave
// INT32_MIN.
func TestCalculateInputRadiusSaturates53b(t *testing.T) {
	for _, c := range []struct {
		bits, shift int
		want        int32
	}{
		{4, 0, 15 << 27},
		{4, 3, 15 << 24},
		{5, 0, 31 << 26},
		{4, -1, math.MaxInt32}, // 15 · 2^28
		{5, -1, math.MaxInt32}, // 31 · 2^27
		{4, -40, math.MaxInt32},
	} {
		if got := CalculateInputRadius(c.bits, c.shift); got != c.want {
			t.Errorf("CalculateInputRadius(%d, %d) = %d, want %d", c.bits, c.shift, got, c.want)
		}
	}
	// LOGISTIC of input scale 1e-9: x = ±5 steps is ±5e-9, whose sigmoid
	// is 1/2 to 9 digits: 128/256, stored as 128 − 128 = 0 (amd64 gave
	// 127 for every input: x >= INT32_MIN always held).
	p := SigmoidTanhInt8Params(1e-9)
	if p.Radius != math.MaxInt32 {
		t.Errorf("radius %d, want INT32_MAX", p.Radius)
	}
	for _, x := range []int32{-5, 0, 5} {
		if got := p.Sigmoid(x, -128, 127, -128); got != 0 {
			t.Errorf("sigmoid of %d steps of 1e-9: %d, want 0", x, got)
		}
	}
}

// LOG_SOFTMAX's input scale: TFLite needs scale × 2^26 above 1 (its
// PreprocessSoftmaxScaling), which makes the reverse multiplier,
// 1 / (scale × 2^26), below 1: 1.5e-8 is 1.0066 × 2^-26, taken; 1.49e-8 is
// 0.99993 × 2^-26, refused, and every smaller scale with it (at 1e-9 the
// reverse scaling overflowed 32 bits and every output was -128; at 1e-30
// the reverse multiplier was +Inf, converted as the build machine does).
// The parameters of a refused scale are still the same on every machine:
// at 1e-9 the radius, 31 · 2^26 · 2^3, saturates (amd64 gave DiffMin
// INT32_MIN), and at 1e-30 the input multiplier is 0 and the reverse one
// +Inf, QuantizeMultiplier's (2^30, NonFiniteShift).
func TestLogSoftmaxTinyScale53b(t *testing.T) {
	for _, c := range []struct {
		s  float32
		ok bool
	}{
		{20.0 / 255, true}, {2.0 / 255, true}, {1.5e-8, true}, {1.49e-8, false}, {1e-9, false}, {1e-17, false}, {1e-30, false},
	} {
		if got := LogSoftmaxScaleOK(c.s); got != c.ok {
			t.Errorf("LogSoftmaxScaleOK(%g) = %v, want %v", c.s, got, c.ok)
		}
	}
	if p := NewLogSoftmaxParams(1e-9); p.DiffMin != -math.MaxInt32 || p.InLeftShift != -3 {
		t.Errorf("scale 1e-9: %+v, want DiffMin -INT32_MAX and left shift -3", p)
	}
	if p := NewLogSoftmaxParams(1e-30); p.InMult != 0 || p.ReverseShift != NonFiniteShift || p.ReverseMult != 1<<30 {
		t.Errorf("scale 1e-30: %+v", p)
	}
}

// QuantizeMultiplier never converts a non-finite value: ±Inf is ±2^30 with
// shift NonFiniteShift (2^1024), NaN 0 with it, and ShiftFits refuses
// them. Finite values are unchanged: 0.5 is 2^30 · 2^-31 (shift 0), 3 is
// 0.75 · 2^2 (3 · 2^29, shift 2).
func TestQuantizeMultiplierNonFinite53b(t *testing.T) {
	for _, c := range []struct {
		m     float64
		mult  int32
		shift int
	}{
		{math.Inf(1), 1 << 30, NonFiniteShift},
		{math.Inf(-1), -1 << 30, NonFiniteShift},
		{math.NaN(), 0, NonFiniteShift},
		{0.5, 1 << 30, 0},
		{3, 3 << 29, 2},
		{0, 0, 0},
	} {
		if m, s := QuantizeMultiplier(c.m); m != c.mult || s != c.shift {
			t.Errorf("QuantizeMultiplier(%g) = (%d, %d), want (%d, %d)", c.m, m, s, c.mult, c.shift)
		}
	}
	// A per-tensor fully connected layer's scales 1e20 · 1e20 overflow
	// float32 (TFLite's product); / 1e38 it would be 100.
	if r := ProductReal(1e20, 1e20, 1e38); !math.IsInf(r, 1) || ShiftFits(r) {
		t.Errorf("ProductReal(1e20, 1e20, 1e38) = %g", r)
	}
	if _, s := ProductMultiplier(1e20, 1e20, 1e38); s != NonFiniteShift {
		t.Errorf("ProductMultiplier(1e20, 1e20, 1e38): shift %d", s)
	}
	// DIV: s2 · sy = 1e-60 is 0 in float32, 1 / 0 = +Inf.
	if _, s := DivMultiplier(1, 1e-30, 1e-30); s <= DivMaxShift {
		t.Errorf("DivMultiplier(1, 1e-30, 1e-30): shift %d, which DivInt8OK takes", s)
	}
	// SVDF: 1e30 · 1e30 overflows float32.
	if r := SVDFReal(1e30, 1e30, 1); !math.IsInf(r, 1) {
		t.Errorf("SVDFReal(1e30, 1e30, 1) = %g", r)
	}
	// LEAKY_RELU: alpha 1e30 on an input scale of 1e10 overflows float32.
	if p := LeakyReluInt8Params(1e10, 1e30, 1); p.AlphaShift != NonFiniteShift {
		t.Errorf("LeakyReluInt8Params(1e10, 1e30, 1): %+v", p)
	}
}

// HARD_SWISH's reluish multiplier, input scale / 128 / (3/32768), needs a
// left shift of 31 or more from an input scale of about 1.3e7, and is
// +Inf in float32 at 1e37: refused (it applied a shift of 1024 or, on
// amd64, gave multiplier 0).
func TestHardSwishHugeInputScale53b(t *testing.T) {
	if _, err := HardSwishInt8Params(1e37, 0, 1e37, 0); err == nil {
		t.Error("input scale 1e37: no error")
	}
	if _, err := HardSwishInt8Params(2e7, 0, 2e7, 0); err == nil {
		t.Error("input scale 2e7: no error")
	}
	if _, err := HardSwishInt8Params(0.05, 0, 0.05, 0); err != nil {
		t.Errorf("input scale 0.05: %v", err)
	}
}

// LUTPopulateInt8 clamps in float before it converts: an output scale of
// 1e-30 puts f(±1) = ±1 at ±10^30 steps, 127 and −128 (amd64 converted
// 10^30 to INT32_MIN: −128 for both); a NaN entry is the output zero point.
func TestLUTPopulateSaturates53b(t *testing.T) {
	id := func(x float32) float32 { return x }
	lut := LUTPopulateInt8(1, 0, 1e-30, 3, id)
	for _, c := range [][2]int32{{1, 127}, {-1, -128}, {0, 3}, {127, 127}, {-128, -128}} {
		if got := lut(c[0]); got != c[1] {
			t.Errorf("identity, output scale 1e-30: q %d gives %d, want %d", c[0], got, c[1])
		}
	}
	nan := func(x float32) float32 {
		if x > 0 {
			return float32(math.NaN())
		}
		return float32(math.Inf(-1))
	}
	lut = LUTPopulateInt8(0.5, 0, 0.5, -7, nan)
	if got := lut(4); got != -7 {
		t.Errorf("NaN entry: %d, want the zero point -7", got)
	}
	if got := lut(-4); got != -128 {
		t.Errorf("-Inf entry: %d, want -128", got)
	}
	// In range the table is TFLite's: 0.3 / 0.1 = 3 steps (float32 2.9999998
	// rounds to 3), plus 2.
	lut = LUTPopulateInt8(0.1, 0, 0.1, 2, id)
	if got := lut(3); got != 5 {
		t.Errorf("identity at scale 0.1: q 3 gives %d, want 5", got)
	}
}
