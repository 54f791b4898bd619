package measure

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
	"github.com/mcugen/mcugen/tune"
)

// A Cortex-M55 layer whose weights have a zero point runs the dsp schedule
// (tir's simdSchedule), so tune searches it over the dsp knobs' declared
// values, not over guesses from their names under "mve" (unroll_k would
// have been tried at 0, which no dsp helper has), and the records it
// writes pass compile's check.
func TestM55DSPKernelTakesDSPKnobs52(t *testing.T) {
	g := tirtest.Pointwise(5, 5, 16, 16)
	for _, n := range g.Nodes {
		if n.Op == graph.Conv2D {
			w := g.Tensors[n.Inputs[1]]
			q := *w.Quant
			q.Scale, q.ZeroPoint = q.Scale[:1], []int32{9}
			w.Quant = &q
		}
	}
	opt := pipeline.Options{Board: board(t, "mps3-an547"), Version: "test"}
	s, err := pipeline.CompileGraph(g, "wzp", opt)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := Kernels(s, opt)
	if err != nil || len(ks) != 1 {
		t.Fatalf("kernels: %v, %d", err, len(ks))
	}
	k := ks[0]
	if k.KnobTarget != "dsp" {
		t.Fatalf("knob target %q, want dsp", k.KnobTarget)
	}
	// The mve schedule's markers are no knobs of the dsp one.
	for _, name := range []string{"simd", "dw_lanes"} {
		if k.Space.Values(name) != nil {
			t.Errorf("the space has %s: %v", name, k.Space.Values(name))
		}
	}
	uk := k.Space.Values("unroll_k")
	if len(uk) < 2 || slices.Contains(uk, 0) {
		t.Fatalf("unroll_k values %v", uk)
	}
	for _, v := range uk {
		if v != k.Defaults["unroll_k"] && !slices.Contains(tir.KnobValues("dsp.unroll_k"), v) {
			t.Errorf("unroll_k %d is not a declared dsp value (%v)", v, tir.KnobValues("dsp.unroll_k"))
		}
	}
	// A candidate off the defaults compiles, and its knobs pass the check
	// compile --tuning makes.
	kn := k.Defaults.Clone()
	kn["unroll_k"] = uk[0]
	st, err := compileCandidate(k, kn, opt)
	if err != nil {
		t.Fatal(err)
	}
	f := st.Module.Funcs[0]
	if f.KnobTarget != "dsp" || f.Knobs["unroll_k"] != uk[0] {
		t.Errorf("candidate: knob target %q, unroll_k %d (want dsp, %d)", f.KnobTarget, f.Knobs["unroll_k"], uk[0])
	}
	if _, bad := tune.CheckOp(f.KnobTarget, f.Op, f.Knobs, kn); len(bad) > 0 {
		t.Errorf("the candidate's knobs fail the check: %v", bad)
	}
}
