package emitc

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The dsp target's algorithm knobs print C that builds warning-free for a
// Cortex-M4, with every helper after the helpers it calls: Winograd, and
// planar depthwise in its general form (which calls dsp_requant_s8) and its
// ReLU form, in steps of four outputs (at strides 1 and 2) and two, and the
// shared-shift forms of the planar kernel and the fused GEMM.
func TestDSPAlgorithmsCrossCompile(t *testing.T) {
	cases := []struct {
		name   string
		g      *graph.Graph
		knobs  map[string]int
		op     string
		helper string
	}{
		{"winograd", tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5), map[string]int{"winograd": 1}, "conv2d", tir.IntrDSPWinoIn},
		{"planar", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), map[string]int{"dw_planar": 1, "requant_shift": 0}, "depthwise_conv2d", tir.IntrDSPDWPlanar},
		{"planar-shift-signed", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), map[string]int{"dw_planar": 1}, "depthwise_conv2d", tir.IntrDSPDWPlanarSN},
		{"planar-shift-signed-step2", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), map[string]int{"dw_planar": 1, "dw_step": 2}, "depthwise_conv2d", tir.IntrDSPDWPlanarSN},
		{"planar-shift-signed-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActNone, 5), map[string]int{"dw_planar": 1}, "depthwise_conv2d", tir.IntrDSPDWPlanarSN},
		{"planar5-shift-signed", tirtest.DepthwiseK(9, 13, 16, 5, 1, 2, graph.ActNone, 5), nil, "depthwise_conv2d", tir.IntrDSPDWPlanar5},
		{"planar7-shift-relu-stride2", tirtest.DepthwiseK(11, 17, 12, 7, 2, 3, graph.ActRelu, -128), nil, "depthwise_conv2d", tir.IntrDSPDWPlanar7},
		{"planar1x5-shift-signed-stride2", tirtest.DepthwiseRect(1, 48, 16, 1, 5, 2, graph.Padding{Left: 2, Right: 2}, graph.ActNone, -3), nil, "depthwise_conv2d", tir.IntrDSPDWPlanarName(1, 5)},
		{"planar-relu", tirtest.Conv3x3(8, 8, 1, graph.ActRelu, -128), map[string]int{"dw_planar": 1, "requant_shift": 0}, "depthwise_conv2d", tir.IntrDSPDWPlanarR},
		{"planar-shift", tirtest.Conv3x3(8, 8, 1, graph.ActRelu, -128), map[string]int{"dw_planar": 1}, "depthwise_conv2d", tir.IntrDSPDWPlanarS},
		{"planar-shift-relu6-step2", tirtest.Conv3x3(8, 8, 1, graph.ActRelu6, -128), map[string]int{"dw_planar": 1, "dw_step": 2}, "depthwise_conv2d", tir.IntrDSPDWPlanarS},
		{"gemm-shift", tirtest.Conv3x3(8, 1, 1, graph.ActRelu, -128), map[string]int{"conv_rows": 0, "block_px": 2}, "conv2d", tir.DSPGemmSName(2, 2, 9)},
		{"gemm-shift-3x2", tirtest.Conv3x3(8, 1, 1, graph.ActRelu, -128), map[string]int{"conv_rows": 0}, "conv2d", tir.DSPGemmSName(3, 2, 9)},
		{"gemm3-shift-3x2", tirtest.Conv3x3(8, 1, 1, graph.ActRelu, -128), nil, "conv2d", tir.DSPGemm3SName(3, 2, 6)},
		{"planar-step2", tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), map[string]int{"dw_planar": 1, "dw_step": 2, "requant_shift": 0}, "depthwise_conv2d", tir.IntrDSPDWPlanar},
		{"planar-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActNone, 5), map[string]int{"dw_planar": 1, "dw_step": 4, "requant_shift": 0}, "depthwise_conv2d", tir.IntrDSPDWPlanar},
		{"planar-relu-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActRelu, -128), map[string]int{"dw_planar": 1, "dw_step": 4, "requant_shift": 0}, "depthwise_conv2d", tir.IntrDSPDWPlanarR},
		{"planar-shift-stride2-w13", tirtest.Conv3x3Size(5, 13, 8, 8, 2, graph.ActRelu, -128), map[string]int{"dw_planar": 1, "dw_step": 4}, "depthwise_conv2d", tir.IntrDSPDWPlanarS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := tir.DSP.WithKnobs(c.op, c.knobs)
			m, err := tir.Lower(c.g, planFor(t, c.g, false), target)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Emit(m, Options{Prefix: "m", Target: "dsp"})
			if err != nil {
				t.Fatal(err)
			}
			src := files["m.c"]
			def := func(name string) int { return bytes.Index(src, []byte(fmt.Sprintf(" %s(", name))) }
			if def(c.helper) < 0 {
				t.Fatalf("%s is not in the C:\n%s", c.helper, src)
			}
			for _, dep := range helperText[c.helper].deps {
				if dep == "dsp_acle" {
					continue
				}
				if def(dep) < 0 || def(dep) > def(c.helper) {
					t.Errorf("%s is printed after %s, which calls it", dep, c.helper)
				}
			}
			obj := crossCompile(t, files, "m")
			// The LDM blocks take their asm form at -Os (xs folded to a
			// constant by inlining), not the C fallback.
			if strings.HasPrefix(c.name, "gemm") && obj != "" {
				out, err := exec.Command("arm-none-eabi-objdump", "-d", obj).CombinedOutput()
				if err != nil {
					t.Fatalf("objdump: %v\n%s", err, out)
				}
				// One per group of four k: 9 in a K = 72 column; the row
				// form's u6 helper, 6 a segment.
				if n := strings.Count(string(out), "{r4, r5, r6, r8}"); n < 6 {
					t.Errorf("%d LDMs of r4, r5, r6, r8 in the -Os object, want one per group of the block", n)
				}
			}
		})
	}
}
