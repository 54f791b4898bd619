package qmath

import "fmt"

// SumInt8Params are the parameters of TFLite Micro's int8 ADD_N and CUMSUM
// (kernels/add_n.cc and kernels/cumsum.cc, reference/add_n.h and
// reference/cumsum.h), derived in double as their Prepare derives them:
// each value less the zero point is shifted left by LeftShift (20) and
// rescaled by InMult, InShift (s_x / 2·s_x, one half); the int32 sum is
// rescaled by OutMult, OutShift (2·s_x / (2^20·s_y)) and the output zero
// point added, clamped to int8.
//
// The sum does not start at 0: both kernels start it at the rescaled input
// offset, −z_x·2^19 (the "x = 0" of their comments is the input offset, the
// negated zero point), so every sum, and an exclusive CUMSUM's first
// output, holds one −z_x more than the real sum. mcugen copies the term to
// be bit-exact with TFLite Micro, the only runtime with these int8 kernels.
type SumInt8Params struct {
	InZP, OutZP int32
	LeftShift   int
	InMult      int32
	InShift     int
	OutMult     int32
	OutShift    int
}

// SumInt8ParamsFor derives SumInt8Params from the input's and the output's
// scale and zero point. It fails where TFLite Micro's Prepare stops: its
// QuantizeMultiplierSmallerThanOneExp needs the output multiplier in
// (0, 1) and a shift of at most 0.
func SumInt8ParamsFor(op string, sx float32, zx int32, sy float32, zy int32) (SumInt8Params, error) {
	p := SumInt8Params{InZP: zx, OutZP: zy, LeftShift: 20}
	twice := 2 * float64(sx)
	m := twice / (float64(int64(1)<<p.LeftShift) * float64(sy))
	if !(m < 1) || !(m > 0) {
		return p, fmt.Errorf("int8 %s: output multiplier 2·s_x/(2^20·s_y) = %.4g (input scale %g, output scale %g) must lie in (0, 1); TFLite Micro's Prepare refuses it", op, m, sx, sy)
	}
	p.InMult, p.InShift = QuantizeMultiplier(float64(sx) / twice)
	p.OutMult, p.OutShift = QuantizeMultiplier(m)
	if p.OutShift > 0 || p.InShift > 0 {
		return p, fmt.Errorf("int8 %s: output multiplier %.10g rounds to 1; TFLite Micro's Prepare refuses it", op, m)
	}
	return p, nil
}

// Scaled is one stored value q rescaled: (q − z_x)·2^20 times one half.
func (p SumInt8Params) Scaled(q int32) int32 {
	return MultiplyByQuantizedMultiplier((q-p.InZP)*int32(1<<uint(p.LeftShift)), p.InMult, p.InShift)
}

// Start is the value both kernels start their sums at: the input offset
// −z_x rescaled as the values are (Scaled(0)).
func (p SumInt8Params) Start() int32 { return p.Scaled(0) }

// Out is the stored output of a sum acc (int32, wrapping as TFLite Micro's
// additions do on the targets it runs on).
func (p SumInt8Params) Out(acc int32) int32 {
	v := MultiplyByQuantizedMultiplier(acc, p.OutMult, p.OutShift) + p.OutZP
	return max(-128, min(127, v))
}
