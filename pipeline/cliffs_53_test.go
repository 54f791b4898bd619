package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A convolution whose ring of widened input rows is past the stack the
// board leaves a kernel (15,360 B on mps2-an386) takes the dsp target's
// im2col form, not the generic C: it went to the next target at about 2.8
// times the instructions (review finding: a 3×3 32→32 layer 80 pixels
// wide, and a 1-D layer of 128 channels over 64 frames). Each runs
// bit-exact against the reference interpreter, in under half the generic
// target's instructions for the same layer (which it took before).
func TestWideRowsKeepTheDSPForm53(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"conv3x3-w80", func() *graph.Graph { return tirtest.ConvK(8, 80, 32, 32, 3, 1, graph.ActRelu, -128) }},
		{"conv1d-c128-t64", func() *graph.Graph { return tirtest.ConvRect(1, 64, 128, 64, 1, 3, graph.ActNone, 5) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Board: b, Version: "test"}
			got := checkedRun(t, c.g(), c.name, o, 2, 53)
			o.Target = "generic"
			gen := checkedRun(t, c.g(), c.name+"-generic", o, 1, 53)
			t.Logf("%s on mps2-an386: %d instructions, the generic target %d", c.name, got, gen)
			if 2*got > gen {
				t.Errorf("%s: %d instructions, the generic target %d: want under half (the dsp form)", c.name, got, gen)
			}
		})
	}
}
