package emitc

import (
	"fmt"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrDSPPlanes and tir.IntrDSPDWPlanar: the planar 3×3
// depthwise schedule's layout pass (channel planes of int16 pair words,
// SXTAB16 then a halfword pack per channel) and its row kernel (SMLAD over
// two adjacent taps, SMLABT/SMLATB for the third).
func init() {
	add := addHelper
	add(tir.IntrDSPPlanes, []string{"dsp_acle"}, `/* PKHBT (a low, b low) and PKHTB (a high, b high) of two SXTAB16 results. */
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

/* One input row (w pixels of c channels, c % 4 == 0) as planes of int16 pair words, the
   channels of one word position adjacent: dst[k * c + ch] = (v(2k - padl, ch), v(2k - padl + 1, ch))
   with v(i, ch) = x[i * c + ch] + xo inside the row and 0 outside it. */
static void dsp_planes_s8(int32_t *dst, const int8_t *x, int32_t w, int32_t c, int32_t wp2, int32_t padl, int32_t xo)
{
    const int32_t o = (int32_t)(((uint32_t)xo << 16) | ((uint32_t)xo & 0xffffu));
    int32_t k;
    for (k = 0; k < wp2; ++k) {
        const int32_t i = 2 * k - padl;
        const int ina = i >= 0 && i < w;
        const int inb = i + 1 >= 0 && i + 1 < w;
        int32_t *d = dst + k * c;
        int32_t ch;
        if (ina && inb) {
            const int8_t *xa = x + i * c;
            for (ch = 0; ch < c; ch += 4, d += 4) {
                const int32_t va = dsp_read32(xa + ch);
                const int32_t vb = dsp_read32(xa + c + ch);
                const int32_t a02 = __sxtab16(o, va);
                const int32_t a13 = dsp_sxtab16_ror8(o, va);
                const int32_t b02 = __sxtab16(o, vb);
                const int32_t b13 = dsp_sxtab16_ror8(o, vb);
                d[0] = dsp_pk_lo(a02, b02);
                d[1] = dsp_pk_lo(a13, b13);
                d[2] = dsp_pk_hi(a02, b02);
                d[3] = dsp_pk_hi(a13, b13);
            }
            continue;
        }
        for (ch = 0; ch < c; ch += 4, d += 4) {
            uint32_t a02 = 0;
            uint32_t a13 = 0;
            uint32_t b02 = 0;
            uint32_t b13 = 0;
            if (ina) {
                const int32_t v = dsp_read32(x + i * c + ch);
                a02 = (uint32_t)__sxtab16(o, v);
                a13 = (uint32_t)dsp_sxtab16_ror8(o, v);
            }
            if (inb) {
                const int32_t v = dsp_read32(x + (i + 1) * c + ch);
                b02 = (uint32_t)__sxtab16(o, v);
                b13 = (uint32_t)dsp_sxtab16_ror8(o, v);
            }
            d[0] = (int32_t)((a02 & 0xffffu) | (b02 << 16));
            d[1] = (int32_t)((a13 & 0xffffu) | (b13 << 16));
            d[2] = (int32_t)((a02 >> 16) | (b02 & 0xffff0000u));
            d[3] = (int32_t)((a13 >> 16) | (b13 & 0xffff0000u));
        }
    }
}`)
	add(tir.IntrDSPDWPlanar, []string{"dsp_acle", tir.IntrDSPRequant}, dwPlanarC(false))
	add(tir.IntrDSPDWPlanarR, []string{"dsp_acle"}, dwPlanarC(true))
}

// dwPlanarC is the C of the planar row kernel: channels innermost, two
// outputs per step. The ReLU form starts from SMUAD (its bias is
// in k0) and requantizes with one SMLAL, no sign correction.
func dwPlanarC(relu bool) string {
	name := tir.IntrDSPDWPlanar
	init := "y0 = p[6];\n                y1 = y0;\n"
	first := "y0 = __smlad(x0, g, y0);\n                y1 = __smlatb(x0, g, y1);\n                y0 = __smlabt(x1, h, y0);\n                y1 = __smlad(x1, h, y1);\n"
	firstOne := "y0 = __smlad(x0, g, y0);\n                y0 = __smlabt(x1, h, y0);\n"
	rq := "*o_ = (int8_t)dsp_requant_s8(y_, m_, (int64_t)(((uint64_t)(uint32_t)kh_ << 32) | (uint32_t)kl_), e1_, zr, lo, hi); "
	note := ""
	if relu {
		name = tir.IntrDSPDWPlanarR
		init = ""
		first = "y0 = __smuad(x0, g);\n                y1 = __smuad(x1, h);\n                y0 = __smlabt(x1, h, y0);\n                y1 = __smlatb(x0, g, y1);\n"
		firstOne = "y0 = __smuad(x0, g);\n                y0 = __smlabt(x1, h, y0);\n"
		rq = `__asm__("smlal %0, %1, %2, %3" : "+r"(kl_), "+r"(kh_) : "r"(y_), "r"(m_)); \
        y_ = __ssat((kh_ >> e1_) + zr, 8); \
        if (lo > -128 && y_ < lo) { \
            y_ = lo; \
        } \
        if (hi < 127 && y_ > hi) { \
            y_ = hi; \
        } \
        *o_ = (int8_t)y_; `
		note = " (the bias 0 and folded into k0; no sign\n   correction: the output's zero point is at or below lo)"
	}
	// Three loop bodies: two outputs at stride 1 (words P0, P1 shared by
	// both), two at stride 2 (output j+1 starts at P1), and one output.
	const pair1, pair2, single = 1, 2, 0
	row := func(ptr string, off, mode int) string {
		s := fmt.Sprintf("                x0 = %s[0];\n                x1 = %s[nc];\n", ptr, ptr)
		if mode == pair2 {
			s += fmt.Sprintf("                x2 = %s[2 * nc];\n", ptr)
		}
		s += fmt.Sprintf("                DSP_LD2(p, %d, g, h);\n                ", off)
		switch {
		case off == 0 && mode == single:
			return s + firstOne
		case off == 0 && mode == pair1:
			return s + first
		case off == 0 && mode == pair2:
			y1 := "y1 = __smlad(x1, g, y1);"
			if relu {
				y1 = "y1 = __smuad(x1, g);"
			}
			return s + firstOne + "                " + y1 + "\n                y1 = __smlabt(x2, h, y1);\n"
		case mode == single:
			return s + "y0 = __smlad(x0, g, y0);\n                y0 = __smlabt(x1, h, y0);\n"
		case mode == pair2:
			return s + "y0 = __smlad(x0, g, y0);\n                y0 = __smlabt(x1, h, y0);\n                y1 = __smlad(x1, g, y1);\n                y1 = __smlabt(x2, h, y1);\n"
		}
		return s + "y0 = __smlad(x0, g, y0);\n                y1 = __smlatb(x0, g, y1);\n                y0 = __smlabt(x1, h, y0);\n                y1 = __smlad(x1, h, y1);\n"
	}
	loop := func(mode int) string {
		s := `            for (; o < end; ++o, ++a, ++b, ++c, p += 12) {
                int32_t g;
                int32_t h;
                int32_t x0;
                int32_t x1;
`
		if mode == pair2 {
			s += "                int32_t x2;\n"
		}
		s += `                int32_t y0 = 0;
                int32_t y1 = 0;
                int32_t kl;
                int32_t kh;
                int32_t m_;
                int32_t e1_;
                int32_t pad;
`
		if init != "" {
			s += "                " + init
		}
		s += row("a", 0, mode) + row("b", 2, mode) + row("c", 4, mode)
		s += "                DSP_LD2(p, 6, pad, kl);\n                DSP_LD2(p, 8, kh, m_);\n                DSP_LD2(p, 10, e1_, pad);\n                (void)pad;\n"
		s += "                DSP_DWP3_RQ(y0, o);\n"
		if mode != single {
			s += "                DSP_DWP3_RQ(y1, o + nc);\n"
		} else {
			s += "                (void)y1;\n"
		}
		return s + "            }\n"
	}
	return `/* One output row of a 3x3 depthwise convolution over the planes r0, r1, r2 (word k of channel ch
   at k * nc + ch): per channel p holds (g0, g1), (g1, g2) for each kernel row, the bias, k0 (low,
   high), the multiplier, e1 and a pad word` + note + `; out[j * nc + ch] for j < ow at
   stride 1 or 2. */
#define DSP_DWP3_RQ(yv, op) do { \
        int8_t *const o_ = (op); \
        int32_t y_ = (yv); \
        int32_t kl_ = kl; \
        int32_t kh_ = kh; \
        ` + rq + `\
    } while (0)
static inline __attribute__((always_inline)) void ` + name + `(int8_t *out, const int32_t *r0, const int32_t *r1, const int32_t *r2, const int32_t *p0,
                                int32_t nc, int32_t ow, int32_t stride, int32_t zr, int32_t lo, int32_t hi)
{
    /* Inlined into each layer, so nc, ow, stride and the clamp are constants there. */
    int32_t j;
    for (j = 0; j < ow; j += 2, out += 2 * nc) {
        const int32_t w = stride == 1 ? j / 2 : j;
        const int32_t *a = r0 + w * nc;
        const int32_t *b = r1 + w * nc;
        const int32_t *c = r2 + w * nc;
        const int32_t *p = p0;
        int8_t *o = out;
        int8_t *const end = out + nc;
        if (stride == 1 && j + 1 < ow) {
` + loop(pair1) + `        } else if (j + 1 < ow) {
` + loop(pair2) + `        } else {
` + loop(single) + `        }
    }
}
#undef DSP_DWP3_RQ`
}
