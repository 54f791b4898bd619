package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A 3x3 convolution kept with int8 weights (a flash budget's layer) takes
// the im2col form's fused GEMM by default: fewer instructions on the M4
// than the row form, which has no segmented int8 helper (a MAC call, then
// the requantization, per block), bit-exact either way. Review finding: IC
// at --flash-budget 140KB took 14,778,607 instructions, its int8 layers
// 2.2x their int16 form; now 12,120,392.
func TestInt8WeightConvTakesIm2colByDefault(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct{ h, cin, cout, stride int }{{16, 32, 32, 1}, {8, 32, 64, 2}} {
		t.Run(fmt.Sprintf("h%d-c%d-%d-s%d", c.h, c.cin, c.cout, c.stride), func(t *testing.T) {
			g := func() *graph.Graph { return tirtest.ConvK(c.h, c.h, c.cin, c.cout, 3, c.stride, graph.ActRelu, -128) }
			defaultTakesFewer(t, b, g, map[string]int{"weights": 8}, map[string]int{"weights": 8, "conv_rows": 1}, "im2col", "the row form")
		})
	}
}
