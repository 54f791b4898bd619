package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
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

// The packed requantization equals dsp_requant_s8 on its unpacked
// parameters, including negative accumulators and folded zero points.
func TestDSPRequantPacked(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for i := 0; i < 2000; i++ {
		e := int64(1 + r.Intn(22))
		zk := int64(r.Intn(255) - 128)
		k0 := dspRequantK0(e, zk)
		m := int64(1<<30 + r.Intn(1<<30))
		x := int64(r.Int31()>>uint(r.Intn(31))) * int64(1-2*r.Intn(2))
		p := &graph.Data{DType: I32, I: []int64{int64(int32(uint32(k0))), k0 >> 32, m, e - 1}}
		got := extIntrinsics[IntrDSPRequantP]([]val{{i: x}, {p: p}, {i: 0}, {i: -128}, {i: 127}}).i
		want := min(max(int64(RequantQ(int32(x), int32(m), -int32(e)))+zk, -128), 127)
		if got != want {
			t.Fatalf("x %d m %d e %d zk %d: got %d, want %d", x, m, e, zk, got, want)
		}
	}
}
