package tir

import (
	"fmt"
	"math/rand"
	"testing"
)

// The shared 3×3 depthwise helper against the generic compute: padded and
// unpadded, strides 1 and 2, and the per-quad schedule when it is off.
func TestDSPDepthwise3x3KeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		ch, stride, pad int
		knobs           map[string]int
		want            string
	}{
		{8, 1, 1, nil, IntrDSPDW3x3},
		{12, 2, 1, nil, IntrDSPDW3x3},
		{16, 1, 0, nil, IntrDSPDW3x3},
		{4, 2, 0, nil, IntrDSPDW3x3},
		{8, 1, 1, map[string]int{"dw3x3": 0}, IntrDSPDW4},
	} {
		name := fmt.Sprintf("ch%d_s%d_p%d_%v", c.ch, c.stride, c.pad, c.knobs)
		g, n := int8Conv(r, c.ch, c.ch, c.ch, 3, c.stride, c.pad)
		f := computeFunc(t, g, n)
		s := dspSchedule(t, computeFunc(t, g, n), c.knobs)
		if !usesIntrinsic(s, c.want) {
			t.Fatalf("%s: schedule does not use %s:\n%s", name, c.want, s)
		}
		sameResult(t, name, Finalize(f), s)
	}
}
