package tir

import (
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The ARMv6-M quad form (knob quad: IntrGenQuad, four channels a step over
// int32 weights) computes what the compute definition does: pointwise
// convolutions (one to several quads, reductions of 4 to 1024, the largest
// with weights at ±127 and inputs at the extremes), fully connected layers
// of one or more rows, and windows (3×3 at strides 1 and 2 with padding,
// an RGB window of 27 padded to 28); it declines channel counts that are
// not a multiple of four. A quad kernel says its weights are int32 (knob
// weights = 32), which the fit pass reads.
func TestQuadKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	type mk func() (*graph.Graph, *graph.Node)
	pw := func(h, w, cin, cout int, zp int32, extreme bool) mk {
		return func() (*graph.Graph, *graph.Node) { return int8ConvHW(r, h, w, cin, cout, 1, 1, 0, zp, extreme) }
	}
	fc := func(rows, k, n int, zp int32) mk {
		return func() (*graph.Graph, *graph.Node) { return int8FC(r, rows, k, n, zp) }
	}
	for _, c := range []struct {
		name string
		make mk
		want bool
	}{
		{"pw-3x5x32x8", pw(3, 5, 32, 8, 3, false), true},
		{"pw-2x2x40x12", pw(2, 2, 40, 12, -128, false), true},
		{"pw-1x1x4x4", pw(1, 1, 4, 4, 0, false), true},
		{"pw-extreme-k1024", pw(1, 2, 1024, 4, -5, true), true},
		{"pw-cout6", pw(2, 3, 32, 6, 0, false), false},
		{"pw-k6", pw(2, 3, 6, 4, 0, false), false},
		{"fc-1x64x12", fc(1, 64, 12, 0), true},
		{"fc-3x32x8", fc(3, 32, 8, 9), true},
		{"fc-1x32x10", fc(1, 32, 10, 0), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, n := c.make()
			base := computeFunc(t, g, n)
			s, ok := scheduleQuad(withKnobs(computeFunc(t, g, n), map[string]int{"quad": 1}))
			checkQuad(t, c.name, base, s, ok, c.want)
		})
	}
	for _, c := range []struct {
		name                            string
		h, w, cin, cout, k, stride, pad int
		zp                              int32
		want                            bool
	}{
		{"3x3-s1-p1", 5, 6, 8, 8, 3, 1, 1, -128, true},
		{"3x3-s2-p1", 7, 7, 16, 4, 3, 2, 1, 3, true},
		{"2x2-cin1", 4, 5, 1, 4, 2, 1, 0, 0, true},
		{"rgb-k27", 6, 5, 3, 8, 3, 2, 1, -128, true},
		{"cout6", 5, 5, 8, 6, 3, 1, 1, 0, false},
	} {
		t.Run("window-"+c.name, func(t *testing.T) {
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, false)
			base := computeFunc(t, g, n)
			s, ok := scheduleQuadWindow(withKnobs(computeFunc(t, g, n), map[string]int{"quad": 1}))
			checkQuad(t, c.name, base, s, ok, c.want)
		})
	}
}

// checkQuad checks a quad schedule's result s (ok: it applied) against
// want, and where it applied that it calls IntrGenQuad, says its weights
// are int32, and computes what base does.
func checkQuad(t *testing.T, name string, base, s *PrimFunc, ok, want bool) {
	t.Helper()
	if ok != want {
		t.Fatalf("ok = %v, want %v", ok, want)
	}
	if !ok {
		return
	}
	if !usesIntrinsic(s, IntrGenQuad) || s.Knobs["weights"] != 32 {
		t.Fatalf("no %s call, or knob weights %d:\n%s", IntrGenQuad, s.Knobs["weights"], s)
	}
	sameResult(t, name, base, Finalize(s))
}

// The blocked schedules take the quad form where knob quad is 1, and leave
// it where the fit pass gave the kernel int8 weights (weights = 8) or the
// knob is 0.
func TestQuadKnobs(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	for _, c := range []struct {
		knobs map[string]int
		want  bool
	}{
		{map[string]int{"quad": 1}, true},
		{map[string]int{"quad": 1, "weights": 8}, false},
		{map[string]int{"quad": 0}, false},
	} {
		g, n := int8ConvHW(r, 2, 3, 16, 8, 1, 1, 0, 1, false)
		s, err := scheduleConvBlocked(withKnobs(computeFunc(t, g, n), c.knobs))
		if err != nil {
			t.Fatal(err)
		}
		g2, n2 := int8FC(r, 2, 16, 8, 0)
		s2, err := scheduleFCBlocked(withKnobs(computeFunc(t, g2, n2), c.knobs))
		if err != nil {
			t.Fatal(err)
		}
		if usesIntrinsic(s, IntrGenQuad) != c.want || usesIntrinsic(s2, IntrGenQuad) != c.want {
			t.Errorf("knobs %v: quad conv %v, FC %v; want %v", c.knobs, usesIntrinsic(s, IntrGenQuad), usesIntrinsic(s2, IntrGenQuad), c.want)
		}
	}
}
