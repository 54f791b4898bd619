package tir

import (
	"fmt"
	"math"
)

// SIMD micro-kernels shared by the "mve" (Helium) and "neon" targets. Each is
// one intrinsic block with exact semantics here (so the TIR interpreter runs
// scheduled kernels and tests compare them with the compute definitions);
// emitc prints its C body once as a static inline helper named
// <target>_<kernel>_s8, using <arm_mve.h> or <arm_neon.h>. Pointers are Ptr
// expressions; counts and strides are constants.
const (
	// KGemv(acc *i32, x *i8, w *i8, ws, m, n): acc[j] += Σ_{i<n} x[i]·w[j·ws+i] for j < m.
	KGemv = "gemv_s8"
	// KGemvB(acc *i32, init *i32, x *i8, wb *i8, m, n): KGemv over weights
	// stored in blocks of 4 rows × 16 columns (see BlockWeights), m a
	// multiple of 4, starting from init (the bias, or acc itself):
	// acc[j] = init[j] + Σ_{i<n} x[i]·wb[((j/4)·⌈n/16⌉ + i/16)·64 + (j%4)·16 + i%16].
	KGemvB = "gemvb_s8"
	// KDwConv(acc *i32, x *i8, xkh, xkw, w *i8, kh, kw, c):
	// acc[ch] += Σ_{a<kh, b<kw} x[a·xkh + b·xkw + ch]·w[(a·kw+b)·c + ch] for ch < c.
	KDwConv = "dwconv_s8"
	// KDwConvRQ(y *i8, x *i8, xkh, xkw, w *i8, kh, kw, c, bias *i32, mult *i32,
	// shift *i32, left, zp, lo, hi): one output pixel of a depthwise conv,
	// bias + KDwConv taps + KRequant in one block (left = 1 when some shift
	// is positive; it changes only how the C is specialised), c a multiple of 4.
	KDwConvRQ = "dwconvrq_s8"
	// KRequant(y *i8, acc *i32, mult *i32, shift *i32, n, zp, lo, hi):
	// y[i] = clamp(MultiplyByQuantizedMultiplier(acc[i], mult[i], shift[i]) + zp, lo, hi).
	KRequant = "requant_s8"
	// KRequantR is KRequant for shift tables with no positive (left) shift.
	KRequantR = "requantr_s8"
	// KCopy8(dst *i8, src *i8, n) and KCopy32(dst *i32, src *i32, n): dst[i] = src[i].
	KCopy8  = "copy_s8"
	KCopy32 = "copy_s32"
	// KCopy16(dst *i16, src *i16, n): dst[i] = src[i] (gen_copy_s16 only:
	// an SVDF's int16 state).
	KCopy16 = "copy_s16"
	// KFill8(dst *i8, v, n): dst[i] = v.
	KFill8 = "fill_s8"
	// KFlip8(dst, src, n): dst[i] = src[i] with its top bit flipped, one
	// buffer uint8 and the other int8 (gen_flip_s8 only): a requantization
	// between zero points 128 apart at one scale, u − 128 or s + 128.
	KFlip8 = "flip_s8"
)

// SIMDPrefixes are the targets whose micro-kernels the interpreter knows.
var SIMDPrefixes = []string{"mve", "neon"}

func init() {
	// The generic channel-pair schedule fills its windows with these two.
	for _, k := range []string{KCopy8, KCopy16, KFill8, KFlip8} {
		name := "gen_" + k
		extIntrinsics[name] = func(a []val) val {
			v, _ := simdIntrinsic(name, k, a)
			return v
		}
	}
	for _, p := range SIMDPrefixes {
		for _, k := range []string{KGemv, KGemvB, KDwConv, KDwConvRQ, KRequant, KRequantR, KCopy8, KCopy32, KFill8} {
			name := p + "_" + k
			extIntrinsics[name] = func(a []val) val {
				v, _ := simdIntrinsic(name, k, a)
				return v
			}
		}
	}
}

// simdIntrinsic runs micro-kernel k (called as name); ok is false for an
// unknown kernel.
func simdIntrinsic(name, k string, a []val) (val, bool) {
	at := func(v val, i int64) *int64 { return &v.p.I[v.i+i] }
	add := func(acc *int64, v int64) {
		s := *acc + v
		if s > math.MaxInt32 || s < math.MinInt32 {
			panic(fmt.Sprintf("int32 overflow in %s", name))
		}
		*acc = s
	}
	switch k {
	case KGemv:
		acc, x, w, ws, m, n := a[0], a[1], a[2], a[3].i, a[4].i, a[5].i
		for j := int64(0); j < m; j++ {
			var s int64
			for i := int64(0); i < n; i++ {
				s += *at(x, i) * *at(w, j*ws+i)
			}
			add(at(acc, j), s)
		}
	case KGemvB:
		acc, init, x, w, m, n := a[0], a[1], a[2], a[3], a[4].i, a[5].i
		chunks := (n + 15) / 16
		for j := int64(0); j < m; j++ {
			*at(acc, j) = *at(init, j)
			var s int64
			for i := int64(0); i < n; i++ {
				s += *at(x, i) * *at(w, ((j/4)*chunks+i/16)*64+(j%4)*16+i%16)
			}
			add(at(acc, j), s)
		}
	case KDwConv:
		acc, x, xkh, xkw, w, kh, kw, c := a[0], a[1], a[2].i, a[3].i, a[4], a[5].i, a[6].i, a[7].i
		for ch := int64(0); ch < c; ch++ {
			var s int64
			for p := int64(0); p < kh; p++ {
				for q := int64(0); q < kw; q++ {
					s += *at(x, p*xkh+q*xkw+ch) * *at(w, (p*kw+q)*c+ch)
				}
			}
			add(at(acc, ch), s)
		}
	case KDwConvRQ:
		y, x, xkh, xkw, w, kh, kw, c := a[0], a[1], a[2].i, a[3].i, a[4], a[5].i, a[6].i, a[7].i
		bias, mult, shift, zp, lo, hi := a[8], a[9], a[10], a[12].i, a[13].i, a[14].i
		for ch := int64(0); ch < c; ch++ {
			acc := *at(bias, ch)
			for p := int64(0); p < kh; p++ {
				for q := int64(0); q < kw; q++ {
					add(&acc, *at(x, p*xkh+q*xkw+ch)**at(w, (p*kw+q)*c+ch))
				}
			}
			v := int64(RequantQ(int32(acc), int32(*at(mult, ch)), int32(*at(shift, ch)))) + zp
			*at(y, ch) = wrap(y.p.DType, min(max(v, lo), hi))
		}
	case KRequant, KRequantR:
		y, acc, mult, shift, n, zp, lo, hi := a[0], a[1], a[2], a[3], a[4].i, a[5].i, a[6].i, a[7].i
		for i := int64(0); i < n; i++ {
			v := int64(RequantQ(int32(*at(acc, i)), int32(*at(mult, i)), int32(*at(shift, i)))) + zp
			*at(y, i) = wrap(y.p.DType, min(max(v, lo), hi))
		}
	case KCopy8, KCopy16, KCopy32:
		dst, src, n := a[0], a[1], a[2].i
		for i := int64(0); i < n; i++ {
			*at(dst, i) = *at(src, i)
		}
	case KFlip8:
		dst, src, n := a[0], a[1], a[2].i
		for i := int64(0); i < n; i++ {
			*at(dst, i) = wrap(dst.p.DType, *at(src, i)^0x80)
		}
	case KFill8:
		dst, v, n := a[0], a[1].i, a[2].i
		for i := int64(0); i < n; i++ {
			*at(dst, i) = wrap(dst.p.DType, v)
		}
	default:
		return val{}, false
	}
	return val{}, true
}

// VQRDMULH is the Arm VQRDMULH instruction on one 32-bit lane (MVE and NEON
// agree): saturate((2·a·b + 2^31) >> 32).
//
// It equals SRDHM everywhere: for a·b >= 0 both are floor((a·b + 2^30)/2^31);
// for q = -a·b > 0 SRDHM is -floor((q + 2^30 - 1)/2^31) and VQRDMULH is
// floor((2^30 - q)/2^31) = -ceil((q - 2^30)/2^31) = -floor((q + 2^30 - 1)/2^31).
// The one product outside int32, INT32_MIN·INT32_MIN, saturates to INT32_MAX
// in both (SRDHM special-cases it). TestVectorRequantMatchesTFLite checks it.
func VQRDMULH(a, b int32) int32 {
	p := (2*int64(a)*int64(b) + (1 << 31))
	if a == math.MinInt32 && b == math.MinInt32 {
		return math.MaxInt32
	}
	return int32(p >> 32)
}

// VRSHL is the Arm VRSHL instruction on one 32-bit lane for a shift s <= 0:
// a rounding arithmetic shift right by -s, computed without overflow.
func VRSHL(a, s int32) int32 {
	if s >= 0 {
		return int32(int64(a) << uint(s))
	}
	n := uint(-s)
	return int32((int64(a) + (int64(1) << (n - 1))) >> n)
}

// VectorRequant is the lane-wise requantization the SIMD helpers print
// (gemmlowp's NEON RoundingDivideByPOT with the sign fix-up):
//
//	x = a << max(shift, 0)            (VSHL, wrapping like TFLite's x·2^left)
//	x = VQRDMULH(x, m)
//	r = min(shift, 0)                 (minus the right shift)
//	x = VQADD(x, (x & r) >> 31)       (−1 for negative x when r < 0)
//	x = VRSHL(x, r)
func VectorRequant(a, m, shift int32) int32 {
	left := max(shift, 0)
	r := min(shift, 0)
	x := int32(int64(a) << uint(left))
	x = VQRDMULH(x, m)
	fix := (x & r) >> 31
	s := int64(x) + int64(fix)
	if s < math.MinInt32 {
		s = math.MinInt32
	}
	return VRSHL(int32(s), r)
}

// BlockWeights lays out rows j < m (row j at w[j·ws ...], n values each) in
// the order KGemvB reads them: blocks of 4 rows × 16 columns, the last
// column block zero-padded.
func BlockWeights(w []int64, ws, m, n int) []int64 {
	chunks := (n + 15) / 16
	out := make([]int64, (m/4)*chunks*64)
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			out[((j/4)*chunks+i/16)*64+(j%4)*16+i%16] = w[j*ws+i]
		}
	}
	return out
}
