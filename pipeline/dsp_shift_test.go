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
// outputs, on random and extreme inputs.
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
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", c.knobs, 6, 13, c.call)
		})
	}
}
