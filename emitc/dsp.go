package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C spellings of tir's DSP micro-kernel intrinsics (tir/dsp_intrin.go
// has their exact semantics). Each is one static inline helper over gcc's
// <arm_acle.h>; they are printed only into models scheduled for "dsp".

// acleCompat is the C's stand-in for the ACLE DSP intrinsics it calls,
// where <arm_acle.h> has none: gcc before 10 (Arduino's Mbed OS cores ship
// 7.2). Each intrinsic is its instruction in one asm statement; the
// saturation a clamp gcc makes one SSAT of (its width a constant).
func acleCompat() string {
	var b strings.Builder
	b.WriteString("#if defined(MCUGEN_ACLE_COMPAT) || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 10)\n" +
		"/* gcc before 10 (Arduino's Mbed OS cores ship 7.2) has none of ACLE's DSP\n" +
		"   intrinsics in <arm_acle.h>: the same instructions, one asm each. */\n")
	ops := []struct {
		name string
		args int
	}{{"smlad", 3}, {"smlabb", 3}, {"smlabt", 3}, {"smlatb", 3}, {"smlatt", 3}, {"smuad", 2}, {"sxtab16", 2}, {"sadd16", 2}, {"ssub16", 2}}
	for _, op := range ops {
		params, operands, ins := "int32_t a, int32_t b", "%1, %2", `"r"(a), "r"(b)`
		if op.args == 3 {
			params, operands, ins = params+", int32_t c", operands+", %3", ins+`, "r"(c)`
		}
		fmt.Fprintf(&b, "static inline int32_t mcugen_acle_%s(%s)\n{\n    int32_t r;\n    __asm__(\"%s %%0, %s\" : \"=r\"(r) : %s);\n    return r;\n}\n",
			op.name, params, op.name, operands, ins)
	}
	b.WriteString("/* Saturation to n bits (n a constant: gcc makes it one SSAT). */\n" +
		"static inline int32_t mcugen_acle_ssat(int32_t x, int32_t n)\n{\n" +
		"    const int32_t hi = (int32_t)((1u << (n - 1)) - 1u);\n" +
		"    return x > hi ? hi : x < -hi - 1 ? -hi - 1 : x;\n}\n")
	for _, op := range ops {
		fmt.Fprintf(&b, "#define __%s mcugen_acle_%s\n", op.name, op.name)
	}
	b.WriteString("#define __builtin_arm_ssat mcugen_acle_ssat\n#endif\n")
	return b.String()
}

func init() {
	add, gen := addHelper, addHelperGen
	add("dsp_acle", nil, `#if !defined(__ARM_FEATURE_DSP)
#error "this model was compiled for the Armv7E-M/Armv8-M DSP extension (target dsp): build it with -mcpu=cortex-m4, -m7, -m33 or -m55, or recompile it with --target generic"
#endif
#if defined(__ARM_BIG_ENDIAN)
#error "target dsp packs weights for little-endian cores: recompile the model with --target generic for a big-endian build"
#endif
#include <arm_acle.h>
`+acleCompat()+`
/* SXTAB16 of the odd bytes: the instruction's own ROR #8 operand, which
   gcc does not fold from a C rotate. */
static inline int32_t dsp_sxtab16_ror8(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* Two adjacent words in one LDRD (gcc does not pair the loads itself); the "m" operand
   tells gcc which memory the asm reads (a struct: a cast to an array of const words
   warns under -Wcast-qual before C23). */
typedef struct {
    int32_t w[2];
} dsp_word_pair;
typedef struct {
    int8_t b[4];
} dsp_byte_quad;
#define DSP_LD2(p, i, lo, hi) __asm__("ldrd %0, %1, [%2, %3]" : "=r"(lo), "=r"(hi) : "r"(p), MCUGEN_ASM_IMM(4 * (i)), "m"(*(const dsp_word_pair *)((p) + (i))))

/* Two adjacent words stored by one STRD. */
#define DSP_ST2(p, i, lo, hi) __asm__("strd %1, %2, [%3, %4]" : "=m"(*(int32_t(*)[2])((p) + (i))) : "r"(lo), "r"(hi), "r"(p), MCUGEN_ASM_IMM(4 * (i)))

static inline int32_t dsp_read32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}`)
	for _, b := range tir.DSPMacBlocks {
		for _, u := range tir.DSPMacUnrolls {
			gen(tir.DSPMacName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspMacC(b[0], b[1], u, false) })
			gen(tir.DSPGemmName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspGemmC(b[0], b[1], u, false) })
			gen(tir.DSPGemmSName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspGemmSC(b[0], b[1], u, false) })
			gen(tir.DSPGemm3SName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspGemm3C(b[0], b[1], u, false) })
			gen(tir.DSPGemmSNName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspGemmSC(b[0], b[1], u, true) })
			gen(tir.DSPGemm3SNName(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspGemm3C(b[0], b[1], u, true) })
		}
	}
	add("dsp_w8", []string{"dsp_acle"}, `/* Two int16 pair words from four int8 weights p[4i..4i+3]: one LDR, then
   (w1, w3) by SXTB16 of the word rotated by 8 and (w0, w2) by SXTB16, in one
   asm statement so gcc keeps the three together (left to itself it widens
   every weight of an unrolled loop first and spills them). */
#define DSP_LDW8(p, i, lo, hi) __asm__("ldr %0, [%2, %3]\n\tsxtb16 %1, %0, ror #8\n\tsxtb16 %0, %0" : "=r"(lo), "=r"(hi) : "r"(p), MCUGEN_ASM_IMM(4 * (i)), "m"(*(const dsp_byte_quad *)((p) + 4 * (i))))`)
	for _, b := range tir.DSPMacBlocks {
		for _, u := range tir.DSPMacUnrolls {
			gen(tir.DSPMacW8Name(b[0], b[1], u), []string{"dsp_acle", "dsp_w8"}, func() string { return dspMacC(b[0], b[1], u, true) })
			gen(tir.DSPGemmW8Name(b[0], b[1], u), []string{"dsp_acle", "dsp_w8"}, func() string { return dspGemmC(b[0], b[1], u, true) })
		}
	}
	add(tir.IntrDSPWiden, []string{"dsp_acle"}, `/* Widen n (a multiple of 4) int8 values plus off into int16 pairs:
   dst[2g] = (src[4g] + off, src[4g+2] + off), dst[2g+1] = (src[4g+1] + off, src[4g+3] + off). */
static inline void dsp_widen_s8(int32_t *dst, const int8_t *src, int32_t n, int32_t off)
{
    const int32_t o = (int32_t)(((uint32_t)off << 16) | ((uint32_t)off & 0xffffu));
    int32_t left = n / 4;
    /* Sixteen values per iteration where n allows (a quarter of the loop
       overhead), then four at a time; pointers step, so no index product
       for gcc to doubt. */
    for (; left >= 4; left -= 4, src += 16, dst += 8) {
        const int32_t v0 = dsp_read32(src);
        const int32_t v1 = dsp_read32(src + 4);
        const int32_t v2 = dsp_read32(src + 8);
        const int32_t v3 = dsp_read32(src + 12);
        dst[0] = __sxtab16(o, v0);
        dst[1] = dsp_sxtab16_ror8(o, v0);
        dst[2] = __sxtab16(o, v1);
        dst[3] = dsp_sxtab16_ror8(o, v1);
        dst[4] = __sxtab16(o, v2);
        dst[5] = dsp_sxtab16_ror8(o, v2);
        dst[6] = __sxtab16(o, v3);
        dst[7] = dsp_sxtab16_ror8(o, v3);
    }
    for (; left > 0; --left, src += 4, dst += 2) {
        const int32_t v = dsp_read32(src);
        dst[0] = __sxtab16(o, v);
        dst[1] = dsp_sxtab16_ror8(o, v);
    }
}`)
	add(tir.IntrDSPWidenIL, []string{"dsp_acle"}, `/* dsp_widen_s8 with the two words of each group of four step words apart:
   dst[step*g] = (src[4g] + off, src[4g+2] + off), dst[step*g+1] = (src[4g+1] + off, src[4g+3] + off),
   one column of a block packed at run time for the dsp_mac kernels. */
static inline void dsp_widen_il_s8(int32_t *dst, const int8_t *src, int32_t n, int32_t off, int32_t step)
{
    const int32_t o = (int32_t)(((uint32_t)off << 16) | ((uint32_t)off & 0xffffu));
    int32_t left;
    for (left = n / 4; left > 0; --left, src += 4, dst += step) {
        const int32_t v = dsp_read32(src);
        dst[0] = __sxtab16(o, v);
        dst[1] = dsp_sxtab16_ror8(o, v);
    }
}`)
	add(tir.IntrDSPWiden3, []string{"dsp_acle"}, `/* Widen npix pixels of three int8 channels plus off into the pair words
   dsp_widen_s8 makes of four channels, the fourth the next pixel's first
   (its weights are zero, so the convolution never sees it):
   dst[2p] = (src[3p] + off, src[3p+2] + off), dst[2p+1] = (src[3p+1] + off, src[3p+3] + off),
   and 0 in the last pixel's fourth. All but the last pixel read a word, four
   pixels an iteration. */
static inline void dsp_widen3_s8(int32_t *dst, const int8_t *src, int32_t npix, int32_t off)
{
    const int32_t o = (int32_t)(((uint32_t)off << 16) | ((uint32_t)off & 0xffffu));
    int32_t left = npix - 1;
    for (; left >= 4; left -= 4, src += 12, dst += 8) {
        const int32_t v0 = dsp_read32(src);
        const int32_t v1 = dsp_read32(src + 3);
        const int32_t v2 = dsp_read32(src + 6);
        const int32_t v3 = dsp_read32(src + 9);
        /* STRDs: gcc stores the eight words one by one. */
        DSP_ST2(dst, 0, __sxtab16(o, v0), dsp_sxtab16_ror8(o, v0));
        DSP_ST2(dst, 2, __sxtab16(o, v1), dsp_sxtab16_ror8(o, v1));
        DSP_ST2(dst, 4, __sxtab16(o, v2), dsp_sxtab16_ror8(o, v2));
        DSP_ST2(dst, 6, __sxtab16(o, v3), dsp_sxtab16_ror8(o, v3));
    }
    for (; left > 0; --left, src += 3, dst += 2) {
        const int32_t v = dsp_read32(src);
        dst[0] = __sxtab16(o, v);
        dst[1] = dsp_sxtab16_ror8(o, v);
    }
    if (npix > 0) {
        dst[0] = (int32_t)(((uint32_t)(src[2] + off) << 16) | ((uint32_t)(src[0] + off) & 0xffffu));
        dst[1] = (int32_t)((uint32_t)(src[1] + off) & 0xffffu);
    }
}`)
	add("sumpool_tail_s8", nil, `/* The scalar tail of the SIMD sum pools: channels from..c-1. */
static inline void sumpool_tail_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t from, int32_t c)
{
    int32_t ch;
    for (ch = from; ch < c; ++ch) {
        int32_t s = acc[ch];
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                s += x[i * xkh + j * xkw + ch];
            }
        }
        acc[ch] = s;
    }
}`)
	add("dsp_"+tir.KSumPool, []string{"dsp_acle", "sumpool_tail_s8"}, `/* acc[ch] += sum over a < kh, b < kw of x[a*xkh + b*xkw + ch]. Four channels per step in the
   int16 lanes of two SXTAB16 sums, exact while a window has at most 256 taps (-128 * 256 = -32768
   and 127 * 256 = 32512 are int16). */
static inline void dsp_sumpool_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c)
{
    /* The quads' end as one bounded value: gcc then sees the tail's range (a tail starting
       where a loop left off drew -Waggressive-loop-optimizations once inlined). */
    const int32_t c4 = kh * kw <= 256 ? c - c % 4 : 0;
    int32_t ch;
    for (ch = 0; ch < c4; ch += 4) {
        int32_t s02 = 0;
        int32_t s13 = 0;
        int32_t i;
        for (i = 0; i < kh; ++i) {
            const int8_t *r = x + i * xkh + ch;
            int32_t j;
            for (j = 0; j < kw; ++j, r += xkw) {
                const int32_t v = dsp_read32(r);
                s02 = __sxtab16(s02, v);
                s13 = dsp_sxtab16_ror8(s13, v);
            }
        }
        acc[ch] += (int16_t)(s02 & 0xffff);
        acc[ch + 1] += (int16_t)(s13 & 0xffff);
        acc[ch + 2] += (int16_t)((uint32_t)s02 >> 16);
        acc[ch + 3] += (int16_t)((uint32_t)s13 >> 16);
    }
    sumpool_tail_s8(acc, x, xkh, xkw, kh, kw, c4, c);
}`)
	add("maxpool_tail_s8", nil, `/* The scalar tail of the SIMD max pools: channels from..c-1. */
static inline void maxpool_tail_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t from, int32_t c,
                                   int32_t lo, int32_t hi)
{
    int32_t ch;
    for (ch = from; ch < c; ++ch) {
        int8_t b = x[ch];
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                const int8_t v = x[i * xkh + j * xkw + ch];
                b = v > b ? v : b;
            }
        }
        y[ch] = (int8_t)(b < lo ? lo : b > hi ? hi : b);
    }
}`)
	add("dsp_max4_s8", nil, `/* The bytes of a and b as four int8 lanes: the larger (dsp_max4_s8) or smaller (dsp_min4_s8)
   of each pair, in C (dsp_maxpool_s8's form without asm). */
static inline int32_t dsp_max4_s8(int32_t a, int32_t b)
{
    uint32_t r = 0;
    int32_t k;
    for (k = 0; k < 32; k += 8) {
        const int8_t u = (int8_t)((uint32_t)a >> k);
        const int8_t v = (int8_t)((uint32_t)b >> k);
        r |= (uint32_t)(uint8_t)(u > v ? u : v) << k;
    }
    return (int32_t)r;
}
static inline int32_t dsp_min4_s8(int32_t a, int32_t b)
{
    uint32_t r = 0;
    int32_t k;
    for (k = 0; k < 32; k += 8) {
        const int8_t u = (int8_t)((uint32_t)a >> k);
        const int8_t v = (int8_t)((uint32_t)b >> k);
        r |= (uint32_t)(uint8_t)(u < v ? u : v) << k;
    }
    return (int32_t)r;
}`)
	add("dsp_"+tir.KMaxPool, []string{"dsp_acle", "dsp_max4_s8", "maxpool_tail_s8"}, `/* y[ch] = min(max(m, lo), hi) with m the maximum over a < kh, b < kw of x[a*xkh + b*xkw + ch]
   (kh, kw >= 1, -128 <= lo <= hi <= 127). Four channels a step in the bytes of a word: SSUB8 sets
   a byte's GE flag where its difference is not negative, and SEL takes the bytes so flagged
   from its first operand (one asm statement: the flags pass between them). */
static inline void dsp_maxpool_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c, int32_t lo,
                                  int32_t hi)
{
    const int32_t c4 = c - c % 4;
    const int32_t lo4 = (int32_t)(0x01010101u * (uint32_t)(uint8_t)lo);
    const int32_t hi4 = (int32_t)(0x01010101u * (uint32_t)(uint8_t)hi);
    int32_t ch;
    for (ch = 0; ch < c4; ch += 4) {
        int32_t best = dsp_read32(x + ch);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            const int8_t *r = x + i * xkh + ch;
            int32_t j;
            for (j = 0; j < kw; ++j, r += xkw) {
                const int32_t v = dsp_read32(r);
#if !defined(MCUGEN_NO_ASM)
                int32_t d;
                __asm__("ssub8 %0, %2, %1\n\tsel %1, %2, %1" : "=&r"(d), "+r"(best) : "r"(v));
                (void)d;
#else
                best = dsp_max4_s8(best, v);
#endif
            }
        }
#if !defined(MCUGEN_NO_ASM)
        if (lo > -128) {
            int32_t d;
            __asm__("ssub8 %0, %1, %2\n\tsel %1, %1, %2" : "=&r"(d), "+r"(best) : "r"(lo4));
            (void)d;
        }
        if (hi < 127) {
            int32_t d;
            __asm__("ssub8 %0, %2, %1\n\tsel %1, %1, %2" : "=&r"(d), "+r"(best) : "r"(hi4));
            (void)d;
        }
#else
        if (lo > -128) {
            best = dsp_max4_s8(best, lo4);
        }
        if (hi < 127) {
            best = dsp_min4_s8(best, hi4);
        }
#endif
        memcpy(y + ch, &best, 4);
    }
    maxpool_tail_s8(y, x, xkh, xkw, kh, kw, c4, c, lo, hi);
}`)
	add(tir.IntrDSPDW4, []string{"dsp_acle"}, `/* acc[0] += (x[0] + xo) * lo(w[0]), acc[2] += (x[2] + xo) * hi(w[0]),
   acc[1] += (x[1] + xo) * lo(w[1]), acc[3] += (x[3] + xo) * hi(w[1]). */
static inline void dsp_dw4_s8(int32_t *acc, const int8_t *x, const int32_t *w, int32_t xo)
{
    const int32_t o = (int32_t)(((uint32_t)xo << 16) | ((uint32_t)xo & 0xffffu));
    const int32_t xv = dsp_read32(x);
    const int32_t x02 = __sxtab16(o, xv);
    const int32_t x13 = dsp_sxtab16_ror8(o, xv);
    acc[0] = __smlabb(x02, w[0], acc[0]);
    acc[2] = __smlatt(x02, w[0], acc[2]);
    acc[1] = __smlabb(x13, w[1], acc[1]);
    acc[3] = __smlatt(x13, w[1], acc[3]);
}`)
}

// dspWeightLoad prints the load of channel j's two pair words of group
// step into u and v: one LDRD of the int16 layout, or (w8) one LDR of four
// int8 weights and two SXTB16.
func dspWeightLoad(c, step, j int, w8 bool, indent string) string {
	if w8 {
		return fmt.Sprintf("%sDSP_LDW8(w, %d, u, v);\n", indent, c*step+j)
	}
	return fmt.Sprintf("%sDSP_LD2(w, %d, u, v);\n", indent, 2*c*step+2*j)
}

// dspWeightStep is how far the weight pointer moves per iteration.
func dspWeightStep(c, u int, w8 bool) int {
	if w8 {
		return 4 * c * u
	}
	return 2 * c * u
}

// writeMacLoop prints the r activation-row pointers and the loop of an r×c
// block over n pair words, u groups of four k per iteration (accumulators
// a<i><j>, weights at w), at indent ind; mid goes between the pointers and
// the loop. rowsAsm allows the asm of blocks over two or three rows.
func writeMacLoop(b *strings.Builder, r, c, u int, w8 bool, ind, mid string, rowsAsm bool) {
	for i := 0; i < r; i++ {
		fmt.Fprintf(b, "%sconst int32_t *x%d = x + %d * xs;\n", ind, i, i)
	}
	fmt.Fprintf(b, "%sconst int32_t *const end = x0 + n;\n", ind)
	b.WriteString(mid)
	fmt.Fprintf(b, "%swhile (x0 < end) {\n", ind)
	in := ind + "    "
	// Unoptimised builds (-O0: r7 is the frame pointer, every value in
	// memory) cannot give the LDM form its registers: they take the C one,
	// as does a build that defines MCUGEN_NO_ASM (no MLPerf Tiny model
	// needs it since session 7; IC at -O3 with -fno-omit-frame-pointer
	// did, while its 3x3 layers called the 2x2 block per segment). Two rows read the second
	// at a constant offset from the first (one register less: the asm then
	// fits with a frame pointer at -Os), where the inlined xs is a constant
	// that LDRD's offset can hold.
	ldm := ldmBlock(r, c, w8) && (r == 1 || rowsAsm)
	if ldm {
		if r == 3 {
			// Three rows (writeMacLDM3), rows 1 and 2 at constant offsets
			// from row 0 that LDRD's immediate holds.
			b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)\n")
			fmt.Fprintf(b, "%sif (__builtin_constant_p(xs) && xs >= 0 && xs <= %d) {\n", in, (1020-8*(u-1))/8)
			writeMacLDM3(b, u, in+"    ")
			// x1 and x2 stay behind: with a constant xs every iteration
			// takes this branch, and two more live pointers would not fit.
			fmt.Fprintf(b, "%s    x0 += %d;\n%s    continue;\n%s}\n", in, 2*u, in, in)
			b.WriteString("#endif\n")
		} else if r == 2 {
			// xs is an immediate once inlining has made it a constant
			// (MCUGEN_ASM_IMM: "n" for gcc, "i" for clang, which checks
			// "n" before inlining); the C form follows the asm.
			// Position-independent code (-fPIC, -fpie) holds a PIC
			// base in a register, which the 2x2 statements then lack
			// ("impossible constraints": bare-metal journey).
			b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__PIC__)\n")
			fmt.Fprintf(b, "%sif (__builtin_constant_p(xs) && xs >= 0 && xs <= %d) {\n", in, (1020-8*(u-1))/4)
			writeMacLDM(b, r, c, u, w8, false, in+"    ")
			fmt.Fprintf(b, "%s    x0 += %d;\n%s    x1 += %d;\n%s    continue;\n%s}\n", in, 2*u, in, 2*u, in, in)
			b.WriteString("#endif\n")
		} else {
			// One row: the asm, or (#else) the C form. Four channels'
			// asm takes 12 registers, which gcc cannot always find at -Os
			// with a frame pointer: there the C form.
			if c == 4 {
				// Nor with a PIC base held too (-fPIC with a frame pointer).
				b.WriteString("#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__PIC__)\n")
			} else {
				b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)\n")
			}
			if c == 4 && !w8 && u >= tir.DSPStreamGroups {
				// Int16 weights over twelve or more groups (K >= 48):
				// streamed through six registers (four LDMs for three
				// groups, not six). Under twelve the block loop's values
				// that gcc spills around the stream cost more than it
				// saves (a 32 -> 64 layer: 2,123 -> 2,155 instructions;
				// 48 -> 64: 2,851 -> 2,835).
				writeMacLDM6(b, u, in)
			} else {
				writeMacLDM(b, r, c, u, w8, false, in)
			}
			fmt.Fprintf(b, "%sx0 += %d;\n", in, 2*u)
			b.WriteString("#else\n")
		}
	}
	fmt.Fprintf(b, "%sint32_t u;\n%sint32_t v;\n", in, in)
	for i := 0; i < r; i++ {
		fmt.Fprintf(b, "%sint32_t p%d;\n%sint32_t q%d;\n", in, i, in, i)
	}
	for step := 0; step < u; step++ {
		for i := 0; i < r; i++ {
			fmt.Fprintf(b, "%sDSP_LD2(x%d, %d, p%d, q%d);\n", in, i, 2*step, i, i)
		}
		for j := 0; j < c; j++ {
			b.WriteString(dspWeightLoad(c, step, j, w8, in))
			for i := 0; i < r; i++ {
				fmt.Fprintf(b, "%sa%d%d = __smlad(p%d, u, a%d%d);\n", in, i, j, i, i, j)
				fmt.Fprintf(b, "%sa%d%d = __smlad(q%d, v, a%d%d);\n", in, i, j, i, i, j)
			}
		}
	}
	fmt.Fprintf(b, "%sw += %d;\n", in, dspWeightStep(c, u, w8))
	for i := 0; i < r; i++ {
		fmt.Fprintf(b, "%sx%d += %d;\n", in, i, 2*u)
	}
	if ldm && r == 1 {
		b.WriteString("#endif\n")
	}
	fmt.Fprintf(b, "%s}\n", ind)
}

// ldmBlock reports whether the r×c block's loop loads its weights with LDM
// (writeMacLDM): blocks of two or four channels over one row, and of two
// channels over two rows, int16 weights or int8; and (writeMacLDM3) two
// channels over three rows, int16 weights.
func ldmBlock(r, c int, w8 bool) bool {
	return c == 2 && r <= 2 || c == 4 && r == 1 || c == 2 && r == 3 && !w8
}

// writeMacLDM prints an LDM block's loop body: per group of four k, one
// asm statement loads each row's two words with LDRD (into d0 and d1, reused
// row after row) and the channels' weight words with LDM into r4, r5, r6
// and r8 (ascending, as LDM loads them; r7 stays free for a frame pointer),
// then does the block's SMLADs. The weights pointer moves with the LDMs'
// write-back.
//
// int16 weights: one LDM of each two channels' four words. One LDM instead
// of two LDRDs: 11 instructions a group where the C form takes 12 (2×2) or
// 13 (1×4).
//
// int8 weights (w8): one word a channel, each two channels' words in one
// LDM, each word widened in registers by two SXTB16s (its bytes 0 and 2,
// then 1 and 3, the order the activation pairs are in): a group is 15
// instructions in 2×2 (the C form's LDR per channel: 16), 10 in 1×2 (11)
// and 19 in 1×4 (21). (One LDM of all four words in 1×4 would save one
// more, but its widening needs a register beyond r4–r8, and at -Os with a
// frame pointer gcc has none left for the asm.)
//
// With init (int16 weights) the first group starts each accumulator with
// SMUAD instead of adding to it: the caller declares them unset, and saves
// the zeroing moves.
func writeMacLDM(b *strings.Builder, r, c, u int, w8, init bool, in string) {
	regs := [4]string{"r4", "r5", "r6", "r8"}
	b.WriteString(in + "int32_t d0;\n" + in + "int32_t d1;\n")
	// widen2 loads two channels' int8 words and widens them: channel j0's
	// bytes 0 and 2 in r4 (with d0), 1 and 3 in r6 (with d1); j0+1's in r5
	// and r8.
	widen2 := []string{"ldmia %[w]!, {r4, r5}", "sxtb16 r6, r4, ror #8", "sxtb16 r4, r4", "sxtb16 r8, r5, ror #8", "sxtb16 r5, r5"}
	for step := 0; step < u; step++ {
		var lines []string
		if w8 && c == 2 {
			lines = append(lines, widen2...)
		}
		// Rows outer for two channels (one LDM, then each row's LDRD and
		// SMLADs); for four channels (one row) an LDM per two channels.
		for i := 0; i < r; i++ {
			// Row 1 at x0 + xs words: the constant operand o (with its #).
			at := fmt.Sprintf("#%d", 8*step)
			if i == 1 {
				at = "%[o]"
			}
			lines = append(lines, fmt.Sprintf("ldrd %%[d0], %%[d1], [%%[x0], %s]", at))
			if w8 {
				for j0 := 0; j0 < c; j0 += 2 {
					if c == 4 {
						lines = append(lines, widen2...)
					}
					for j := j0; j < j0+2; j++ {
						lo, hi := []string{"r4", "r5"}[j-j0], []string{"r6", "r8"}[j-j0]
						lines = append(lines,
							fmt.Sprintf("smlad %%[a%d%d], %%[d0], %s, %%[a%d%d]", i, j, lo, i, j),
							fmt.Sprintf("smlad %%[a%d%d], %%[d1], %s, %%[a%d%d]", i, j, hi, i, j))
					}
				}
				continue
			}
			for j0 := 0; j0 < c; j0 += 2 {
				if i == 0 {
					lines = append(lines, "ldmia %[w]!, {r4, r5, r6, r8}")
				}
				for j := j0; j < j0+2; j++ {
					first := fmt.Sprintf("smlad %%[a%d%d], %%[d0], %s, %%[a%d%d]", i, j, regs[2*(j-j0)], i, j)
					if init && step == 0 {
						first = fmt.Sprintf("smuad %%[a%d%d], %%[d0], %s", i, j, regs[2*(j-j0)])
					}
					lines = append(lines, first,
						fmt.Sprintf("smlad %%[a%d%d], %%[d1], %s, %%[a%d%d]", i, j, regs[2*(j-j0)+1], i, j))
				}
			}
		}
		var outs []string
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if init && step == 0 {
					// Written before the asm has read x0 (and w, for a
					// later row): early clobber.
					outs = append(outs, fmt.Sprintf(`[a%d%d] "=&r"(a%d%d)`, i, j, i, j))
					continue
				}
				outs = append(outs, fmt.Sprintf(`[a%d%d] "+r"(a%d%d)`, i, j, i, j))
			}
		}
		ins := []string{`[x0] "r"(x0)`}
		if r == 2 {
			ins = append(ins, fmt.Sprintf(`[o] MCUGEN_ASM_IMM(4 * xs + %d)`, 8*step))
		}
		outs = append(outs, `[w] "+r"(w)`, `[d0] "=&r"(d0)`, `[d1] "=&r"(d1)`)
		fmt.Fprintf(b, "%s__asm__(\"%s\"\n%s        : %s\n%s        : %s\n%s        : \"r4\", \"r5\", \"r6\", \"r8\", \"memory\");\n",
			in, strings.Join(lines, "\\n\\t"), in, strings.Join(outs, ", "), in, strings.Join(ins, ", "), in)
	}
}

// writeMacLDM3 prints the 3×2 block's loop body (int16 weights): per group
// of four k, one asm statement loads the two channels' four weight words
// with LDM and does row 0's LDRD and SMLADs, a second does rows 1 and 2
// (their words at 4·xs and 8·xs bytes from row 0's, the operands o1 and o2
// printed bare inside the offset expression). Sixteen instructions a group
// for 24 MACs, where 2×2 takes eleven for 16. The weight words stay in
// r4, r5, r6 and r8 from one statement to the next as local register
// variables: one statement would need fourteen registers at once (six
// accumulators, two pointers, two activation words, four weights), which
// a frame pointer (r7: -O0, -fno-omit-frame-pointer) or a reserved r9
// leaves no room for; split, each needs at most twelve, and gcc keeps
// the same registers across (KWS measured 2,506,879 instructions in one
// statement, 2,501,247 split after row 0, 2,522,407 split after row 1).
// The weight outputs are early-clobber: the LDM writes them before the
// LDRD reads x0, which must not share a register with them.
func writeMacLDM3(b *strings.Builder, u int, in string) {
	regs := [4]string{"r4", "r5", "r6", "r8"}
	b.WriteString(in + "int32_t d0;\n" + in + "int32_t d1;\n")
	for k, r := range regs {
		fmt.Fprintf(b, "%sregister int32_t w%d __asm__(\"%s\");\n", in, k, r)
	}
	row := func(i, step int) []string {
		at := fmt.Sprintf("#%d", 8*step)
		if i > 0 {
			at = fmt.Sprintf("#(%%c[o%d]+%d)", i, 8*step)
		}
		lines := []string{fmt.Sprintf("ldrd %%[d0], %%[d1], [%%[x0], %s]", at)}
		for j := 0; j < 2; j++ {
			lines = append(lines,
				fmt.Sprintf("smlad %%[a%d%d], %%[d0], %s, %%[a%d%d]", i, j, regs[2*j], i, j),
				fmt.Sprintf("smlad %%[a%d%d], %%[d1], %s, %%[a%d%d]", i, j, regs[2*j+1], i, j))
		}
		return lines
	}
	accs := func(rows ...int) []string {
		var o []string
		for _, i := range rows {
			for j := 0; j < 2; j++ {
				o = append(o, fmt.Sprintf(`[a%d%d] "+r"(a%d%d)`, i, j, i, j))
			}
		}
		return o
	}
	asm := func(lines, outs, ins []string) {
		fmt.Fprintf(b, "%s__asm__(\"%s\"\n%s        : %s\n%s        : %s\n%s        : \"memory\");\n",
			in, strings.Join(lines, "\\n\\t"), in, strings.Join(outs, ", "), in, strings.Join(ins, ", "), in)
	}
	for step := 0; step < u; step++ {
		asm(append([]string{"ldmia %[w]!, {r4, r5, r6, r8}"}, row(0, step)...),
			append(accs(0), `[w] "+r"(w)`, `[d0] "=&r"(d0)`, `[d1] "=&r"(d1)`, `"=&r"(w0)`, `"=&r"(w1)`, `"=&r"(w2)`, `"=&r"(w3)`),
			[]string{`[x0] "r"(x0)`})
		asm(append(row(1, step), row(2, step)...),
			append(accs(1, 2), `[d0] "=&r"(d0)`, `[d1] "=&r"(d1)`),
			[]string{`[x0] "r"(x0)`, `[o1] MCUGEN_ASM_IMM(4 * xs)`, `[o2] MCUGEN_ASM_IMM(8 * xs)`, `"r"(w0)`, `"r"(w1)`, `"r"(w2)`, `"r"(w3)`})
	}
}

// dspMacC prints the r×c pair-word GEMM block with u groups of four k per
// iteration: for each group, the r activation rows' two words and each
// channel's two words (interleaved, one pointer) feed two SMLADs per
// (row, channel). With w8 the weights are int8 (tir.DSPMacW8Name), each
// channel's two words widened from one LDR.
func dspMacC(r, c, u int, w8 bool) string {
	var b strings.Builder
	name, wt := tir.DSPMacName(r, c, u), "int32_t"
	if w8 {
		name, wt = tir.DSPMacW8Name(r, c, u), "int8_t"
		fmt.Fprintf(&b, "/* acc[i*%d + j] += sum over g < n/2, h < 2 of smlad(x[i*xs + 2g + h], (w[%d*g + 4j + h], w[%d*g + 4j + h + 2])), i < %d, j < %d. */\n", c, 4*c, 4*c, r, c)
	} else {
		fmt.Fprintf(&b, "/* acc[i*%d + j] += sum over g < n/2, h < 2 of smlad(x[i*xs + 2g + h], w[%d*g + 2j + h]), i < %d, j < %d. */\n", c, 2*c, r, c)
	}
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int32_t *acc, const int32_t *x, int32_t xs, const %s *w, int32_t n)\n{\n", name, wt)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "    int32_t a%d%d = acc[%d];\n", i, j, i*c+j)
		}
	}
	void := ""
	if r == 1 {
		void = "    (void)xs;\n"
	}
	// Blocks of two or three rows: the C form. Their asm takes twelve
	// registers a statement, and this form keeps acc and the rows live
	// too: in the three-channel row form (three segments) gcc found no
	// registers for the 2x2 asm even at -O2 ("impossible constraints",
	// TestDSPAsmCompilesEverywhere; the fused forms keep the outputs'
	// pointers out of the loop and build).
	writeMacLoop(&b, r, c, u, w8, "    ", void, false)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "    acc[%d] = a%d%d;\n", i*c+j, i, j)
		}
	}
	b.WriteString("}")
	return b.String()
}

// dspGemmC prints the fused channel loop of tir.DSPGemmName: per block of c
// channels the r×c accumulators start at zero (the bias is in k0), the
// micro-kernel loop of dspMacC runs, and each channel's multiplier and
// shift (one LDRD) serve its r rows: one LDRD of k0, SMLAL, ASR, SSAT and
// a byte store per output. With w8 the weights are int8
// (tir.DSPGemmW8Name).
func dspGemmC(r, c, u int, w8 bool) string {
	var b strings.Builder
	name, mac, wt := tir.DSPGemmName(r, c, u), tir.DSPMacName(r, c, u), "int32_t"
	if w8 {
		name, mac, wt = tir.DSPGemmW8Name(r, c, u), tir.DSPMacW8Name(r, c, u), "int8_t"
	}
	fmt.Fprintf(&b, "/* For b < nb: the %dx%d block of %s from zero, over channels b*%d.., then\n", r, c, mac, c)
	b.WriteString("   y[i*ys + o] = dsp_requant_s8pr(acc, &p[4*o], zr, lo, hi) with the bias folded into p's k0. */\n")
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int8_t *y, int32_t ys, const int32_t *x, int32_t xs, const %s *w, int32_t n, const int32_t *p, int32_t nb, int32_t zr, int32_t lo, int32_t hi)\n{\n", name, wt)
	writeGemmBody(&b, r, c, u, w8, gemmEpilogueK0, 0)
	return b.String()
}

// dspGemmSC prints tir.DSPGemmSName: the accumulators start at the
// channel's scaled bias (p[3o+2]) and an output is one SMMLA by the
// multiplier with A (one LDRD per channel for both), SSAT with the layer's
// shift t as its immediate operand (t is a constant where the helper is
// inlined) and a byte store. With signed it prints tir.DSPGemmSNName: four
// words per channel, and the sign correction D & (acc >> 31) (an AND with
// a shifted operand and a SUB) before the SSAT.
func dspGemmSC(r, c, u int, signed bool) string {
	var b strings.Builder
	name, ep, per := tir.DSPGemmSName(r, c, u), gemmEpilogueShift, 3
	if signed {
		name, ep, per = tir.DSPGemmSNName(r, c, u), gemmEpilogueShiftSigned, 4
	}
	fmt.Fprintf(&b, "/* For b < nb: the %dx%d block of %s from the scaled biases p[%d*o + 2],\n", r, c, tir.DSPMacName(r, c, u), per)
	if signed {
		fmt.Fprintf(&b, "   then y[i*ys + o] = clamp((SMMLA(acc, p[4*o], p[4*o + 1]) - (acc < 0 ? p[4*o + 3] : 0)) >> t,\n")
		b.WriteString("   lo, hi): every channel scaled to the layer's one shift t, with TFLite's sign correction\n")
		b.WriteString("   (tir/dsp_gemm_shift.go). */\n")
	} else {
		b.WriteString("   then y[i*ys + o] = clamp((SMMLA(acc, p[3*o], p[3*o + 1])) >> t, lo, hi): every channel\n")
		b.WriteString("   scaled to the layer's one shift t (tir/dsp_gemm_shift.go). */\n")
	}
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int8_t *y, int32_t ys, const int32_t *x, int32_t xs, const int32_t *w, int32_t n, const int32_t *p, int32_t nb, int32_t t, int32_t lo, int32_t hi)\n{\n", name)
	writeGemmBody(&b, r, c, u, false, ep, 0)
	return b.String()
}

// dspGemm3C prints tir.DSPGemm3SName (or with signed tir.DSPGemm3SNName):
// dspGemmSC's form over three segments (xa, xb, xc), the micro-kernel loop
// once per segment into the same accumulators, the weights running on.
func dspGemm3C(r, c, u int, signed bool) string {
	var b strings.Builder
	name, one, ep := tir.DSPGemm3SName(r, c, u), tir.DSPGemmSName(r, c, u), gemmEpilogueShift
	if signed {
		name, one, ep = tir.DSPGemm3SNName(r, c, u), tir.DSPGemmSNName(r, c, u), gemmEpilogueShiftSigned
	}
	fmt.Fprintf(&b, "/* %s over K = 3n: row i's words at xa + i*xs, then xb, then xc (three input rows of a\n", one)
	b.WriteString("   3-row window); the accumulators stay in registers across them. */\n")
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int8_t *y, int32_t ys, const int32_t *xa, const int32_t *xb, const int32_t *xc, int32_t xs, const int32_t *w, int32_t n, const int32_t *p, int32_t nb, int32_t t, int32_t lo, int32_t hi)\n{\n", name)
	writeGemmBody(&b, r, c, u, false, ep, 3)
	return b.String()
}

// gemmEpilogue is the requantization a fused GEMM helper ends in.
type gemmEpilogue int

const (
	gemmEpilogueK0          gemmEpilogue = iota // bias folded into k0: LDRD, SMLAL, ASR (tir.DSPGemmName)
	gemmEpilogueShift                           // shared shift: SMMLA (tir.DSPGemmSName)
	gemmEpilogueShiftSigned                     // shared shift with the sign correction (tir.DSPGemmSNName)
)

// writeGemmBody prints the channel-block loop of dspGemmC's helpers and the
// closing brace: accumulators, the micro-kernel loop (once, or once per
// segment xa, xb, xc when segs is 3) and the epilogue.
func writeGemmBody(b *strings.Builder, r, c, u int, w8 bool, ep gemmEpilogue, segs int) {
	per, shift := 4, ep != gemmEpilogueK0
	if ep == gemmEpilogueShift {
		per = 3
	}
	b.WriteString("    int32_t blk;\n")
	if r == 1 {
		b.WriteString("    (void)xs;\n    (void)ys;\n")
	}
	if r == 2 && ldmBlock(r, c, w8) {
		// The two-row asm takes 12 registers. With one block of
		// channels (nb a constant 1: a layer of two or three output
		// channels) gcc's loop optimizations (ivopts) left it none
		// ("'asm' operand has impossible constraints" at -O1 to -O3 on
		// the M4, M7 and M33: 3xN convolutions, session 48 review);
		// with nb opaque the block loop stays a loop and the asm fits.
		// Only there: with more blocks the code is as it was.
		b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__PIC__)\n    if (__builtin_constant_p(nb) && nb == 1) {\n        __asm__(\"\" : \"+r\"(nb));\n    }\n#endif\n")
	}
	b.WriteString("    for (blk = 0; blk < nb; ++blk) {\n")
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			init := "0"
			if shift {
				init = fmt.Sprintf("p[%d]", per*j+2)
			}
			fmt.Fprintf(b, "        int32_t a%d%d = %s;\n", i, j, init)
		}
	}
	if segs == 0 {
		writeMacLoop(b, r, c, u, w8, "        ", "", true)
	}
	for k := 0; k < segs; k++ {
		fmt.Fprintf(b, "        {\n            const int32_t *x = x%c;\n", 'a'+k)
		writeMacLoop(b, r, c, u, w8, "            ", "", true)
		b.WriteString("        }\n")
	}
	for j := 0; j < c; j++ {
		if shift {
			b.WriteString("        {\n            int32_t m;\n            int32_t k;\n")
			fmt.Fprintf(b, "            DSP_LD2(p, %d, m, k);\n", per*j)
			if ep == gemmEpilogueShiftSigned {
				fmt.Fprintf(b, "            const int32_t d = p[%d];\n", per*j+3)
			}
		} else {
			b.WriteString("        {\n            int32_t m;\n            int32_t e1;\n")
			fmt.Fprintf(b, "            DSP_LD2(p, %d, m, e1);\n", 4*j+2)
		}
		for i := 0; i < r; i++ {
			if shift {
				fmt.Fprintf(b, `            {
                int32_t t_;
                __asm__("smmla %%0, %%1, %%2, %%3" : "=r"(t_) : "r"(a%d%d), "r"(m), "r"(k));
`, i, j)
				if ep == gemmEpilogueShiftSigned {
					fmt.Fprintf(b, "                t_ -= d & (a%d%d >> 31);\n", i, j)
				}
				b.WriteString(`                t_ = (int32_t)__builtin_arm_ssat(t_ >> t, 8);
`)
			} else {
				fmt.Fprintf(b, `            {
                int32_t l;
                int32_t h;
                int32_t t_;
                DSP_LD2(p, %d, l, h);
                __asm__("smlal %%0, %%1, %%2, %%3" : "+r"(l), "+r"(h) : "r"(a%d%d), "r"(m));
                t_ = (int32_t)__builtin_arm_ssat((h >> e1) + zr, 8);
`, 4*j, i, j)
			}
			fmt.Fprintf(b, `                if (lo > -128 && t_ < lo) {
                    t_ = lo;
                }
                if (hi < 127 && t_ > hi) {
                    t_ = hi;
                }
                y[%d * ys + %d] = (int8_t)t_;
            }
`, i, j)
		}
		b.WriteString("        }\n")
	}
	fmt.Fprintf(b, "        y += %d;\n        p += %d;\n", c, per*c)
	b.WriteString("    }\n}")
}
