package emitc

import "github.com/mcugen/mcugen/tir"

// C spellings of tir's int8 ADD/SUB micro-kernel (tir/mve_elementwise.go)
// for the "mve" target.

func init() {
	add := addHelper
	add(tir.IntrMVEAddLUT, []string{"mve_include"}, `/* TFLite int8 ADD/SUB on n elements through tables (tir.IntrMVEAddLUT), four lanes at a time:
   s = t1[a & 255] + t2[b & 255] (two gathers), y = clamp((VMULH(s, m) + A - [s < 0] * D) >> T, lo, hi).
   The tables hold each input's rescaled values times 2^j, checked against TFLite's formula for
   every input pair at compile time (tir/dsp_addlut.go). */
MVE_INLINE void mve_addlut_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, const int32_t *t1, const int32_t *t2,
                              int32_t m, int32_t A, int32_t D, int32_t T, int32_t lo, int32_t hi)
{
    const int32x4_t mv = vdupq_n_s32(m);
    const int32x4_t av = vdupq_n_s32(A);
    const int32x4_t dv = vdupq_n_s32(D);
    const int32x4_t lov = vdupq_n_s32(lo);
    const int32x4_t hiv = vdupq_n_s32(hi);
    int32_t i;
#define MVE_ADDLUT_OUT(s, v) do { \
        v = vaddq_s32(vmulhq_s32(s, mv), av); \
        if (D != 0) { \
            v = vsubq_s32(v, vandq_s32(vshrq_n_s32(s, 31), dv)); \
        } \
        v = vminq_s32(vmaxq_s32(vshlq_r_s32(v, -T), lov), hiv); \
    } while (0)
    /* Whole vectors unpredicated (a VPST before each load and store doubled the loop), then
       the tail's lanes predicated. */
    for (i = 0; i + 4 <= n; i += 4) {
        const uint32x4_t ia = vldrbq_u32((const uint8_t *)(const void *)(a + i));
        const uint32x4_t ib = vldrbq_u32((const uint8_t *)(const void *)(b + i));
        const int32x4_t s = vaddq_s32(vldrwq_gather_shifted_offset_s32(t1, ia), vldrwq_gather_shifted_offset_s32(t2, ib));
        int32x4_t v;
        MVE_ADDLUT_OUT(s, v);
        vstrbq_s32(y + i, v);
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        const uint32x4_t ia = vldrbq_z_u32((const uint8_t *)(const void *)(a + i), p);
        const uint32x4_t ib = vldrbq_z_u32((const uint8_t *)(const void *)(b + i), p);
        const int32x4_t s = vaddq_s32(vldrwq_gather_shifted_offset_z_s32(t1, ia, p), vldrwq_gather_shifted_offset_z_s32(t2, ib, p));
        int32x4_t v;
        MVE_ADDLUT_OUT(s, v);
        vstrbq_p_s32(y + i, v, p);
    }
#undef MVE_ADDLUT_OUT
}`)
	add("mve_addsub_s8", []string{"mve_requant_s8"}, `/* TFLite int8 ADD/SUB on n elements, four lanes at a time:
   y = clamp(requant(requant((a + oa)*ls, m1, s1) +- requant((b + ob)*ls, m2, s2), mo, so) + zp, lo, hi). */
MVE_INLINE int32x4_t mve_requant_n_x4(int32x4_t v, int32_t m, int32_t s, int32_t fix)
{
    /* MultiplyByQuantizedMultiplier with one multiplier and shift for every
       lane, constants where inlined (scalar-operand VSHL, VQRDMULH and VRSHL;
       no vectors to hold in Q registers); fix = 0 drops RoundingDivideByPOT's
       sign fix-up as mve_requantr_x4 does. */
    if (s > 0) {
        v = vshlq_r_s32(v, s);
    }
    v = vqrdmulhq_n_s32(v, m);
    if (s < 0) {
        if (fix) {
            v = vqaddq_s32(v, vshrq_n_s32(v, 31));
        }
        v = vrshlq_n_s32(v, s);
    }
    return v;
}

MVE_INLINE int32x4_t mve_addsub_x4(int32x4_t a, int32x4_t b, int32_t oa, int32_t ob, int32_t ls, int32_t m1, int32_t s1,
                                   int32_t m2, int32_t s2, int32_t sub, int32_t mo, int32_t so, int32_t zp,
                                   int32x4_t vlo, int32x4_t vhi, int32_t lo, int32_t hi)
{
    int32x4_t u = mve_requant_n_x4(vmulq_n_s32(vaddq_n_s32(a, oa), ls), m1, s1, 1);
    const int32x4_t v = mve_requant_n_x4(vmulq_n_s32(vaddq_n_s32(b, ob), ls), m2, s2, 1);
    u = sub ? vsubq_s32(u, v) : vaddq_s32(u, v);
    u = vaddq_n_s32(mve_requant_n_x4(u, mo, so, lo < zp), zp);
    if (lo == -128 && hi == 127) {
        /* The clamp to the int8 range as a saturating shift. */
        return vshrq_n_s32(vqshlq_n_s32(u, 24), 24);
    }
    return vminq_s32(vmaxq_s32(u, vlo), vhi);
}

MVE_INLINE void mve_addsub_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, int32_t oa, int32_t ob, int32_t ls,
                              int32_t m1, int32_t s1, int32_t m2, int32_t s2, int32_t sub, int32_t mo, int32_t so,
                              int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t vlo = vdupq_n_s32(lo);
    const int32x4_t vhi = vdupq_n_s32(hi);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vstrbq_s32(y + i, mve_addsub_x4(vldrbq_s32(a + i), vldrbq_s32(b + i), oa, ob, ls, m1, s1, m2, s2, sub, mo, so, zp,
                                        vlo, vhi, lo, hi));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        mve_st8x4_tail(y + i, mve_addsub_x4(vldrbq_z_s32(a + i, p), vldrbq_z_s32(b + i, p), oa, ob, ls, m1, s1, m2, s2, sub,
                                            mo, so, zp, vlo, vhi, lo, hi), n - i);
    }
}`)
}
