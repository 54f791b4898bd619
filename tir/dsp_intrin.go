package tir

import (
	"fmt"
	"math"
)

// DSP intrinsics (Cortex-M4/M7/M33, ACLE SIMD). Each has an exact semantic
// definition here, so the TIR interpreter runs schedules that use them;
// emitc prints each as one static inline helper over <arm_acle.h>.
//
// Packed int16 pairs: a "pair word" is an int32 holding two int16 values,
// lo in bits 0-15 and hi in bits 16-31 (SMLAD's operand). Activations are
// widened at run time into pair words (IntrDSPWiden) and weights are
// widened at compile time into the same order, so the GEMM micro-kernels
// only load words and multiply-accumulate.

// pack16 is the pair word (lo, hi).
func pack16(lo, hi int64) int64 { return int64(int32(uint32(uint16(lo)) | uint32(uint16(hi))<<16)) }

// dot2 is SMLAD's product sum of two pair words.
func dot2(a, b int64) int64 {
	return int64(int16(a))*int64(int16(b)) + int64(int16(a>>16))*int64(int16(b>>16))
}

// IntrDSPWiden widens int8 activations (plus an offset) into pair words:
//
//	dsp_widen_s8(dst *int32, src *int8, n, off), n % 4 == 0:
//	for g < n/4: dst[2g]   = pair(src[4g] + off,   src[4g+2] + off)
//	             dst[2g+1] = pair(src[4g+1] + off, src[4g+3] + off)
//
// the order __sxtab16 produces without any repacking; weights are packed
// in the same order at compile time (DSPPackWeights).
const IntrDSPWiden = "dsp_widen_s8"

// IntrDSPWiden3 widens pixels of three int8 channels (plus an offset) as if
// each had a fourth channel, into the words IntrDSPWiden makes of four
// channels:
//
//	dsp_widen3_s8(dst *int32, src *int8, npix, off):
//	for p < npix: dst[2p]   = pair(src[3p] + off,   src[3p+2] + off)
//	              dst[2p+1] = pair(src[3p+1] + off, src[3p+3] + off)   (0 for p = npix − 1)
//
// so an RGB row takes the row-widened convolution with the weights of a
// zero fourth input channel, which the fourth value (the next pixel's
// first, what one SXTAB16 of the pixel's word leaves there) never reaches:
// masking it cost an instruction a pixel (VWW's first layer ran 7.5 of its
// 37.8 instructions an output widening rows).
const IntrDSPWiden3 = "dsp_widen3_s8"

// DSPMacName is the R×C register-blocked GEMM micro-kernel over pair words
// (R rows of activations: output pixels or FC input rows; C output
// channels), with U groups of four k per loop iteration (unroll):
//
//	dsp_mac_s16_RxC_uU(acc *int32, x *int32, xs, w *int32, n), n % (2U) == 0:
//	acc[i·C + j] += Σ_{g < n/2} Σ_{h<2} dot2(x[i·xs + 2g + h], w[2C·g + 2j + h])
//
// The C channels' weights are interleaved by groups of two words, so one
// pointer walks them in the order the loop consumes.
func DSPMacName(r, c, u int) string { return fmt.Sprintf("dsp_mac_s16_%dx%d_u%d", r, c, u) }

// DSPMacUnrolls are the unroll depths (groups of four k per iteration)
// that have a helper. The ones between the powers of two fit K that no
// larger power of two divides, so that one iteration covers it (KWS's 10×4
// first layer: 20 pair words, u10; an RGB 3×3 window padded to four
// channels: 18 words, u9; IC's 3×3 row segments of 24 and 48 words, u12
// and u24). A helper is printed only where a kernel calls it.
var DSPMacUnrolls = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 32}

// DSPMacBlocks are the block shapes (rows × channels) that have a helper.
var DSPMacBlocks = [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}, {3, 1}, {3, 2}}

// IntrDSPDW4 is the depthwise channel-quad tap:
//
//	dsp_dw4_s8(acc *int32, x *int8, w *int32, xo)
//	acc[0] += (x[0] + xo)·lo(w[0]);  acc[2] += (x[2] + xo)·hi(w[0])
//	acc[1] += (x[1] + xo)·lo(w[1]);  acc[3] += (x[3] + xo)·hi(w[1])
//
// Four adjacent channels of one input pixel times their weights of one tap
// (pair words (w0, w2), (w1, w3)); the C pairs channels with __sxtab16 and
// multiplies with __smlabb/__smlatt.
const IntrDSPDW4 = "dsp_dw4_s8"

// IntrDSPRequant is the int8 output stage for a right shift e in [1, 31]
// and a multiplier m >= 0:
//
//	dsp_requant_s8(x, m, k0, e1, zr, lo, hi) = clamp(requant(x, m, −e) + zp, lo, hi)
//
// with TFLite's double rounding (IntrRequant), e1 = e − 1, the 64-bit
// constant k0 = 2^30 + 2^(30+e) + zk·2^(31+e), zp = zk + zr, and
// −128 <= lo <= hi <= 127. Both roundings fold into one: with
// v = SRDHM(x, m) = ⌊(x·m + 2^30) / 2^31⌋ and RoundingDivideByPOT(v, e) =
// ⌊(v + 2^(e−1) − [v<0]) / 2^e⌋ (where [v<0] may be read as [x<0]: they
// differ only where v = 0, which rounds to 0 either way), requant + zk is
// ⌊(x·m + k0 − [x<0]·2^31) / 2^(32+e1)⌋: one SMLAL, a sign correction and a
// shift of the high word. The zero point folds into k0 (zk = zp, zr = 0)
// when e <= 22, where the sum cannot overflow 64 bits. k0 and e1 are
// per-channel tables (or constants) made at compile time.
const IntrDSPRequant = "dsp_requant_s8"

// IntrRequantFast is IntrDSPRequant in portable C (one 64-bit multiply-add,
// a sign correction and a shift; an SMLAL where the core has one), for the
// generic schedules: same arguments, same results.
const IntrRequantFast = "requant_fast_s8"

// dspRequantK0 is k0 for right shift e with zk folded in.
func dspRequantK0(e, zk int64) int64 { return 1<<30 + 1<<(30+e) + zk<<(31+e) }

// weightPair reads pair word h of channel j, group g from a block of c
// channels' weights at w: the int16 layout (pairWords) or the int8 one
// (w8Pair).
type weightPair func(w val, c, g, j, h int64) int64

// pairWords reads DSPPackWeights' layout: word 2c·g + 2j + h.
func pairWords(w val, c, g, j, h int64) int64 { return w.p.I[w.i+2*c*g+2*j+h] }

// dotBlock is Σ_{g < n/2} Σ_{h<2} dot2(x[i·xs + 2g + h], pair(w, c, g, j, h))
// in int64 (the callers refuse a result outside int32).
func dotBlock(x val, xs, i int64, w val, c, j, n int64, pair weightPair) int64 {
	var s int64
	for g := int64(0); g < n/2; g++ {
		for h := int64(0); h < 2; h++ {
			s += dot2(x.p.I[x.i+i*xs+2*g+h], pair(w, c, g, j, h))
		}
	}
	return s
}

// macIntrinsic is the semantics of an r×c micro-kernel with unroll u
// (DSPMacName, DSPMacW8Name) reading its weights with pair.
func macIntrinsic(name string, r, c int64, u int, pair weightPair) func([]val) val {
	return func(a []val) val {
		acc, x, xs, w, n := a[0], a[1], a[2].i, a[3], a[4].i
		if n%int64(2*u) != 0 || n < 0 {
			panic(fmt.Sprintf("%s: n = %d", name, n))
		}
		for i := int64(0); i < r; i++ {
			for j := int64(0); j < c; j++ {
				s := acc.p.I[acc.i+i*c+j] + dotBlock(x, xs, i, w, c, j, n, pair)
				if s > math.MaxInt32 || s < math.MinInt32 {
					panic("int32 overflow in " + name)
				}
				acc.p.I[acc.i+i*c+j] = s
			}
		}
		return val{}
	}
}

func init() {
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			name := DSPMacName(b[0], b[1], u)
			extIntrinsics[name] = macIntrinsic(name, int64(b[0]), int64(b[1]), u, pairWords)
		}
	}
	extIntrinsics[IntrDSPWiden] = func(a []val) val {
		dst, src, n, off := a[0], a[1], a[2].i, a[3].i
		if n%4 != 0 {
			panic(fmt.Sprintf("%s: n = %d", IntrDSPWiden, n))
		}
		for g := int64(0); g < n/4; g++ {
			s := func(k int64) int64 { return src.p.I[src.i+4*g+k] + off }
			dst.p.I[dst.i+2*g] = pack16(s(0), s(2))
			dst.p.I[dst.i+2*g+1] = pack16(s(1), s(3))
		}
		return val{}
	}
	extIntrinsics[IntrDSPWiden3] = func(a []val) val {
		dst, src, n, off := a[0], a[1], a[2].i, a[3].i
		for p := int64(0); p < n; p++ {
			s := func(k int64) int64 { return src.p.I[src.i+3*p+k] + off }
			dst.p.I[dst.i+2*p] = pack16(s(0), s(2))
			// The next pixel's first channel in the high half (the fourth
			// channel's weights are zero), none after the last pixel.
			next := int64(0)
			if p+1 < n {
				next = s(3)
			}
			dst.p.I[dst.i+2*p+1] = pack16(s(1), next)
		}
		return val{}
	}
	extIntrinsics[IntrDSPDW4] = func(a []val) val {
		acc, x, w, xo := a[0], a[1], a[2], a[3].i
		wv := func(j int64) int64 {
			word := w.p.I[w.i+j%2]
			if j >= 2 {
				return int64(int16(word >> 16))
			}
			return int64(int16(word))
		}
		for j := int64(0); j < 4; j++ {
			s := acc.p.I[acc.i+j] + int64(int16(x.p.I[x.i+j]+xo))*wv(j)
			if s > math.MaxInt32 || s < math.MinInt32 {
				panic("int32 overflow in " + IntrDSPDW4)
			}
			acc.p.I[acc.i+j] = s
		}
		return val{}
	}
	extIntrinsics[IntrRequantFast] = func(a []val) val { return extIntrinsics[IntrDSPRequant](a) }
	extIntrinsics[IntrDSPRequant] = func(a []val) val {
		x, m, k0, e1, zr, lo, hi := int32(a[0].i), int32(a[1].i), a[2].i, a[3].i, a[4].i, a[5].i, a[6].i
		bad := e1 < 0 || e1 > 30 || m < 0 || lo < -128 || hi > 127 || lo > hi
		var zk int64
		if !bad {
			d := k0 - dspRequantK0(e1+1, 0)
			zk = d >> (32 + e1)
			bad = d != zk<<(32+e1) || (zk != 0 && e1 > 21)
		}
		if bad {
			panic(fmt.Sprintf("%s: shift %d, k0 %d, multiplier %d, range [%d, %d]", IntrDSPRequant, e1+1, k0, m, lo, hi))
		}
		return val{i: min(max(int64(RequantQ(x, m, -int32(e1)-1))+zk+zr, lo), hi)}
	}
}

// DSPPackWeights lays out int8 weights w[oc][k] (K per channel) as pair
// words for DSPMacName kernels: channels in blocks of c (a last block of
// single channels when c does not divide cout), K padded with zeros to k4
// (a multiple of 4), interleaved by groups of two words within a block.
// Channel block starting at oc0 begins at word oc0·k4/2.
func DSPPackWeights(w []int64, cout, K, k4, c int) []int64 {
	return packBlocks(w, K, k4, channelBlocks(cout, c, nil), false)
}

func ptr(b *Buffer, i Expr) Expr { return &Ptr{Buf: b, Index: i} }

// dspWiden builds dsp_widen_s8(&dst[di], &src[si], n, off).
func dspWiden(dst *Buffer, di Expr, src *Buffer, si Expr, n int, off int64) Stmt {
	return &Evaluate{X: Call(IntrDSPWiden, I32, ptr(dst, di), ptr(src, si), C(int64(n)), C(off))}
}

// dspWiden3 builds dsp_widen3_s8(&dst[di], &src[si], npix, off).
func dspWiden3(dst *Buffer, di Expr, src *Buffer, si Expr, npix int, off int64) Stmt {
	return &Evaluate{X: Call(IntrDSPWiden3, I32, ptr(dst, di), ptr(src, si), C(int64(npix)), C(off))}
}
