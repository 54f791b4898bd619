package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A clang build for the Cortex-M55 with --target generic of a 5×1
// convolution padded above and below: clang 14's loop vectorizer crashed
// (exit status 139, a segfault in an in-loop reduction for MVE) on the
// generic blocked schedule's partly padded rows (a review's random
// graph). Those builds compile with the loop vectorizer off; it runs
// bit-exact.
// The same layer, and a 5×5 one, on the default target build with clang
// too, the vectorizer off there as well since session 60: with uint8
// weights at a zero point (as ONNX QLinearConv models have them) neither
// Helium nor the dsp kernels take the layer, the generic rows run on the
// default target, and clang crashed the same way (review finding).
func TestClangM55GenericConv59(t *testing.T) {
	needClang(t)
	b := qemuBoard(t, "mps3-an547")
	g := func() *graph.Graph {
		return tirtest.ConvRectPad(4, 8, 7, 12, 5, 1, 1, graph.Padding{Top: 2, Bottom: 2}, graph.ActNone, 0)
	}
	checkedRun(t, g(), "clang5x1", Options{Board: b, Version: "test", Target: "generic", Compiler: runner.CompilerClang}, 2, 59)
	checkedRun(t, g(), "clang5x1-mve", Options{Board: b, Version: "test", Compiler: runner.CompilerClang}, 1, 59)
	g5 := tirtest.ConvRectPad(6, 8, 3, 3, 5, 5, 1, graph.Padding{Top: 2, Bottom: 2, Left: 2, Right: 2}, graph.ActNone, 0)
	checkedRun(t, g5, "clang5x5-mve", Options{Board: b, Version: "test", Compiler: runner.CompilerClang}, 1, 59)
	u8 := g()
	w := u8.Tensors["w"]
	d := graph.NewData(graph.UInt8, w.Shape)
	for i := range d.I {
		d.I[i] = w.Data.I[i] + 128
	}
	w.Data, w.DType = d, graph.UInt8
	for i := range w.Quant.ZeroPoint {
		w.Quant.ZeroPoint[i] = 128
	}
	checkedRun(t, u8, "clang5x1-mve-u8w", Options{Board: b, Version: "test", Compiler: runner.CompilerClang}, 1, 60)
}
