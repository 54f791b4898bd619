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
	t.Parallel()
	b := qemuBoard(t, "mps3-an547")
	flat := flatOutput
	for _, c := range []struct {
		name   string
		g      func() *graph.Graph
		kernel string
		most   float64 // of Helium's instructions (1: Helium declines it either way, the same build)
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
			againstKnobOff(t, c.g, c.name, Options{Board: b, Version: "test", IOInArena: true}, c.kernel, "depthwise_conv2d", "dw_dsp_1d", c.most)
		})
	}
}
