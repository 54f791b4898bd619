package emitc

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The LDM micro-kernels of every block shape, int8 and int16 weights, build
// for a Cortex-M4 at -Os with a frame pointer, where gcc has the fewest
// registers for their asm (crossCompile's second build): 1×4 blocks over
// short reductions (one and two groups of four k) included, which a review
// found failing with "impossible constraints" when the int8 form widened
// through one more register.
func TestDSPLDMBlocksBuildWithFramePointer(t *testing.T) {
	for _, w := range []int{8, 16} {
		for _, c := range []struct{ cin, oc, px int }{{4, 4, 1}, {8, 4, 1}, {16, 4, 1}, {4, 2, 1}, {8, 2, 2}, {12, 2, 2}} {
			name := fmt.Sprintf("w%d-cin%d-%dx%d", w, c.cin, c.px, c.oc)
			t.Run(name, func(t *testing.T) {
				g := tirtest.Conv1x1(3, 5, c.cin, 8, graph.ActRelu, -128)
				knobs := map[string]int{"weights": w, "block_oc": c.oc, "block_px": c.px, "small_k": 0, "gemm_fuse": 0}
				m, err := tir.Lower(g, planFor(t, g, false), tir.DSP.WithKnobs("conv2d", knobs))
				if err != nil {
					t.Fatal(err)
				}
				files, err := Emit(m, Options{Prefix: "m", Target: "dsp"})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(files["m.c"], []byte("ldmia %[w]!")) {
					t.Fatalf("no LDM block in the C for %v", knobs)
				}
				crossCompile(t, files, "m")
			})
		}
	}
}
