package qmath

import "math"

// The gemmlowp fixed-point transcendental helpers. A value with I integer
// bits is an int32 raw r meaning r / 2^(31-I). Products of an I-bit and a
// J-bit value are (I+J)-bit values computed with
// SaturatingRoundingDoublingHighMul; sums are plain (wrapping) int32 adds.

func mul(a, b int32) int32 { return SaturatingRoundingDoublingHighMul(a, b) }

// one returns the raw value of 1.0 with integerBits integer bits (saturated
// to MaxInt32 when there are none).
func one(integerBits int) int32 {
	if integerBits == 0 {
		return math.MaxInt32
	}
	return int32(1) << uint(31-integerBits)
}

// Rescale converts a fixed-point raw value from srcBits to dstBits integer
// bits, rounding or saturating (gemmlowp Rescale).
func Rescale(raw int32, srcBits, dstBits int) int32 {
	return SaturatingRoundingMultiplyByPOT(raw, srcBits-dstBits)
}

// ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl is gemmlowp's exp for a Q0.31
// input in [-1/4, 0), a Taylor expansion around -1/8. Result is Q0.31.
func ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(a int32) int32 {
	const constantTerm = 1895147668 // exp(-1/8)
	const constant1Over3 = 715827883
	x := a + int32(1)<<28 // a + 1/8
	x2 := mul(x, x)
	x3 := mul(x2, x)
	x4 := mul(x2, x2)
	x4Over4 := SaturatingRoundingMultiplyByPOT(x4, -2)
	poly := SaturatingRoundingMultiplyByPOT(mul(x4Over4+x3, constant1Over3)+x2, -1)
	return constantTerm + mul(constantTerm, x+poly)
}

// ExpOnNegativeValues is gemmlowp's exp_on_negative_values for a fixed-point
// input a <= 0 with integerBits integer bits; the result is Q0.31.
func ExpOnNegativeValues(a int32, integerBits int) int32 {
	fracBits := 31 - integerBits
	oneQuarter := int32(1) << uint(fracBits-2)
	mask := oneQuarter - 1
	aModQuarterMinusOneQuarter := (a & mask) - oneQuarter
	result := ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Rescale(aModQuarterMinusOneQuarter, integerBits, 0))
	remainder := aModQuarterMinusOneQuarter - a
	barrel := []struct {
		exp  int
		mult int32
	}{
		{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
		{2, 39332535}, {3, 720401}, {4, 242},
	}
	for _, b := range barrel {
		if integerBits > b.exp {
			shift := fracBits + b.exp
			if remainder&(int32(1)<<uint(shift)) != 0 {
				result = mul(result, b.mult)
			}
		}
	}
	if integerBits > 5 {
		clamp := -(int32(1) << uint(36-integerBits))
		if a < clamp {
			result = 0
		}
	}
	if a == 0 {
		result = one(0)
	}
	return result
}

// newtonReciprocalF2 returns x ≈ 1/halfDenominator as a Q2.29 value
// (three Newton-Raphson steps, gemmlowp).
func newtonReciprocalF2(halfDenominator int32) int32 {
	const c48Over17 = 1515870810
	const cNeg32Over17 = -1010580540
	x := c48Over17 + mul(halfDenominator, cNeg32Over17)
	for i := 0; i < 3; i++ {
		hdx := mul(halfDenominator, x)
		oneMinus := one(2) - hdx
		x = x + Rescale(mul(x, oneMinus), 4, 2)
	}
	return x
}

// OneOverOnePlusXForXIn01 is gemmlowp's one_over_one_plus_x_for_x_in_0_1 on
// Q0.31 values.
func OneOverOnePlusXForXIn01(a int32) int32 {
	x := newtonReciprocalF2(RoundingHalfSum(a, one(0)))
	// ExactMulByPot<-1> keeps the raw value and drops one integer bit.
	return Rescale(x, 1, 0)
}

// OneMinusXOverOnePlusXForXIn01 is gemmlowp's
// one_minus_x_over_one_plus_x_for_x_in_0_1 on Q0.31 values.
func OneMinusXOverOnePlusXForXIn01(a int32) int32 {
	x := newtonReciprocalF2(RoundingHalfSum(a, one(0)))
	return Rescale(x-one(2), 2, 0)
}

// Logistic is gemmlowp's logistic of a fixed-point value with integerBits
// integer bits; the result is Q0.31.
func Logistic(a int32, integerBits int) int32 {
	if a == 0 {
		return 1 << 30
	}
	abs := a
	if a < 0 {
		abs = -a
	}
	pos := OneOverOnePlusXForXIn01(ExpOnNegativeValues(-abs, integerBits))
	if a > 0 {
		return pos
	}
	return one(0) - pos
}

// Tanh is gemmlowp's tanh of a fixed-point value with integerBits integer
// bits; the result is Q0.31.
func Tanh(a int32, integerBits int) int32 {
	if a == 0 {
		return 0
	}
	n := a
	if a > 0 {
		n = -a
	}
	// ExactMulByPot<1>: the same raw value read with one more integer bit.
	t := OneMinusXOverOnePlusXForXIn01(ExpOnNegativeValues(n, integerBits+1))
	if a < 0 {
		return -t
	}
	return t
}

// GetReciprocal returns 1/x for a fixed-point x with integerBits integer bits
// as a Q0.31 value scaled by 2^-numBitsOverUnit (TFLite's GetReciprocal).
func GetReciprocal(x int32, integerBits int) (reciprocal int32, numBitsOverUnit int) {
	headroomPlusOne := CountLeadingZeros32(uint32(x))
	numBitsOverUnit = integerBits - headroomPlusOne
	shiftedSumMinusOne := int32((uint32(x) << uint(headroomPlusOne)) - (uint32(1) << 31))
	return OneOverOnePlusXForXIn01(shiftedSumMinusOne), numBitsOverUnit
}

// satAdd and satSub are gemmlowp's SaturatingAdd/Sub on raw int32 values.
func satAdd(a, b int32) int32 {
	return int32(max(min(int64(a)+int64(b), math.MaxInt32), math.MinInt32))
}

func satSub(a, b int32) int32 {
	return int32(max(min(int64(a)-int64(b), math.MaxInt32), math.MinInt32))
}

// LogQ12ToQ5 is TFLite's log_x_for_x_greater_than_or_equal_to_1_impl with
// 5 output and 12 input integer bits: ln z for a Q12.19 z >= 1, as a Q5.26
// value. Sums are wrapping int32 where TFLite's are plain, saturating where
// its are.
func LogQ12ToQ5(z int32) int32 {
	const (
		log2         = 1488522236 // ln 2, Q0.31
		sqrtSqrtHalf = 1805811301 // 2^-1/4, Q0.31
		sqrtHalf     = 1518500250 // 2^-1/2, Q0.31
		alphaN       = 117049297
		alphaD       = 127690142
		alphaI       = 1057819769
		alphaF       = 638450708
		inBits       = 12
	)
	quarter := RoundingDivideByPOT(536870912, 6) // 1/4 in Q6.25
	h := CountLeadingZeros32(uint32(z))
	ra := SaturatingRoundingMultiplyByPOT(mul(SaturatingRoundingMultiplyByPOT(z, h-1), sqrtHalf), 1)
	za := satAdd(SaturatingRoundingMultiplyByPOT(int32(inBits-h), 25), quarter)
	hb := CountLeadingZeros32(uint32(mul(z, sqrtHalf))) - 1
	rb := SaturatingRoundingMultiplyByPOT(z, hb)
	zb := satSub(SaturatingRoundingMultiplyByPOT(int32(inBits-hb), 25), quarter)
	r, zp := min(ra, rb), max(za, zb)
	p := RoundingHalfSum(r, sqrtSqrtHalf)
	q := r - sqrtSqrtHalf
	q += q
	c := mul(q, q)
	num := mul(q, r) + mul(mul(q, c), alphaN)
	den := mul(p, alphaI+q+mul(alphaD, c)) + mul(alphaF, q)
	acc := mul(zp, log2) + mul(RoundingDivideByPOT(num, 6), OneOverOnePlusXForXIn01(den))
	return SaturatingRoundingMultiplyByPOT(acc, 1)
}

// LogSoftmaxParams are int8 LOG_SOFTMAX's parameters (TFLite Micro's
// Prepare, beta 1, 5 integer bits for the scaled differences).
type LogSoftmaxParams struct {
	InMult       int32
	InLeftShift  int
	ReverseMult  int32
	ReverseShift int // negative: a right shift
	DiffMin      int32
}

// NewLogSoftmaxParams derives LogSoftmaxParams from the input scale.
// LogSoftmaxScaleOK says which scales its kernel takes.
func NewLogSoftmaxParams(inputScale float32) LogSoftmaxParams {
	var p LogSoftmaxParams
	p.InMult, p.InLeftShift = PreprocessSoftmaxScaling(1, float64(inputScale), 5)
	p.ReverseMult, p.ReverseShift = QuantizeMultiplier(logSoftmaxReverse(p.InMult, p.InLeftShift))
	p.DiffMin = -CalculateInputRadius(5, p.InLeftShift)
	return p
}

// logSoftmaxReverse is LOG_SOFTMAX's reverse scaling, 2^(31 − left shift)
// over the input multiplier: +Inf where the multiplier flushed to zero.
func logSoftmaxReverse(inMult int32, inLeftShift int) float64 {
	return float64(int64(1)<<uint(31-inLeftShift)) / float64(inMult)
}

// LogSoftmaxScaleOK reports whether int8 LOG_SOFTMAX takes an input
// scale: TFLite's PreprocessSoftmaxScaling needs scale × 2^26 (beta 1)
// above 1 (QuantizeMultiplierGreaterThanOne), as for SOFTMAX, and the
// reverse multiplier, about 1 / (scale × 2^26), below 1
// (QuantizeMultiplierSmallerThanOneExp); TFLite aborts otherwise. Below
// that the reverse scaling overflows 32 bits (wrapping in Go, undefined in
// C), further down (2^-56) its shift passes 30, and below 2^-58 the input
// multiplier flushes to zero and the reverse one is +Inf.
func LogSoftmaxScaleOK(inputScale float32) bool {
	m, sh := PreprocessSoftmaxScaling(1, float64(inputScale), 5)
	return float64(inputScale)*(1<<26) > 1 && m != 0 && logSoftmaxReverse(m, sh) < 1
}

// LogSoftmaxRow is TFLite Micro's int8 LOG_SOFTMAX of one row (output scale
// 16/256, zero point 127): out[i] for the stored inputs x.
func (p LogSoftmaxParams) LogSoftmaxRow(x []int64, out []int64) {
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum int32
	for _, v := range x {
		if d := int32(v - mx); d >= p.DiffMin {
			sum += RoundingDivideByPOT(ExpOnNegativeValues(MultiplyByQuantizedMultiplier(d, p.InMult, p.InLeftShift), 5), 12)
		}
	}
	l := LogQ12ToQ5(sum)
	adj := max(p.DiffMin-1, MultiplyByQuantizedMultiplier(l+math.MinInt32, p.ReverseMult, p.ReverseShift))
	for i, v := range x {
		out[i] = -128
		if d := int32(v - mx); d > adj {
			y := int64(RoundingDivideByPOT(MultiplyByQuantizedMultiplier(d, p.InMult, p.InLeftShift)-l, 22)) + 127
			out[i] = min(max(y, -128), 127)
		}
	}
}

// GetInvSqrtQuantizedMultiplierExp is TFLite's: 1/sqrt(x) for x > 1 as a
// Q31 multiplier and a shift (times reverseShift), by five Newton steps in
// Q3.28; x <= 1 gives (INT32_MAX, 0).
func GetInvSqrtQuantizedMultiplierExp(x int32, reverseShift int) (int32, int) {
	if x <= 1 {
		return math.MaxInt32, 0
	}
	shift := 11
	for x >= 1<<29 {
		x /= 4
		shift++
	}
	pairs := (CountLeadingZeros32(uint32(x))-1)/2 - 1
	shift -= pairs
	x <<= uint(2 * pairs)
	half := RoundingDivideByPOT(x>>1, 1)
	const threeHalves = 1<<28 + 1<<27 // 1.5 in Q3.28
	y := int32(1 << 28)
	for range 5 {
		y3 := SaturatingRoundingMultiplyByPOT(mul(mul(y, y), y), 6)
		y = SaturatingRoundingMultiplyByPOT(mul(threeHalves, y)-mul(half, y3), 3)
	}
	y = mul(y, 1518500250) // sqrt(2)/2
	if shift < 0 {
		y <<= uint(-shift)
		shift = 0
	}
	return y, shift * reverseShift
}

// RsqrtInt8 is TFLite Micro's int8 RSQRT of a stored value q (elementwise.cc):
// 1/sqrt(s_x·(q − z_x)) on the output's scale and zero point, by
// GetInvSqrtQuantizedMultiplierExp and two requantizations; q at the zero
// point gives 127. TFLite Micro fails the inference for q below the zero
// point; this gives 127 there too.
func RsqrtInt8(q int32, sx float32, zx int32, sy float32, zy int32) int32 {
	v := q - zx
	if v <= 0 {
		return 127
	}
	root := float32(math.Sqrt(float64(sx)))
	m, s := QuantizeMultiplier(1 / float64(root*sy))
	im, ish := GetInvSqrtQuantizedMultiplierExp(v, -1)
	data := MultiplyByQuantizedMultiplier(1, im, ish+20)
	return min(max(MultiplyByQuantizedMultiplier(data, m, s-20)+zy, -128), 127)
}

// AbsInt8 is TFLite Micro's int8 ABS (elementwise.cc, AbsEvalQuantized):
// |q − zx| plus zy where the two scales are equal, else requantized by
// the multiplier of sx/sy (the quotient in float32, as TFLite Micro
// divides the scales) plus zy; clamped to int8.
func AbsInt8(q int32, sx float32, zx int32, sy float32, zy int32) int32 {
	return min(max(AbsRescaled(q, sx, zx, sy)+zy, -128), 127)
}

// AbsRescaled is TFLite Micro's quantized ABS before its output zero
// point and clamp (int8 and int16 alike): |q − zx|, requantized by the
// multiplier of sx/sy (a float32 quotient) where the scales differ.
func AbsRescaled(q int32, sx float32, zx int32, sy float32) int32 {
	v := q - zx
	if v < 0 {
		v = -v
	}
	if sx != sy {
		m, s := QuantizeMultiplier(float64(sx / sy))
		v = MultiplyByQuantizedMultiplier(v, m, s)
	}
	return v
}

// L2NormMaxDepth is the longest row TFLite's int8 L2 normalization sums
// without overflow: 255² per element within int32.
const L2NormMaxDepth = math.MaxInt32 / (255 * 255)

// L2NormalizeInt8 is TFLite's int8 L2_NORMALIZATION of one row of values
// less the input zero point (reference_integer_ops::L2Normalization): the
// sum of squares, its inverse square root as a multiplier and shift
// (GetInvSqrtQuantizedMultiplierExp, reverse shift −1), each value
// requantized by it with 7 more bits (the output scale 1/128, zero point
// 0), clamped to int8. A row of zeros gives zeros.
func L2NormalizeInt8(v []int32, out []int32) {
	var acc int32
	for _, x := range v {
		acc += x * x
	}
	m, sh := GetInvSqrtQuantizedMultiplierExp(acc, -1)
	for i, x := range v {
		out[i] = min(max(MultiplyByQuantizedMultiplier(x, m, sh+7), -128), 127)
	}
}

// LUTPopulateInt8 is TFLite's int8 lookup table for an element-wise
// function f (LUTPopulate, as GELU's Prepare builds it), all in float32:
// x = s_in·(q − z_in), y = f(x), round(y · (1/s_out)) half away from zero,
// plus z_out, clamped to int8. It returns the table as a function of q.
//
// TFLite converts round(...) + z_out to int32 before it clamps, which C
// leaves undefined beyond int32 (an output scale far below the function's
// values, or y = ±Inf: x86 gives INT32_MIN, so -128 for either sign) and
// for NaN (x86: -128 too). Here the sum is clamped in float first, so an
// entry beyond int32 is -128 or 127 by its sign, and a NaN is the output
// zero point (the quantized 0; TFLite on x86 would give -128), on every
// build machine.
func LUTPopulateInt8(sIn float32, zIn int32, sOut float32, zOut int32, f func(float32) float32) func(int32) int32 {
	var lut [256]int32
	inv := 1 / sOut
	for q := int32(-128); q <= 127; q++ {
		y := f(sIn * float32(q-zIn))
		r := Roundf(y*inv) + float32(zOut)
		if r != r { // NaN
			lut[q+128] = min(max(zOut, -128), 127)
			continue
		}
		lut[q+128] = int32(min(max(r, -128), 127))
	}
	return func(q int32) int32 { return lut[min(max(q, -128), 127)+128] }
}

// GeluF32 is TFLite's GeluTransform in float32: 0.5·x·erfc(−x/√2), the
// argument's constant rounded to float32 first. erfc is computed in
// float64 and rounded, where TFLite calls the C library's erfcf; the two
// can differ by an ulp, which changes a table entry only where y/s_out
// falls within an ulp of a half.
func GeluF32(x float32) float32 {
	const c = float32(-math.Sqrt2 / 2)
	e := float32(math.Erfc(float64(x * c)))
	return 0.5 * x * e
}

// GeluTanhF32 is TFLite's GeluTransformApproximate in float32:
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), the constants rounded to
// float32 and the operations in C's order (tanh as GeluF32's erfc).
func GeluTanhF32(x float32) float32 {
	const k = float32(2 / math.SqrtPi * math.Sqrt2 / 2) // M_2_SQRTPI·M_SQRT1_2
	cube := float32(float32(0.044715) * x * x * x)      // rounded: no fused multiply-add
	t := float32(math.Tanh(float64(k * (x + cube))))
	return 0.5 * x * (1 + t)
}

// EluF32 is TFLite Micro's ELU transform for its int8 table (elu.cc), in
// float32: x < 0 ? exp(x) − 1 : x (exp as GeluF32's erfc).
func EluF32(x float32) float32 {
	if x < 0 {
		return float32(math.Exp(float64(x))) - 1
	}
	return x
}
