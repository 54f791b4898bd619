package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The Cortex-M4's shared-shift requantization (SMMLA, then SSAT with the
// layer's one shift as its immediate: tir/dsp_gemm_shift.go) runs bit-exact
// under QEMU on mps2-an386 against the reference interpreter, in the fused
// GEMM (im2col, pointwise with dead channels, and the row-widened 3×3
// form over three input rows) and in the planar
// depthwise kernel: ReLU and ReLU6, strides 1 and 2, steps of four and two
// outputs, on random and extreme inputs; and without a ReLU in the fused
// GEMM and the row-widened form, with TFLite's sign correction.
func TestDSPSharedShiftUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	im2col := map[string]map[string]int{"conv2d": {"conv_rows": 0}}
	planar := func(step int) map[string]map[string]int {
		return map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1, "dw_step": step}}
	}
	for _, c := range []struct {
		name  string
		g     *graph.Graph
		knobs map[string]map[string]int
		call  string
	}{
		{"gemm-relu", tirtest.Conv3x3(8, 1, 1, graph.ActRelu, -128), im2col, "dsp_gemm_s8ps_"},
		{"gemm-relu6-stride2", tirtest.Conv3x3(12, 1, 2, graph.ActRelu6, -128), im2col, "dsp_gemm_s8ps_"},
		{"pointwise-dead", tirtest.DeadChain(3, []int{1, 6}, "conv"), nil, "dsp_gemm_s8ps_"},
		{"rows-relu", tirtest.Conv3x3(8, 1, 1, graph.ActRelu, -128), nil, "dsp_gemm3_s8ps_"},
		{"rows-relu6-stride2", tirtest.Conv3x3Size(7, 9, 12, 1, 2, graph.ActRelu6, -128), nil, "dsp_gemm3_s8ps_"},
		{"dw-relu", tirtest.Conv3x3(8, 8, 1, graph.ActRelu, -128), planar(4), "dsp_dwp3s_s8("},
		{"dw-relu6-step2", tirtest.Conv3x3(8, 8, 1, graph.ActRelu6, -128), planar(2), "dsp_dwp3s_s8("},
		{"dw-relu-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActRelu, -128), planar(4), "dsp_dwp3s_s8("},
		// Without a ReLU: the sign correction (dsp_gemm_s8psn). Small
		// weights and a small output scale leave right shifts of about
		// four, where a negative result is a tie one time in sixteen.
		{"gemm-signed", smallShifts(tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5)), im2col, "dsp_gemm_s8psn_"},
		{"rows-signed", smallShifts(tirtest.Conv3x3(8, 1, 1, graph.ActNone, -20)), nil, "dsp_gemm3_s8psn_"},
		{"rows-signed-stride2", smallShifts(tirtest.Conv3x3Size(7, 9, 12, 1, 2, graph.ActNone, 0)), nil, "dsp_gemm3_s8psn_"},
		{"pointwise-signed", tirtest.Conv1x1(5, 7, 16, 12, graph.ActNone, 3), nil, "dsp_gemm_s8psn_"},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", c.knobs, 6, 13, c.call)
		})
	}
}

// smallShifts gives g's convolution weights in [-3, 3] and an output scale
// of 0.0032: multipliers of 1/16 to 1/5, so right shifts of three to five
// with accumulators that mostly stay inside the int8 range.
func smallShifts(g *graph.Graph) *graph.Graph {
	w := g.Tensor("w").Data
	for i := range w.I {
		w.I[i] = int64(i%7 - 3)
	}
	g.Tensor("y").Quant.Scale = []float32{0.0032}
	return g
}

// The three-pixel blocks (DSPMacBlocks' 3x2: an LDM and row 0 in one asm
// statement, rows 1 and 2 in the next, the weights held in r4-r8 between
// them) run bit-exact under QEMU on mps2-an386: pointwise over a row of
// pixels that leaves a pair (26) or a single (25) after the triples, an
// odd channel count (a 3x1 tail block), a layer growing its channels in
// place (blocks run backwards), the sign correction and the k0 epilogue,
// the im2col form, and the row form over three input rows at strides 1
// and 2.
func TestDSPThreePixelBlocksUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	three := map[string]map[string]int{"conv2d": {"block_px": 3}}
	for _, c := range []struct {
		name  string
		g     *graph.Graph
		knobs map[string]map[string]int
		call  string
	}{
		{"pointwise-k64-p26", tirtest.Pointwise(2, 13, 64, 8), nil, "dsp_gemm_s8ps_3x2_u16("},
		{"pointwise-k48-p25-c7", tirtest.Pointwise(5, 5, 48, 7), nil, "dsp_gemm_s8ps_3x1_"},
		{"pointwise-k64-grow-inplace", tirtest.Pointwise(2, 5, 64, 96), nil, "dsp_gemm_s8ps_3x2_"},
		{"pointwise-signed", tirtest.Conv1x1(5, 7, 64, 12, graph.ActNone, 3), nil, "dsp_gemm_s8psn_3x2_"},
		{"pointwise-k0", tirtest.Pointwise(3, 5, 64, 10), map[string]map[string]int{"conv2d": {"requant_shift": 0}}, "dsp_gemm_s8pr_3x2_"},
		{"pointwise-k16-forced", tirtest.Pointwise(3, 4, 16, 6), three, "dsp_gemm_s8ps_3x2_u4("},
		{"im2col-relu", tirtest.Conv3x3Size(5, 7, 8, 1, 1, graph.ActRelu, -128), map[string]map[string]int{"conv2d": {"conv_rows": 0}}, "dsp_gemm_s8ps_3x2_"},
		{"rows-relu6", tirtest.Conv3x3Size(5, 8, 8, 1, 1, graph.ActRelu6, -128), nil, "dsp_gemm3_s8ps_3x2_"},
		{"rows-signed-stride2", smallShifts(tirtest.Conv3x3Size(7, 11, 12, 1, 2, graph.ActNone, 0)), nil, "dsp_gemm3_s8psn_3x2_"},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", c.knobs, 6, 17, c.call)
		})
	}
}
