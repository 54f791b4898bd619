package tir

import "math"

// The integer intrinsics' exact semantics (TFLite / gemmlowp fixed point).
// emitc prints C with the same behaviour; tests check the two agree.

// SRDHM is gemmlowp's SaturatingRoundingDoublingHighMul.
func SRDHM(a, b int32) int32 {
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

// RDivPOT is gemmlowp's RoundingDivideByPOT (exponent in [0, 31]).
func RDivPOT(x int32, exponent int32) int32 {
	mask := int32((int64(1) << uint(exponent)) - 1)
	rem := x & mask
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> uint(exponent)
	if rem > threshold {
		r++
	}
	return r
}

// RequantQ is TFLite's MultiplyByQuantizedMultiplier(x, m, shift).
func RequantQ(x, m, shift int32) int32 {
	left, right := int32(0), int32(0)
	if shift > 0 {
		left = shift
	} else {
		right = -shift
	}
	return RDivPOT(SRDHM(int32(int64(x)*(int64(1)<<uint(left))), m), right)
}

// ExpNeg is gemmlowp's exp_on_negative_values for a Q5.26 input (<= 0),
// returning Q0.31. Additions wrap, as gemmlowp's FixedPoint operator+ does.
func ExpNeg(a int32) int32 {
	const intBits = 5
	const fracBits = 31 - intBits
	oneQuarter := int32(1) << (fracBits - 2)
	mask := oneQuarter - 1
	aModQuarterMinusOneQuarter := (a & mask) - oneQuarter
	result := expInterval(satShl(aModQuarterMinusOneQuarter, intBits))
	remainder := aModQuarterMinusOneQuarter - a
	for i, mult := range [...]int32{1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242} {
		bit := int32(1) << uint(fracBits+i-2)
		if remainder&bit != 0 {
			result = SRDHM(result, mult)
		}
	}
	if a == 0 {
		return math.MaxInt32
	}
	return result
}

// expInterval is exp_on_interval_between_negative_one_quarter_and_0_excl in Q0.31.
func expInterval(a int32) int32 {
	const constantTerm = 1895147668
	const constantOneOverThree = 715827883
	x := a + 1<<28 // a + 1/8
	x2 := SRDHM(x, x)
	x3 := SRDHM(x2, x)
	x4 := SRDHM(x2, x2)
	x4Over4 := RDivPOT(x4, 2)
	t := RDivPOT(SRDHM(x4Over4+x3, constantOneOverThree)+x2, 1)
	return constantTerm + SRDHM(constantTerm, x+t)
}

// OneOverOnePlusX is gemmlowp's one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out).
func OneOverOnePlusX(a int32) int32 {
	sum := int64(a) + math.MaxInt32 // RoundingHalfSum(a, One)
	sign := int64(1)
	if sum < 0 {
		sign = -1
	}
	halfDen := int32((sum + sign) / 2)
	const c48over17 = 1515870810     // Q2.29
	const cNeg32over17 = -1010580540 // Q2.29
	x := c48over17 + SRDHM(halfDen, cNeg32over17)
	for i := 0; i < 3; i++ {
		hdx := SRDHM(halfDen, x)
		oneMinus := int32(1<<29) - hdx
		x += satShl(SRDHM(x, oneMinus), 2)
	}
	return satShl(x, 1)
}

// satShl is gemmlowp's SaturatingRoundingMultiplyByPOT for a positive exponent.
func satShl(x int32, n uint) int32 {
	minT := int32(math.MinInt32) >> n
	maxT := int32(math.MaxInt32) >> n
	if x > maxT {
		return math.MaxInt32
	}
	if x < minT {
		return math.MinInt32
	}
	return x << n
}

// Reciprocal is TFLite's GetReciprocal(x, intBits): the Q0.31 scale and the
// number of bits over unit.
func Reciprocal(x int32, intBits int32) (int32, int32) {
	headroom := int32(countLeadingZeros32(uint32(x)))
	numBitsOverUnit := intBits - headroom
	shifted := int32((uint32(x) << uint(headroom)) - (uint32(1) << 31))
	return OneOverOnePlusX(shifted), numBitsOverUnit
}

func countLeadingZeros32(x uint32) int {
	n := 0
	for i := 31; i >= 0; i-- {
		if x&(1<<uint(i)) != 0 {
			break
		}
		n++
	}
	return n
}
