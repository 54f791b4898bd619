package tir

import "github.com/mcugen/mcugen/graph/qmath"

// The integer intrinsics' exact semantics (TFLite / gemmlowp fixed point),
// taken from graph/qmath so that the TIR interpreter, the reference
// interpreter and the generated C (whose helpers tests check against these)
// compute the same bits.

// SRDHM is gemmlowp's SaturatingRoundingDoublingHighMul.
func SRDHM(a, b int32) int32 { return qmath.SaturatingRoundingDoublingHighMul(a, b) }

// RDivPOT is gemmlowp's RoundingDivideByPOT (exponent in [0, 31]).
func RDivPOT(x int32, exponent int32) int32 { return qmath.RoundingDivideByPOT(x, int(exponent)) }

// RequantQ is TFLite's MultiplyByQuantizedMultiplier(x, m, shift).
func RequantQ(x, m, shift int32) int32 { return qmath.MultiplyByQuantizedMultiplier(x, m, int(shift)) }

// ExpNeg is gemmlowp's exp_on_negative_values for a Q5.26 input (<= 0),
// returning Q0.31.
func ExpNeg(a int32) int32 { return qmath.ExpOnNegativeValues(a, 5) }

// OneOverOnePlusX is gemmlowp's one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out).
func OneOverOnePlusX(a int32) int32 { return qmath.OneOverOnePlusXForXIn01(a) }

// Reciprocal is TFLite's GetReciprocal(x, intBits): the Q0.31 scale and the
// number of bits over unit.
func Reciprocal(x int32, intBits int32) (int32, int32) {
	r, n := qmath.GetReciprocal(x, int(intBits))
	return r, int32(n)
}
