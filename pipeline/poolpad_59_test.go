package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A max pool whose windows reach into the padding (PyTorch's 3×3 stride-2
// pool with padding 1 after a ResNet stem) runs each run of outputs the
// fallback partitions out as the unpadded pool's helper: bit-exact
// against the reference interpreter on the Cortex-M4, M55 and M33, and in
// at most 0.4 times the instructions of the scalar loops it took before
// (knob simd_pieces 0; a review measured 5.2 times the unpadded pool's
// instructions on the M4 and 24 times on the M55). A padded average pool
// keeps the scalar loops (through the helper, up to 1.8 times their
// instructions: a second review's 7×7×20 pool, 2×2 at stride 3), and so
// does a max pool whose every output is one value (gcc folds the loop).
func TestPaddedPoolPieces59(t *testing.T) {
	t.Parallel()
	pad1 := graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}
	for _, c := range []struct {
		board string
		g     func() *graph.Graph
		op    string
		most  float64
	}{
		{"mps2-an386", func() *graph.Graph { return tirtest.MaxPool(40, 40, 32, 3, 2, pad1, graph.ActNone) }, "max_pool2d", 0.4},
		{"mps3-an547", func() *graph.Graph { return tirtest.MaxPool(40, 40, 32, 3, 2, pad1, graph.ActNone) }, "max_pool2d", 0.2},
		{"mps2-an505", func() *graph.Graph { return tirtest.MaxPool(13, 11, 12, 3, 1, pad1, graph.ActRelu) }, "max_pool2d", 0.6},
		{"mps2-an386", func() *graph.Graph {
			return tirtest.MaxPool(9, 10, 8, 2, 2, graph.Padding{Bottom: 1, Right: 1}, graph.ActRelu6)
		}, "max_pool2d", 0.8},
		{"mps2-an386", func() *graph.Graph { return tirtest.AvgPool(20, 20, 32, 3, 1, pad1, false, graph.ActNone) }, "avg_pool2d", 1},
		{"mps3-an547", func() *graph.Graph {
			return tirtest.AvgPool(7, 7, 20, 2, 3, graph.Padding{Top: 1, Left: 1}, false, graph.ActNone)
		}, "avg_pool2d", 1},
		{"mps2-an386", func() *graph.Graph { return tirtest.AvgPool(13, 11, 12, 3, 2, pad1, true, graph.ActRelu) }, "avg_pool2d", 1},
		{"mps2-an386", func() *graph.Graph {
			g := tirtest.MaxPool(12, 12, 16, 3, 2, pad1, graph.ActRelu)
			for _, name := range []string{"x", "y"} {
				g.Tensors[name].Quant.ZeroPoint = []int32{127} // every output 127
			}
			return g
		}, "max_pool2d", 1},
	} {
		b := qemuBoard(t, c.board)
		o := Options{Board: b, Version: "test"}
		n := checkedRun(t, c.g(), c.op, o, 2, 59)
		o.Knobs = map[string]map[string]int{c.op: {"simd_pieces": 0}}
		n0 := checkedRun(t, c.g(), c.op+"-scalar", o, 1, 59)
		t.Logf("%s %s: %d instructions, %d in the scalar loops (%.3f)", c.board, c.op, n, n0, float64(n)/float64(n0))
		if c.most == 1 && n != n0 || float64(n) > c.most*float64(n0) {
			t.Errorf("%s %s: %d instructions, %d in the scalar loops: want at most %.2f times", c.board, c.op, n, n0, c.most)
		}
	}
}
