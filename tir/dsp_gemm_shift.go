package tir

import (
	"fmt"
	"math"
	"math/bits"
)

// DSPGemmSName is DSPGemmName with one right shift for the whole layer:
// each channel's weights and bias are scaled at compile time by 2^j[c] so
// that every channel's requantization ends in the same shift T, which SSAT
// then takes as its immediate operand, and the rounding offsets become a
// multiple of 2^32, so one SMMLA (no 64-bit k0, no second load per output)
// does the multiply and the adds:
//
//	dsp_gemm_s8ps_RxC_uU(y *int8, ys, x *int32, xs, w *int32, n, p *int32, nb, T, lo, hi), n % (2U) == 0:
//	for b < nb, i < R, j < C, o = b·C + j:
//	  s = p[3o+2] + Σ_{g < n/2} Σ_{h<2} dot2(x[i·xs + 2g + h], w[b·C·n + 2C·g + 2j + h])
//	  y[i·ys + o] = clamp((⌊s·p[3o] / 2^32⌋ + p[3o+1]) >> T, lo, hi)
//
// Why it is exact: IntrDSPRequantPR computes ⌊V / 2^(32+e1)⌋ + zr with
// V = (a + bias)·m + k0. With j = T − e1 and s = 2^j·(a + bias),
// 2^j·V = s·m + 2^j·k0; when 2^j·k0 = A·2^32 (k0 = 2^30 + 2^(31+e1) +
// zk·2^(32+e1), so j >= 2 does it), ⌊V / 2^(32+e1)⌋ =
// ⌊⌊(s·m + A·2^32) / 2^32⌋ / 2^T⌋ = (⌊s·m / 2^32⌋ + A) >> T, and zr
// joins A as zr·2^T. sharedShift checks at compile time that the scaled
// weights fit int16, that s fits int32 for any int8 activations and that
// the sum stays inside int32.
func DSPGemmSName(r, c, u int) string { return fmt.Sprintf("dsp_gemm_s8ps_%dx%d_u%d", r, c, u) }

// DSPGemm3SName is DSPGemmSName over three segments of K (a 3-row window
// read from three widened input rows, tir/dsp_convrows.go): the
// accumulators stay in registers across them, and each channel block's
// weights run on from one segment to the next:
//
//	dsp_gemm3_s8ps_RxC_uU(y, ys, xa, xb, xc *int32, xs, w, n, p, nb, T, lo, hi):
//	  as DSPGemmSName with K = 3n, row i's words g < n at xa + i·xs, then xb, xc
func DSPGemm3SName(r, c, u int) string { return fmt.Sprintf("dsp_gemm3_s8ps_%dx%d_u%d", r, c, u) }

// DSPGemmSNName is DSPGemmSName for an output without a fused ReLU, whose
// negative results need TFLite's sign correction: four words per channel
// (m, A, the scaled bias, D) and
//
//	y[i·ys + o] = clamp((⌊s·p[4o] / 2^32⌋ + p[4o+1] − [s < 0]·p[4o+3]) >> T, lo, hi)
//
// Why it is exact: IntrDSPRequantP is ⌊(V − [x<0]·2^31) / 2^(32+e1)⌋ + zr
// (tir/dsp_intrin.go), and 2^j·2^31 = 2^(j−1)·2^32, so the correction is
// D = 2^(j−1) on the SMMLA's high word (j >= 2 wherever the multiplier is
// not zero; D = 0 where it is, the result being a constant). s = 2^j·x has
// x's sign.
func DSPGemmSNName(r, c, u int) string { return fmt.Sprintf("dsp_gemm_s8psn_%dx%d_u%d", r, c, u) }

// DSPGemm3SNName is DSPGemm3SName with DSPGemmSNName's epilogue.
func DSPGemm3SNName(r, c, u int) string { return fmt.Sprintf("dsp_gemm3_s8psn_%dx%d_u%d", r, c, u) }

// gemmSIntrinsic is the semantics of DSPGemmSName (segs 1) and
// DSPGemm3SName (segs 3), or with signed their DSPGemmSNName forms: the
// arguments y, ys, the segs row pointers, xs, w, n, p, nb, T, lo, hi;
// segment k of channel block b has its weights at w + b·C·segs·n + k·C·n
// (int16 pair words).
func gemmSIntrinsic(name string, r, c int64, u int, segs int, signed bool) func([]val) val {
	per := int64(3)
	if signed {
		per = 4
	}
	return func(a []val) val {
		y, ys, x := a[0], a[1].i, a[2:2+segs]
		b := a[2+segs:]
		xs, w, n, p, nb, t, lo, hi := b[0].i, b[1], b[2].i, b[3], b[4].i, b[5].i, b[6].i, b[7].i
		if n <= 0 || n%int64(2*u) != 0 || nb < 0 || (r > 1 && ys == 0) {
			panic(fmt.Sprintf("%s: n = %d, nb = %d, ys = %d", name, n, nb, ys))
		}
		k := int64(len(x))
		for bl := int64(0); bl < nb; bl++ {
			for i := int64(0); i < r; i++ {
				for j := int64(0); j < c; j++ {
					o := bl*c + j
					P := func(q int64) int64 { return p.p.I[p.i+per*o+q] }
					s := P(2)
					for sg := int64(0); sg < k; sg++ {
						ws := val{p: w.p, i: w.i + bl*c*k*n + sg*c*n}
						s += dotBlock(x[sg], xs, i, ws, c, j, n, pairWords)
					}
					a := P(1)
					if signed && s < 0 {
						a -= P(3)
					}
					y.p.I[y.i+i*ys+o] = smmlaRequant(name, s, P(0), a, t, lo, hi)
				}
			}
		}
		return val{}
	}
}

// smmlaRequant is clamp((⌊s·m / 2^32⌋ + A) >> t, lo, hi), refusing what
// the C could not compute (a shift SSAT cannot take, a clamp outside int8,
// s outside int32, a negative or too large m, a sum leaving int32).
func smmlaRequant(name string, s, m, A, t, lo, hi int64) int64 {
	if t < 1 || t > 31 || lo < -128 || hi > 127 || lo > hi {
		panic(fmt.Sprintf("%s: shift %d, range [%d, %d]", name, t, lo, hi))
	}
	if s > math.MaxInt32 || s < math.MinInt32 {
		panic("int32 overflow in " + name)
	}
	if m < 0 || m > math.MaxInt32 {
		panic(fmt.Sprintf("%s: multiplier %d", name, m))
	}
	v := (s*m)>>32 + A
	if v > math.MaxInt32 || v < math.MinInt32 {
		panic("int32 overflow in " + name + "'s SMMLA")
	}
	return min(max(v>>t, lo), hi)
}

func init() {
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			for _, signed := range []bool{false, true} {
				name, name3 := DSPGemmSName(b[0], b[1], u), DSPGemm3SName(b[0], b[1], u)
				if signed {
					name, name3 = DSPGemmSNName(b[0], b[1], u), DSPGemm3SNName(b[0], b[1], u)
				}
				extIntrinsics[name] = gemmSIntrinsic(name, int64(b[0]), int64(b[1]), u, 1, signed)
				extIntrinsics[name3] = gemmSIntrinsic(name3, int64(b[0]), int64(b[1]), u, 3, signed)
			}
		}
	}
}

// sharedShift is the compile-time scaling of a layer's channels to one
// shift (DSPGemmSName's derivation), from each channel's k0 (with no bias
// in it), multiplier m, e1, bias, the largest |weight| wmax and Σ|weight|
// wsum, a bound xAbs on |activation| and the constant zr; live[c] false
// skips channel c. It returns the shift t and, per channel, j (the weights
// and the bias are scaled by 2^j) and A; ok is false when some channel
// cannot take it: its scaled weights would leave int16, its scaled
// accumulator int32, or A ±2^30.
func sharedShift(k0, m, e1, bias, wmax, wsum []int64, live []bool, xAbs, zr int64) (t int64, j, a []int64, ok bool) {
	n := len(k0)
	if xAbs <= 0 || len(m) != n || len(e1) != n || len(bias) != n || len(wmax) != n || len(wsum) != n || len(live) != n {
		return 0, nil, nil, false
	}
	// The smallest j making 2^j·k0 a multiple of 2^32, per channel: 32
	// less k0's trailing zero bits.
	t = -1
	for c := range n {
		if !live[c] || m[c] == 0 {
			continue
		}
		jc := max(0, 32-int64(bits.TrailingZeros64(uint64(k0[c]))))
		if jc > 8 || e1[c] < 0 || m[c] < 0 || m[c] > math.MaxInt32 {
			return 0, nil, nil, false
		}
		t = max(t, e1[c]+jc)
	}
	if t < 1 {
		t = 1 // every live channel has multiplier 0
	}
	if t > 31 {
		return 0, nil, nil, false
	}
	j, a = make([]int64, n), make([]int64, n)
	for c := range n {
		if !live[c] {
			continue
		}
		if m[c] == 0 {
			// A zero multiplier (a channel with scale zero) gives
			// ⌊k0 / 2^(32+e1)⌋ + zr whatever the accumulator: A is that
			// times 2^t, and the weights stay as they are (j = 0).
			if e1[c] < 0 || e1[c] > 30 || (wsum[c]*xAbs+abs64(bias[c])) > math.MaxInt32 {
				return 0, nil, nil, false
			}
			y := (k0[c] >> (32 + e1[c])) + zr
			if t > 30 || abs64(y) >= 1<<(30-t) {
				return 0, nil, nil, false
			}
			a[c] = y << t
			continue
		}
		jc := t - e1[c]
		// The scaled weights are int16, the scaled accumulator int32.
		if jc > 14 || wmax[c]<<jc > math.MaxInt16 || (wsum[c]*xAbs+abs64(bias[c]))<<jc > math.MaxInt32 {
			return 0, nil, nil, false
		}
		// 2^jc·k0 / 2^32, exact (jc is at least the channel's smallest j),
		// as a right shift, which cannot overflow.
		ac := k0[c]>>(32-jc) + zr<<t
		// ⌊s·m / 2^32⌋ is inside ±2^30, so A within ±2^30 keeps the sum in int32.
		if abs64(ac) >= 1<<30 {
			return 0, nil, nil, false
		}
		j[c], a[c] = jc, ac
	}
	return t, j, a, true
}

// signCorrection is a channel's D (DSPGemmSNName): TFLite's sign
// correction after the channel's 2^j scaling, 2^(j−1) off the SMMLA's high
// word, for multiplier m and constant A; 0 where m is 0 (the result is a
// constant). ok is false where j < 1 or A − D would leave ±2^30.
func signCorrection(m, j, a int64) (d int64, ok bool) {
	if m == 0 {
		return 0, true
	}
	// j >= 2 where m is not zero (k0 has 2^30 in it); A − D must stay
	// inside ±2^30 as A does.
	if j < 1 {
		// (review finding: the shift below was negative, a panic)
		return 0, false
	}
	d = int64(1) << (j - 1)
	return d, abs64(a)+d < 1<<30
}

// shiftPlan is planShift's compile-time result: the shared shift, the
// three-word table (m, A, scaled bias) per channel, four with the sign
// correction D (DSPGemmSNName), and the scaled weights.
type shiftPlan struct {
	t   int64
	tab []int64
	w   []int64
}

// planShift scales each live channel of g to one shift (sharedShift), from
// the unfolded IntrDSPRequantPR table tab (four words per channel: k0 low,
// k0 high, m, e1), the per-channel bias and the constant zr; ok is false
// when some channel cannot take it (then the layer keeps DSPGemmName).
// signed adds each channel's D for outputs that need the sign correction.
func (g *gemmSpec) planShift(tab, bias []int64, zr int64, signed bool) (shiftPlan, bool) {
	if g.w8 || g.xAbs <= 0 || len(tab) != 4*g.Cout || len(bias) != g.Cout {
		return shiftPlan{}, false
	}
	n := g.Cout
	k0, m, e1, wmax, wsum, live := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]bool, n)
	for oc := range n {
		live[oc] = g.dead == nil || !g.dead[oc]
		k0[oc], m[oc], e1[oc] = int64(uint32(tab[4*oc]))+tab[4*oc+1]<<32, tab[4*oc+2], tab[4*oc+3]
		if live[oc] {
			for _, v := range g.chanWeights(oc) {
				wmax[oc] = max(wmax[oc], abs64(v))
				wsum[oc] += abs64(v)
			}
		}
	}
	t, j, a, ok := sharedShift(k0, m, e1, bias, wmax, wsum, live, g.xAbs, zr)
	if !ok {
		return shiftPlan{}, false
	}
	per := 3
	if signed {
		per = 4
	}
	p := shiftPlan{t: t, tab: make([]int64, per*n), w: append([]int64(nil), g.w.Data.I...)}
	for oc := range n {
		if !live[oc] {
			continue
		}
		p.tab[per*oc], p.tab[per*oc+1], p.tab[per*oc+2] = m[oc], a[oc], bias[oc]<<j[oc]
		if signed {
			d, ok := signCorrection(m[oc], j[oc], a[oc])
			if !ok {
				return shiftPlan{}, false
			}
			p.tab[per*oc+3] = d
		}
		for k := 0; k < g.K4/2; k++ {
			at := g.wordOf(oc, k)
			wv := p.w[at]
			p.w[at] = pack16(int64(int16(wv))<<j[oc], int64(int16(wv>>16))<<j[oc])
		}
	}
	return p, true
}
