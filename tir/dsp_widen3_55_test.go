package tir

import (
	"fmt"
	"testing"
)

// An RGB layer's widened rows carry the next pixel's first channel in each
// pixel's fourth lane (IntrDSPWiden3: one SXTAB16 a word, no mask); the
// fourth channel's weights are zero, so the row form (its pixel blocks, a
// lone pixel's gathered column, rows_gather) gives the reference's
// outputs, at the input extremes too (x = -128 with zero
// point 127 is -255 in every lane, the fourth included; 127 with -128 is
// 255), and with full-range weights.
func TestDSPWiden3NextPixel55(t *testing.T) {
	for _, c := range []struct {
		stride int
		xzp    int32
		x, wv  func(i int) int64
		knobs  map[string]int
	}{
		{1, 127, func(int) int64 { return -128 }, func(int) int64 { return -128 }, nil},
		{2, -128, func(int) int64 { return 127 }, func(i int) int64 { return 127 - 255*int64(i%2) }, nil},
		{1, -128, func(i int) int64 { return 127 - 255*int64(i%2) }, func(int) int64 { return 127 }, map[string]int{"rows_gather": 1}},
		{1, 127, func(i int) int64 { return -128 + 255*int64(i%3/2) }, func(i int) int64 { return -128 + 255*int64(i%5%2) }, map[string]int{"block_px": 2}},
		{1, 0, func(i int) int64 { return int64(i*37%255 - 127) }, func(i int) int64 { return int64(i*11%255 - 127) }, map[string]int{"block_px": 1}},
	} {
		what := fmt.Sprintf("stride %d zp %d %v", c.stride, c.xzp, c.knobs)
		g, n := winoConv(6, 9, 3, 4, c.stride, 1, c.xzp, c.wv)
		// The rows form (a 3×3 layer otherwise gathers 14-word columns,
		// TestDSPCol33Exact55).
		knobs := map[string]int{"col33": 0}
		for k, v := range c.knobs {
			knobs[k] = v
		}
		s := dspSchedule(t, computeFunc(t, g, n), knobs)
		if !usesIntrinsic(s, IntrDSPWiden3) {
			t.Fatalf("%s: no %s in\n%s", what, IntrDSPWiden3, s)
		}
		runBoth(t, what, Finalize(computeFunc(t, g, n)), s, c.x)
	}
}
