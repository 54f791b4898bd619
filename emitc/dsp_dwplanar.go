package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrDSPPlanes and tir.IntrDSPDWPlanar: the planar 3×3
// depthwise schedule's layout pass (channel planes of int16 pair words,
// a halfword pack of two pixels then SXTAB16) and its row kernel (SMLAD over
// two adjacent taps, SMLABT/SMLATB for the third).
func init() {
	add := addHelper
	add(tir.IntrDSPPlanes, []string{"dsp_acle"}, `/* PKHBT (a low, b low) and PKHTB (a high, b high): halfwords of two words. */
static inline int32_t dsp_pk_lo(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
static inline int32_t dsp_pk_hi(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}

/* One input row (w pixels xs bytes apart, c channels of each, c % 4 == 0) as planes of int16 pair
   words, the channels of one word position adjacent: dst[k * c + ch] = (v(2k - padl, ch), v(2k - padl + 1, ch))
   with v(i, ch) = x[i * xs + ch] + xo inside the row and 0 outside it. */
static inline MCUGEN_ALWAYS_INLINE void dsp_planes_s8(int32_t *dst, const int8_t *x, int32_t w, int32_t c, int32_t wp2, int32_t padl, int32_t xo,
                                                      int32_t xs)
{
    const int32_t o = (int32_t)(((uint32_t)xo << 16) | ((uint32_t)xo & 0xffffu));
    /* Word positions whose two pixels are both inside the row: k_lo <= k < k_hi. Their loop
       runs without bounds checks, eight channels a step where c allows (the per-k checks and
       the channel loop's own steps were a fifth of the pass); the rest take the checked loop. */
    const int32_t k_lo = (padl + 1) / 2;
    const int32_t k_hi = (w + padl) / 2 < wp2 ? (w + padl) / 2 : wp2;
    int32_t k;
    if (k_hi > k_lo) {
        const int8_t *xa = x + (2 * k_lo - padl) * xs;
        int32_t *d = dst + k_lo * c;
        for (k = k_lo; k < k_hi; ++k, xa += 2 * xs) {
            int32_t ch = 0;
#define DSP_PLANES_QUAD(cq) do { \
        const int32_t va_ = dsp_read32(xa + (cq)); \
        const int32_t vb_ = dsp_read32(xa + xs + (cq)); \
        /* Bytes (a0 a1 b0 b1) and (a2 a3 b2 b3) first: one SXTAB16 per word then (six \
           instructions where widening first and packing after took eight). */ \
        const int32_t p_ = dsp_pk_lo(va_, vb_); \
        const int32_t q_ = dsp_pk_hi(va_, vb_); \
        /* Two STRDs (gcc stores the four words one by one). */ \
        DSP_ST2(d, (cq), __sxtab16(o, p_), dsp_sxtab16_ror8(o, p_)); \
        DSP_ST2(d, (cq) + 2, __sxtab16(o, q_), dsp_sxtab16_ror8(o, q_)); \
    } while (0)
            if (c % 8 == 0) {
                for (; ch < c; ch += 8, xa += 8, d += 8) {
                    DSP_PLANES_QUAD(0);
                    DSP_PLANES_QUAD(4);
                }
            } else {
                for (; ch < c; ch += 4, xa += 4, d += 4) {
                    DSP_PLANES_QUAD(0);
                }
            }
#undef DSP_PLANES_QUAD
            xa -= c;
        }
    }
    for (k = 0; k < wp2; ++k) {
        const int32_t i = 2 * k - padl;
        const int ina = i >= 0 && i < w;
        const int inb = i + 1 >= 0 && i + 1 < w;
        int32_t *d = dst + k * c;
        int32_t ch;
        if (k == k_lo && k_hi > k_lo) {
            k = k_hi - 1;
            continue;
        }
        /* A pixel outside the row reads as 0 and takes no offset: the same pack and SXTAB16
           as the interior, with the offset's halfword of that pixel cleared. */
        if (!ina && !inb) {
            for (ch = 0; ch < c; ch += 4, d += 4) {
                DSP_ST2(d, 0, 0, 0);
                DSP_ST2(d, 2, 0, 0);
            }
        } else {
            /* One loop per case, the tests out of it (gcc left them in: two CBZ a step). */
            const int32_t oi = (int32_t)((ina ? (uint32_t)o & 0xffffu : 0u) | (inb ? (uint32_t)o & 0xffff0000u : 0u));
#define DSP_PLANES_EDGE(va, vb) do { \
        const int32_t p_ = dsp_pk_lo((va), (vb)); \
        const int32_t q_ = dsp_pk_hi((va), (vb)); \
        DSP_ST2(d, 0, __sxtab16(oi, p_), dsp_sxtab16_ror8(oi, p_)); \
        DSP_ST2(d, 2, __sxtab16(oi, q_), dsp_sxtab16_ror8(oi, q_)); \
    } while (0)
            if (ina && inb) {
                const int8_t *xa = x + i * xs;
                for (ch = 0; ch < c; ch += 4, d += 4) {
                    DSP_PLANES_EDGE(dsp_read32(xa + ch), dsp_read32(xa + xs + ch));
                }
            } else if (ina) {
                const int8_t *xa = x + i * xs;
                for (ch = 0; ch < c; ch += 4, d += 4) {
                    DSP_PLANES_EDGE(dsp_read32(xa + ch), 0);
                }
            } else {
                const int8_t *xb = x + (i + 1) * xs;
                for (ch = 0; ch < c; ch += 4, d += 4) {
                    DSP_PLANES_EDGE(0, dsp_read32(xb + ch));
                }
            }
#undef DSP_PLANES_EDGE
        }
    }
}`)
	addHelperGen(tir.IntrDSPDWPlanar, []string{"dsp_acle", tir.IntrDSPRequant}, func() string { return dwPlanarC(dwPlain) })
	addHelperGen(tir.IntrDSPDWPlanarR, []string{"dsp_acle"}, func() string { return dwPlanarC(dwReLU) })
	addHelperGen(tir.IntrDSPDWPlanarS, []string{"dsp_acle"}, func() string { return dwPlanarC(dwShift) })
	addHelperGen(tir.IntrDSPDWPlanarSN, []string{"dsp_acle"}, func() string { return dwPlanarC(dwShiftSigned) })
}

// dwForm is which requantization a planar row kernel ends in.
type dwForm int

const (
	dwPlain       dwForm = iota // IntrDSPDWPlanar: bias in the accumulator, TFLite's sign correction
	dwReLU                      // IntrDSPDWPlanarR: bias in k0, no sign correction
	dwShift                     // IntrDSPDWPlanarS: scaled bias in the accumulator, SMMLA, the layer's one shift
	dwShiftSigned               // IntrDSPDWPlanarSN: dwShift with TFLite's sign correction (D & (acc >> 31))
)

// dwClampStore ends DSP_DWP3_RQ's ReLU forms: the clamp (folded away for
// the full int8 range) and the byte store.
const dwClampStore = `if (lo > -128 && y_ < lo) { \
            y_ = lo; \
        } \
        if (hi < 127 && y_ > hi) { \
            y_ = hi; \
        } \
        *o_ = (int8_t)y_; `

// dwPlanarC is the C of the planar row kernel: channels innermost, one
// channel's twelve table words loaded once per step of four outputs
// (step 4), two (step 2, and the tail of step 4) or one (the last column of
// an odd row). The ReLU form starts each output from SMUAD (its bias is in
// k0) and requantizes with one SMLAL, no sign correction.
func dwPlanarC(form dwForm) string {
	name, note, words, last := tir.IntrDSPDWPlanar, "", "the bias, k0 (low,\n   high), the multiplier, e1 and a pad word", "zr"
	// rq requantizes y_ into *o_. The ReLU form loads k0 (p[7], p[8]) into
	// the SMLAL's own accumulator pair, one LDRD per output: no copies of a
	// k0 kept in registers, which four outputs could not spare.
	rq := `DSP_LD2(p, 7, kl_, kh_); \
        *o_ = (int8_t)dsp_requant_s8(y_, m_, (int64_t)(((uint64_t)(uint32_t)kh_ << 32) | (uint32_t)kl_), e1_, zr, lo, hi); `
	switch form {
	case dwShift:
		name, last = tir.IntrDSPDWPlanarS, "t"
		words = "the bias, the\n   multiplier and A, all scaled to the layer's one shift t (tir/dsp_gemm_shift.go)"
		rq = `__asm__("smmla %0, %1, %2, %3" : "=r"(y_) : "r"(y_), "r"(m_), "r"(k_)); \
        y_ = (int32_t)__builtin_arm_ssat(y_ >> t, 8); \
        ` + dwClampStore
	case dwShiftSigned:
		name, last = tir.IntrDSPDWPlanarSN, "t"
		words = "the bias, the\n   multiplier, A and TFLite's sign correction D, all scaled to the layer's one shift t\n   (tir/dsp_gemm_shift.go)"
		rq = `int32_t v_; \
        __asm__("smmla %0, %1, %2, %3" : "=r"(v_) : "r"(y_), "r"(m_), "r"(k_)); \
        v_ -= p[9] & (y_ >> 31); \
        y_ = (int32_t)__builtin_arm_ssat(v_ >> t, 8); \
        ` + dwClampStore
	case dwReLU:
		name = tir.IntrDSPDWPlanarR
		note = " (the bias 0 and folded into k0; no sign\n   correction: the output's zero point is at or below lo)"
		rq = `__asm__("ldrd %0, %1, [%4, #28]\n\tsmlal %0, %1, %2, %3" \
                : "=&r"(kl_), "=&r"(kh_) : "r"(y_), "r"(m_), "r"(p), "m"(*(const dsp_word_pair *)(p + 7))); \
        y_ = (int32_t)__builtin_arm_ssat((kh_ >> e1_) + zr, 8); \
        ` + dwClampStore
	}
	decl := `int32_t kl_; \
        int32_t kh_; \
        `
	if form == dwShift || form == dwShiftSigned {
		decl = ""
	}
	return `/* One output row of a 3x3 depthwise convolution over the planes r0, r1, r2 (word k of channel ch
   at k * nc + ch): per channel p holds (g0, g1), (g1, g2) for each kernel row, ` + words + note + `; out[j * os + ch] for j < ow at
   stride 1 or 2, step (4 or 2) outputs of a channel at a time (os: the output's pixel stride, nc or more). */
#define DSP_DWP3_RQ(yv, op) do { \
        int8_t *const o_ = (op); \
        int32_t y_ = (yv); \
        ` + decl + rq + `\
    } while (0)
static inline MCUGEN_ALWAYS_INLINE void ` + name + `(int8_t *out, const int32_t *r, int32_t s0, int32_t s1, int32_t s2, const int32_t *p0,
                                int32_t nc, int32_t ow, int32_t stride, int32_t step, int32_t ` + last + `, int32_t lo, int32_t hi, int32_t os)
{
    /* Inlined into each layer, so nc, ow, stride, step, os, the row offsets s0, s1, s2 and the clamp
       are constants there: one pointer q walks the channels of all three rows. */
    int32_t j = 0;
    /* A row of 3, 5 or 6 outputs in one group: no pair or single tail reloading the channel's words. */
    if (step == 4 && ow == 3) {
        {
` + dwPlanarGroup(form, 3) + `        }
        j = 3;
    }
    if (step == 4 && ow == 5) {
        {
` + dwPlanarGroup(form, 5) + `        }
        j = 5;
    }
    if (step == 4 && ow == 6) {
        {
` + dwPlanarGroup(form, 6) + `        }
        j = 6;
    }
    if (step == 4) {
        for (; j + 3 < ow; j += 4, out += 4 * os) {
` + dwPlanarGroup(form, 4) + `        }
    }
    for (; j + 1 < ow; j += 2, out += 2 * os) {
` + dwPlanarGroup(form, 2) + `    }
    if (j < ow) {
` + dwPlanarGroup(form, 1) + `    }
}
#undef DSP_DWP3_RQ`
}

// dwPlanarGroup prints the channel loop of n outputs j..j+n-1 (at the
// indentation of a block inside the kernel's loop over j).
func dwPlanarGroup(form dwForm, n int) string {
	ind := strings.Repeat("    ", 2)
	if n >= 3 {
		ind += "    "
	}
	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(ind + fmt.Sprintf(format, args...) + "\n") }
	w("const int32_t *q = r + (stride == 1 ? j / 2 : j) * nc;")
	w("const int32_t *p = p0;")
	w("int8_t *o = out;")
	w("int8_t *const end = out + nc;")
	if n == 1 {
		b.WriteString(dwPlanarLoop(form, ind, 1, 1))
		return b.String()
	}
	w("if (stride == 1) {")
	b.WriteString(dwPlanarLoop(form, ind+"    ", n, 1))
	w("} else {")
	b.WriteString(dwPlanarLoop(form, ind+"    ", n, 2))
	w("}")
	return b.String()
}

// dwPlanarLoop prints the channel loop of n outputs at stride s. Word k of
// a kernel row's plane (x<k>, at k·nc) holds input columns 2k, 2k+1 of the
// window's first output. At stride 1 output i takes SMLAD(x<i/2>, g) +
// SMLABT(x<i/2+1>, h) for even i and SMLATB(x<(i-1)/2>, g) +
// SMLAD(x<(i+1)/2>, h) for odd i: outputs 0..3 read the three words 0..2.
// At stride 2 output i takes SMLAD(x<i>, g) + SMLABT(x<i+1>, h): n+1 words.
// Words are loaded as they are first needed and each is dead after the
// next word's products, so at most two are live and the four accumulators,
// g, h and the five pointers fit the thirteen registers. GCC's scheduler
// would still hoist the next kernel row's loads above the products at
// stride 1 and spill (69 instructions a step of four instead of 62): an
// empty asm that takes the accumulators and "changes" the row pointer
// keeps them in place. At stride 2, and for pairs, it costs more than it
// saves (measured), so only that loop has it.
func dwPlanarLoop(form dwForm, ind string, n, s int) string {
	type mul struct {
		out, word int
		op        string // smlad, smlabt or smlatb
		wt        string // g or h
	}
	var muls []mul
	words := 0
	for i := 0; i < n; i++ {
		var m [2]mul
		switch {
		case s == 2 || n == 1:
			m = [2]mul{{i, i, "smlad", "g"}, {i, i + 1, "smlabt", "h"}}
		case i%2 == 0:
			m = [2]mul{{i, i / 2, "smlad", "g"}, {i, i/2 + 1, "smlabt", "h"}}
		default:
			m = [2]mul{{i, (i - 1) / 2, "smlatb", "g"}, {i, (i + 1) / 2, "smlad", "h"}}
		}
		muls = append(muls, m[:]...)
		words = max(words, m[0].word+1, m[1].word+1)
	}
	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(ind + fmt.Sprintf(format, args...) + "\n") }
	stride := 12
	shift := form == dwShift || form == dwShiftSigned
	switch form {
	case dwShift:
		stride = tir.DWPlanarSWords
	case dwShiftSigned:
		stride = tir.DWPlanarSNWords
	}
	w("for (; o < end; ++o, ++q, p += %d) {", stride)
	in := ind + "    "
	wi := func(format string, args ...any) { b.WriteString(in + fmt.Sprintf(format, args...) + "\n") }
	wi("int32_t g;")
	wi("int32_t h;")
	for k := 0; k < words; k++ {
		wi("int32_t x%d;", k)
	}
	for i := 0; i < n; i++ {
		if form != dwPlain {
			wi("int32_t y%d;", i)
		} else {
			wi("int32_t y%d = p[6];", i)
		}
	}
	if shift {
		wi("const int32_t b_ = p[6];")
	}
	wi("int32_t m_;")
	if shift {
		wi("int32_t k_;")
	} else {
		wi("int32_t e1_;")
	}
	for r := range 3 {
		if r > 0 && n >= 4 && s == 1 {
			ys := make([]string, n)
			for i := range ys {
				ys[i] = fmt.Sprintf(`"r"(y%d)`, i)
			}
			wi("/* Row %d's loads after the products so far: hoisted, they would spill. */", r)
			wi(`__asm__("" : "+r"(q) : %s);`, strings.Join(ys, ", "))
		}
		wi("DSP_LD2(p, %d, g, h);", 2*r)
		// Each word's SMLADs first: in the ReLU form's first row they start
		// their outputs (SMUAD), and an output's other product waits for
		// its SMLAD.
		started := make([]bool, n)
		done := make([]bool, len(muls))
		for k := 0; k < words; k++ {
			if k == 0 {
				wi("x0 = q[s%d];", r)
			} else {
				wi("x%d = q[s%d + %d * nc];", k, r, k)
			}
			for pass := 0; pass < 2; pass++ {
				for mi, m := range muls {
					if done[mi] || m.word > k || (m.op == "smlad") != (pass == 0) || (pass == 1 && !started[m.out]) {
						continue
					}
					done[mi] = true
					switch {
					case m.op == "smlad" && form == dwReLU && r == 0:
						wi("y%d = __smuad(x%d, %s);", m.out, m.word, m.wt)
					case m.op == "smlad" && shift && r == 0:
						wi("y%d = __smlad(x%d, %s, b_);", m.out, m.word, m.wt)
					default:
						wi("y%d = __%s(x%d, %s, y%d);", m.out, m.op, m.word, m.wt, m.out)
					}
					started[m.out] = true
				}
			}
		}
	}
	if shift {
		wi("DSP_LD2(p, 7, m_, k_);")
	} else {
		wi("DSP_LD2(p, 9, m_, e1_);")
	}
	for i := 0; i < n; i++ {
		if i == 0 {
			wi("DSP_DWP3_RQ(y0, o);")
		} else {
			wi("DSP_DWP3_RQ(y%d, o + %d * os);", i, i)
		}
	}
	w("}")
	return b.String()
}
