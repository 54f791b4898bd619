package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The shared 3×3 depthwise helper (with the planar form off) against the
// generic compute: padded and unpadded, strides 1 and 2, and the per-quad
// schedule when it is off too.
func TestDSPDepthwise3x3KeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		ch, stride, pad int
		knobs           map[string]int
		want            string
	}{
		{8, 1, 1, map[string]int{"dw_planar": 0}, IntrDSPDW3x3},
		{12, 2, 1, map[string]int{"dw_planar": 0}, IntrDSPDW3x3},
		{16, 1, 0, map[string]int{"dw_planar": 0}, IntrDSPDW3x3},
		{4, 2, 0, map[string]int{"dw_planar": 0}, IntrDSPDW3x3},
		{8, 1, 1, map[string]int{"dw_planar": 0, "dw3x3": 0}, IntrDSPDW4},
	} {
		name := fmt.Sprintf("ch%d_s%d_p%d_%v", c.ch, c.stride, c.pad, c.knobs)
		g, n := int8Conv(r, c.ch, c.ch, c.ch, 3, c.stride, c.pad)
		f, s := dspKernel(t, g, n, c.knobs)
		if !usesIntrinsic(s, c.want) {
			t.Fatalf("%s: schedule does not use %s:\n%s", name, c.want, s)
		}
		sameResult(t, name, f, s)
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

// The ReLU form of the packed requantization (no sign correction) gives
// TFLite's result whenever the output's zero point is at or below lo, and
// it is needed: with lo below the zero point some negative accumulators
// round differently, which is why packRequant checks every channel.
func TestDSPRequantReluForm(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	differs := 0
	for i := 0; i < 20000; i++ {
		e := int64(1 + r.Intn(22))
		zk := int64(r.Intn(255) - 128)
		k0 := dspRequantK0(e, zk)
		m := int64(1<<30 + r.Intn(1<<30))
		if i%10 == 0 {
			m = int64(r.Intn(1 << 20)) // small multipliers too
		}
		x := int64(r.Int31()>>uint(r.Intn(31))) * int64(1-2*r.Intn(2))
		if i%4 == 0 {
			// Near a rounding tie of the first rounding: x·m ≈ (2k + 1)·2^30.
			if m > 0 {
				x = -((int64(r.Intn(1<<12))*2+1)<<30)/m - int64(r.Intn(3))
			}
		}
		p := &graph.Data{DType: I32, I: []int64{int64(int32(uint32(k0))), k0 >> 32, m, e - 1}}
		want := func(lo int64) int64 {
			return min(max(int64(RequantQ(int32(x), int32(m), -int32(e)))+zk, lo), 127)
		}
		for _, lo := range []int64{zk, min(zk+1+int64(r.Intn(5)), 127)} {
			got := extIntrinsics[IntrDSPRequantPR]([]val{{i: x}, {p: p}, {i: 0}, {i: lo}, {i: 127}}).i
			if got != want(lo) {
				t.Fatalf("x %d m %d e %d zk %d lo %d: got %d, want %d", x, m, e, zk, lo, got, want(lo))
			}
		}
		if zk > -128 {
			lo := int64(-128)
			if extIntrinsics[IntrDSPRequantPR]([]val{{i: x}, {p: p}, {i: 0}, {i: lo}, {i: 127}}).i != want(lo) {
				differs++
			}
		}
	}
	if differs == 0 {
		t.Errorf("the ReLU form never differed with lo below the zero point: the test cannot tell the forms apart")
	}
}

// packRequant takes the ReLU form only where every channel's zero point is
// at or below the clamp.
func TestDSPRequantFormChoice(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	g, n := int8Conv(r, 8, 4, 1, 3, 1, 1) // fused ReLU: lo = zero point
	if s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"requant_shift": 0}); !usesIntrinsic(s, IntrDSPRequantPR) && !usesIntrinsic(s, "dsp_gemm_s8pr") {
		t.Errorf("ReLU conv does not use %s:\n%s", IntrDSPRequantPR, s)
	}
	g, n = int8Conv(r, 8, 4, 1, 3, 1, 1)
	n.Attrs.(*graph.Conv2DAttrs).Act = graph.ActNone // zero point 5, lo -128
	// (The fused helpers take over the requantization: off here.)
	unfused := map[string]int{"gemm_fuse": 0, "requant_shift": 0}
	s := dspSchedule(t, computeFunc(t, g, n), unfused)
	if usesIntrinsic(s, IntrDSPRequantPR) || !usesIntrinsic(s, IntrDSPRequantP) {
		t.Errorf("conv without activation: want %s only:\n%s", IntrDSPRequantP, s)
	}
	// Per-tensor parameters: immediates, in the ReLU form with a fused ReLU.
	small := func(i int) int64 { return int64(i%7 - 3) }
	g, n = winoConv(6, 6, 8, 4, 1, 1, 0, small)
	g.Tensor("y").Quant.Scale = []float32{1.5} // multiplier 1/6: a right shift
	if s := dspSchedule(t, computeFunc(t, g, n), unfused); usesIntrinsic(s, IntrDSPRequantR) {
		t.Errorf("per-tensor conv without activation uses %s", IntrDSPRequantR)
	}
	g, n = winoConv(6, 6, 8, 4, 1, 1, 0, small)
	g.Tensor("y").Quant.Scale = []float32{1.5}
	n.Attrs.(*graph.Conv2DAttrs).Act = graph.ActRelu
	f, s := dspKernel(t, g, n, unfused)
	if !usesIntrinsic(s, IntrDSPRequantR) {
		t.Errorf("per-tensor ReLU conv does not use %s:\n%s", IntrDSPRequantR, s)
	}
	runBoth(t, "per-tensor ReLU", f, s, func(i int) int64 { return int64(i%9 - 4) })
}

// A channel with scale zero (an all-zero filter, as VWW's pointwise layers
// have) gets TFLite's shift 0; that must not keep its layer off the fast
// requantization, and the channel must still come out at the clamped zero
// point whatever its accumulator.
func TestDSPRequantDeadChannel(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, act := range []graph.Activation{graph.ActRelu, graph.ActNone} {
		g, n := int8Conv(r, 8, 4, 1, 1, 1, 0)
		n.Attrs.(*graph.Conv2DAttrs).Act = act
		w := g.Tensor("w")
		w.Quant.Scale[2] = 0
		for i := 2 * 8; i < 3*8; i++ {
			w.Data.I[i] = 0
		}
		g.Tensor("b").Data.I[2] = 700 // a bias the zero scale must wipe out
		f, s := dspKernel(t, g, n, nil)
		if usesIntrinsic(s, IntrRequant) || !usesIntrinsic(s, IntrDSPRequantP) && !usesIntrinsic(s, "dsp_gemm_s8p") {
			t.Fatalf("act %v: the dead channel keeps the layer off %s:\n%s", act, IntrDSPRequantP, s)
		}
		runBoth(t, "dead channel", f, s, func(i int) int64 { return int64(i*37%255 - 127) })
		// The channel's value by hand: zero point 5, clamped below at 5 (ReLU) or -128.
		a := make([]*graph.Data, len(s.Params))
		var y int
		for i, p := range s.Params {
			a[i] = graph.NewData(p.DType, []int{p.span()})
			if p.Writes {
				y = i
			} else {
				for j := range a[i].I {
					a[i].I[j] = int64(r.Intn(255) - 127)
				}
			}
		}
		if err := Run(s, a); err != nil {
			t.Fatal(err)
		}
		for j := 2; j < len(a[y].I); j += 4 {
			if a[y].I[j] != 5 {
				t.Fatalf("act %v: dead channel output %d = %d, want the zero point 5", act, j, a[y].I[j])
			}
		}
	}
}

// A depthwise convolution with a depth multiplier above one (output
// channel c reads input channel c/m) keeps its results on the dsp target
// under every depthwise form (bit-exactness fuzzing: the per-quad form read
// input channel c, and past the input's end).
func TestDSPDepthwiseMultiplier(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for _, c := range []struct{ cin, mult, k int }{{2, 2, 3}, {4, 2, 3}, {4, 3, 1}, {8, 2, 5}} {
		for _, knobs := range []map[string]int{nil, {"dw_planar": 0}, {"dw_planar": 0, "dw3x3": 0}} {
			name := fmt.Sprintf("cin%d_m%d_k%d_%v", c.cin, c.mult, c.k, knobs)
			g, n := int8Conv(r, c.cin, c.cin*c.mult, c.cin, c.k, 1, c.k/2)
			f, s := dspKernel(t, g, n, knobs)
			sameResult(t, name, f, s)
		}
	}
}
