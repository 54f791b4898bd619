package qmath

// LeakyReluQuantParams derives LEAKY_RELU's multipliers for an int8 or an
// int16 tensor: TFLite Micro's Prepare (CalculateOpDataLeakyRelu) is one
// for both types, the ratios sx*alpha/sy and sx/sy taken in float32 and
// widened to double for QuantizeMultiplier, which is what
// LeakyReluInt8Params computes.
func LeakyReluQuantParams(sx, alpha, sy float32) LeakyReluParams {
	return LeakyReluInt8Params(sx, alpha, sy)
}

// Apply is TFLite Micro's QuantizeLeakyRelu on d = x - input zero point,
// before the output zero point and the clamp: the identity multiplier for
// d >= 0, else the alpha multiplier. A negative alpha multiplier is
// negated, applied, and the result negated (TFLite Micro since its
// 2026-03 sync), which differs from applying the negative multiplier at
// SaturatingRoundingDoublingHighMul's ties. The negation wraps as two's
// complement for a multiplier of -2^31.
func (p LeakyReluParams) Apply(d int32) int32 {
	if d >= 0 {
		return MultiplyByQuantizedMultiplier(d, p.IdentityMult, p.IdentityShift)
	}
	if p.AlphaMult < 0 {
		return -MultiplyByQuantizedMultiplier(d, -p.AlphaMult, p.AlphaShift)
	}
	return MultiplyByQuantizedMultiplier(d, p.AlphaMult, p.AlphaShift)
}
