package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrDSPDWPlanar5, tir.IntrDSPDWPlanar7 and the 1×k kernels
// (tir.IntrDSPDWPlanarName): one output row of a planar 5×5, 7×7 or 1×k
// depthwise convolution (tir/dsp_dwplanark.go has the derivation), printed
// with the kernel rows and their pair words unrolled (a loop over the rows
// kept the row offsets in a stack array and ran at 0.42 MACs an
// instruction; unrolled, every plane and weight load has a constant offset
// once the layer inlines it). Two outputs of a channel
// share each plane and weight word loaded; the requantization is the
// packed helper's (the channel's k0, multiplier and e1 in two LDRDs),
// without the sign correction where every channel's zero point is at or
// below lo (mode 1), or one SMMLA where the layer is scaled to one shift
// (modes 2 and 3).
func init() {
	deps := []string{"dsp_acle", tir.IntrDSPRequantP, tir.IntrDSPRequantPR, "dsp_dwpk_rq"}
	addHelper("dsp_dwpk_rq", []string{tir.IntrDSPRequantP, tir.IntrDSPRequantPR}, `/* The planar 5x5, 7x7 and 1xk depthwise kernels' requantization. Modes 0 and 1: p holds k0 (low, high),
   the multiplier and e1, and mode 1 leaves out the sign correction (every zero point at or below lo).
   Modes 2 and 3: the layer scaled to one shift, zr's argument; p holds the multiplier m, A and D, and
   the result is clamp((SMMLA(y, m, A) - (mode 2 and y < 0 ? D : 0)) >> zr, lo, hi) (tir/dsp_gemm_shift.go). */
static inline MCUGEN_ALWAYS_INLINE int32_t dsp_dwpk_rq(int32_t y, const int32_t *p, int32_t mode, int32_t zr, int32_t lo, int32_t hi)
{
    if (mode >= 2) {
        int32_t m;
        int32_t k;
        int32_t v;
        DSP_LD2(p, 0, m, k);
        __asm__("smmla %0, %1, %2, %3" : "=r"(v) : "r"(y), "r"(m), "r"(k));
        if (mode == 2) {
            v -= p[2] & (y >> 31);
        }
        v = (int32_t)__builtin_arm_ssat(v >> zr, 8);
        if (lo > -128 && v < lo) {
            v = lo;
        }
        if (hi < 127 && v > hi) {
            v = hi;
        }
        return v;
    }
    return mode == 1 ? dsp_requant_s8pr(y, p, zr, lo, hi) : dsp_requant_s8p(y, p, zr, lo, hi);
}`)
	addHelper(tir.IntrDSPPlanesRep, []string{"dsp_acle"}, `/* dsp_planes_s8 for a layer whose output channel ch reads input channel ch / m (a depth
   multiplier m, or a one-channel convolution with m = c): dst[k * c + ch] = (v(2k - padl, ch / m),
   v(2k - padl + 1, ch / m)) with v(i, ci) = x[i * xs + ci] + xo inside the row and 0 outside it;
   each input channel's pair word is made once and stored to its m planes. */
static inline MCUGEN_ALWAYS_INLINE void dsp_planes_rep_s8(int32_t *dst, const int8_t *x, int32_t w, int32_t c, int32_t wp2, int32_t padl,
                                                          int32_t xo, int32_t xs, int32_t m)
{
    int32_t k;
    for (k = 0; k < wp2; ++k) {
        const int32_t i = 2 * k - padl;
        const int ina = i >= 0 && i < w;
        const int inb = i + 1 >= 0 && i + 1 < w;
        int32_t *d = dst + k * c;
        int32_t ci;
        for (ci = 0; ci < c / m; ++ci) {
            const int32_t a = ina ? x[i * xs + ci] + xo : 0;
            const int32_t b = inb ? x[(i + 1) * xs + ci] + xo : 0;
            const int32_t v = (int32_t)(((uint32_t)b << 16) | ((uint32_t)a & 0xffffu));
            int32_t r;
            for (r = 0; r < m; ++r) {
                *d++ = v;
            }
        }
    }
}`)
	addHelperGen(tir.IntrDSPDWPlanar5, deps, func() string { return dwPlanarKC(5, 5) })
	addHelperGen(tir.IntrDSPDWPlanar7, deps, func() string { return dwPlanarKC(7, 7) })
	for _, kw := range []int{3, 5, 7, 9, 11, 13, 15} {
		addHelperGen(tir.IntrDSPDWPlanarName(1, kw), deps, func() string { return dwPlanarKC(1, kw) })
	}
}

// dwPlanarKC prints the row kernel of a kh×kw planar depthwise convolution.
func dwPlanarKC(kh, kw int) string {
	name := tir.IntrDSPDWPlanarName(kh, kw)
	t := kh * (kw - 1)
	var b strings.Builder
	fmt.Fprintf(&b, `/* One output row of a %[1]dx%[6]d depthwise convolution over the input rows' planes at r + s0, ..., r + s%[2]d (word i
   of channel ch at i * nc + ch): per channel p holds %[3]d pair words a kernel row, (g0, g1), (g2, g3), ... then
   (g1, g2), (g3, g4), ..., then the bias, k0 (low, high), the multiplier, e1 and a pad word (%[4]d words);
   out[j * os + ch] for j < ow at stride 1 or 2, two outputs of a channel at a time. */
static inline MCUGEN_ALWAYS_INLINE void %[5]s(int8_t *out, const int32_t *r, int32_t s0, int32_t s1, int32_t s2, int32_t s3,
                                                    int32_t s4, int32_t s5, int32_t s6, const int32_t *p0, int32_t k, int32_t nc,
                                                    int32_t ow, int32_t stride, int32_t zr, int32_t lo, int32_t hi, int32_t os,
                                                    int32_t mode)
{
    int32_t j = 0;
    (void)k;
`, kh, kh-1, kw-1, t+6, name, kw)
	for i := kh; i < 7; i++ {
		fmt.Fprintf(&b, "    (void)s%d;\n", i)
	}
	b.WriteString("    if (stride == 1) {\n        for (; j + 1 < ow; j += 2, out += 2 * os) {\n")
	b.WriteString(dwPlanarKGroup(kh, kw, 1, 2, "j / 2", "            "))
	b.WriteString("        }\n    } else {\n        for (; j + 1 < ow; j += 2, out += 2 * os) {\n")
	b.WriteString(dwPlanarKGroup(kh, kw, 2, 2, "j", "            "))
	b.WriteString("        }\n    }\n    /* The last output of an odd row (at stride 1, j even: its window starts at word j / 2). */\n    if (j < ow) {\n")
	b.WriteString(dwPlanarKGroup(kh, kw, 1, 1, "(stride == 1 ? j / 2 : j)", "        "))
	b.WriteString("    }\n}")
	return b.String()
}

// dwPlanarKGroup prints the channel loop of n (1 or 2) outputs j, j+1 at
// stride s whose first window starts at plane word first.
func dwPlanarKGroup(kh, kw, s, n int, first, ind string) string {
	h, t := (kw-1)/2, kh*(kw-1)
	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(ind + fmt.Sprintf(format, args...) + "\n") }
	w("const int32_t *q = r + %s * nc;", first)
	w("const int32_t *p = p0;")
	w("int8_t *o = out;")
	w("int8_t *const end = out + nc;")
	w("for (; o < end; ++o, ++q, p += %d) {", t+6)
	in := ind + "    "
	wi := func(format string, args ...any) { b.WriteString(in + fmt.Sprintf(format, args...) + "\n") }
	wi("int32_t y0 = p[%d];", t)
	if n == 2 {
		wi("int32_t y1 = y0;")
	}
	// Plane words a row: the window's h + 1, and one more for the second
	// output at stride 2.
	nx := h + 1
	if n == 2 && s == 2 {
		nx = h + 2
	}
	for r := 0; r < kh; r++ {
		wi("{")
		for m := 0; m < nx; m++ {
			wi("    const int32_t x%d = q[s%d + %d * nc];", m, r, m)
		}
		// The row's weight words in LDRD pairs (gcc loads them one by one)
		// for stride-1 pairs; at stride 2 the pairs' registers cost more
		// than the loads they save (794,608 instructions against 742,044
		// on a review's 5×5 layer, 24×24×96).
		A := func(m int) string { return fmt.Sprintf("p[%d]", r*(kw-1)+m) }
		B := func(m int) string { return fmt.Sprintf("p[%d]", r*(kw-1)+h+m) }
		for i := 0; s == 1 && n == 2 && i < kw-1; i += 2 {
			wi("    int32_t w%d;", i)
			wi("    int32_t w%d;", i+1)
			wi("    DSP_LD2(p, %d, w%d, w%d);", r*(kw-1)+i, i, i+1)
		}
		if s == 1 && n == 2 {
			A = func(m int) string { return fmt.Sprintf("w%d", m) }
			B = func(m int) string { return fmt.Sprintf("w%d", h+m) }
		}
		for m := 0; m < h; m++ {
			wi("    y0 = __smlad(x%d, %s, y0);", m, A(m))
		}
		wi("    y0 = __smlabt(x%d, %s, y0);", h, B(h-1))
		if n == 2 && s == 1 {
			wi("    y1 = __smlatb(x0, %s, y1);", A(0))
			for m := 0; m < h; m++ {
				wi("    y1 = __smlad(x%d, %s, y1);", m+1, B(m))
			}
		}
		if n == 2 && s == 2 {
			for m := 0; m < h; m++ {
				wi("    y1 = __smlad(x%d, %s, y1);", m+1, A(m))
			}
			wi("    y1 = __smlabt(x%d, %s, y1);", h+1, B(h-1))
		}
		wi("}")
	}
	wi("o[0] = (int8_t)dsp_dwpk_rq(y0, p + %d, mode, zr, lo, hi);", t+1)
	if n == 2 {
		wi("o[os] = (int8_t)dsp_dwpk_rq(y1, p + %d, mode, zr, lo, hi);", t+1)
	}
	w("}")
	return b.String()
}
