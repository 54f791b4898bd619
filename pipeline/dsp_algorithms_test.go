package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The dsp algorithm knobs' C runs bit-exact on the Cortex-M4 board: the
// Winograd convolution, the planar depthwise convolution in its general
// form (sign correction) and its ReLU form at strides 1 and 2, in steps of
// four outputs (the default) and two, the four-output loop with each
// remainder of the output width (none, single, pair, both), the planar
// cases in the k0 and the shared-shift requantization, each against the reference
// interpreter on random and extreme inputs, with guard bytes around an
// external arena.
func TestDSPAlgorithmsUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	step := func(n int) map[string]map[string]int {
		return map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1, "dw_step": n}}
	}
	for _, c := range []struct {
		name   string
		g      *graph.Graph
		knobs  map[string]map[string]int
		helper string
	}{
		{"winograd", tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5), map[string]map[string]int{"conv2d": {"winograd": 1}}, tir.IntrDSPWinoIn},
		{"winograd-relu", tirtest.Conv3x3(12, 1, 1, graph.ActRelu, -128), map[string]map[string]int{"conv2d": {"winograd": 1}}, tir.IntrDSPWinoIn},
		// Odd output sizes (a last single tile, a last half tile row), and
		// the GEMM over all 16 positions at one, two and eight groups of
		// four k per iteration (K = 16 and 32).
		{"winograd-odd-u1", tirtest.Conv3x3Size(7, 5, 16, 1, 1, graph.ActRelu, -128), map[string]map[string]int{"conv2d": {"winograd": 1, "unroll_k": 1}}, tir.IntrDSPWinoIn},
		{"winograd-c32-u8", tirtest.Conv3x3Size(4, 6, 32, 1, 1, graph.ActNone, 5), map[string]map[string]int{"conv2d": {"winograd": 1, "unroll_k": 8}}, tir.DSPWinoMacName(2, 8)},
		{"winograd-c16-u2", tirtest.Conv3x3Size(5, 8, 16, 1, 1, graph.ActNone, 5), map[string]map[string]int{"conv2d": {"winograd": 1, "unroll_k": 2}}, tir.DSPWinoMacName(2, 2)},
		{"winograd-c128-u32", tirtest.Conv3x3Size(3, 4, 128, 1, 1, graph.ActRelu, -128), map[string]map[string]int{"conv2d": {"winograd": 1, "unroll_k": 32}}, tir.DSPWinoMacName(2, 32)},
		{"planar", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1}}, tir.IntrDSPDWPlanar},
		{"planar-relu", tirtest.Conv3x3(8, 8, 1, graph.ActRelu, -128), map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1}}, tir.IntrDSPDWPlanarR},
		{"planar-stride2", tirtest.Conv3x3(8, 8, 2, graph.ActNone, 5), map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1}}, tir.IntrDSPDWPlanar},
		{"planar-relu-stride2", tirtest.Conv3x3(12, 12, 2, graph.ActRelu, -128), map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1}}, tir.IntrDSPDWPlanarR},
		{"planar-step2", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), step(2), tir.IntrDSPDWPlanar},
		{"planar-relu-stride2-step2", tirtest.Conv3x3Size(5, 13, 12, 12, 2, graph.ActRelu, -128), step(2), tir.IntrDSPDWPlanarR},
		{"planar-w5", tirtest.Conv3x3Size(4, 5, 8, 8, 1, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-relu-w7", tirtest.Conv3x3Size(4, 7, 8, 8, 1, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-relu-w12", tirtest.Conv3x3Size(3, 12, 4, 4, 1, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-stride2-w9", tirtest.Conv3x3Size(5, 9, 8, 8, 2, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-stride2-w11", tirtest.Conv3x3Size(5, 11, 8, 8, 2, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-relu-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-relu-stride2-w16", tirtest.Conv3x3Size(4, 16, 8, 8, 2, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		// Rows of 3, 5 and 6 outputs run as one group per channel (stride 1
		// and 2), over heights that end the three-row unroll after each of
		// its rows.
		{"planar-w3", tirtest.Conv3x3Size(7, 3, 8, 8, 1, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-relu-w5", tirtest.Conv3x3Size(8, 5, 8, 8, 1, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-w6", tirtest.Conv3x3Size(6, 6, 12, 12, 1, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-relu-w6", tirtest.Conv3x3Size(4, 6, 8, 8, 1, graph.ActRelu6, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-relu-stride2-w6to3", tirtest.Conv3x3Size(7, 6, 8, 8, 2, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
		{"planar-stride2-w10to5", tirtest.Conv3x3Size(9, 10, 8, 8, 2, graph.ActNone, 5), step(4), tir.IntrDSPDWPlanar},
		{"planar-relu-stride2-w12to6", tirtest.Conv3x3Size(10, 12, 8, 8, 2, graph.ActRelu, -128), step(4), tir.IntrDSPDWPlanarR},
	} {
		shifted := map[string]string{tir.IntrDSPDWPlanarR: tir.IntrDSPDWPlanarS, tir.IntrDSPDWPlanar: tir.IntrDSPDWPlanarSN}[c.helper]
		if shifted == "" {
			t.Run(c.name, func(t *testing.T) {
				checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", c.knobs, 6, 9, c.helper+"(")
			})
			continue
		}
		// A planar case runs twice: in the k0 form (requant_shift 0) and
		// in the default shared-shift form (tir/dsp_gemm_shift.go), with
		// TFLite's sign correction without a ReLU (since session 59).
		for _, shift := range []int{0, 1} {
			kn := map[string]int{"requant_shift": shift}
			for k, v := range c.knobs["depthwise_conv2d"] {
				kn[k] = v
			}
			helper := map[int]string{0: c.helper, 1: shifted}[shift]
			t.Run(fmt.Sprintf("%s-shift%d", c.name, shift), func(t *testing.T) {
				checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", map[string]map[string]int{"depthwise_conv2d": kn}, 6, 9, helper+"(")
			})
		}
	}
}
