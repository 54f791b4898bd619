package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// Session 48's review: gcc (-O2, M4, M7 and M33) could not build the
// two-row asm of the three-segment GEMM helpers (dsp_gemm3_*_2x2_uU) for
// 3xN convolutions of two or three output channels, one block of
// channels: "'asm' operand has impossible constraints". Each shape here
// builds and runs bit-exact on the three DSP cores with the default
// schedule, the three-row-window form taken.
func TestGemm3TwoRowsOneBlock48(t *testing.T) {
	t.Parallel()
	boards := []string{"mps2-an386", "mps2-an500", "mps2-an505"}
	for _, c := range []struct{ h, w, cin, cout, kw int }{
		{4, 5, 4, 3, 1}, {5, 4, 12, 2, 1}, {9, 5, 24, 3, 1}, {6, 3, 8, 2, 3}, {5, 5, 4, 3, 3},
	} {
		for _, bn := range boards {
			name := fmt.Sprintf("%dx%dx%d_to_%d_k3x%d_%s", c.h, c.w, c.cin, c.cout, c.kw, bn)
			t.Run(name, func(t *testing.T) {
				b := qemuBoard(t, bn)
				g := tirtest.ConvRect(c.h, c.w, c.cin, c.cout, 3, c.kw, graph.ActNone, 54)
				checkGraphUnderQEMU(t, b, g, "gemm3", "dsp", nil, 2, 48, "dsp_gemm3_")
			})
		}
	}
}
