package onnx_test

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// AveragePool with ceil_mode and count_include_pad was refused where the
// last window runs past the end padding. ONNX (like PyTorch) divides that
// window by its taps inside the padded input. Hand-worked:
//   - x = 1..6 along W, kernel 3, stride 2, pads 1 and 1: windows start at
//     −1, 1, 3, 5; sums 0+1+2, 2+3+4, 4+5+6, 6+0 (index 6 is the end pad,
//     7 is past it) over 3, 3, 3, 2 taps: 1, 3, 5, 3;
//   - x = 1..5, kernel 2, stride 2, no pads (the case onnxruntime and
//     onnx.reference are quoted with): 1.5, 3.5, 5;
//   - 3-D x [1,1,5,2,2] holding 0..19 (depth d holds 4d..4d+3), kernel
//     2×2×2, stride 2: each depth's 2×2 mean is 4d + 1.5, and the depth
//     windows {0,1}, {2,3}, {4} give 3.5, 11.5, 17.5.
func TestAveragePoolCeilIncludePad(t *testing.T) {
	pool2 := func(w, k, s, p, ow int) *onnx.Builder {
		bl := onnx.NewBuilder("pool", 13, 1)
		x := bl.Input("x", graph.Float32, 1, 1, 1, w)
		bl.Output(bl.Node("AveragePool", []string{x}, onnx.IntsAttr("kernel_shape", 1, int64(k)), onnx.IntsAttr("strides", 1, int64(s)),
			onnx.IntsAttr("pads", 0, int64(p), 0, int64(p)), onnx.IntAttr("ceil_mode", 1), onnx.IntAttr("count_include_pad", 1)), graph.Float32)
		return bl
	}
	x6 := f32([]int{1, 1, 1, 6}, 1, 2, 3, 4, 5, 6)
	got := runOne(t, pool2(6, 3, 2, 1, 4), map[string]*graph.Data{"x": x6})
	checkData(t, "k3 s2 pads 1", got[0], graph.Float32, []int{1, 1, 1, 4}, []float64{1, 3, 5, 3})
	x5 := f32([]int{1, 1, 1, 5}, 1, 2, 3, 4, 5)
	got = runOne(t, pool2(5, 2, 2, 0, 3), map[string]*graph.Data{"x": x5})
	checkData(t, "k2 s2", got[0], graph.Float32, []int{1, 1, 1, 3}, []float64{1.5, 3.5, 5})

	// Without the overhang nothing changes: k3 s2 pads 1 over 7 values
	// ends on the pad exactly, (6+7+0)/3.
	x7 := f32([]int{1, 1, 1, 7}, 1, 2, 3, 4, 5, 6, 7)
	got = runOne(t, pool2(7, 3, 2, 1, 4), map[string]*graph.Data{"x": x7})
	checkData(t, "k3 s2 pads 1, no overhang", got[0], graph.Float32, []int{1, 1, 1, 4}, []float64{1, 3, 5, 13.0 / 3})

	p3 := pool3DModel("AveragePool", []int{1, 1, 5, 2, 2}, []int{1, 1, 3, 1, 1}, onnx.IntsAttr("kernel_shape", 2, 2, 2),
		onnx.IntsAttr("strides", 2, 2, 2), onnx.IntAttr("ceil_mode", 1), onnx.IntAttr("count_include_pad", 1))
	x3 := seqF(1, 1, 5, 2, 2)
	got = runOne(t, p3, map[string]*graph.Data{"x": x3})
	checkData(t, "3-D", got[0], graph.Float32, []int{1, 1, 3, 1, 1}, []float64{3.5, 11.5, 17.5})

	// The generated C agrees (sanitized host build).
	x := sanitizedHostRun(t, pool2(6, 3, 2, 1, 4).Model(), "poolceil", []map[string]*graph.Data{{"x": x6}}, time.Minute)
	checkData(t, "k3 s2 pads 1, C", x.Outputs[0][0], graph.Float32, []int{1, 1, 1, 4}, []float64{1, 3, 5, 3})
	x = sanitizedHostRun(t, p3.Model(), "poolceil3d", []map[string]*graph.Data{{"x": x3}}, time.Minute)
	checkData(t, "3-D, C", x.Outputs[0][0], graph.Float32, []int{1, 1, 3, 1, 1}, []float64{3.5, 11.5, 17.5})
}
