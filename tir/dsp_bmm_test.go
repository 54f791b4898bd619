package tir

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int8BMM builds one int8 BatchMatMul of a [ba..., m, k] by b [bb..., n, k]
// (adjY) or [bb..., k, n], with zero points za, zb and a per-tensor output.
func int8BMM(ba, bb []int, m, k, n int, adjY bool, za, zb int32) (*graph.Graph, *graph.Node) {
	g := graph.New("bmm", "tflite")
	as := append(append([]int{}, ba...), m, k)
	bs := append(append([]int{}, bb...), k, n)
	if adjY {
		bs = append(append([]int{}, bb...), n, k)
	}
	batch := ba
	if len(bb) > len(ba) {
		batch = bb
	}
	ys := append(append([]int{}, batch...), m, n)
	for i := range batch {
		if j := i - (len(batch) - len(ba)); j >= 0 && ba[j] > ys[i] {
			ys[i] = ba[j]
		}
	}
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int8, Shape: as, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{za}}})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int8, Shape: bs, Quant: &graph.Quant{Scale: []float32{0.04}, ZeroPoint: []int32{zb}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: ys, Quant: &graph.Quant{Scale: []float32{0.3}, ZeroPoint: []int32{5}}})
	node := g.AddNode(&graph.Node{Name: "mm", Op: graph.BatchMatMul, Inputs: []string{"a", "b"}, Outputs: []string{"y"},
		Attrs: &graph.BatchMatMulAttrs{AdjY: adjY}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	return g, node
}

// The dsp batch_matmul schedule keeps the compute definition's results:
// K a multiple of four or not (staged, padded rows), odd rows and columns
// (single-row and single-column blocks), columns in several packed chunks,
// broadcast batch dimensions, zero offsets, every block shape; a B read
// with its reduction axis outermost (no AdjY) keeps the generic nest.
func TestDSPBatchMatMulKeepsResults(t *testing.T) {
	for _, c := range []struct {
		ba, bb  []int
		m, k, n int
		adjY    bool
		za, zb  int32
		knobs   map[string]int
		dsp     bool
	}{
		{[]int{1, 4}, []int{1, 4}, 7, 16, 7, true, 3, -9, nil, true},                                     // Q·Kᵀ
		{[]int{1, 4}, []int{1, 4}, 7, 7, 16, true, -128, 2, nil, true},                                   // P·V with V transposed, K = 7
		{[]int{2}, []int{1}, 5, 12, 9, true, 0, 0, map[string]int{"block_rows": 1, "block_oc": 1}, true}, // broadcast B
		{[]int{3}, []int{3}, 4, 8, 10, true, -5, 7, map[string]int{"block_oc": 2, "unroll_k": 1}, true},
		{nil, nil, 3, 64, 40, true, 1, -1, nil, true},             // 40 columns of 64: three chunks of 16
		{[]int{2}, []int{2}, 3, 5, 6, true, 100, -100, nil, true}, // K = 5
		{[]int{2}, []int{2}, 4, 8, 6, false, 1, 2, nil, false},    // B not transposed
	} {
		name := fmt.Sprintf("a%v_b%v_m%d_k%d_n%d_adj%v_%v", c.ba, c.bb, c.m, c.k, c.n, c.adjY, c.knobs)
		g, n := int8BMM(c.ba, c.bb, c.m, c.k, c.n, c.adjY, c.za, c.zb)
		f, s := dspKernel(t, g, n, c.knobs)
		if got := usesIntrinsic(s, "dsp_mac"); got != c.dsp {
			t.Fatalf("%s: uses dsp_mac: %v, want %v\n%s", name, got, c.dsp, s)
		}
		if c.dsp && !usesIntrinsic(s, IntrDSPRequant) {
			t.Errorf("%s: epilogue does not use %s", name, IntrDSPRequant)
		}
		if c.k == 64 && c.n == 40 {
			// 2048 B holds 16 columns of 64 int16: three chunks.
			calls := 0
			VisitStmts(s.Body, func(st Stmt) {
				if a, ok := st.(*Allocate); ok && a.Buf.Name == "k_cols" {
					calls++
					if a.Buf.Len()*4 > BMMPackBytes {
						t.Errorf("%s: packed chunk of %d B", name, a.Buf.Len()*4)
					}
				}
			})
			if calls != 3 {
				t.Errorf("%s: %d packed chunks, want 3", name, calls)
			}
		}
		sameResult(t, name, f, s)
	}
}

// dsp_widen_il_s8 against hand-worked words: groups of four bytes plus the
// offset, the even and the odd halves, step words apart.
func TestDSPWidenIL(t *testing.T) {
	src := &graph.Data{DType: graph.Int8, Shape: []int{8}, I: []int64{1, -2, 3, -4, 127, -128, 0, 5}}
	dst := graph.NewData(I32, []int{8})
	extIntrinsics[IntrDSPWidenIL]([]val{{p: dst}, {p: src}, {i: 8}, {i: 10}, {i: 4}})
	// (1+10, 3+10), (-2+10, -4+10); (127+10, 0+10), (-128+10, 5+10).
	want := []int64{11 | 13<<16, 8 | 6<<16, 0, 0, 137 | 10<<16, (65536 - 118) | 15<<16, 0, 0}
	for i, w := range want {
		if got := int64(uint32(dst.I[i])); got != w {
			t.Errorf("dst[%d] = %#x, want %#x", i, got, w)
		}
	}
}

// The mve and neon batch_matmul (KGemv with the offsets' sums taken out of
// the loop) keeps the compute definition's results: both offsets, one of
// them zero, K of 5 and 40, a broadcast batch; B not transposed falls back
// (to the dsp micro-kernels on mve, the generic nest on neon).
func TestSIMDBatchMatMulKeepsResults(t *testing.T) {
	for _, tg := range []*Target{MVE, NEON} {
		for _, c := range []struct {
			ba, bb  []int
			m, k, n int
			adjY    bool
			za, zb  int32
			gemv    bool
		}{
			{[]int{1, 4}, []int{1, 4}, 7, 16, 7, true, 3, -9, true},
			{[]int{2}, []int{1}, 5, 40, 9, true, -128, 2, true},
			{[]int{3}, []int{3}, 4, 5, 6, true, 0, 7, true},
			{[]int{3}, []int{3}, 4, 8, 6, true, 5, 0, true},
			{[]int{2}, []int{2}, 4, 8, 6, false, 1, 2, false},
		} {
			name := fmt.Sprintf("%s_a%v_b%v_m%d_k%d_n%d_adj%v_z%d,%d", tg.Name, c.ba, c.bb, c.m, c.k, c.n, c.adjY, c.za, c.zb)
			g, n := int8BMM(c.ba, c.bb, c.m, c.k, c.n, c.adjY, c.za, c.zb)
			f := computeFunc(t, g, n)
			s, err := tg.schedule(computeFunc(t, g, n))
			if err != nil {
				t.Fatal(err)
			}
			s = Finalize(s)
			if got := usesIntrinsic(s, tg.Name+"_"+KGemv); got != c.gemv {
				t.Fatalf("%s: uses %s_%s: %v, want %v\n%s", name, tg.Name, KGemv, got, c.gemv, s)
			}
			sameResult(t, name, Finalize(f), s)
		}
	}
}
