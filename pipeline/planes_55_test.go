package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The planar depthwise layout pass (dsp_planes_s8) runs the word
// positions whose two pixels are inside the row without bounds checks,
// eight channels a step where the count allows, four otherwise, and the
// rest through the checked loop: bit-exact against the reference
// interpreter for channel counts of one quad, three quads (the four-step
// loop) and six, even and odd widths, left paddings 0 to 2 (no interior
// position at all for a row of 2 under a padding of 1), strides 1 and 2.
func TestPlanesInterior55(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct{ h, w, ch, st, pd int }{
		{5, 9, 4, 1, 1}, {4, 8, 12, 1, 1}, {6, 7, 24, 2, 1}, {5, 10, 8, 2, 0}, {4, 2, 8, 1, 1}, {7, 11, 16, 1, 2}, {3, 3, 12, 2, 0},
	} {
		name := fmt.Sprintf("h%d-w%d-c%d-s%d-p%d", c.h, c.w, c.ch, c.st, c.pd)
		t.Run(name, func(t *testing.T) {
			g := func() *graph.Graph { return tirtest.DepthwiseK(c.h, c.w, c.ch, 3, c.st, c.pd, graph.ActRelu6, -128) }
			o := Options{Board: b, Version: "test"}
			s, err := CompileGraph(g(), name, o)
			if err != nil {
				t.Fatal(err)
			}
			if !cContains(s.Files, "dsp_planes_s8(") {
				t.Fatalf("%s: the C does not call dsp_planes_s8", name)
			}
			checkedRun(t, g(), name, o, 2, 55)
		})
	}
}
