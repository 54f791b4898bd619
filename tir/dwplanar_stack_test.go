package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// dspScheduleStack is dspSchedule on a dsp target whose kernels may take
// stack bytes of local arrays (Target.StackBytes; 0: no limit known).
func dspScheduleStack(t *testing.T, f *PrimFunc, stack int, knobs map[string]int) *PrimFunc {
	t.Helper()
	tg := *DSP
	tg.StackBytes = stack
	if knobs != nil {
		tg = tg.WithKnobs(f.Op, knobs)
	}
	g, err := tg.schedule(f)
	if err != nil {
		t.Fatal(err)
	}
	return Finalize(g)
}

// A 3×3 depthwise layer whose planar ring (three rows of channel planes)
// is past the target's stack runs the planar form in slices of its
// channels, each over a ring of its own within the stack (session 53);
// where even four channels' ring is past it, the next form the schedule
// has (the shared helper, or with dw3x3 0 the channel-quad kernel). Each
// computes what the definition does, in place too, and needs no more than
// the stack; with no limit known, or one it fits, the planar form stays
// whole. (MobileNet v2 at 224×224 on mps2-an386: 112 columns of 96
// channels, a 65,664 B ring, against 15,360 B for local arrays.)
func TestDSPDepthwisePlanarStackLimit(t *testing.T) {
	const an386 = 16384 - 1024 // its stack_bytes less pipeline.StackFrames
	r := rand.New(rand.NewSource(5))
	for _, c := range []struct {
		h, w, c, stride int
		act             graph.Activation
		ring            int // bytes: 3 · c · wp2 · 4
	}{
		{4, 112, 96, 1, graph.ActRelu6, 3 * 96 * 57 * 4},
		{5, 113, 96, 2, graph.ActNone, 3 * 96 * 58 * 4},
		{3, 57, 144, 1, graph.ActNone, 3 * 144 * 30 * 4},
	} {
		what := fmt.Sprintf("%dx%dx%d s%d", c.h, c.w, c.c, c.stride)
		g, n := dwConv(r, c.h, c.w, c.c, c.stride, 1, -128, c.act)
		ref := Finalize(computeFunc(t, g, n))

		// Within the stack, or with no limit known: planar, by default
		// and in place.
		for _, stack := range []int{0, c.ring, 1 << 20} {
			f := computeFunc(t, g, n)
			f.WantInPlace = true
			s := dspScheduleStack(t, f, stack, nil)
			if !usesIntrinsic(s, "dsp_dwp3") || !s.InPlaceSafe {
				t.Fatalf("%s, stack %d: not the planar form (in place %v):\n%s", what, stack, s.InPlaceSafe, s)
			}
			if got := s.ScratchBytes(); got != c.ring {
				t.Errorf("%s: ring of %d B, want %d", what, got, c.ring)
			}
		}

		// Past it: slices of the channels, each ring within the stack.
		for _, stack := range []int{an386, c.ring - 1} {
			what := fmt.Sprintf("%s, stack %d", what, stack)
			f := computeFunc(t, g, n)
			f.WantInPlace = true
			s := dspScheduleStack(t, f, stack, nil)
			if !usesIntrinsic(s, "dsp_dwp3") || !s.InPlaceSafe {
				t.Fatalf("%s: not the planar form in slices (in place %v):\n%s", what, s.InPlaceSafe, s)
			}
			if got := s.ScratchBytes(); got > stack || got >= c.ring {
				t.Errorf("%s: ring of %d B (whole: %d)", what, got, c.ring)
			}
			sameResult(t, what, ref, s)
		}

		// Past four channels' ring: the shared helper, then the quad
		// kernel, whatever the knobs or the plan ask for; neither has a
		// local array past the stack, and both compute what the
		// definition does.
		for _, stack := range []int{c.ring/c.c*4 - 1} {
			for _, k := range []struct {
				knobs map[string]int
				want  string
			}{
				{nil, IntrDSPDW3x3},
				{map[string]int{"dw_planar": 1}, IntrDSPDW3x3},
				{map[string]int{"dw_planar": 1, "dw3x3": 0}, IntrDSPDW4},
			} {
				what := fmt.Sprintf("%s, stack %d, knobs %v", what, stack, k.knobs)
				f := computeFunc(t, g, n)
				f.WantInPlace = true
				s := dspScheduleStack(t, f, stack, k.knobs)
				if usesIntrinsic(s, "dsp_dwp3") || usesIntrinsic(s, IntrDSPPlanes) || !usesIntrinsic(s, k.want) {
					t.Fatalf("%s: not the %s form:\n%s", what, k.want, s)
				}
				if s.InPlaceSafe {
					t.Errorf("%s: in place without the planar ring", what)
				}
				if got := s.ScratchBytes(); got > stack {
					t.Errorf("%s: %d B of local arrays", what, got)
				}
				// The declined form's knobs are not offered to the tuner
				// (read, so recorded, by the schedule), unless given.
				for _, name := range []string{"dw_planar", "dw_step"} {
					if _, ok := s.Knobs[name]; ok && k.knobs[name] == 0 {
						t.Errorf("%s: offers %s: %v", what, name, s.Knobs)
					}
				}
				sameResult(t, what, ref, s)
			}
		}
	}
}
