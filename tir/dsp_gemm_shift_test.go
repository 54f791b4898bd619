package tir

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// tfliteRequant is TFLite's reference MultiplyByQuantizedMultiplier for a
// right shift (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT)
// plus the zero point, written here from gemmlowp's definitions rather than
// taken from the package.
func tfliteRequant(x, m int64, shift int, zp int64) int64 {
	var hi int64
	if x == math.MinInt32 && m == math.MinInt32 {
		hi = math.MaxInt32
	} else {
		ab := x * m
		nudge := int64(1 << 30)
		if ab < 0 {
			nudge = 1 - 1<<30
		}
		hi = (ab + nudge) / (1 << 31) // Go's division truncates, as C's does
	}
	mask := int64(1)<<shift - 1
	rem, thr := hi&mask, mask>>1
	if hi < 0 {
		thr++
	}
	out := hi >> shift
	if rem > thr {
		out++
	}
	return out + zp
}

// A hand-worked pair of channels: e1 3 and 1 (right shifts 4 and 2), zero
// point -128. k0 = 2^30 + 2^(31+e1) + zk·2^(32+e1) needs j >= 2 to become
// a multiple of 2^32, so t = 3 + 2 = 5, j = (2, 4), and
// A = 2^j·k0 / 2^32 = (1 + 16 − 4096, 4 + 16 − 4096) = (−4079, −4076).
func TestSharedShiftByHand(t *testing.T) {
	k0 := []int64{dspRequantK0(4, -128), dspRequantK0(2, -128)}
	one := []int64{1, 1}
	tt, j, a, ok := sharedShift(k0, []int64{1 << 30, 1 << 30}, []int64{3, 1}, []int64{0, 0}, one, one, []bool{true, true}, 255, 0)
	if !ok || tt != 5 || j[0] != 2 || j[1] != 4 || a[0] != -4079 || a[1] != -4076 {
		t.Fatalf("t %d, j %v, A %v, ok %v; want 5, [2 4], [-4079 -4076], true", tt, j, a, ok)
	}
	// zr joins A as zr·2^t.
	if _, _, a, _ := sharedShift(k0, []int64{1 << 30, 1 << 30}, []int64{3, 1}, []int64{0, 0}, one, one, []bool{true, true}, 255, 3); a[0] != -4079+3*32 {
		t.Errorf("zr 3: A %d, want %d", a[0], -4079+3*32)
	}
	// A zero multiplier (scale zero) does not set t; its A is the channel's
	// constant output ⌊k0 / 2^(32+e1)⌋ = -128 times 2^t, its weights unscaled.
	if tt, j, a, ok := sharedShift(k0, []int64{0, 1 << 30}, []int64{3, 1}, []int64{0, 0}, one, one, []bool{true, true}, 255, 0); !ok || tt != 3 || j[0] != 0 || a[0] != -128<<3 {
		t.Errorf("channel 0 multiplier 0: t %d, j %v, A %v, ok %v; want 3, [0 2], [-1024 ...]", tt, j, a, ok)
	}
	// A dead channel does not take part: t comes from the live one alone.
	if tt, _, _, ok := sharedShift(k0, []int64{1 << 30, 1 << 30}, []int64{3, 1}, []int64{0, 0}, one, one, []bool{false, true}, 255, 0); !ok || tt != 3 {
		t.Errorf("channel 0 dead: t %d ok %v, want 3", tt, ok)
	}
}

// The refusals: a weight that would leave int16 after scaling (127·2^8),
// an accumulator bound that would leave int32, an unknown activation bound.
func TestSharedShiftRefuses(t *testing.T) {
	k0 := []int64{dspRequantK0(10, 0), dspRequantK0(2, 0)} // e1 9 and 1: j = 2 and 10
	m, e1, b, live := []int64{1 << 30, 1 << 30}, []int64{9, 1}, []int64{0, 0}, []bool{true, true}
	if _, _, _, ok := sharedShift(k0, m, e1, b, []int64{1, 127}, []int64{1, 127}, live, 255, 0); ok {
		t.Error("127 scaled by 2^10 accepted")
	}
	if _, _, _, ok := sharedShift(k0, m, e1, b, []int64{1, 31}, []int64{1, 31}, live, 255, 0); !ok {
		t.Error("31 scaled by 2^10 (31,744) refused")
	}
	k1 := []int64{dspRequantK0(2, 0)}
	if _, _, _, ok := sharedShift(k1, m[:1], []int64{1}, []int64{0}, []int64{127}, []int64{1 << 21}, live[:1], 256, 0); ok {
		t.Error("a 2^21 · 256 · 4 accumulator bound (2^31) accepted")
	}
	if _, _, _, ok := sharedShift(k1, m[:1], []int64{1}, []int64{0}, []int64{127}, []int64{1 << 21}, live[:1], 255, 0); !ok {
		t.Error("a 2^21 · 255 · 4 accumulator bound (2^31 − 2^23) refused")
	}
	if _, _, _, ok := sharedShift(k1, m[:1], []int64{1}, []int64{0}, []int64{127}, []int64{127}, live[:1], 0, 0); ok {
		t.Error("an unknown activation bound accepted")
	}
}

// shiftLayer is a random layer's per-channel requantization for
// sharedShift: 1 to 6 channels, right shifts within 4 of each other from
// base shifts below maxBase, multipliers in [2^30, 2^31) or zero (a channel
// with scale zero: the zero point whatever the accumulator), one output
// zero point folded into k0, biases within ±10,000, 64 weights of up to
// 127.
type shiftLayer struct {
	zk                          int64
	k0, m, e1, bias, wmax, wsum []int64
	live                        []bool
}

func randomShiftLayer(r *rand.Rand, maxBase int) shiftLayer {
	n := 1 + r.Intn(6)
	L := shiftLayer{zk: int64(r.Intn(256) - 128), k0: make([]int64, n), m: make([]int64, n), e1: make([]int64, n),
		bias: make([]int64, n), wmax: make([]int64, n), wsum: make([]int64, n), live: make([]bool, n)}
	base := r.Intn(maxBase)
	for c := range n {
		L.e1[c] = int64(base + r.Intn(4))
		L.m[c] = 1<<30 + r.Int63n(1<<30)
		if r.Intn(8) == 0 {
			L.m[c] = 0
		}
		L.k0[c] = dspRequantK0(L.e1[c]+1, L.zk)
		L.bias[c] = r.Int63n(20001) - 10000
		L.wmax[c], L.wsum[c], L.live[c] = 127, 127*64, true
	}
	return L
}

// Property: for random accumulators, biases, multipliers, shifts and zero
// points, the shared-shift arithmetic (scaled accumulator, SMMLA, one
// shift) clamped to [max(zk, −128), 127] equals TFLite's requantization
// clamped the same way, channel by channel in layers of mixed shifts.
func TestSharedShiftMatchesTFLite(t *testing.T) {
	r := rand.New(rand.NewSource(71))
	for trial := 0; trial < 400; trial++ {
		L := randomShiftLayer(r, 12)
		n, zk, m, e1, bias := len(L.m), L.zk, L.m, L.e1, L.bias
		tt, j, a, ok := sharedShift(L.k0, m, e1, bias, L.wmax, L.wsum, L.live, 255, 0)
		if !ok {
			t.Fatalf("trial %d: e1 %v refused", trial, e1)
		}
		lo := max(zk, -128)
		for c := range n {
			for range 50 {
				acc := r.Int63n(2*127*64*255+1) - 127*64*255
				if r.Intn(4) == 0 { // near the rounding points
					acc = (acc >> (e1[c] + 1)) << (e1[c] + 1)
				}
				want := min(max(tfliteRequant(acc+bias[c], m[c], int(e1[c]+1), zk), lo), 127)
				s := (acc + bias[c]) << j[c]
				if s > math.MaxInt32 || s < math.MinInt32 {
					t.Fatalf("scaled accumulator %d leaves int32", s)
				}
				got := min(max(((s*m[c])>>32+a[c])>>tt, lo), 127)
				if got != want {
					t.Fatalf("acc %d bias %d m %d e1 %d zk %d (t %d j %d A %d): %d, TFLite %d", acc, bias[c], m[c], e1[c], zk, tt, j[c], a[c], got, want)
				}
			}
		}
	}
}

// The fused GEMM in its shared-shift form (dsp_gemm_s8ps) gives the
// definition's results: pointwise and im2col convolutions, fully connected
// layers, every block shape, ReLU and ReLU6, input zero points across the
// range, on random and extreme inputs with extreme weights; per-channel
// scales too far apart for one shift keep the k0 form.
func TestDSPGemmShiftKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(73))
	for _, c := range []struct {
		cin, cout, k, h, w int
		zp                 int32
		act                graph.Activation
		knobs              map[string]int
	}{
		{16, 8, 1, 5, 5, -128, graph.ActRelu, nil},
		{32, 6, 1, 3, 3, 127, graph.ActRelu, map[string]int{"block_oc": 4}},
		{8, 16, 1, 4, 6, 0, graph.ActRelu6, map[string]int{"block_px": 1, "block_oc": 1}},
		{16, 8, 1, 7, 5, -3, graph.ActRelu, map[string]int{"unroll_k": 1}},
		{8, 5, 3, 6, 6, -128, graph.ActRelu6, map[string]int{"conv_rows": 0}},
		{3, 4, 3, 5, 7, 17, graph.ActRelu, map[string]int{"block_oc": 4, "conv_rows": 0}},
		{4, 8, 3, 6, 6, -128, graph.ActRelu, map[string]int{"rows_gather": 1}},
		// K = 8 and 4: one pixel through dsp_pw_s8ps(n) (small_k), ReLU and
		// signed epilogues.
		{8, 16, 1, 4, 6, 5, graph.ActRelu, nil},
		{8, 12, 1, 3, 5, -128, graph.ActNone, nil},
		{4, 6, 1, 3, 5, -128, graph.ActRelu, nil},
		{4, 7, 1, 2, 3, 9, graph.ActNone, nil},
	} {
		for _, extreme := range []bool{false, true} {
			name := fmt.Sprintf("%v extreme %v", c, extreme)
			g, n := int8ConvW(r, c.cin, c.cout, c.k, c.h, c.w, c.act)
			g.Tensor("x").Quant.ZeroPoint = []int32{c.zp}
			g.Tensor("y").Quant.ZeroPoint = []int32{-128}
			if extreme {
				extremeWeights(g)
			}
			f, s := dspKernel(t, g, n, c.knobs)
			if !usesIntrinsic(s, "dsp_gemm_s8ps") && !usesIntrinsic(s, "dsp_pw_s8ps") {
				t.Fatalf("%s: not in the shared-shift form:\n%s", name, s)
			}
			sameResult(t, name, f, s)
			runExtremes(t, name, f, s)
		}
	}
	for _, c := range []struct {
		rows, k, n int
		spread     float32 // largest / smallest weight scale
		want       string
	}{
		{1, 64, 12, 3, "dsp_gemm_s8ps"}, {3, 24, 9, 10, "dsp_gemm_s8ps"}, {2, 16, 8, 30, "dsp_gemm_s8ps"},
		{1, 40, 7, 1000, "dsp_gemm_s8pr"}, // shifts 10 apart: 127·2^12 leaves int16
	} {
		name := fmt.Sprintf("fc_%v", c)
		g, nd := reluFCPerChannel(r, c.rows, c.k, c.n, func(i int) float32 {
			return 0.0002 * (1 + (c.spread-1)*float32(i)/float32(c.n-1))
		})
		f, s := dspKernel(t, g, nd, nil)
		if !usesIntrinsic(s, c.want) {
			t.Fatalf("%s: does not use %s:\n%s", name, c.want, s)
		}
		sameResult(t, name, f, s)
		runExtremes(t, name, f, s)
	}
}

// The planar depthwise kernel in its shared-shift form (dsp_dwp3s_s8):
// the definition's results at strides 1 and 2, steps 2 and 4, with ReLU
// and ReLU6 and input zero points across the range, at the extremes too;
// without an activation, the form with TFLite's sign correction
// (dsp_dwp3sn_s8), whose negative accumulators the extremes reach.
func TestDSPDepthwisePlanarShift(t *testing.T) {
	r := rand.New(rand.NewSource(79))
	for _, c := range []struct {
		h, w, c, stride, pad int
		xzp                  int32
		act                  graph.Activation
	}{
		{5, 5, 4, 1, 1, -128, graph.ActRelu6}, {7, 6, 4, 2, 1, -128, graph.ActRelu}, {9, 9, 8, 2, 0, -5, graph.ActRelu6},
		{25, 5, 16, 1, 1, -128, graph.ActRelu}, {4, 4, 4, 1, 1, 127, graph.ActRelu}, {3, 15, 4, 2, 1, 100, graph.ActRelu},
		{6, 7, 8, 1, 1, 3, graph.ActNone}, {9, 9, 8, 2, 0, -128, graph.ActNone}, {3, 15, 4, 2, 1, 127, graph.ActNone},
		{25, 5, 16, 1, 1, -60, graph.ActNone},
	} {
		for _, step := range []int{2, 4} {
			what := fmt.Sprintf("%dx%dx%d s%d p%d zp%d %v step %d", c.h, c.w, c.c, c.stride, c.pad, c.xzp, c.act, step)
			g, n := dwConv(r, c.h, c.w, c.c, c.stride, c.pad, c.xzp, c.act)
			s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"dw_planar": 1, "dw_step": step})
			want := IntrDSPDWPlanarS
			if c.act == graph.ActNone {
				want = IntrDSPDWPlanarSN
			}
			if !usesIntrinsic(s, want) {
				t.Fatalf("%s: does not use %s:\n%s", what, want, s)
			}
			sameResult(t, what, Finalize(computeFunc(t, g, n)), s)
			for _, v := range []int64{-128, 127} {
				runBoth(t, fmt.Sprintf("%s all %d", what, v), Finalize(computeFunc(t, g, n)), s, func(int) int64 { return v })
			}
			runBoth(t, what+" extremes", Finalize(computeFunc(t, g, n)), s, func(i int) int64 { return []int64{-128, 127}[i%3%2] })
		}
	}
}

// A kernel's pixel blocks and its one-pixel tail share their scaled
// weights and tables: no two of its constants hold the same values.
func TestDSPGemmConstsOnce(t *testing.T) {
	r := rand.New(rand.NewSource(83))
	for _, shift := range []int{0, 1} {
		g, n := int8ConvW(r, 16, 8, 1, 3, 5, graph.ActRelu) // 15 pixels: blocks of two and a tail of one
		g.Tensor("y").Quant.ZeroPoint = []int32{-128}
		s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"requant_shift": shift, "block_px": 2})
		seen := map[string]string{}
		for _, c := range s.Consts() {
			k := fmt.Sprint(c.Data.I)
			if prev, ok := seen[k]; ok {
				t.Errorf("requant_shift %d: %s holds the same values as %s:\n%s", shift, c.Name, prev, s)
			}
			seen[k] = c.Name
		}
		if len(seen) < 2 {
			t.Fatalf("requant_shift %d: %d constants:\n%s", shift, len(seen), s)
		}
	}
}

// The row-widened 3×3 convolutions (conv_rows, three input-row segments)
// with a fused ReLU take the segmented shared-shift helper
// (dsp_gemm3_s8ps) and give the definition's results, at strides 1 and 2,
// padded or not, every block shape, on random and extreme inputs; a 2×2
// window (two segments) keeps the micro-kernel calls.
func TestDSPGemm3ShiftKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(89))
	for _, c := range []struct {
		h, w, cin, cout, k, stride, pad int
		zp                              int32
		knobs                           map[string]int
		want                            string
	}{
		{7, 6, 16, 4, 3, 1, 1, -3, nil, "dsp_gemm3_s8ps"},
		{7, 7, 8, 6, 3, 2, 1, 12, nil, "dsp_gemm3_s8ps"},
		{6, 5, 8, 4, 3, 1, 0, 127, map[string]int{"block_px": 1, "block_oc": 4}, "dsp_gemm3_s8ps"},
		{4, 3, 8, 3, 3, 1, 1, -128, map[string]int{"unroll_k": 1}, "dsp_gemm3_s8ps"},
		{6, 6, 8, 4, 2, 1, 0, 3, nil, "dsp_mac"},
	} {
		for _, extreme := range []bool{false, true} {
			name := fmt.Sprintf("%v extreme %v", c, extreme)
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, extreme)
			g.Tensor("y").Quant.ZeroPoint = []int32{-128}
			kn := map[string]int{"conv_rows": 1, "rows_gather": 0}
			for k, v := range c.knobs {
				kn[k] = v
			}
			f, s := dspKernel(t, g, n, kn)
			if !usesIntrinsic(s, c.want) {
				t.Fatalf("%s: does not use %s:\n%s", name, c.want, s)
			}
			if extreme {
				sameResultArgs(t, name, f, s, extremeArgs)
			} else {
				sameResult(t, name, f, s)
			}
		}
	}
}

// Property: without a fused ReLU (the whole int8 range kept), the shared
// shift with the sign correction D = 2^(j−1) subtracted from the SMMLA's
// high word of a negative scaled accumulator equals TFLite's
// requantization, ties included: TFLite rounds a negative half away from
// zero, a positive one up.
func TestSharedShiftSignedMatchesTFLite(t *testing.T) {
	r := rand.New(rand.NewSource(97))
	ties := 0
	for trial := 0; trial < 400; trial++ {
		L := randomShiftLayer(r, 10)
		n, zk, m, e1 := len(L.m), L.zk, L.m, L.e1
		tt, j, a, ok := sharedShift(L.k0, m, e1, L.bias, L.wmax, L.wsum, L.live, 255, 0)
		if !ok {
			t.Fatalf("trial %d: e1 %v refused", trial, e1)
		}
		for c := range n {
			var d int64
			if m[c] != 0 {
				d = 1 << (j[c] - 1)
			}
			for range 200 {
				x := r.Int63n(1<<16) - 1<<15 // TFLite's accumulator
				if r.Intn(2) == 0 && m[c] != 0 {
					// An exact tie of the second rounding: SRDHM's result
					// ≡ 2^e1 (mod 2^(e1+1)), reached from the nearest x.
					v := (x>>(e1[c]+1))<<(e1[c]+1) + 1<<e1[c]
					x = (v<<31 + m[c]/2) / m[c]
					if x > 32767*64 || x < -32768*64 {
						continue
					}
				}
				want := min(max(tfliteRequant(x, m[c], int(e1[c]+1), zk), -128), 127)
				s := x << j[c]
				corr := int64(0)
				if s < 0 {
					corr = d
				}
				got := min(max(((s*m[c])>>32+a[c]-corr)>>tt, -128), 127)
				if got != want {
					t.Fatalf("x %d m %d e1 %d zk %d (t %d j %d A %d D %d): %d, TFLite %d", x, m[c], e1[c], zk, tt, j[c], a[c], d, got, want)
				}
				if noCorr := min(max(((s*m[c])>>32+a[c])>>tt, -128), 127); noCorr != want {
					ties++
				}
			}
		}
	}
	// The cases must include ties, where the correction decides.
	if ties < 100 {
		t.Fatalf("only %d results needed the correction", ties)
	}
}

// The fused GEMM helpers for outputs without a fused ReLU (dsp_gemm_s8psn
// and the segmented dsp_gemm3_s8psn: the shared shift with the sign
// correction) give the definition's results: pointwise, im2col and
// row-widened 3×3 convolutions, fully connected layers with per-tensor and
// per-channel scales, output scales that leave small shifts (so that
// negative ties are common), on random and extreme inputs.
func TestDSPGemmShiftSignedKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(101))
	// yScale gives a right shift of about 6 for int8ConvHW's weights.
	for _, c := range []struct {
		h, w, cin, cout, k, stride, pad int
		zp, yzp                         int32
		yScale                          float32
		knobs                           map[string]int
		want                            string
	}{
		{5, 5, 16, 8, 1, 1, 0, -128, 5, 0.0006, nil, "dsp_gemm_s8psn"},
		{3, 7, 32, 6, 1, 1, 0, 127, -20, 0.5, map[string]int{"block_oc": 4}, "dsp_gemm_s8psn"},
		{6, 6, 8, 5, 3, 1, 0, -3, 0, 0.002, map[string]int{"conv_rows": 0}, "dsp_gemm_s8psn"},
		{7, 6, 16, 4, 3, 1, 1, -3, 3, 0.002, map[string]int{"conv_rows": 1, "rows_gather": 0}, "dsp_gemm3_s8psn"},
		{7, 7, 8, 6, 3, 2, 1, 12, -1, 0.001, map[string]int{"conv_rows": 1, "rows_gather": 0}, "dsp_gemm3_s8psn"},
		{6, 5, 8, 4, 3, 1, 0, 127, 0, 0.002, map[string]int{"conv_rows": 1, "rows_gather": 0, "block_px": 1, "block_oc": 4}, "dsp_gemm3_s8psn"},
	} {
		for _, extreme := range []bool{false, true} {
			name := fmt.Sprintf("%v extreme %v", c, extreme)
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, extreme)
			n.Attrs.(*graph.Conv2DAttrs).Act = graph.ActNone
			g.Tensor("y").Quant = &graph.Quant{Scale: []float32{c.yScale}, ZeroPoint: []int32{c.yzp}}
			f, s := dspKernel(t, g, n, c.knobs)
			if !usesIntrinsic(s, c.want) {
				t.Fatalf("%s: does not use %s:\n%s", name, c.want, s)
			}
			sameResult(t, name, f, s)
			runExtremes(t, name, f, s)
		}
	}
	for _, c := range []struct {
		rows, k, n int
		perChannel bool
		yScale     float32
		yzp        int32
		want       string
	}{
		{1, 64, 12, false, 0.01, -7, "dsp_gemm_s8psn"},
		{3, 24, 9, false, 0.2, 100, "dsp_gemm_s8psn"},
		{1, 128, 16, true, 0.02, 3, "dsp_gemm_s8psn"},
		{2, 16, 8, false, 0.01, -128, "dsp_gemm_s8ps"}, // zero point at the clamp: the ReLU form
	} {
		name := fmt.Sprintf("fc_%v", c)
		g, nd := int8FC(r, c.rows, c.k, c.n, 11)
		g.Tensor("y").Quant = &graph.Quant{Scale: []float32{c.yScale}, ZeroPoint: []int32{c.yzp}}
		if c.perChannel {
			wq := g.Tensor("w").Quant
			wq.Scale, wq.ZeroPoint = make([]float32, c.n), make([]int32, c.n)
			for i := range wq.Scale {
				wq.Scale[i] = 0.002 + 0.004*r.Float32()
			}
		}
		f, s := dspKernel(t, g, nd, nil)
		if !usesIntrinsic(s, c.want) || c.want == "dsp_gemm_s8ps" && usesIntrinsic(s, "dsp_gemm_s8psn") {
			t.Fatalf("%s: does not use %s:\n%s", name, c.want, s)
		}
		sameResult(t, name, f, s)
		runExtremes(t, name, f, s)
	}
}

// small_k is offered only where its helper takes the layer: with one
// channel's weight scale 5000 times the others' and weights at ±127, no
// shared shift holds every channel (the scaled weights would leave int16),
// so the 8→8 pointwise layer keeps its 2×2 pixel blocks (not one pixel at
// a time in the plain GEMM) and never reads the knob.
func TestSmallKOnlyWhereItApplies(t *testing.T) {
	r := rand.New(rand.NewSource(91))
	g, n := int8ConvW(r, 8, 8, 1, 6, 6, graph.ActRelu)
	g.Tensor("y").Quant.ZeroPoint = []int32{-128}
	wq := g.Tensor("w").Quant
	wq.Scale, wq.ZeroPoint = make([]float32, 8), make([]int32, 8)
	for i := range wq.Scale {
		wq.Scale[i] = 1e-4
	}
	wq.Scale[3] = 0.5
	extremeWeights(g)
	f, s := dspKernel(t, g, n, nil)
	if usesIntrinsic(s, "dsp_pw") {
		t.Fatalf("took dsp_pw without the shared shift:\n%s", s)
	}
	if _, read := s.Knobs["small_k"]; read || s.Knobs["block_px"] != 2 {
		t.Errorf("knobs %v: want block_px 2 and no small_k", s.Knobs)
	}
	sameResult(t, "spread", f, s)
	// The same layer with one scale everywhere takes it.
	for i := range wq.Scale {
		wq.Scale[i] = 1e-3
	}
	if _, s := dspKernel(t, g, n, nil); !usesIntrinsic(s, "dsp_pw_s8ps_n4") {
		t.Errorf("one scale: no dsp_pw_s8ps_n4:\n%s", s)
	}
}
