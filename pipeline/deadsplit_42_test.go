package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A 3x3 convolution whose dead channels (all-zero weights) lie between live
// ones builds at -O2 on the Cortex-M4, M7 and M33 and runs bit-exact.
// Review finding: its row form split the channel blocks into separately
// inlined helper calls, and gcc failed with "'asm' operand has impossible
// constraints" in the 2x2 block's LDM asm (16 → 8 channels, 2, 5 and 6
// dead, on a 5×8 map); such a layer now takes one-pixel blocks.
func TestDeadChannelsBetweenLiveBuild(t *testing.T) {
	for _, bn := range []string{"mps2-an386", "mps2-an500", "mps2-an505"} {
		t.Run(bn, func(t *testing.T) {
			b := qemuBoard(t, bn)
			g := tirtest.ConvK(5, 8, 16, 8, 3, 1, graph.ActNone, 5)
			w := g.Tensors["w"].Data
			k := len(w.I) / 8
			for _, c := range []int{2, 5, 6} {
				clear(w.I[c*k : (c+1)*k])
			}
			checkedRun(t, g, "deadsplit", Options{Board: b, Target: "dsp", Version: "test"}, 3, 7)
		})
	}
}
