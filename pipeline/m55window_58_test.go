package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A convolution without padding on the M55 gathers each output pixel's
// window (KH*KW*Cin contiguous) as a padded one does, where it ran the
// reduction kernel row by kernel row over the input with vectors a fraction
// full: the default must be bit-exact and take at most 2/3 of the
// instructions of the ungathered form (pixel_window_below 0), which it took
// before (session 58 review: MNIST's and KWS_op's valid layers, where tune
// found window 2 at 0.42x and 0.46x).
func TestM55ValidConvWindow58(t *testing.T) {
	b := qemuBoard(t, "mps3-an547")
	for _, c := range [][7]int{{28, 28, 1, 8, 3, 3, 1}, {10, 10, 64, 64, 3, 3, 1}, {49, 10, 1, 8, 10, 4, 1}, {17, 17, 16, 32, 3, 3, 2}} {
		g := func() *graph.Graph {
			return tirtest.ConvRectPad(c[0], c[1], c[2], c[3], c[4], c[5], c[6], graph.Padding{}, graph.ActRelu, -128)
		}
		def := checkedRun(t, g(), "valid", Options{Board: b, Version: "test"}, 1, 58)
		old := checkedRun(t, g(), "rows", Options{Board: b, Version: "test", Knobs: map[string]map[string]int{"conv2d": {"pixel_window_below": 0}}}, 1, 58)
		if 3*def > 2*old {
			t.Errorf("%v: default %d instructions, ungathered %d: want the window's form at most 2/3 of it", c, def, old)
		}
		t.Logf("%v: default %d, ungathered %d", c, def, old)
	}
}
