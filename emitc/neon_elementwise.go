package emitc

// C spellings of tir's int8 ADD/SUB micro-kernel (tir/mve_elementwise.go)
// for the "neon" target.

func init() {
	add := addHelper
	add("neon_addsub_s8", []string{"neon_requant_s8"}, `/* TFLite int8 ADD/SUB on n elements, four lanes at a time:
   y = clamp(requant(requant((a + oa)*ls, m1, s1) +- requant((b + ob)*ls, m2, s2), mo, so) + zp, lo, hi). */
static inline int32x4_t neon_requant_n_x4(int32x4_t v, int32_t m, int32_t s, int32_t fix)
{
    /* MultiplyByQuantizedMultiplier with one multiplier and shift for every
       lane (constants where inlined); fix = 0 drops the sign fix-up. */
    if (s > 0) {
        v = vshlq_s32(v, vdupq_n_s32(s));
    }
    v = vqrdmulhq_n_s32(v, m);
    if (s < 0) {
        if (fix) {
            v = vqaddq_s32(v, vshrq_n_s32(v, 31));
        }
        v = vrshlq_s32(v, vdupq_n_s32(s));
    }
    return v;
}

static inline int32x4_t neon_addsub_x4(int16x4_t a, int16x4_t b, int32_t oa, int32_t ob, int32_t ls, int32_t m1, int32_t s1,
                                       int32_t m2, int32_t s2, int32_t sub, int32_t mo, int32_t so, int32_t zp, int32_t fix)
{
    int32x4_t u = vmulq_n_s32(vaddq_s32(vmovl_s16(a), vdupq_n_s32(oa)), ls);
    int32x4_t v = vmulq_n_s32(vaddq_s32(vmovl_s16(b), vdupq_n_s32(ob)), ls);
    u = neon_requant_n_x4(u, m1, s1, 1);
    v = neon_requant_n_x4(v, m2, s2, 1);
    u = sub ? vsubq_s32(u, v) : vaddq_s32(u, v);
    return vaddq_s32(neon_requant_n_x4(u, mo, so, fix), vdupq_n_s32(zp));
}

static inline void neon_addsub_s8(int8_t *y, const int8_t *a, const int8_t *b, int32_t n, int32_t oa, int32_t ob, int32_t ls,
                                  int32_t m1, int32_t s1, int32_t m2, int32_t s2, int32_t sub, int32_t mo, int32_t so,
                                  int32_t zp, int32_t lo, int32_t hi)
{
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t a16 = vmovl_s8(vld1_s8(a + i));
        const int16x8_t b16 = vmovl_s8(vld1_s8(b + i));
        const int32x4_t lo4 = neon_addsub_x4(vget_low_s16(a16), vget_low_s16(b16), oa, ob, ls, m1, s1, m2, s2, sub, mo, so, zp, lo < zp);
        const int32x4_t hi4 = neon_addsub_x4(vget_high_s16(a16), vget_high_s16(b16), oa, ob, ls, m1, s1, m2, s2, sub, mo, so, zp, lo < zp);
        /* The saturating narrows clamp to the int8 range; a narrower
           [lo, hi] is applied to the eight bytes after. */
        int8x8_t o = vqmovn_s16(vcombine_s16(vqmovn_s32(lo4), vqmovn_s32(hi4)));
        if (lo > -128) {
            o = vmax_s8(o, vdup_n_s8((int8_t)lo));
        }
        if (hi < 127) {
            o = vmin_s8(o, vdup_n_s8((int8_t)hi));
        }
        vst1_s8(y + i, o);
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
