// Package qmath is TFLite's integer fixed-point arithmetic, written from the
// published semantics of TFLite's reference kernels and gemmlowp: Q31
// multipliers with a power-of-two shift, the default "double rounding"
// requantization, and the fixed-point exp, reciprocal, logistic and tanh used
// by the int8 softmax, logistic and tanh kernels. The reference interpreter
// and the code generator both use it, so generated C and the interpreter
// agree bit for bit.
//
// Every function reproduces the C++ behaviour exactly, including two's
// complement wrap-around where TFLite relies on it.
package qmath

import (
	"math"
	"math/bits"
)

// Round is TfLiteRound / std::round: round half away from zero.
func Round(x float64) float64 { return math.Round(x) }

// Roundf is roundf on a float32 (half away from zero), as TFLite uses when it
// quantizes a float32 constant.
func Roundf(x float32) float32 { return float32(math.Round(float64(x))) }

// QuantizeFloat is a float-to-integer Quantize of one value: the quotient
// x / s in float32 (as TFLite's and ONNX's reference kernels divide), rounded
// half to even (ONNX's QuantizeLinear) or half away from zero (TFLite's
// AffineQuantize), plus z, clamped to [lo, hi]. NaN gives z.
func QuantizeFloat(x, s float32, z int32, lo, hi int64, halfEven bool) int64 {
	q := float64(x / s)
	if halfEven {
		q = math.RoundToEven(q)
	} else {
		q = math.Round(q)
	}
	if math.IsNaN(q) {
		q = 0
	}
	q = math.Max(float64(lo)-float64(z), math.Min(float64(hi)-float64(z), q))
	return int64(q) + int64(z)
}

// QuantizeMultiplier splits a real multiplier into a Q31 fixed-point
// multiplier in [2^30, 2^31) and a power-of-two exponent, so that
// m ≈ multiplier * 2^(shift-31). It is TFLite's QuantizeMultiplier: frexp,
// then round(q * 2^31) half away from zero, renormalized when the rounding
// reaches 2^31; a shift below -31 flushes to zero.
//
// A multiplier that is not a number (NaN, ±Inf: a product or quotient of
// scales that overflowed float32, or divided by zero) is never converted,
// since Go's float-to-integer conversion of one is the platform's (amd64
// gives 0x8000..., arm64 saturates): ±Inf gives ±2^30 with shift
// NonFiniteShift (±0.5 · 2^1025, past the largest float64), NaN gives 0
// with that shift. Every shift check (ShiftFits, the kernels'
// limits) refuses that shift, and where none runs the result is the same
// on every build machine.
func QuantizeMultiplier(m float64) (multiplier int32, shift int) {
	if m == 0 {
		return 0, 0
	}
	switch {
	case math.IsNaN(m):
		return 0, NonFiniteShift
	case math.IsInf(m, 1):
		return 1 << 30, NonFiniteShift
	case math.IsInf(m, -1):
		return -1 << 30, NonFiniteShift
	}
	q, sh := math.Frexp(m)
	qFixed := int64(math.Round(q * float64(int64(1)<<31)))
	if qFixed == int64(1)<<31 {
		qFixed /= 2
		sh++
	}
	if sh < -31 {
		sh = 0
		qFixed = 0
	}
	return int32(qFixed), sh
}

// NonFiniteShift is the shift QuantizeMultiplier gives a multiplier that
// is NaN or infinite: more than any finite float64's, which no check
// accepts.
const NonFiniteShift = 1025

// SatInt converts v to an integer in [lo, hi] the same way on every build
// machine: truncated toward zero, saturated at lo and hi, NaN as 0 (then
// clamped into [lo, hi]). Go's own conversion of a NaN, an infinity or a
// value beyond the target type is the platform's.
func SatInt(v float64, lo, hi int64) int64 {
	if math.IsNaN(v) {
		v = 0
	}
	// float64(lo) and float64(hi) are exact for every integer dtype's
	// bounds but MaxInt64, which rounds up to 2^63: v >= 2^63 saturates,
	// and anything below it converts exactly.
	if v <= float64(lo) {
		return lo
	}
	if v >= float64(hi) {
		return hi
	}
	return int64(v)
}

// ShiftFits reports whether a positive real multiplier, as
// QuantizeMultiplier splits it, shifts left by at most 30 bits: the
// integer kernels shift a 32-bit accumulator left by the shift, and a
// shift of 31 or more leaves nothing of it (C leaves 32 and more
// undefined). NaN and infinities do not fit.
func ShiftFits(m float64) bool {
	if !(m >= 0 && m <= math.MaxFloat64) {
		return false
	}
	_, sh := QuantizeMultiplier(m)
	return sh <= 30
}

// SaturatingRoundingDoublingHighMul returns the high 32 bits of 2*a*b, rounded
// to nearest (ties away from zero), saturating the one overflowing case
// a == b == MinInt32 (gemmlowp).
func SaturatingRoundingDoublingHighMul(a, b int32) int32 {
	if a == b && a == math.MinInt32 {
		return math.MaxInt32
	}
	ab := int64(a) * int64(b)
	nudge := int64(1 << 30)
	if ab < 0 {
		nudge = 1 - (1 << 30)
	}
	return int32((ab + nudge) / (1 << 31))
}

// RoundingDivideByPOT is x / 2^exponent rounded to nearest, ties away from
// zero (gemmlowp). exponent must be in [0, 31].
func RoundingDivideByPOT(x int32, exponent int) int32 {
	mask := int32((int64(1) << uint(exponent)) - 1)
	remainder := x & mask
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> uint(exponent)
	if remainder > threshold {
		r++
	}
	return r
}

// MultiplyByQuantizedMultiplier computes x * multiplier * 2^(shift-31) the
// way TFLite does by default (double rounding): x is shifted left by
// max(shift, 0) with int32 wrap-around, multiplied with
// SaturatingRoundingDoublingHighMul, then divided by 2^max(-shift, 0) with
// RoundingDivideByPOT.
func MultiplyByQuantizedMultiplier(x, multiplier int32, shift int) int32 {
	left, right := 0, 0
	if shift > 0 {
		left = shift
	} else {
		right = -shift
	}
	return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x*int32(1<<uint(left)), multiplier), right)
}

// MultiplyByQuantizedMultiplier64 is TFLite's overload for a 64-bit
// accumulator (the 16x8 kernels: int16 activations, int8 weights, int64
// bias): the multiplier is first rounded to 16 bits, (m + 2^15) >> 16
// (0x7FFF from 0x7FFF0000 up), then x * m16 + 2^(14-shift) is shifted right
// by 15 - shift: one rounding, half up, with the reduced multiplier's
// precision. The result is truncated to 32 bits as TFLite's default
// (double-rounding) build does; TFLite assumes |x| < 2^47 and shift < 8.
func MultiplyByQuantizedMultiplier64(x int64, multiplier int32, shift int) int32 {
	total := uint(15 - shift)
	return int32((x*Reduced16(multiplier) + int64(1)<<(total-1)) >> total)
}

// Reduced16 is the 64-bit requantization's multiplier rounded to 16 bits:
// (m + 2^15) >> 16, and 0x7FFF from 0x7FFF0000 up.
func Reduced16(multiplier int32) int64 {
	if multiplier < 0x7FFF0000 {
		return (int64(multiplier) + 1<<15) >> 16
	}
	return 0x7FFF
}

// MultiplyByQuantizedMultiplierGreaterThanOne is TFLite's variant for a
// non-negative shift: SaturatingRoundingDoublingHighMul(x << shift, m).
func MultiplyByQuantizedMultiplierGreaterThanOne(x, multiplier int32, leftShift int) int32 {
	return SaturatingRoundingDoublingHighMul(x*int32(1<<uint(leftShift)), multiplier)
}

// SaturatingRoundingMultiplyByPOT multiplies x by 2^exponent: a saturating
// left shift for a positive exponent, RoundingDivideByPOT for a negative one.
func SaturatingRoundingMultiplyByPOT(x int32, exponent int) int32 {
	switch {
	case exponent == 0:
		return x
	case exponent < 0:
		return RoundingDivideByPOT(x, -exponent)
	}
	threshold := int32((int64(1) << uint(31-exponent)) - 1)
	if x > threshold {
		return math.MaxInt32
	}
	if x < -threshold {
		return math.MinInt32
	}
	return x << uint(exponent)
}

// RoundingHalfSum is (a + b) / 2 rounded away from zero (gemmlowp).
func RoundingHalfSum(a, b int32) int32 {
	sum := int64(a) + int64(b)
	sign := int64(1)
	if sum < 0 {
		sign = -1
	}
	return int32((sum + sign) / 2)
}

// CalculateInputRadius is the largest input difference whose rescaled value
// still fits in a fixed-point number with inputIntegerBits integer bits
// (TFLite's CalculateInputRadius with 31 total signed bits).
func CalculateInputRadius(inputIntegerBits, inputLeftShift int) int32 {
	v := math.Ldexp(1.0*float64(int64(1)<<uint(inputIntegerBits)-1)*float64(int64(1)<<uint(31-inputIntegerBits)), -inputLeftShift)
	// A tiny input scale (a negative left shift: int8 LOGISTIC and TANH
	// below an input scale of about 3.7e-9; LOG_SOFTMAX below 7.5e-9,
	// which LogSoftmaxScaleOK refuses) puts the radius beyond int32, where TFLite's int conversion is
	// undefined and Go's the platform's (amd64 gave INT32_MIN, and every
	// LOGISTIC input mapped to the top of the output range; arm64
	// saturates): the radius saturates at INT32_MAX, beyond every int8
	// difference, as the real radius is.
	return int32(SatInt(math.Floor(v), 0, math.MaxInt32))
}

// PreprocessSoftmaxScaling returns the multiplier and left shift that map an
// int8 input difference to a Q(integerBits).(31-integerBits) fixed-point
// value of beta*scale*diff (TFLite's PreprocessSoftmaxScaling, double
// rounding build).
func PreprocessSoftmaxScaling(beta, inputScale float64, integerBits int) (multiplier int32, leftShift int) {
	real := math.Min(beta*inputScale*float64(int64(1)<<uint(31-integerBits)), float64(int64(1)<<31)-1.0)
	return QuantizeMultiplier(real)
}

// DownScaleInt32ToInt16Multiplier rounds a Q31 multiplier to Q15 (TFLite).
func DownScaleInt32ToInt16Multiplier(m int32) int16 {
	const off = 1 << 15
	if m >= math.MaxInt32-off {
		return math.MaxInt16
	}
	return int16((m + off) >> 16)
}

// SaturatingRoundingDoublingHighMul16 is the int16 version of
// SaturatingRoundingDoublingHighMul.
func SaturatingRoundingDoublingHighMul16(a, b int16) int16 {
	if a == b && a == math.MinInt16 {
		return math.MaxInt16
	}
	ab := int32(a) * int32(b)
	nudge := int32(1 << 14)
	if ab < 0 {
		nudge = 1 - (1 << 14)
	}
	return int16((ab + nudge) / (1 << 15))
}

// SaturatingDoublingHighMul16 is the truncating (non-rounding) int16 doubling
// high multiply used by TFLite's HardSwish.
func SaturatingDoublingHighMul16(a, b int16) int16 {
	if a == b && a == math.MinInt16 {
		return math.MaxInt16
	}
	return int16((int32(a) * int32(b)) / (1 << 15))
}

// SaturatingLeftShift16 shifts an int16 left, saturating to the int16 range.
func SaturatingLeftShift16(v int16, amount int) int16 {
	r := int32(v) * (int32(1) << uint(amount))
	return int16(max(min(r, math.MaxInt16), math.MinInt16))
}

// RoundingDivideByPOT16 is RoundingDivideByPOT on an int16.
func RoundingDivideByPOT16(x int16, exponent int) int16 {
	return int16(RoundingDivideByPOT(int32(x), exponent))
}

// CountLeadingZeros32 counts the leading zero bits of x.
func CountLeadingZeros32(x uint32) int { return bits.LeadingZeros32(x) }

// ActivationRange is TFLite's CalculateActivationRangeQuantized: the clamp
// range [lo, hi] in the output's integer domain for a fused activation
// ("none", "relu", "relu6", "relu_n1_to_1"), for an output of the given
// scale and zero point, within [qmin, qmax]. Each bound is
// zeroPoint + roundf(bound / scale), the quotient computed in float32.
//
// Where that is beyond int32 (an output scale under about 2^-31 with
// relu_n1_to_1 or relu6), TFLite's conversion to int32 is undefined
// behaviour (x86 gives INT32_MIN for either sign, and adding the zero point
// wraps) and Go's is the platform's too: here the bound saturates, so it
// leaves the int8 range unclamped on that side, on every build machine
// (review finding: lo 2,147,483,520 and hi 127 in the reference
// interpreter, and the C generated on x86-64 and on arm64 differed).
func ActivationRange(act string, scale float32, zeroPoint int32, qmin, qmax int32) (lo, hi int32) {
	q := func(f float32, lo bool) int32 {
		r := float64(Roundf(f / scale))
		if math.IsNaN(r) {
			r = 0
		}
		v := float64(zeroPoint) + r
		switch {
		case lo:
			return int32(max(float64(qmin), min(float64(qmax), v)))
		default:
			return int32(min(float64(qmax), max(float64(qmin), v)))
		}
	}
	switch act {
	case "relu":
		return q(0, true), qmax
	case "relu6":
		return q(0, true), q(6, false)
	case "relu_n1_to_1":
		return q(-1, true), q(1, false)
	}
	return qmin, qmax
}

// CountLeadingZeros64 counts the leading zero bits of x.
func CountLeadingZeros64(x uint64) int { return bits.LeadingZeros64(x) }
