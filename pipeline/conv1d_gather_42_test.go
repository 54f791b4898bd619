package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A 1-D convolution in the dsp row form gathers its one window segment into
// a column by default (rows_gather): fewer instructions on the M4 than the
// segmented helper, bit-exact either way. Review finding: session 24's
// defaults left the segmented helper there, and a Conv1d 3→8 k5 net's first
// layer took 18,531 instructions where the gather takes 12,452 (the net
// 30,336 → 24,257).
func TestConv1DGathersByDefault(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct{ w, cin, cout, k int }{{64, 3, 8, 5}, {32, 8, 16, 3}} {
		t.Run(fmt.Sprintf("w%d-c%d-%d-k%d", c.w, c.cin, c.cout, c.k), func(t *testing.T) {
			g := func() *graph.Graph { return tirtest.ConvRect(1, c.w, c.cin, c.cout, 1, c.k, graph.ActRelu, -128) }
			defaultTakesFewer(t, b, g, nil, map[string]int{"rows_gather": 0}, "gather", "the segmented helper")
		})
	}
}
