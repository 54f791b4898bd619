package qmath

import (
	"fmt"
	"math"
	"math/bits"
)

// Kernel parameters derived from float scales exactly as TFLite Micro's
// Prepare functions derive them (same precision, same order of float
// operations), so the interpreter and generated code share one derivation.

// ConvMultiplier is the requantization multiplier of a conv / fully
// connected / batch matmul output channel:
// QuantizeMultiplier(double(sx) * double(sw) / double(sy)).
func ConvMultiplier(sx, sw, sy float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(float64(sx) * float64(sw) / float64(sy))
}

// ProductMultiplier is the requantization multiplier of a fully connected
// layer with per-tensor weights and of a batch matmul:
// QuantizeMultiplier(double(float(sx · sw)) / double(sy)). TFLite and
// TFLite Micro take these through GetQuantizedConvolutionMultipler, whose
// product is a float32 one; convolutions and per-channel fully connected
// layers multiply in double (ConvMultiplier). Bit-exactness fuzzing found a
// 1×1 FC whose multipliers differ by 39 (1231985630 and 1231985669) and
// whose output differs by one step at a large accumulator.
func ProductMultiplier(sx, sw, sy float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(ProductReal(sx, sw, sy))
}

// ProductReal is ProductMultiplier's real multiplier, double(float(sx ·
// sw)) / double(sy): +Inf where the float32 product overflows (scales
// 1e20 and 1e20), which graph.CheckMultiplier refuses.
func ProductReal(sx, sw, sy float32) float64 {
	p := float32(sx * sw) // rounded to float32, never fused
	return float64(p) / float64(sy)
}

// SVDFMultiplier is SVDF's QuantizeMultiplier(double(float(s1 · s2) /
// s3)): TFLite Micro computes its two effective scales in float32
// (input·weights_feature/state, then state·weights_time/output).
func SVDFMultiplier(s1, s2, s3 float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(SVDFReal(s1, s2, s3))
}

// SVDFReal is SVDFMultiplier's real multiplier, double(float(s1 · s2) /
// s3): +Inf where a float32 step overflows, which graph.CheckMultiplier
// refuses.
func SVDFReal(s1, s2, s3 float32) float64 {
	p := s1 * s2
	return float64(p / s3)
}

// SquaredDiffParams are int8 SQUARED_DIFFERENCE's parameters (TFLite
// Micro's PrepareQuantized, in double): each input less its zero point is
// shifted left by LeftShift and scaled by its multiplier to twice the larger
// input scale; the squared difference is scaled by (2·max)² / (2^14·s_y).
type SquaredDiffParams struct {
	LeftShift          int
	In1Mult, In2Mult   int32
	In1Shift, In2Shift int
	OutMult            int32
	OutShift           int
}

// SquaredDifferenceParams derives SquaredDiffParams from the scales.
func SquaredDifferenceParams(s1, s2, sy float32) SquaredDiffParams {
	twice := 2 * float64(max(s1, s2))
	p := SquaredDiffParams{LeftShift: 7}
	p.In1Mult, p.In1Shift = QuantizeMultiplier(float64(s1) / twice)
	p.In2Mult, p.In2Shift = QuantizeMultiplier(float64(s2) / twice)
	p.OutMult, p.OutShift = QuantizeMultiplier(twice * twice / float64(float32(1<<14)*sy))
	return p
}

// Apply is one output value before its zero point: v1 and v2 are the
// inputs less their zero points.
func (p SquaredDiffParams) Apply(v1, v2 int32) int32 {
	a := MultiplyByQuantizedMultiplier(v1<<p.LeftShift, p.In1Mult, p.In1Shift)
	b := MultiplyByQuantizedMultiplier(v2<<p.LeftShift, p.In2Mult, p.In2Shift)
	d := a - b
	return MultiplyByQuantizedMultiplier(d*d, p.OutMult, p.OutShift)
}

// RescaleMultiplier is QuantizeMultiplier(double(sx) / double(sy)), used by
// requantizing QUANTIZE, the clamps (RELU6 and the like) and MEAN; RELU
// divides in float32, as TFLite Micro does.
func RescaleMultiplier(sx, sy float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(float64(sx) / float64(sy))
}

// MulMultiplier is MUL's QuantizeMultiplier(double(s1) * double(s2) / double(sy)).
func MulMultiplier(s1, s2, sy float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(float64(s1) * float64(s2) / float64(sy))
}

// AddSubParams are the parameters of int8 ADD and SUB: each input, less its
// zero point, is shifted left by LeftShift and scaled by its own multiplier;
// the sum (or difference) is scaled by the output multiplier.
type AddSubParams struct {
	LeftShift          int
	In1Mult, In2Mult   int32
	In1Shift, In2Shift int
	OutMult            int32
	OutShift           int
}

// AddLeftShift is the headroom TFLite's ADD and SUB shift their inputs
// left by: 20 bits for int8, 15 for int16 (the 16x8 scheme).
func AddLeftShift(int16Out bool) int {
	if int16Out {
		return 15
	}
	return 20
}

// AddParams derives ADD's parameters (in double precision, as TFLite Micro's
// add_common.cc does). leftShift is 20 for int8 and 15 for int16 outputs
// (AddLeftShift).
func AddParams(s1, s2, sy float32, leftShift int) AddSubParams {
	twiceMax := 2 * float64(max(s1, s2))
	p := AddSubParams{LeftShift: leftShift}
	p.In1Mult, p.In1Shift = QuantizeMultiplier(float64(s1) / twiceMax)
	p.In2Mult, p.In2Shift = QuantizeMultiplier(float64(s2) / twiceMax)
	p.OutMult, p.OutShift = QuantizeMultiplier(twiceMax / (float64(int64(1)<<leftShift) * float64(sy)))
	return p
}

// SubParams derives SUB's parameters. TFLite Micro's sub_common.cc computes
// them in float32 (twice_max_input_scale is a float), unlike ADD.
func SubParams(s1, s2, sy float32, leftShift int) AddSubParams {
	twiceMax := 2 * max(s1, s2)
	p := AddSubParams{LeftShift: leftShift}
	p.In1Mult, p.In1Shift = QuantizeMultiplier(float64(s1 / twiceMax))
	p.In2Mult, p.In2Shift = QuantizeMultiplier(float64(s2 / twiceMax))
	p.OutMult, p.OutShift = QuantizeMultiplier(float64(twiceMax / (float32(int64(1)<<leftShift) * sy)))
	return p
}

// AddSubOutputOK checks TFLite's one condition on ADD's and SUB's
// parameters that the model's scales can break: the output multiplier,
// 2·max(s1, s2) / (2^leftShift · sy), must lie below 1 (TFLite and TFLite
// Micro quantize it with QuantizeMultiplierSmallerThanOneExp, which fails
// otherwise). SUB computes it in float32, as SubParams does.
func AddSubOutputOK(s1, s2, sy float32, leftShift int, sub bool) error {
	m := 2 * float64(max(s1, s2)) / (float64(int64(1)<<leftShift) * float64(sy))
	name := "ADD"
	if sub {
		name = "SUB"
		m = float64(2 * max(s1, s2) / (float32(int64(1)<<leftShift) * sy))
	}
	if !(m < 1) {
		return fmt.Errorf("%s's output scale %g is at most 2 × the larger input scale / 2^%d (output multiplier %.4g): TFLite needs the multiplier below 1 and refuses the model", name, sy, leftShift, m)
	}
	return nil
}

// Combine applies p to two inputs with their zero points already removed and
// returns the output before its zero point is added: the scaled sum, or the
// scaled difference when sub is set.
func (p AddSubParams) Combine(a, b int32, sub bool) int32 {
	ra := MultiplyByQuantizedMultiplier(a*int32(1<<uint(p.LeftShift)), p.In1Mult, p.In1Shift)
	rb := MultiplyByQuantizedMultiplier(b*int32(1<<uint(p.LeftShift)), p.In2Mult, p.In2Shift)
	raw := ra + rb
	if sub {
		raw = ra - rb
	}
	return MultiplyByQuantizedMultiplier(raw, p.OutMult, p.OutShift)
}

// SoftmaxParams are the parameters of the int8 SOFTMAX kernel.
type SoftmaxParams struct {
	InputMultiplier int32
	InputLeftShift  int
	DiffMin         int32
}

// Softmax fixed-point formats: input differences in Q5.26, sums in Q12.19.
const (
	SoftmaxScaledDiffIntegerBits   = 5
	SoftmaxAccumulationIntegerBits = 12
)

// SoftmaxInt8Params derives the softmax parameters from beta and the input
// scale (TFLite's PreprocessSoftmaxScaling and CalculateInputRadius).
func SoftmaxInt8Params(beta, inputScale float32) SoftmaxParams {
	m, s := PreprocessSoftmaxScaling(float64(beta), float64(inputScale), SoftmaxScaledDiffIntegerBits)
	return SoftmaxParams{m, s, int32(-1.0 * float64(CalculateInputRadius(SoftmaxScaledDiffIntegerBits, s)))}
}

// SoftmaxRow computes TFLite's int8 softmax of one row of raw input values
// into out, for an output type of outBits bits whose minimum is outMin
// (-128 for int8: the output scale is 1/256 with zero point -128).
func SoftmaxRow(p SoftmaxParams, in []int32, out []int32, outBits int, outMin, outMax int32) {
	maxV := int32(math.MinInt32)
	for _, v := range in {
		maxV = max(maxV, v)
	}
	var sum int32
	for _, v := range in {
		if d := v - maxV; d >= p.DiffMin {
			scaled := MultiplyByQuantizedMultiplierGreaterThanOne(d, p.InputMultiplier, p.InputLeftShift)
			sum += Rescale(ExpOnNegativeValues(scaled, SoftmaxScaledDiffIntegerBits), 0, SoftmaxAccumulationIntegerBits)
		}
	}
	recip, bitsOverUnit := GetReciprocal(sum, SoftmaxAccumulationIntegerBits)
	for i, v := range in {
		out[i] = outMin
		if d := v - maxV; d >= p.DiffMin {
			scaled := MultiplyByQuantizedMultiplierGreaterThanOne(d, p.InputMultiplier, p.InputLeftShift)
			e := ExpOnNegativeValues(scaled, SoftmaxScaledDiffIntegerBits)
			unsat := RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(recip, e), bitsOverUnit+31-outBits)
			out[i] = max(outMin, min(outMax, unsat+outMin))
		}
	}
}

// SigmoidTanhParams are the input rescaling parameters of int8 LOGISTIC and
// TANH: the input (less its zero point) becomes a Q4.27 value; inputs
// beyond ±Radius saturate.
type SigmoidTanhParams struct {
	Multiplier int32
	Shift      int
	Radius     int32
}

// SigmoidTanhInt8Params derives them from the input scale: frexp of
// double(scale) * 2^27, rounded half away from zero (TFLite Micro).
func SigmoidTanhInt8Params(inputScale float32) SigmoidTanhParams {
	const inputIntegerBits = 4
	q, sh := math.Frexp(float64(inputScale) * float64(int64(1)<<(31-inputIntegerBits)))
	return SigmoidTanhParams{int32(int64(math.Round(q * float64(int64(1)<<31)))), sh, CalculateInputRadius(inputIntegerBits, sh)}
}

// Sigmoid is TFLite's int8 LOGISTIC of x (input zero point removed): the
// result in units of 1/256 plus outZeroPoint (-128 for int8), clamped to
// [lo, hi].
func (p SigmoidTanhParams) Sigmoid(x int32, lo, hi int32, outZeroPoint int32) int32 {
	switch {
	case x <= -p.Radius:
		return lo
	case x >= p.Radius:
		return hi
	}
	q := Logistic(MultiplyByQuantizedMultiplier(x, p.Multiplier, p.Shift), 4)
	return max(lo, min(hi, RoundingDivideByPOT(q, 31-8)+outZeroPoint))
}

// Tanh is TFLite's int8 TANH of x (input zero point removed): the result in
// units of 1/128 plus outZeroPoint (0 for int8), clamped to [lo, hi].
func (p SigmoidTanhParams) Tanh(x int32, lo, hi int32, outZeroPoint int32) int32 {
	switch {
	case x <= -p.Radius:
		return lo
	case x >= p.Radius:
		return hi
	}
	q := Tanh(MultiplyByQuantizedMultiplier(x, p.Multiplier, p.Shift), 4)
	return max(lo, min(hi, RoundingDivideByPOT(q, 31-7)+outZeroPoint))
}

// HardSwishParams are TFLite's int8 HARD_SWISH parameters (16-bit
// fixed-point multipliers).
type HardSwishParams struct {
	InZeroPoint, OutZeroPoint int32
	OutMult                   int16
	OutExp                    int
	ReluishMult               int16
	ReluishExp                int
}

// HardSwishInt8Params derives them in float32 as TFLite does.
func HardSwishInt8Params(sx float32, zx int32, sy float32, zy int32) (HardSwishParams, error) {
	hires := (1.0 / 128.0) * sx
	const reluishScale = float32(3.0 / 32768.0)
	p := HardSwishParams{InZeroPoint: zx, OutZeroPoint: zy}
	m, e := QuantizeMultiplier(float64(hires / sy))
	p.OutMult, p.OutExp = DownScaleInt32ToInt16Multiplier(m), e
	if e > 0 {
		return p, fmt.Errorf("hard swish: output scale %g too small for input scale %g", sy, sx)
	}
	m, e = QuantizeMultiplier(float64(hires / reluishScale))
	p.ReluishMult, p.ReluishExp = DownScaleInt32ToInt16Multiplier(m), e
	if e > 30 {
		// An input scale above about 1.3e7 (+Inf beyond about 4e36): Apply's
		// saturating shift by e − 1 would leave 32 bits.
		return p, fmt.Errorf("hard swish: input scale %g too large (its reluish multiplier needs a left shift of 31 bits or more)", sx)
	}
	return p, nil
}

// Apply computes HARD_SWISH of one raw input value; the result is in the
// int16 range and still needs clamping to the output type.
func (p HardSwishParams) Apply(v int32) int32 {
	in := int16(v - p.InZeroPoint)
	hires := in * (1 << 7)
	preshift := SaturatingRoundingDoublingHighMul16(hires, p.OutMult)
	reluish := hires
	if p.ReluishExp > 0 {
		reluish = SaturatingLeftShift16(reluish, p.ReluishExp-1)
	}
	reluish = SaturatingRoundingDoublingHighMul16(reluish, p.ReluishMult)
	if p.ReluishExp > 0 {
		reluish = SaturatingLeftShift16(reluish, 1)
	}
	if p.ReluishExp < 0 {
		reluish = RoundingDivideByPOT16(reluish, -p.ReluishExp)
	}
	reluish = int16((int32(reluish) + (1 << 15)) >> 1)
	out := SaturatingDoublingHighMul16(reluish, preshift)
	return int32(int16(int32(RoundingDivideByPOT16(out, -p.OutExp)) + p.OutZeroPoint))
}

// LeakyReluParams are int8 LEAKY_RELU's identity and alpha multipliers.
type LeakyReluParams struct {
	IdentityMult  int32
	IdentityShift int
	AlphaMult     int32
	AlphaShift    int
}

// LeakyReluInt8Params derives them in float32 (scale*alpha/out_scale and
// scale/out_scale), as TFLite Micro does.
func LeakyReluInt8Params(sx, alpha, sy float32) LeakyReluParams {
	var p LeakyReluParams
	p.AlphaMult, p.AlphaShift = QuantizeMultiplier(float64(sx * alpha / sy))
	p.IdentityMult, p.IdentityShift = QuantizeMultiplier(float64(sx / sy))
	return p
}

// MeanMultiplier folds 1/count into MEAN's in_scale/out_scale multiplier the
// way TFLite's QuantizedMeanOrSum does.
func MeanMultiplier(sx, sy float32, count int64) (multiplier int32, shift int) {
	m, s := RescaleMultiplier(sx, sy)
	sh := 63 - CountLeadingZeros64(uint64(count))
	sh = max(min(sh, 32, 31+s), 0)
	return int32((int64(m) << uint(sh)) / count), s - sh
}

// DivMultiplier is int8 DIV's QuantizeMultiplier(double(s1 / (s2 · sy)))
// with the ratio computed in float32, as TFLite Micro's div.cc does.
func DivMultiplier(s1, s2, sy float32) (multiplier int32, shift int) {
	den := s2 * sy
	return QuantizeMultiplier(float64(s1 / den))
}

// DivMaxShift is the largest DivMultiplier shift DivInt8 takes: with
// |a| <= 255 every non-zero dividend has at least 23 redundant sign bits,
// so the kernel's total shift (shift − reciprocal shift − headroom) is
// never positive.
const DivMaxShift = 23

// DivInt8 is TFLite Micro's int8 DIV of two values less their zero points
// (reference/div.h, DivElementwise), before the output zero point: the
// signs moved onto a, the Q0.31 reciprocal of b (GetReciprocal with 31
// integer bits), a scaled up by its redundant sign bits and multiplied by
// it, then rescaled by (m, shift) with the reciprocal's and the headroom's
// shifts. TFLite leaves b = 0 undefined (a debug check); here it gives
// ±2^30 by a's sign (0 for a = 0), which clamps to the output range.
// A rounding shift past 31 bits gives 0, which is x / 2^e rounded for any
// int32 x (TFLite's RoundingDivideByPOT is undefined there).
func DivInt8(a, b int32, m int32, shift int) int32 {
	if b == 0 {
		switch {
		case a > 0:
			return 1 << 30
		case a < 0:
			return -1 << 30
		}
		return 0
	}
	if b < 0 {
		a, b = -a, -b
	}
	inv, rs := GetReciprocal(b, 31)
	h := CountLeadingSignBits32(a)
	uq := SaturatingRoundingDoublingHighMul(int32(uint32(a)<<uint(h)), inv)
	e := h + rs - shift
	v := SaturatingRoundingDoublingHighMul(uq, m)
	if e > 31 {
		return 0
	}
	return RoundingDivideByPOT(v, e)
}

// CountLeadingSignBits32 is TFLite's CountLeadingSignBits on int32 (gcc's
// __builtin_clrsb, 31 for 0): how far x can shift left without overflow.
func CountLeadingSignBits32(x int32) int {
	if x < 0 {
		x = ^x
	}
	return bits.LeadingZeros32(uint32(x)) - 1
}
