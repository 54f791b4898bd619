package emitc

// C spellings of tir's int8 ADD/SUB micro-kernel (tir/mve_elementwise.go)
// for the "mve" target.

func init() {
	add := addHelper
	add("mve_addsub_s8", []string{"mve_requant_s8"}, `/* TFLite int8 ADD/SUB on n elements, four lanes at a time:
   y = clamp(requant(requant((a + oa)*ls, m1, s1) +- requant((b + ob)*ls, m2, s2), mo, so) + zp, lo, hi). */
MVE_INLINE int32x4_t mve_addsub_x4(int32x4_t a, int32x4_t b, int32_t oa, int32_t ob, int32_t ls, int32x4_t m1, int32x4_t s1,
                                   int32x4_t m2, int32x4_t s2, int32_t sub, int32x4_t mo, int32x4_t so, int32_t zp, int32_t lo, int32_t hi)
{
    int32x4_t u = mve_requant_x4(vmulq_n_s32(vaddq_n_s32(a, oa), ls), m1, s1, 0, INT32_MIN, INT32_MAX);
    const int32x4_t v = mve_requant_x4(vmulq_n_s32(vaddq_n_s32(b, ob), ls), m2, s2, 0, INT32_MIN, INT32_MAX);
    u = sub ? vsubq_s32(u, v) : vaddq_s32(u, v);
    return mve_requant_x4(u, mo, so, zp, lo, hi);
}

MVE_INLINE void mve_addsub_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, int32_t oa, int32_t ob, int32_t ls,
                              int32_t m1, int32_t s1, int32_t m2, int32_t s2, int32_t sub, int32_t mo, int32_t so,
                              int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t vm1 = vdupq_n_s32(m1);
    const int32x4_t vs1 = vdupq_n_s32(s1);
    const int32x4_t vm2 = vdupq_n_s32(m2);
    const int32x4_t vs2 = vdupq_n_s32(s2);
    const int32x4_t vmo = vdupq_n_s32(mo);
    const int32x4_t vso = vdupq_n_s32(so);
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vstrbq_s32(y + i, mve_addsub_x4(vldrbq_s32(a + i), vldrbq_s32(b + i), oa, ob, ls, vm1, vs1, vm2, vs2, sub, vmo, vso, zp, lo, hi));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        vstrbq_p_s32(y + i, mve_addsub_x4(vldrbq_z_s32(a + i, p), vldrbq_z_s32(b + i, p), oa, ob, ls, vm1, vs1, vm2, vs2, sub,
                                          vmo, vso, zp, lo, hi), p);
    }
}`)
}
