package qmath

import (
	"math"
	"testing"
)

// ActivationRange is TFLite's CalculateActivationRangeQuantized where its
// bounds fit int32 (hand-worked: scale 1/64, zero point 10: ±1 is ±64
// steps, 6 is 384, past 127), and saturates where they do not: an output
// scale of 1e-10 puts ±1 about 10^10 steps from the zero point, beyond the
// int8 range on both sides, so nothing is clamped (it wrapped to lo =
// 2,147,483,520 > hi = 127; review finding). A bound is never outside
// [qmin, qmax], and lo <= hi always.
func TestActivationRangeSaturates53(t *testing.T) {
	for _, c := range []struct {
		act    string
		scale  float32
		zp     int32
		lo, hi int32
	}{
		{"relu_n1_to_1", 1.0 / 64, 10, -54, 74},
		{"relu6", 1.0 / 64, 10, 10, 127},
		{"relu", 1.0 / 64, 10, 10, 127},
		{"relu6", 0.05, -128, -128, -8},
		{"relu_n1_to_1", 1e-10, -128, -128, 127},
		{"relu_n1_to_1", 1e-10, 0, -128, 127},
		{"relu_n1_to_1", 1e-10, 127, -128, 127},
		{"relu6", 1e-10, 13, 13, 127},
		{"relu_n1_to_1", 4.6e-10, -128, -128, 127},
		{"relu_n1_to_1", float32(math.SmallestNonzeroFloat32), 5, -128, 127},
		{"relu_n1_to_1", float32(math.Inf(1)), 5, 5, 5},
		{"none", 1e-10, 3, -128, 127},
	} {
		lo, hi := ActivationRange(c.act, c.scale, c.zp, -128, 127)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s, scale %g, zero point %d: [%d, %d], want [%d, %d]", c.act, c.scale, c.zp, lo, hi, c.lo, c.hi)
		}
	}
	// int16 outputs: the same saturation to their range.
	if lo, hi := ActivationRange("relu_n1_to_1", 1e-12, 0, -32768, 32767); lo != -32768 || hi != 32767 {
		t.Errorf("int16, scale 1e-12: [%d, %d]", lo, hi)
	}
}
