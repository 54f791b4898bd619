package emitc

import "github.com/mcugen/mcugen/tir"

// The C of tir.IntrDSPAddLUT: TFLite's int8 ADD or SUB with each input's
// rescaling a table lookup and the output's requantization one SMMLA and
// one SSAT (the sign correction an LSR and a SUB, and only where some
// output needs it). The helper is inlined into the layer, so D, T and the
// clamp are constants there; four elements an iteration.
func init() {
	addHelper(tir.IntrDSPAddLUT, []string{"dsp_acle"}, `/* One output of dsp_addlut_s8 from its table sum s. */
static inline MCUGEN_ALWAYS_INLINE int8_t dsp_addlut_one(int32_t s, int32_t m, int32_t A, int32_t D, int32_t T, int32_t lo, int32_t hi)
{
    int32_t v;
    __asm__("smmla %0, %1, %2, %3" : "=r"(v) : "r"(s), "r"(m), "r"(A));
    if (D != 0) {
        /* D is a power of two: one LSR and a SUB with a shifted operand. */
        v -= (int32_t)((uint32_t)s >> 31) * D;
    }
    v = (int32_t)__builtin_arm_ssat(v >> T, 8);
    if (lo > -128 && v < lo) {
        v = lo;
    }
    if (hi < 127 && v > hi) {
        v = hi;
    }
    return (int8_t)v;
}

/* TFLite int8 ADD/SUB on n elements (tir.IntrDSPAddLUT): s = t1[a[i] + 128] + t2[b[i] + 128],
   y[i] = clamp((SMMLA(s, m, A) - [s < 0] * D) >> T, lo, hi). The tables hold each input's
   rescaled values times 2^j, checked against TFLite's formula for every input pair at
   compile time (tir/dsp_addlut.go). */
static inline MCUGEN_ALWAYS_INLINE void dsp_addlut_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, const int32_t *t1,
                                                     const int32_t *t2, int32_t m, int32_t A, int32_t D, int32_t T, int32_t lo, int32_t hi)
{
    const int32_t *p1 = t1 + 128;
    const int32_t *p2 = t2 + 128;
    int32_t left = n;
    /* Two base registers: gcc otherwise addresses both tables from one
       section anchor, an ADD before each of the two loads. */
    __asm__("" : "+r"(p1), "+r"(p2));
    for (; left >= 4; left -= 4, y += 4, a += 4, b += 4) {
        y[0] = dsp_addlut_one(p1[a[0]] + p2[b[0]], m, A, D, T, lo, hi);
        y[1] = dsp_addlut_one(p1[a[1]] + p2[b[1]], m, A, D, T, lo, hi);
        y[2] = dsp_addlut_one(p1[a[2]] + p2[b[2]], m, A, D, T, lo, hi);
        y[3] = dsp_addlut_one(p1[a[3]] + p2[b[3]], m, A, D, T, lo, hi);
    }
    for (; left > 0; --left, ++y, ++a, ++b) {
        y[0] = dsp_addlut_one(p1[a[0]] + p2[b[0]], m, A, D, T, lo, hi);
    }
}`)
}
