package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The M55's interleaved GEMV (MVE_GEMV3I_KU1) writes every step out: its
// .rept form, whose repeats gcc's size estimate of the asm statement did
// not count, put a literal pool out of a load's reach in a plain -O2 build
// of a 7×7 convolution over 7 channels (a 4×4 and a 10×4 map to 8
// channels: "offset out of range", session 57's review). Both build and
// run bit-exact.
func TestM55Conv7x7Builds57(t *testing.T) {
	b := qemuBoard(t, "mps3-an547")
	for _, hw := range [][2]int{{4, 4}, {10, 4}} {
		g := func() *graph.Graph {
			return tirtest.ConvRectPad(hw[0], hw[1], 7, 8, 7, 7, 1, graph.Padding{Top: 3, Bottom: 3, Left: 3, Right: 3}, graph.ActRelu, -128)
		}
		checkedRun(t, g(), "m55c7", Options{Board: b, Version: "test"}, 2, 57)
	}
}
