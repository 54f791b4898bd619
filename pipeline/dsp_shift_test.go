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
