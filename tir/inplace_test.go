package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// runAliased runs s with its output over its input (one array, as the
// memory plan lays an in-place node out: both at one offset, so the smaller
// of the two is the start of the larger) and f on separate arrays, on the
// same random input, and requires the same output.
func runAliased(t *testing.T, what string, f, s *PrimFunc, r *rand.Rand) {
	t.Helper()
	a := randomArgs(r, f)
	in, out := -1, -1
	for i, p := range f.Params {
		switch {
		case p.Writes:
			out = i
		case p.Scope == ScopeParam && in < 0:
			in = i
		}
	}
	if in < 0 || out < 0 {
		t.Fatalf("%s: no input or output parameter", what)
	}
	b := cloneArgs(a)
	shared := graph.NewData(b[in].DType, []int{max(b[in].Len(), b[out].Len())})
	copy(shared.I, b[in].I)
	copy(shared.F, b[in].F)
	b[in], b[out] = shared, shared
	if err := Run(f, a); err != nil {
		t.Fatalf("%s: reference: %v", what, err)
	}
	if err := Run(s, b); err != nil {
		t.Fatalf("%s: in place: %v", what, err)
	}
	for j := range a[out].I {
		if a[out].I[j] != shared.I[j] {
			t.Fatalf("%s: output[%d] = %d in place, %d apart", what, j, shared.I[j], a[out].I[j])
		}
	}
	for j := range a[out].F {
		if a[out].F[j] != shared.F[j] {
			t.Fatalf("%s: output[%d] = %g in place, %g apart", what, j, shared.F[j], a[out].F[j])
		}
	}
}

// The dsp kernels that claim InPlaceSafe compute the same output with it
// written over their input: pointwise convolutions with Cout <= Cin, and
// planar 3x3 depthwise ones (strides 1 and 2, padding 0 and 1). Those that
// cannot (Cout > Cin, the shared 3x3 depthwise helper) do not claim it.
func TestDSPInPlaceKernels(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	for _, c := range []struct{ cin, cout int }{{16, 16}, {16, 8}, {8, 4}, {12, 12}} {
		g, n := int8Conv(r, c.cin, c.cout, 1, 1, 1, 0)
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := dspSchedule(t, f, nil)
		what := fmt.Sprintf("pointwise %d->%d", c.cin, c.cout)
		if !s.InPlaceSafe {
			t.Fatalf("%s: not in-place safe", what)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
	// Cout > Cin: in place (pixels in decreasing order) only when asked.
	for _, c := range []struct{ cin, cout int }{{8, 16}, {4, 12}, {8, 12}} {
		g, n := int8Conv(r, c.cin, c.cout, 1, 1, 1, 0)
		if s := dspSchedule(t, computeFunc(t, g, n), nil); s.InPlaceSafe {
			t.Errorf("pointwise %d->%d claims to run in place unasked", c.cin, c.cout)
		}
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := dspSchedule(t, f, nil)
		what := fmt.Sprintf("pointwise %d->%d", c.cin, c.cout)
		if !s.InPlaceSafe {
			t.Fatalf("%s: not in-place safe when asked", what)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
	// Both steps, with output widths of every remainder mod 4 at both
	// strides: the four-output loop reads input only through the planes too.
	for _, c := range []struct{ h, w, c, stride, pad int }{
		{5, 5, 4, 1, 1}, {6, 7, 8, 1, 1}, {7, 6, 4, 2, 1}, {8, 8, 12, 2, 1}, {6, 6, 8, 1, 0}, {9, 9, 8, 2, 0}, {25, 5, 16, 1, 1},
		{4, 10, 4, 1, 1}, {5, 13, 4, 2, 1}, {4, 11, 4, 2, 0}, {6, 17, 4, 2, 1}, {4, 8, 8, 1, 1},
	} {
		for _, step := range []int{2, 4} {
			what := fmt.Sprintf("depthwise %dx%dx%d s%d p%d step %d", c.h, c.w, c.c, c.stride, c.pad, step)
			g, n := dwConv(r, c.h, c.w, c.c, c.stride, c.pad, -128, graph.ActRelu)
			f := computeFunc(t, g, n)
			f.WantInPlace = true
			s := dspSchedule(t, f, map[string]int{"dw_step": step})
			if !s.InPlaceSafe || !usesIntrinsic(s, "dsp_dwp3") {
				t.Fatalf("%s: the in-place request did not give the planar form", what)
			}
			runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
		}
	}
	g, n := dwConv(r, 6, 6, 8, 1, 1, -128, graph.ActRelu)
	if s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"dw_planar": 0}); s.InPlaceSafe {
		t.Errorf("the shared 3x3 depthwise helper claims to run in place")
	}
}

// The mve kernels that claim InPlaceSafe compute the same output with it
// written over their input: pointwise convolutions with Cout <= Cin as
// scheduled, and with Cout > Cin backwards when asked (three-pixel groups,
// short reductions in pixel pairs, single pixels left over); the depthwise
// lanes schedule along rows (strides 1 and 2, maps of every width mod 4) and
// along columns at stride 1 (a map it would take by columns at stride 2 goes
// by rows when in place). Pointwise layers with Cout > Cin do not claim it
// unasked.
func TestMVEInPlaceKernels(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	mve := func(f *PrimFunc) *PrimFunc {
		t.Helper()
		g, err := MVE.schedule(f)
		if err != nil {
			t.Fatal(err)
		}
		return Finalize(g)
	}
	for _, c := range []struct{ h, w, cin, cout int }{
		{3, 5, 16, 16}, {2, 7, 64, 32}, {1, 7, 8, 8}, // as scheduled
		{3, 3, 8, 16}, {3, 5, 4, 12}, {4, 5, 32, 64}, {3, 4, 16, 48}, {1, 7, 24, 40}, // backwards
	} {
		what := fmt.Sprintf("pointwise %dx%d %d->%d", c.h, c.w, c.cin, c.cout)
		g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, 1, 1, 0, -128, false)
		if c.cout > c.cin {
			if s := mve(computeFunc(t, g, n)); s.InPlaceSafe {
				t.Errorf("%s claims to run in place unasked", what)
			}
		}
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := mve(f)
		if !s.InPlaceSafe {
			t.Fatalf("%s: not in-place safe when asked", what)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
	for _, c := range []struct{ h, w, c, stride, pad int }{
		{6, 10, 8, 1, 1}, {5, 9, 12, 1, 1}, {7, 12, 8, 2, 1}, {8, 11, 4, 2, 0}, {13, 3, 8, 2, 1}, // rows
		{13, 3, 8, 1, 1}, {25, 5, 4, 1, 1}, // columns
		{10, 1, 8, 1, 1}, {9, 1, 8, 2, 1}, // one-pixel rows with padding: not lanes
	} {
		what := fmt.Sprintf("depthwise %dx%dx%d s%d p%d", c.h, c.w, c.c, c.stride, c.pad)
		g, n := dwConv(r, c.h, c.w, c.c, c.stride, c.pad, -128, graph.ActRelu)
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := mve(f)
		if c.w == 1 {
			// The padding of rows this narrow is not read back; the
			// out-of-place result must still be right.
			sameResult(t, what, Finalize(computeFunc(t, g, n)), mve(computeFunc(t, g, n)))
			continue
		}
		if !usesIntrinsic(s, "mve_"+KDwLanes) {
			t.Fatalf("%s: the in-place request did not give the lanes schedule", what)
		}
		if !s.InPlaceSafe {
			t.Fatalf("%s: not in-place safe when asked", what)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
}
