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
	t.Parallel()
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

// Where the valid convolution's pixel window cannot help, the M55 keeps the
// form without one: one output column (no ow loop to gather at), a dilated
// window (it spans pixels no tap reads) and a window whose scratch passes
// the stack (the lowering would give the layer to the generic loops). The
// default must then be bit-exact and take no more instructions than the
// ungathered form (session 58 review of the window: 4,041 → 60,462, 39,383
// → 47,200 and 178,267 → 2,264,976 before the fallback).
func TestM55ValidConvWindowDeclines58(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps3-an547")
	dilated := func() *graph.Graph {
		g := tirtest.ConvRectPad(12, 12, 16, 8, 3, 3, 1, graph.Padding{}, graph.ActRelu, -128)
		g.Nodes[0].Attrs.(*graph.Conv2DAttrs).Dilation = [2]int{2, 2}
		g.Tensors["y"].Shape = []int{1, 8, 8, 8}
		return g
	}
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"one output column", func() *graph.Graph {
			return tirtest.ConvRectPad(10, 3, 16, 16, 3, 3, 1, graph.Padding{}, graph.ActNone, 3)
		}},
		{"dilation 2", dilated},
		{"window past the stack", func() *graph.Graph {
			return tirtest.ConvRectPad(10, 10, 341, 4, 3, 3, 1, graph.Padding{}, graph.ActNone, 3)
		}},
	} {
		def := checkedRun(t, c.g(), "valid", Options{Board: b, Version: "test"}, 1, 58)
		old := checkedRun(t, c.g(), "rows", Options{Board: b, Version: "test", Knobs: map[string]map[string]int{"conv2d": {"pixel_window_below": 0}}}, 1, 58)
		if def > old {
			t.Errorf("%s: default %d instructions, ungathered %d", c.name, def, old)
		}
		t.Logf("%s: default %d, ungathered %d", c.name, def, old)
	}
}
