package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// meanGraph is TFLite's int8 MEAN of an h×w×c input over axes (input scale
// 0.05, zero point -3; output 0.04, 5), keepdims as given.
func meanGraph(h, w, c int, axes []int, keep bool, dt graph.DType) *graph.Graph {
	g := graph.New("mean", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: dt, Shape: []int{1, h, w, c}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	out := []int{1, h, w, c}
	for _, a := range axes {
		out[a] = 1
	}
	if !keep {
		var o []int
		for i, d := range out {
			if i == 0 || !slices.Contains(axes, i) {
				o = append(o, d)
			}
		}
		out = o
	}
	zy := int32(5)
	if dt == graph.Int16 {
		zy = 0
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: out, Quant: &graph.Quant{Scale: []float32{0.04}, ZeroPoint: []int32{zy}}})
	g.AddNode(&graph.Node{Name: "mean", Op: graph.Mean, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.MeanAttrs{Axes: axes, KeepDims: keep}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// TFLite's int8 MEAN over a window of each channel (a network's global
// average: axes 1 and 2, with and without keepdims; one spatial axis)
// sums four channels at a time through the SIMD sum pool's helper and
// requantizes with one SMLAL (tir/dsp_mean.go), and on the M55 and the
// Cortex-A through their vector helpers: bit-exact against the
// reference interpreter, channel counts with a tail, a window of 256 taps
// (all -128: -32,768, the int16 lanes' end), and in at most
// half the generic loops' instructions on the network-head shapes on the
// M4, in fewer elsewhere. An
// int16 MEAN and a MEAN over the channels keep the loops.
func TestMeanDSP55(t *testing.T) {
	t.Parallel()
	for _, bt := range []struct{ board, prefix string }{{"mps2-an386", "dsp"}, {"mps3-an547", "mve"}, {"aarch64-linux", "neon"}} {
		t.Run(bt.board, func(t *testing.T) { checkMean(t, bt.board, bt.prefix) })
	}
}

// checkMean runs TestMeanDSP55's cases on board, whose sum pool helper is
// prefix's.
func checkMean(t *testing.T, board, prefix string) {
	b := qemuBoard(t, board)
	for _, c := range []struct {
		h, w, ch int
		axes     []int
		keep     bool
		dt       graph.DType
		simd     bool
		half     bool
	}{
		{7, 7, 96, []int{1, 2}, true, graph.Int8, true, true},
		{3, 3, 576, []int{1, 2}, false, graph.Int8, true, false},
		{12, 12, 10, []int{1, 2}, true, graph.Int8, true, true},
		{5, 6, 12, []int{1}, true, graph.Int8, true, false},
		{16, 16, 8, []int{1, 2}, false, graph.Int8, true, true},
		{4, 5, 8, []int{3}, true, graph.Int8, false, false},
		// A 1×1 map (a global average at a small input) and a 1×2 one:
		// under four taps the loops are faster (a review); as are channels
		// under a vector.
		{1, 1, 96, []int{1, 2}, true, graph.Int8, false, false},
		{1, 2, 16, []int{1, 2}, false, graph.Int8, false, false},
		{7, 7, 3, []int{1, 2}, true, graph.Int8, false, false},
		{7, 7, 16, []int{1, 2}, true, graph.Int16, false, false},
	} {
		name := fmt.Sprintf("%dx%dx%d-axes%v-keep%v-%s", c.h, c.w, c.ch, c.axes, c.keep, c.dt)
		t.Run(name, func(t *testing.T) {
			g := func() *graph.Graph { return meanGraph(c.h, c.w, c.ch, c.axes, c.keep, c.dt) }
			o := Options{Board: b, Version: "test"}
			s, err := CompileGraph(g(), name, o)
			if err != nil {
				t.Fatal(err)
			}
			if cContains(s.Files, prefix+"_sumpool_s8(") != c.simd {
				t.Fatalf("%s: the C calls %s_sumpool_s8: %v, want %v", name, prefix, !c.simd, c.simd)
			}
			n := checkedRun(t, g(), name, o, 2, 55)
			if !c.simd {
				return
			}
			o.Knobs = map[string]map[string]int{"mean": {"simd": 0}}
			loops := checkedRun(t, g(), name+"-loops", o, 1, 55)
			t.Logf("%s: %d instructions, the loops %d", name, n, loops)
			if n >= loops || c.half && prefix == "dsp" && 2*n > loops {
				t.Errorf("%s: %d instructions, the loops %d", name, n, loops)
			}
		})
	}
}
