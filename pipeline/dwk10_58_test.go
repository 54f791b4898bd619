package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A depthwise layer with an even K×1 window over a one-column map (the
// streaming wake word model's 10×1 layer) takes the planar 1×(K+1) form on
// the dsp target, one tap of weight 0 past the window over a column of
// padding (graph.ColumnConvAsRow): bit-exact on the Cortex-M4, in at most
// 3/4 of the instructions of the same layer built as 1×K, which the
// channel-quad schedule runs (that model's layer: 93,168 → 53,792), and
// bit-exact on the M55, which does not rewrite it.
func TestEvenColumnDepthwise58(t *testing.T) {
	flat := flatOutput
	m4, m55 := qemuBoard(t, "mps2-an386"), qemuBoard(t, "mps3-an547")
	for _, c := range []struct{ h, ch, k, s int }{{33, 128, 10, 1}, {40, 32, 4, 2}} {
		col := func() *graph.Graph {
			return flat(tirtest.DepthwiseRect(c.h, 1, c.ch, c.k, 1, c.s, graph.Padding{}, graph.ActNone, -3))
		}
		row := func() *graph.Graph {
			return flat(tirtest.DepthwiseRect(1, c.h, c.ch, 1, c.k, c.s, graph.Padding{}, graph.ActNone, -3))
		}
		o := Options{Board: m4, Version: "test", IOInArena: true}
		s, err := CompileGraph(col(), "col", o)
		if err != nil {
			t.Fatal(err)
		}
		if name := tir.IntrDSPDWPlanarName(1, c.k+1) + "("; !cContains(s.Files, name) {
			t.Errorf("%v: the C does not call %s", c, name)
		}
		nc := checkedRun(t, col(), "col", o, 2, 58)
		nr := checkedRun(t, row(), "row", o, 1, 58)
		if 4*nc > 3*nr {
			t.Errorf("%v: %d instructions as a column, %d as a 1×K row: want at most 3/4", c, nc, nr)
		}
		t.Logf("%v on mps2-an386: %d, as a row %d", c, nc, nr)
		checkedRun(t, col(), "col55", Options{Board: m55, Version: "test", IOInArena: true}, 2, 58)
	}
}
