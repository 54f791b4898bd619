package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// Planar depthwise layers scaled to one shift (knob requant_shift): the
// 3×3 form without a ReLU (dsp_dwp3sn_s8, with TFLite's sign correction)
// and the 5×5, 7×7 and 1×k forms with or without one. Bit-exact against
// the reference interpreter at random and extreme inputs, output zero
// points at both ends, on the Cortex-M4; and in at most the given share of
// the instructions of the same layer with the knob off (measured 0.88 to
// 0.98 when written). A 5×5 or 7×7 window at stride 2 without a ReLU
// keeps the packed form by default (its pair loop spilled: 1.056 times),
// so there the two builds are the same.
func TestDepthwiseSharedShift59(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	pad2 := graph.Padding{Left: 2, Right: 2}
	for _, c := range []struct {
		name   string
		g      func() *graph.Graph
		kernel string
		most   float64 // of the knob-off build's instructions; 1: the same build
	}{
		{"3x3-none-s1", func() *graph.Graph { return tirtest.DepthwiseK(12, 24, 32, 3, 1, 1, graph.ActNone, 127) }, tir.IntrDSPDWPlanarSN, 0.92},
		{"3x3-none-s2", func() *graph.Graph { return tirtest.DepthwiseK(12, 24, 32, 3, 2, 1, graph.ActNone, -100) }, tir.IntrDSPDWPlanarSN, 0.94},
		{"1x5-none-s1", func() *graph.Graph { return tirtest.DepthwiseRect(1, 48, 64, 1, 5, 1, pad2, graph.ActNone, -3) }, "dsp_dwp1x5_s8", 0.95},
		{"1x5-relu-s1", func() *graph.Graph { return tirtest.DepthwiseRect(1, 48, 64, 1, 5, 1, pad2, graph.ActRelu, -128) }, "dsp_dwp1x5_s8", 0.92},
		{"5x5-none-s1", func() *graph.Graph { return tirtest.DepthwiseK(12, 24, 32, 5, 1, 2, graph.ActNone, 5) }, tir.IntrDSPDWPlanar5, 0.98},
		{"7x7-relu-s2", func() *graph.Graph { return tirtest.DepthwiseK(11, 17, 12, 7, 2, 3, graph.ActRelu, -128) }, tir.IntrDSPDWPlanar7, 0.99},
		{"5x5-none-s2", func() *graph.Graph { return tirtest.DepthwiseK(11, 15, 24, 5, 2, 2, graph.ActNone, 3) }, tir.IntrDSPDWPlanar5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			againstKnobOff(t, c.g, c.name, Options{Board: b, Version: "test"}, c.kernel, "depthwise_conv2d", "requant_shift", c.most)
		})
	}
}

// againstKnobOff compiles g with o and checks that its C calls kernel,
// runs it bit-exact against the reference interpreter with op's knob set
// to 0 and without, and fails unless the default build takes at most most
// times the other's instructions (most 1: the same build, the same count).
func againstKnobOff(t *testing.T, g func() *graph.Graph, name string, o Options, kernel, op, knob string, most float64) {
	t.Helper()
	s, err := CompileGraph(g(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, kernel+"(") {
		t.Fatalf("%s: the C does not call %s", name, kernel)
	}
	n := checkedRun(t, g(), name, o, 2, 59)
	o.Knobs = map[string]map[string]int{op: {knob: 0}}
	n0 := checkedRun(t, g(), name+"-off", o, 1, 59)
	t.Logf("%s on %s: %d instructions, %d with %s 0 (%.3f)", name, o.Board.Name, n, n0, knob, float64(n)/float64(n0))
	if most == 1 && n != n0 || float64(n) > most*float64(n0) {
		t.Errorf("%s: %d instructions, %d with %s 0: want at most %.2f times (1: the same)", name, n, n0, knob, most)
	}
}
