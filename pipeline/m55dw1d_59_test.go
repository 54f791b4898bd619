package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// On the Cortex-M55, depthwise layers with a one-dimensional window (1×k
// along a row, and k×1 over one column, which the graph then lays out as
// a row: graph.ColumnConvAsRow, depthwise layers only) run the dsp
// target's planar forms: bit-exact against the reference interpreter, and
// in at most 0.75 times the instructions of Helium's forms (knob dw_dsp_1d
// 0) where those take the layer. The streaming wake word model's four
// such layers took 270,710 instructions in Helium's forms, 122,961 in the
// planar ones (the model 459,920 → 312,171).
func TestM55Depthwise1D59(t *testing.T) {
	b := qemuBoard(t, "mps3-an547")
	flat := flatOutput
	for _, c := range []struct {
		name   string
		g      func() *graph.Graph
		kernel string
		most   float64 // of Helium's instructions (1: Helium declines it either way)
	}{
		{"1x5-row", func() *graph.Graph {
			return tirtest.DepthwiseRect(1, 48, 32, 1, 5, 1, graph.Padding{}, graph.ActRelu, -128)
		}, tir.IntrDSPDWPlanarName(1, 5), 0.75},
		{"5x1-column", func() *graph.Graph {
			return flat(tirtest.DepthwiseRect(40, 1, 32, 5, 1, 1, graph.Padding{}, graph.ActRelu, -128))
		}, tir.IntrDSPDWPlanarName(1, 5), 0.75},
		{"10x1-column", func() *graph.Graph {
			return flat(tirtest.DepthwiseRect(33, 1, 128, 10, 1, 1, graph.Padding{}, graph.ActNone, 7))
		}, tir.IntrDSPDWPlanarName(1, 11), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Board: b, Version: "test", IOInArena: true}
			s, err := CompileGraph(c.g(), c.name, o)
			if err != nil {
				t.Fatal(err)
			}
			if !cContains(s.Files, c.kernel+"(") {
				t.Fatalf("%s: the C does not call %s", c.name, c.kernel)
			}
			n := checkedRun(t, c.g(), c.name, o, 2, 59)
			o.Knobs = map[string]map[string]int{"depthwise_conv2d": {"dw_dsp_1d": 0}}
			n0 := checkedRun(t, c.g(), c.name+"-helium", o, 1, 59)
			t.Logf("%s on mps3-an547: %d instructions, %d in Helium's forms", c.name, n, n0)
			if float64(n) > c.most*float64(n0) {
				t.Errorf("%s: %d instructions, %d in Helium's forms: want at most %.2f times", c.name, n, n0, c.most)
			}
		})
	}
}
