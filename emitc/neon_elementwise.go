package emitc

// C spellings of tir's int8 ADD/SUB micro-kernel (tir/mve_elementwise.go)
// for the "neon" target.

func init() {
	add := addHelper
	add("neon_addsub_s8", []string{"neon_requant_s8"}, `/* TFLite int8 ADD/SUB on n elements, four lanes at a time:
   y = clamp(requant(requant((a + oa)*ls, m1, s1) +- requant((b + ob)*ls, m2, s2), mo, so) + zp, lo, hi). */
static inline int32x4_t neon_addsub_x4(int16x4_t a, int16x4_t b, int32_t oa, int32_t ob, int32_t ls, int32x4_t m1, int32x4_t s1,
                                       int32x4_t m2, int32x4_t s2, int32_t sub, int32x4_t mo, int32x4_t so, int32_t zp, int32_t lo, int32_t hi)
{
    int32x4_t u = vmulq_n_s32(vaddq_s32(vmovl_s16(a), vdupq_n_s32(oa)), ls);
    int32x4_t v = vmulq_n_s32(vaddq_s32(vmovl_s16(b), vdupq_n_s32(ob)), ls);
    u = neon_requant_x4(u, m1, s1, 0, INT32_MIN, INT32_MAX);
    v = neon_requant_x4(v, m2, s2, 0, INT32_MIN, INT32_MAX);
    u = sub ? vsubq_s32(u, v) : vaddq_s32(u, v);
    return neon_requant_x4(u, mo, so, zp, lo, hi);
}

static inline void neon_addsub_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, int32_t oa, int32_t ob, int32_t ls,
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
    for (; i + 8 <= n; i += 8) {
        const int16x8_t a16 = vmovl_s8(vld1_s8(a + i));
        const int16x8_t b16 = vmovl_s8(vld1_s8(b + i));
        const int32x4_t lo4 = neon_addsub_x4(vget_low_s16(a16), vget_low_s16(b16), oa, ob, ls, vm1, vs1, vm2, vs2, sub, vmo, vso, zp, lo, hi);
        const int32x4_t hi4 = neon_addsub_x4(vget_high_s16(a16), vget_high_s16(b16), oa, ob, ls, vm1, vs1, vm2, vs2, sub, vmo, vso, zp, lo, hi);
        vst1_s8(y + i, vmovn_s16(vcombine_s16(vmovn_s32(lo4), vmovn_s32(hi4))));
    }
    for (; i < n; ++i) {
        const int32_t u = requant(((int32_t)a[i] + oa) * ls, m1, s1);
        const int32_t v = requant(((int32_t)b[i] + ob) * ls, m2, s2);
        int32_t r = requant(sub ? u - v : u + v, mo, so) + zp;
        r = r < lo ? lo : r;
        y[i] = (int8_t)(r > hi ? hi : r);
    }
}`)
}
