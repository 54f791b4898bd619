package tir

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// dspSchedule runs the dsp target's schedule for f's op with knobs set.
func dspSchedule(t *testing.T, f *PrimFunc, knobs map[string]int) *PrimFunc {
	t.Helper()
	tg := *DSP
	if knobs != nil {
		tg = tg.WithKnobs(f.Op, knobs)
	}
	g, err := tg.schedule(f)
	if err != nil {
		t.Fatal(err)
	}
	return Finalize(g)
}

// usesIntrinsic reports whether f calls an intrinsic whose name starts with prefix.
// dspKernel is node n of g as its compute definition (the reference, ready
// for the interpreter) and scheduled for the dsp target with knobs.
func dspKernel(t *testing.T, g *graph.Graph, n *graph.Node, knobs map[string]int) (ref, s *PrimFunc) {
	t.Helper()
	return Finalize(computeFunc(t, g, n)), dspSchedule(t, computeFunc(t, g, n), knobs)
}

func usesIntrinsic(f *PrimFunc, prefix string) bool {
	found := false
	VisitExprs(f.Body, func(e Expr) {
		if c, ok := e.(*Intrinsic); ok && strings.HasPrefix(c.Name, prefix) {
			found = true
		}
	})
	return found
}

func TestDSPConvSchedulesKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cases := []struct {
		cin, cout, group, k, stride, pad int
		knobs                            map[string]int
		want                             string
	}{
		{8, 6, 1, 1, 1, 0, nil, "dsp_pw_s8ps"},                                                      // 1x1, K = 8: one pixel, one table
		{4, 6, 1, 1, 1, 0, nil, "dsp_pw_s8ps"},                                                      // 1x1, K = 4
		{8, 6, 1, 1, 1, 0, map[string]int{"small_k": 0}, "dsp_mac"},                                 // 1x1 GEMM
		{16, 4, 1, 1, 1, 0, nil, "dsp_mac_s16_2x2_u4"},                                              // unrolled by 4
		{32, 4, 1, 1, 1, 0, nil, "dsp_mac_s16_2x2_u8"},                                              // unrolled by 8
		{8, 5, 1, 1, 2, 0, nil, "dsp_mac"},                                                          // strided 1x1, odd channels
		{16, 4, 1, 3, 1, 1, nil, "dsp_mac"},                                                         // padded 3x3, im2col
		{3, 8, 1, 3, 2, 1, nil, "dsp_mac"},                                                          // Cin 3: staged im2col
		{1, 4, 1, 3, 1, 1, map[string]int{"block_px": 1, "block_oc": 4, "c1_planar": 0}, "dsp_mac"}, // Cin 1, im2col
		{1, 4, 1, 3, 1, 1, nil, IntrDSPPlanesRep},                                                   // Cin 1: planar, replicated planes
		{8, 8, 1, 3, 1, 0, map[string]int{"block_oc": 4, "unroll_k": 1}, "dsp_mac"},
		{4, 3, 1, 2, 1, 0, map[string]int{"block_px": 2, "block_oc": 1}, "dsp_mac"},
		{8, 8, 8, 3, 1, 1, nil, IntrDSPPlanes},    // depthwise: planar by default
		{12, 12, 12, 3, 2, 1, nil, IntrDSPPlanes}, // strided depthwise
		{8, 8, 8, 3, 1, 1, map[string]int{"dw_planar": 0}, "dsp_dw"},
		{12, 12, 12, 3, 2, 1, map[string]int{"dw_planar": 0}, "dsp_dw"},
		{8, 8, 8, 3, 1, 0, map[string]int{"dw_planar": 0, "partition": 0, "unroll_taps": 0}, "dsp_dw"},
		{8, 8, 8, 3, 1, 1, map[string]int{"dw_planar": 0, "block_px": 2, "partition": 3}, "dsp_dw"},
		{12, 12, 12, 3, 2, 1, map[string]int{"dw_planar": 0, "block_px": 2}, "dsp_dw"},
		{6, 6, 6, 3, 1, 1, nil, IntrDSPPlanesRep}, // 6 channels: planar, planes laid out a byte at a time
		{8, 4, 2, 3, 1, 1, nil, ""},               // grouped: generic fallback
	}
	for _, c := range cases {
		name := fmt.Sprintf("cin%d_cout%d_g%d_k%d_s%d_p%d_%v", c.cin, c.cout, c.group, c.k, c.stride, c.pad, c.knobs)
		g, n := int8Conv(r, c.cin, c.cout, c.group, c.k, c.stride, c.pad)
		f, s := dspKernel(t, g, n, c.knobs)
		// dsp_gemm: the micro-kernel and the ReLU epilogue in one helper.
		shape := strings.TrimPrefix(strings.TrimPrefix(c.want, "dsp_mac"), "_s16")
		fused := strings.HasPrefix(c.want, "dsp_mac") && (usesIntrinsic(s, "dsp_gemm_s8pr"+shape) || usesIntrinsic(s, "dsp_gemm_s8ps"+shape) ||
			usesIntrinsic(s, "dsp_gemm3_s8ps"+shape)) || strings.HasPrefix(c.want, "dsp_pw") && usesIntrinsic(s, "dsp_pw")
		if c.want != "" && !usesIntrinsic(s, c.want) && !fused {
			t.Fatalf("%s: schedule does not use %s:\n%s", name, c.want, s)
		}
		if c.want != "" && c.want != IntrDSPPlanes && c.want != IntrDSPPlanesRep && !usesIntrinsic(s, IntrDSPRequant) && !usesIntrinsic(s, IntrDSPDW3x3) && !fused {
			t.Errorf("%s: epilogue does not use %s", name, IntrDSPRequant)
		}
		sameResult(t, name, f, s)
	}
}

// int8FC builds one int8 fully connected node with rows×k input and n outputs.
func int8FC(r *rand.Rand, rows, k, n int, zpIn int32) (*graph.Graph, *graph.Node) {
	g := graph.New("fc", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{rows, k}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{zpIn}}})
	w := graph.NewData(graph.Int8, []int{n, k})
	for i := range w.I {
		w.I[i] = int64(r.Intn(255) - 127)
	}
	g.AddConst("w", w).Quant = &graph.Quant{Scale: []float32{0.004}, ZeroPoint: []int32{0}}
	b := graph.NewData(graph.Int32, []int{n})
	for i := range b.I {
		b.I[i] = int64(r.Intn(2000) - 1000)
	}
	g.AddConst("b", b)
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{rows, n}, Quant: &graph.Quant{Scale: []float32{0.2}, ZeroPoint: []int32{-7}}})
	node := g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, node
}

func TestDSPFullyConnectedKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, c := range []struct {
		rows, k, n int
		knobs      map[string]int
	}{
		{1, 64, 12, nil}, {1, 40, 7, nil}, {3, 24, 9, nil}, {1, 10, 5, nil},
		{2, 16, 8, map[string]int{"block_rows": 2, "block_oc": 2}},
		{1, 32, 6, map[string]int{"block_oc": 1, "unroll_k": 1}},
	} {
		// int8FC's output has no ReLU: the micro-kernel calls and the
		// requantization, or (the default) the fused signed helper.
		for _, shift := range []int{0, 1} {
			kn := map[string]int{"requant_shift": shift}
			for k, v := range c.knobs {
				kn[k] = v
			}
			name := fmt.Sprintf("rows%d_k%d_n%d_%v", c.rows, c.k, c.n, kn)
			g, n := int8FC(r, c.rows, c.k, c.n, 11)
			f, s := dspKernel(t, g, n, kn)
			if want := []string{"dsp_mac", "dsp_gemm_s8psn"}[shift]; !usesIntrinsic(s, want) {
				t.Fatalf("%s: does not use %s:\n%s", name, want, s)
			}
			sameResult(t, name, f, s)
		}
	}
}

// The pair-word helpers against hand-worked values.
func TestDSPPairWords(t *testing.T) {
	if got := pack16(-2, 3); got != 0x0003fffe {
		t.Errorf("pack16(-2, 3) = %#x", got)
	}
	// smlad((-2, 3), (5, -7)) = -10 - 21.
	if got := dot2(pack16(-2, 3), pack16(5, -7)); got != -31 {
		t.Errorf("dot2 = %d, want -31", got)
	}
	// Weights w[0][k] = k+1, K = 5 padded to 8, one channel: words (1,3) (2,4) (5,0) (0,0).
	w := DSPPackWeights([]int64{1, 2, 3, 4, 5}, 1, 5, 8, 4)
	want := []int64{pack16(1, 3), pack16(2, 4), pack16(5, 0), 0}
	for i := range want {
		if w[i] != want[i] {
			t.Fatalf("packed %v, want %v", w, want)
		}
	}
	// Two channels in one block interleave by two words.
	w = DSPPackWeights([]int64{1, 2, 3, 4, 10, 20, 30, 40}, 2, 4, 4, 2)
	want = []int64{pack16(1, 3), pack16(2, 4), pack16(10, 30), pack16(20, 40)}
	for i := range want {
		if w[i] != want[i] {
			t.Fatalf("interleaved %v, want %v", w, want)
		}
	}
}

// dspRequantC is the arithmetic of the C body of dsp_requant_s8 (one
// 64-bit multiply-add, a sign correction, a shift of the high word),
// modelled independently of RequantQ.
func dspRequantC(x, m, e, zp, lo, hi int32) int32 {
	zk, zr := int64(0), zp
	if e <= 22 {
		zk, zr = int64(zp), 0
	}
	t := int64(x)*int64(m) + dspRequantK0(int64(e), zk) - int64(uint32(x)&0x80000000)
	r := int32(t>>32) >> (e - 1)
	y := min(max(r+zr, -128), 127)
	return min(max(y, lo), hi)
}

// The folded rounding of dsp_requant_s8 equals TFLite's double rounding
// followed by the clamp for every right shift 1..31 and multiplier >= 0,
// including exact halves, the extremes and the zero-crossing cases.
func TestDSPRequantRounding(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	xs := []int32{0, 1, -1, 2, -2, math.MaxInt32, math.MinInt32, math.MaxInt32 - 1, math.MinInt32 + 1, 1 << 30, -(1 << 30)}
	for e := int32(1); e <= 31; e++ {
		xs = append(xs, 1<<(e-1), -(1 << (e - 1)), 3<<(e-1), -3<<(e-1), math.MaxInt32-(1<<(e-1)), math.MinInt32+(1<<(e-1)))
	}
	ms := []int32{0, 1, 1 << 30, math.MaxInt32, 1518500250, 1073741825}
	for i := 0; i < 20000; i++ {
		xs = append(xs, int32(r.Uint32()))
		ms = append(ms, int32(r.Int63n(1<<31)))
	}
	for i, x := range xs {
		for _, m := range []int32{ms[i%len(ms)], ms[(i*7+3)%len(ms)]} {
			for e := int32(1); e <= 31; e++ {
				for _, c := range [][3]int32{{-128, -128, 127}, {5, 5, 127}, {-3, -128, 40}} {
					want := int32(min(max(int64(RequantQ(x, m, -e))+int64(c[0]), int64(c[1])), int64(c[2])))
					if got := dspRequantC(x, m, e, c[0], c[1], c[2]); got != want {
						t.Fatalf("x=%d m=%d e=%d zp=%d [%d,%d]: C formula %d, TFLite %d", x, m, e, c[0], c[1], c[2], got, want)
					}
				}
			}
		}
	}
}

// int8Binary builds one int8 element-wise node (TFLite quantization).
func int8Binary(op graph.Op) (*graph.Graph, *graph.Node) {
	g := graph.New("bin", "tflite")
	q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int8, Shape: []int{1, 3, 4, 8}, Quant: q(0.07, -128)})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int8, Shape: []int{1, 3, 4, 8}, Quant: q(0.05, 4)})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 3, 4, 8}, Quant: q(0.1, -9)})
	n := g.AddNode(&graph.Node{Name: "bin", Op: op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{Act: graph.ActRelu}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	return g, n
}

func TestDSPElementwiseTablesKeepResults(t *testing.T) {
	for _, op := range []graph.Op{graph.Add, graph.Sub, graph.Mul} {
		g, n := int8Binary(op)
		f, s := dspKernel(t, g, n, map[string]int{"add_lut": 0})
		if !usesIntrinsic(s, "dsp_requant_s8") {
			t.Errorf("%s: output stage not rewritten:\n%s", op, s)
		}
		if op != graph.Mul && len(s.Consts()) < 2 {
			t.Errorf("%s: no input tables:\n%s", op, s)
		}
		sameResult(t, string(op), f, s)
	}
}

// A core's knob overrides (Target.CoreKnobs) apply at op level for that
// core only, merge over the target's own op knobs, leave kernel-level knobs
// (which win at lookup) and the original target untouched.
func TestTargetForCore(t *testing.T) {
	base := Target{Name: "x",
		Knobs:     map[string]map[string]int{"conv2d": {"unroll_k": 4}, "conv2d_3_s8": {"conv_rows": 1}},
		CoreKnobs: map[string]map[string]map[string]int{"cortex-m33": {"conv2d": {"conv_rows": 0}}},
	}
	m33 := base.ForCore("cortex-m33")
	if got := m33.Knobs["conv2d"]; got["conv_rows"] != 0 || got["unroll_k"] != 4 {
		t.Errorf("cortex-m33 conv2d knobs %v, want conv_rows 0 merged over unroll_k 4", got)
	}
	if got := m33.Knobs["conv2d_3_s8"]["conv_rows"]; got != 1 {
		t.Errorf("kernel-level conv_rows %d, want 1 kept", got)
	}
	if _, ok := base.Knobs["conv2d"]["conv_rows"]; ok {
		t.Error("ForCore changed the target it was called on")
	}
	if got := base.ForCore("cortex-m4").Knobs["conv2d"]; len(got) != 1 || got["unroll_k"] != 4 {
		t.Errorf("cortex-m4 conv2d knobs %v, want only unroll_k 4", got)
	}
}
