package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// avgPoolGraph is one int8 average pool over an h×w×c input with a kh×kw
// window at stride s (no padding), output scale and zero point as TFLite
// keeps them for a pool.
func avgPoolGraph(h, w, c, kh, kw, s int) *graph.Graph {
	g := graph.New("pool", "tflite")
	q := func() *graph.Quant { return &graph.Quant{Scale: []float32{0.04}, ZeroPoint: []int32{-7}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, w, c}, Quant: q()})
	oh, ow := (h-kh)/s+1, (w-kw)/s+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, c}, Quant: q()})
	g.AddNode(&graph.Node{Name: "pool", Op: graph.AvgPool2D, Inputs: []string{"x"}, Outputs: []string{"y"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{kh, kw}, Stride: [2]int{s, s}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// The SIMD average pools run bit-exact on their boards: dsp_sumpool_s8
// (four channels per step in the int16 lanes of SXTAB16 sums) on the
// Cortex-M4 and neon_sumpool_s8 on AArch64, over KWS's global 25×5 pool,
// IC's 8×8, a strided window, channel counts with a scalar tail, and a
// window of more than 255 taps (dsp's scalar path), on random and extreme
// inputs (all -128 or all 127: the largest lane sums).
func TestDSPAvgPoolUnderQEMU(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	for _, bt := range []struct{ board, target string }{{"mps2-an386", "dsp"}, {"aarch64-linux", "neon"}} {
		needTools(t, bt.board)
		b, _ := LoadBoard(bt.board, "")
		for _, c := range []struct{ h, w, ch, kh, kw, s int }{
			{25, 5, 64, 25, 5, 1},
			{8, 8, 64, 8, 8, 1},
			{7, 9, 12, 3, 3, 2},
			{5, 5, 6, 5, 5, 1},
			{16, 17, 8, 16, 17, 1},
			{4, 4, 13, 4, 4, 1},
		} {
			name := fmt.Sprintf("%s/%dx%dx%d_k%dx%d_s%d", bt.target, c.h, c.w, c.ch, c.kh, c.kw, c.s)
			t.Run(name, func(t *testing.T) {
				g := avgPoolGraph(c.h, c.w, c.ch, c.kh, c.kw, c.s)
				checkGraphUnderQEMU(t, b, g, "pool", bt.target, nil, 4, 11, bt.target+"_sumpool_s8(&")
			})
		}
	}
}
