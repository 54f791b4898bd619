package tir

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int8ConvW is int8Conv over a 1×h×w input (stride 1, unpadded for k = 1).
func int8ConvW(r *rand.Rand, cin, cout, k, h, w int, act graph.Activation) (*graph.Graph, *graph.Node) {
	g, n := int8Conv(r, cin, cout, 1, k, 1, 0)
	g.Tensor("x").Shape = []int{1, h, w, cin}
	g.Tensor("y").Shape = []int{1, h - k + 1, w - k + 1, cout}
	n.Attrs.(*graph.Conv2DAttrs).Act = act
	return g, n
}

// The fused channel loop (dsp_gemm_s8pr, bias folded into k0) gives the
// compute definition's results, as the unfused blocks do, for convolutions
// (pointwise over rows with an odd width, run as one row of pixels;
// im2col) and fully connected layers, every block shape.
func TestDSPGemmFusedKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	for _, c := range []struct {
		cin, cout, k, h, w int
		knobs              map[string]int
	}{
		{16, 8, 1, 5, 5, nil}, // odd width: one row of 25 pixels
		{32, 6, 1, 3, 3, map[string]int{"block_oc": 4}},
		{8, 16, 1, 4, 6, map[string]int{"block_px": 1, "block_oc": 1}},
		{16, 8, 1, 7, 5, map[string]int{"unroll_k": 1}},
		{8, 5, 3, 6, 6, nil}, // im2col, a single-channel tail
		{3, 4, 3, 5, 7, map[string]int{"block_oc": 4}},
		// Three-pixel blocks: 25 pixels (eight and one), 26 with a pair
		// after them, an im2col row of 4 (one and one), a 3x1 tail block.
		{16, 8, 1, 5, 5, map[string]int{"block_px": 3}},
		{64, 6, 1, 2, 13, nil},
		{8, 5, 3, 6, 6, map[string]int{"block_px": 3}},
	} {
		for _, fuse := range []int{0, 1} {
			// requant_shift 0: the k0 form (TestDSPGemmShiftKeepsResults has the other).
			kn := map[string]int{"gemm_fuse": fuse, "conv_rows": 0, "requant_shift": 0} // the im2col form (conv_rows: TestDSPConvRowsKeepResults)
			for k, v := range c.knobs {
				kn[k] = v
			}
			name := fmt.Sprintf("%v_%v", c, kn)
			g, n := int8ConvW(r, c.cin, c.cout, c.k, c.h, c.w, graph.ActRelu)
			f, s := dspKernel(t, g, n, kn)
			if got := usesIntrinsic(s, "dsp_gemm_s8pr"); got != (fuse == 1) {
				t.Fatalf("%s: fused %v:\n%s", name, got, s)
			}
			sameResult(t, name, f, s)
		}
	}
	// Without a ReLU (zero point above the clamp) only the shared-shift
	// form fuses (TestDSPGemmShiftSignedKeepsResults has its results).
	g, n := int8ConvW(r, 16, 8, 1, 5, 5, graph.ActNone)
	if s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"requant_shift": 0}); usesIntrinsic(s, "dsp_gemm") {
		t.Errorf("conv without activation fused in the k0 form:\n%s", s)
	}
	for _, c := range []struct {
		rows, k, n int
		knobs      map[string]int
	}{
		{1, 64, 12, nil}, {3, 24, 9, nil}, {2, 16, 8, map[string]int{"block_rows": 2, "block_oc": 2}},
		{1, 40, 7, map[string]int{"block_oc": 1, "unroll_k": 2}},
	} {
		// Per-channel weight scales (a table per channel) in the ReLU form.
		name := fmt.Sprintf("fc_%v", c)
		g, nd := reluFCPerChannel(r, c.rows, c.k, c.n, func(int) float32 { return 0.002 + 0.004*r.Float32() })
		kn := map[string]int{"requant_shift": 0}
		for k, v := range c.knobs {
			kn[k] = v
		}
		f, s := dspKernel(t, g, nd, kn)
		if !usesIntrinsic(s, "dsp_gemm_s8pr") {
			t.Fatalf("%s: not fused:\n%s", name, s)
		}
		sameResult(t, name, f, s)
	}
}

// reluFCPerChannel is int8FC (input zero point 11) with its output zero
// point at -128, where the dsp epilogue takes its ReLU form, and weight
// scale scale(i) for output channel i.
func reluFCPerChannel(r *rand.Rand, rows, k, n int, scale func(i int) float32) (*graph.Graph, *graph.Node) {
	g, nd := int8FC(r, rows, k, n, 11)
	g.Tensor("y").Quant.ZeroPoint = []int32{-128}
	wq := g.Tensor("w").Quant
	wq.Scale, wq.ZeroPoint = make([]float32, n), make([]int32, n)
	for i := range wq.Scale {
		wq.Scale[i] = scale(i)
	}
	return g, nd
}

// A pointwise row of odd width runs as one row of pixels and stays exact
// with its output written over its input.
func TestDSPGemmInPlace(t *testing.T) {
	r := rand.New(rand.NewSource(43))
	for _, c := range []struct{ cin, cout int }{{16, 16}, {16, 8}, {8, 12}} {
		g, n := int8ConvW(r, c.cin, c.cout, 1, 5, 5, graph.ActRelu)
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := dspSchedule(t, f, map[string]int{"small_k": 0})
		what := fmt.Sprintf("pointwise 5x5 %d->%d", c.cin, c.cout)
		if !s.InPlaceSafe || !usesIntrinsic(s, "dsp_gemm_s8p") || strings.Contains(fmt.Sprint(s), "oh in") {
			t.Fatalf("%s: want one fused row in place:\n%s", what, s)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
	// K = 8 (small_k): one pixel at a time, in decreasing order where the
	// output is wider than the input.
	for _, c := range []struct{ cin, cout int }{{8, 12}, {8, 8}, {8, 4}} {
		g, n := int8ConvW(r, c.cin, c.cout, 1, 5, 5, graph.ActRelu)
		f := computeFunc(t, g, n)
		f.WantInPlace = true
		s := dspSchedule(t, f, nil)
		what := fmt.Sprintf("pointwise 5x5 %d->%d, one pixel", c.cin, c.cout)
		if !s.InPlaceSafe || !usesIntrinsic(s, "dsp_pw_s8ps_n4") {
			t.Fatalf("%s: want dsp_pw_s8ps_n4 in place:\n%s", what, s)
		}
		runAliased(t, what, Finalize(computeFunc(t, g, n)), s, r)
	}
}

// Folding the bias into k0 is refused exactly where |k0 + bias·m| +
// bound·m could leave int64, and otherwise adds bias·m to the 64-bit k0.
func TestDSPFoldBiasGuard(t *testing.T) {
	k0 := dspRequantK0(31, 0) // the largest shift: 2^30 + 2^61
	m := int64(math.MaxInt32)
	tab := []int64{int64(int32(uint32(k0))), k0 >> 32, m, 30}
	got := foldBiasRequant(tab, []int64{-5}, []int64{1000})
	if got == nil {
		t.Fatal("a small bias did not fold")
	}
	if k := int64(uint32(got[0])) + got[1]<<32; k != k0-5*m || got[2] != m || got[3] != 30 {
		t.Errorf("folded k0 %d, want %d", k, k0-5*m)
	}
	// |k0'| + bound·m just at and just past MaxInt64.
	b := int64(math.MaxInt32)
	room := (math.MaxInt64 - (k0 + b*m)) / m
	if foldBiasRequant(tab, []int64{b}, []int64{room}) == nil {
		t.Error("refused a fold that fits")
	}
	if foldBiasRequant(tab, []int64{b}, []int64{room + 1}) != nil {
		t.Error("folded where x·m + k0' can overflow int64")
	}
	if foldBiasRequant(tab, []int64{math.MinInt32}, []int64{1 << 33}) != nil {
		t.Error("folded a 34-bit accumulator bound at the largest shift and multiplier")
	}
	if foldBiasRequant(tab, []int64{1, 2}, []int64{1}) != nil {
		t.Error("folded mismatched tables")
	}
}

// The intrinsic against the unfused definition on extreme values: the
// accumulators at the int16 limits, the largest multiplier and shifts,
// and it panics on inconsistent arguments.
func TestDSPGemmIntrinsic(t *testing.T) {
	const R, Cc, U, n, nb = 2, 2, 1, 4, 2
	name := DSPGemmName(R, Cc, U)
	x := graph.NewData(graph.Int32, []int{R * n})
	for i := range x.I {
		x.I[i] = pack16(-32768, 32767)
		if i%3 == 0 {
			x.I[i] = pack16(32767, -32768)
		}
	}
	w := graph.NewData(graph.Int32, []int{nb * Cc * n})
	for i := range w.I {
		w.I[i] = pack16(int64(i*7%255-127), int64(i*11%255-127))
	}
	var p []int64
	bias := []int64{math.MaxInt16, -1000, 0, 77}
	for o := 0; o < nb*Cc; o++ {
		e := int64(5 + 8*o)
		k0 := dspRequantK0(e, 0) + bias[o]*math.MaxInt32
		p = append(p, int64(int32(uint32(k0))), k0>>32, math.MaxInt32, e-1)
	}
	pd := &graph.Data{DType: graph.Int32, Shape: []int{len(p)}, I: p}
	y := graph.NewData(graph.Int8, []int{R * nb * Cc})
	args := []val{{p: y}, {i: nb * Cc}, {p: x}, {i: n}, {p: w}, {i: n}, {p: pd}, {i: nb}, {i: 0}, {i: -128}, {i: 127}}
	extIntrinsics[name](args)
	for bl := 0; bl < nb; bl++ {
		for i := 0; i < R; i++ {
			for j := 0; j < Cc; j++ {
				o := bl*Cc + j
				acc := graph.NewData(graph.Int32, []int{R * Cc})
				for k := range acc.I {
					acc.I[k] = bias[o]
				}
				extIntrinsics[DSPMacName(R, Cc, U)]([]val{{p: acc}, {p: x}, {i: n}, {p: w, i: int64(bl * Cc * n)}, {i: n}})
				e := int64(5 + 8*o)
				k0 := dspRequantK0(e, 0)
				want := reluRequant("", acc.I[i*Cc+j], math.MaxInt32, k0, e-1, 0, -128, 127).i
				if got := y.I[i*nb*Cc+o]; got != want {
					t.Errorf("row %d channel %d: %d, want %d", i, o, got, want)
				}
			}
		}
	}
	for _, bad := range [][2]int64{{3, nb}, {n, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("n %d nb %d: no panic", bad[0], bad[1])
				}
			}()
			a := append([]val{}, args...)
			a[5], a[7] = val{i: bad[0]}, val{i: bad[1]}
			extIntrinsics[name](a)
		}()
	}
}
