package qmath

// SquaredDifferenceParams16 derives int16 SQUARED_DIFFERENCE's parameters as
// TFLite Micro's PrepareQuantized does for int16 (zero points 0): no left
// shift (the values are 16 bits already), the inputs rescaled to twice the
// larger input scale, the output multiplier (2·max)² / double(float(2^0 · s_y)).
// The squared difference of the rescaled inputs stays below 2^30 + 1, so
// Apply's int32 arithmetic does not overflow.
func SquaredDifferenceParams16(s1, s2, sy float32) SquaredDiffParams {
	twice := 2 * float64(max(s1, s2))
	p := SquaredDiffParams{LeftShift: 0}
	p.In1Mult, p.In1Shift = QuantizeMultiplier(float64(s1) / twice)
	p.In2Mult, p.In2Shift = QuantizeMultiplier(float64(s2) / twice)
	p.OutMult, p.OutShift = QuantizeMultiplier(twice * twice / float64(sy))
	return p
}
