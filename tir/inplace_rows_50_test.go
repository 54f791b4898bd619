package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
)

// The dsp and mve targets' own in-place forms are int8; their float
// convolutions are row-staged as the generic target's are (a float32 VWW on
// the Cortex-M4 planned 221,184 B, where generic took 184,320 B). The staged
// kernel computes what the kernel computes out of place with its output over
// its input: pointwise forward and backward, depthwise at strides 1 and 2,
// padded, dilated and 5×5.
func TestFloatRowStagedOnSIMDTargets50(t *testing.T) {
	r := rand.New(rand.NewSource(50))
	for _, tg := range []Target{*DSP, *MVE} {
		for _, c := range []struct {
			h, w, cin, cout, k, stride, pad, dil int
			dw                                   bool
		}{
			{4, 6, 8, 8, 1, 1, 0, 1, false}, {4, 6, 4, 10, 1, 1, 0, 1, false}, {3, 5, 16, 8, 1, 1, 0, 1, false},
			{7, 7, 6, 0, 3, 1, 1, 1, true}, {8, 7, 4, 0, 3, 2, 1, 1, true}, {9, 9, 4, 0, 3, 1, 2, 2, true},
			{6, 6, 4, 0, 5, 1, 2, 1, true}, {12, 12, 8, 0, 3, 1, 1, 1, true},
		} {
			what := fmt.Sprintf("%s float %dx%d %d->%d k%d s%d p%d d%d dw %v", tg.Name, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.dil, c.dw)
			g, n := floatConv(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.dil, c.dw)
			if !InPlaceOKFor(tg.Name, g)(n) {
				t.Fatalf("%s: not offered in place", what)
			}
			ref, s := rowStagedPair(t, g, n, tg)
			runAliased(t, what, ref, s, r)
		}
		// The whole lowering takes the staged form where the plan asks.
		g, n := floatConv(r, 6, 6, 8, 16, 1, 1, 0, 1, false)
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		opt := memplan.DefaultOptions()
		opt.InPlaceOK = InPlaceOKFor(tg.Name, g)
		p, err := memplan.Build(g, opt)
		if err != nil {
			t.Fatal(err)
		}
		p.InPlace[n.Name] = true
		if _, err := Lower(g, p, tg); err != nil {
			t.Errorf("%s: Lower of an in-place float pointwise layer: %v", tg.Name, err)
		}
	}
	// An int8 layer the SIMD schedules have no in-place form for is still
	// not offered there (row staging stays the generic target's for int8).
	g, n := dwConv(r, 6, 6, 8, 1, 1, -7, graph.ActRelu)
	n.Attrs.(*graph.Conv2DAttrs).Requant = graph.RequantFloat
	if rowStagedTarget(DSP.Name, g, n) || rowStagedTarget(MVE.Name, g, n) {
		t.Error("an int8 layer is row-staged on dsp or mve")
	}
	if rowStagedTarget(NEON.Name, g, n) {
		t.Error("neon row-stages")
	}
}
