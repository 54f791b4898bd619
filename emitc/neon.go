package emitc

// The C spellings of tir's SIMD micro-kernels for the "neon" target
// (tir/mve_intrin.go has their exact semantics): static inline helpers over
// <arm_neon.h>, with SDOT (vdotq_s32) when the compiler targets the
// dot-product extension and SMULL/SADALP otherwise. Printed only into models
// scheduled for "neon".

func init() {
	add := addHelper
	add("neon_include", nil, `#include <arm_neon.h>

/* a + the int8 dot products of x and w, four lanes of four products. */
static inline int32x4_t neon_dot_s8(int32x4_t a, int8x16_t x, int8x16_t w)
{
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(a, x, w);
#else
    a = vpadalq_s16(a, vmull_s8(vget_low_s8(x), vget_low_s8(w)));
    return vpadalq_s16(a, vmull_high_s8(x, w));
#endif
}`)
	add("neon_gemv_s8", []string{"neon_include"}, `/* acc[j] += sum over i < n of x[i] * w[j*ws + i], for j < m; four rows of w
   share each 16-byte input vector. (gcc's loop-bound warning misfires on the
   scalar tail once the sizes are constant: silenced here only.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
static inline void neon_gemv_s8(int32_t *acc, const int8_t *x, const int8_t *w, int32_t ws, int32_t m, int32_t n)
{
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        const int8_t *w1 = w + ws;
        const int8_t *w2 = w1 + ws;
        const int8_t *w3 = w2 + ws;
        int32x4_t a0 = vdupq_n_s32(0);
        int32x4_t a1 = vdupq_n_s32(0);
        int32x4_t a2 = vdupq_n_s32(0);
        int32x4_t a3 = vdupq_n_s32(0);
        int32_t s0, s1, s2, s3;
        int32_t i = 0;
        for (; i + 16 <= n; i += 16) {
            const int8x16_t xv = vld1q_s8(x + i);
            a0 = neon_dot_s8(a0, xv, vld1q_s8(w + i));
            a1 = neon_dot_s8(a1, xv, vld1q_s8(w1 + i));
            a2 = neon_dot_s8(a2, xv, vld1q_s8(w2 + i));
            a3 = neon_dot_s8(a3, xv, vld1q_s8(w3 + i));
        }
        for (; i + 8 <= n; i += 8) {
            const int8x8_t xv = vld1_s8(x + i);
            a0 = vpadalq_s16(a0, vmull_s8(xv, vld1_s8(w + i)));
            a1 = vpadalq_s16(a1, vmull_s8(xv, vld1_s8(w1 + i)));
            a2 = vpadalq_s16(a2, vmull_s8(xv, vld1_s8(w2 + i)));
            a3 = vpadalq_s16(a3, vmull_s8(xv, vld1_s8(w3 + i)));
        }
        s0 = vaddvq_s32(a0);
        s1 = vaddvq_s32(a1);
        s2 = vaddvq_s32(a2);
        s3 = vaddvq_s32(a3);
        for (; i < n; ++i) {
            const int32_t xi = x[i];
            s0 += xi * w[i];
            s1 += xi * w1[i];
            s2 += xi * w2[i];
            s3 += xi * w3[i];
        }
        acc[0] += s0;
        acc[1] += s1;
        acc[2] += s2;
        acc[3] += s3;
        acc += 4;
        w = w3 + ws;
    }
    for (j = m & 3; j > 0; --j) {
        int32x4_t a0 = vdupq_n_s32(0);
        int32_t s0;
        int32_t i = 0;
        for (; i + 16 <= n; i += 16) {
            a0 = neon_dot_s8(a0, vld1q_s8(x + i), vld1q_s8(w + i));
        }
        for (; i + 8 <= n; i += 8) {
            a0 = vpadalq_s16(a0, vmull_s8(vld1_s8(x + i), vld1_s8(w + i)));
        }
        s0 = vaddvq_s32(a0);
        for (; i < n; ++i) {
            s0 += (int32_t)x[i] * w[i];
        }
        acc[0] += s0;
        acc += 1;
        w += ws;
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif`)
	add("neon_gemvb_s8", []string{"neon_include"}, `/* acc[j] = init[j] + sum over i < n of x[i] * W[j][i], for j < m (a multiple of 4),
   with W stored in blocks of 4 rows x 16 columns (zero-padded). */
static inline void neon_gemvb_s8(int32_t *acc, const int32_t *init, const int8_t *x, const int8_t *w, int32_t m, int32_t n)
{
    const int32_t full = n & ~15;
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        int32x4_t a0 = vdupq_n_s32(0);
        int32x4_t a1 = vdupq_n_s32(0);
        int32x4_t a2 = vdupq_n_s32(0);
        int32x4_t a3 = vdupq_n_s32(0);
        int32_t s0, s1, s2, s3;
        int32_t i;
        for (i = 0; i < full; i += 16) {
            const int8x16_t xv = vld1q_s8(x + i);
            a0 = neon_dot_s8(a0, xv, vld1q_s8(w));
            a1 = neon_dot_s8(a1, xv, vld1q_s8(w + 16));
            a2 = neon_dot_s8(a2, xv, vld1q_s8(w + 32));
            a3 = neon_dot_s8(a3, xv, vld1q_s8(w + 48));
            w += 64;
        }
        i = full;
        if (i + 8 <= n) {
            const int8x8_t xv = vld1_s8(x + i);
            a0 = vpadalq_s16(a0, vmull_s8(xv, vld1_s8(w)));
            a1 = vpadalq_s16(a1, vmull_s8(xv, vld1_s8(w + 16)));
            a2 = vpadalq_s16(a2, vmull_s8(xv, vld1_s8(w + 32)));
            a3 = vpadalq_s16(a3, vmull_s8(xv, vld1_s8(w + 48)));
            i += 8;
        }
        s0 = vaddvq_s32(a0);
        s1 = vaddvq_s32(a1);
        s2 = vaddvq_s32(a2);
        s3 = vaddvq_s32(a3);
        for (; i < n; ++i) {
            const int32_t xi = x[i];
            s0 += xi * w[i - full];
            s1 += xi * w[16 + i - full];
            s2 += xi * w[32 + i - full];
            s3 += xi * w[48 + i - full];
        }
        if (full < n) {
            w += 64;
        }
        acc[0] = init[0] + s0;
        acc[1] = init[1] + s1;
        acc[2] = init[2] + s2;
        acc[3] = init[3] + s3;
        acc += 4;
        init += 4;
    }
}`)
	add("neon_gemvb2_s8", []string{"neon_gemvb_s8"}, `/* neon_gemvb_s8 for two pixels (accumulators acc0, acc1). */
static inline void neon_gemvb2_s8(int32_t *acc0, int32_t *acc1, const int32_t *init, const int8_t *x0, const int8_t *x1,
                                  const int8_t *w, int32_t m, int32_t n)
{
    neon_gemvb_s8(acc0, init, x0, w, m, n);
    neon_gemvb_s8(acc1, init, x1, w, m, n);
}`)
	add("neon_dwtaps_s8", []string{"neon_include"}, `/* a (channels ch..ch+3, ch+4..ch+7) plus the depthwise taps
   sum over i < kh, j < kw of x[i*xkh + j*xkw] * w[(i*kw + j)*c], x and w at
   channel ch; 3x3 with constant offsets (one loop over the kernel rows). */
#if defined(__GNUC__)
MCUGEN_ALWAYS_INLINE
#endif
static inline int32x4x2_t neon_dwtaps_s8(int32x4x2_t a, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                                         int32_t kh, int32_t kw, int32_t c)
{
    int32_t i;
    if (kh == 3 && kw == 3) {
        for (i = 0; i < 3; ++i, x += xkh, w += 3 * c) {
            int16x8_t xv = vmovl_s8(vld1_s8(x));
            int16x8_t wv = vmovl_s8(vld1_s8(w));
            a.val[0] = vmlal_s16(a.val[0], vget_low_s16(xv), vget_low_s16(wv));
            a.val[1] = vmlal_high_s16(a.val[1], xv, wv);
            xv = vmovl_s8(vld1_s8(x + xkw));
            wv = vmovl_s8(vld1_s8(w + c));
            a.val[0] = vmlal_s16(a.val[0], vget_low_s16(xv), vget_low_s16(wv));
            a.val[1] = vmlal_high_s16(a.val[1], xv, wv);
            xv = vmovl_s8(vld1_s8(x + 2 * xkw));
            wv = vmovl_s8(vld1_s8(w + 2 * c));
            a.val[0] = vmlal_s16(a.val[0], vget_low_s16(xv), vget_low_s16(wv));
            a.val[1] = vmlal_high_s16(a.val[1], xv, wv);
        }
        return a;
    }
    for (i = 0; i < kh; ++i) {
        int32_t j;
        for (j = 0; j < kw; ++j) {
            const int16x8_t xv = vmovl_s8(vld1_s8(x + i * xkh + j * xkw));
            const int16x8_t wv = vmovl_s8(vld1_s8(w + (i * kw + j) * c));
            a.val[0] = vmlal_s16(a.val[0], vget_low_s16(xv), vget_low_s16(wv));
            a.val[1] = vmlal_high_s16(a.val[1], xv, wv);
        }
    }
    return a;
}`)
	add("neon_dwconv_s8", []string{"neon_dwtaps_s8"}, `/* Depthwise taps, eight channels per step (SMLAL):
   acc[ch] += sum over a < kh, b < kw of x[a*xkh + b*xkw + ch] * w[(a*kw + b)*c + ch]. */
static inline void neon_dwconv_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                                  int32_t kh, int32_t kw, int32_t c)
{
    const int32_t c8 = c - c % 8; /* bounded for gcc, as in dsp_sumpool_s8 */
    int32_t ch;
    for (ch = 0; ch < c8; ch += 8) {
        int32x4x2_t a;
        a.val[0] = vld1q_s32(acc + ch);
        a.val[1] = vld1q_s32(acc + ch + 4);
        a = neon_dwtaps_s8(a, x + ch, xkh, xkw, w + ch, kh, kw, c);
        vst1q_s32(acc + ch, a.val[0]);
        vst1q_s32(acc + ch + 4, a.val[1]);
    }
    for (; ch < c; ++ch) {
        int32_t s = acc[ch];
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                s += (int32_t)x[i * xkh + j * xkw + ch] * w[(i * kw + j) * c + ch];
            }
        }
        acc[ch] = s;
    }
}`)
	add("neon_requant_s8", []string{"neon_include", "requant"}, `/* One lane of neon_requant_s8's vector sequence (see there). */
/* neon_requant_x4 for shifts r <= 0 (no left shift) without the clamp;
   fix = 0 drops the sign fix-up (see mve_requantr_x4). */
static inline int32x4_t neon_requantr_nc_x4(int32x4_t v, int32x4_t m, int32x4_t r, int32_t zp, int32_t fix)
{
    v = vqrdmulhq_s32(v, m);
    if (fix) {
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, r), 31));
    }
    return vaddq_s32(vrshlq_s32(v, r), vdupq_n_s32(zp));
}

static inline int32x4_t neon_requant_x4(int32x4_t v, int32x4_t m, int32x4_t s, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t r = vminq_s32(s, vdupq_n_s32(0));
    v = vshlq_s32(v, vmaxq_s32(s, vdupq_n_s32(0)));
    v = vqrdmulhq_s32(v, m);
    if (lo < zp) { /* else exact without the fix-up: see mve_requantr_x4 */
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, r), 31));
    }
    v = vrshlq_s32(v, r);
    v = vaddq_s32(v, vdupq_n_s32(zp));
    return vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* Four lanes of a clamped requantization with the tables at m and s: the
   general form where some shift is positive (left), else the right-shift form. */
static inline int32x4_t neon_requant_lr_x4(int32x4_t a, const int32_t *m, const int32_t *s, int32_t left, int32_t zp,
                                           int32_t lo, int32_t hi)
{
    if (left) {
        return neon_requant_x4(a, vld1q_s32(m), vld1q_s32(s), zp, lo, hi);
    }
    a = neon_requantr_nc_x4(a, vld1q_s32(m), vld1q_s32(s), zp, lo < zp);
    return vminq_s32(vmaxq_s32(a, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* y[i] = clamp(MultiplyByQuantizedMultiplier(acc[i], mult[i], shift[i]) + zp, lo, hi),
   eight lanes at a time: SQRDMULH equals SaturatingRoundingDoublingHighMul
   (INT32_MIN * INT32_MIN saturates in both); RoundingDivideByPOT is SRSHL
   after the sign fix-up (x & -right) >> 31. */
static inline void neon_requant_s8(int8_t *y, const int32_t *acc, const int32_t *mult, const int32_t *shift,
                                   int32_t n, int32_t zp, int32_t lo, int32_t hi)
{
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int32x4_t a = neon_requant_x4(vld1q_s32(acc + i), vld1q_s32(mult + i), vld1q_s32(shift + i), zp, lo, hi);
        const int32x4_t b = neon_requant_x4(vld1q_s32(acc + i + 4), vld1q_s32(mult + i + 4), vld1q_s32(shift + i + 4), zp, lo, hi);
        vst1_s8(y + i, vmovn_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b))));
    }
    for (; i < n; ++i) {
        int32_t v = requant(acc[i], mult[i], shift[i]) + zp;
        v = v < lo ? lo : v;
        y[i] = (int8_t)(v > hi ? hi : v);
    }
}`)
	add("neon_requantr_s8", []string{"neon_requant_s8"}, `/* neon_requant_s8 for shifts <= 0 (same results; the compiler folds the
   left shift away only when it can see the table). */
static inline void neon_requantr_s8(int8_t *y, const int32_t *acc, const int32_t *mult, const int32_t *shift,
                                    int32_t n, int32_t zp, int32_t lo, int32_t hi)
{
    neon_requant_s8(y, acc, mult, shift, n, zp, lo, hi);
}`)
	add("neon_dwconvrq_s8", []string{"neon_requant_s8", "neon_dwtaps_s8"}, `/* One output pixel of an int8 depthwise conv, eight channels per step:
   y[ch] = clamp(requant(bias[ch] + sum over taps of x[a*xkh + b*xkw + ch] * w[(a*kw + b)*c + ch],
   mult[ch], shift[ch]) + zp, lo, hi); c % 4 == 0: a last four channels (c % 8
   == 4, as a pruned layer can have) take one 32-bit vector. */
static inline int16x4_t neon_ld4_s8(const int8_t *p)
{
    int8x8_t v = vdup_n_s8(0);
    v = vld1_lane_s8(p, v, 0);
    v = vld1_lane_s8(p + 1, v, 1);
    v = vld1_lane_s8(p + 2, v, 2);
    v = vld1_lane_s8(p + 3, v, 3);
    return vget_low_s16(vmovl_s8(v));
}

/* neon_dwconvrq_s8 for four channels (c is the row stride of w): its own
   function, so that the layers with c % 8 == 0 inline the main one as before. */
static void neon_dwconvrq4_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                              int32_t kh, int32_t kw, int32_t c, const int32_t *bias, const int32_t *mult,
                              const int32_t *shift, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    int32x4_t a = vld1q_s32(bias);
    int16x4_t o;
    int32_t i;
    for (i = 0; i < kh; ++i) {
        int32_t j;
        for (j = 0; j < kw; ++j) {
            a = vmlal_s16(a, neon_ld4_s8(x + i * xkh + j * xkw), neon_ld4_s8(w + (i * kw + j) * c));
        }
    }
    o = vmovn_s32(neon_requant_lr_x4(a, mult, shift, left, zp, lo, hi));
    y[0] = (int8_t)vget_lane_s16(o, 0);
    y[1] = (int8_t)vget_lane_s16(o, 1);
    y[2] = (int8_t)vget_lane_s16(o, 2);
    y[3] = (int8_t)vget_lane_s16(o, 3);
}

#if defined(__GNUC__)
MCUGEN_ALWAYS_INLINE
#endif
static inline void neon_dwconvrq_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                                    int32_t kh, int32_t kw, int32_t c, const int32_t *bias, const int32_t *mult,
                                    const int32_t *shift, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    int32_t ch;
    for (ch = 0; ch + 8 <= c; ch += 8) {
        int32x4x2_t a;
        int32x4_t a0;
        int32x4_t a1;
        int8x8_t o;
        a.val[0] = vld1q_s32(bias + ch);
        a.val[1] = vld1q_s32(bias + ch + 4);
        a = neon_dwtaps_s8(a, x + ch, xkh, xkw, w + ch, kh, kw, c);
        a0 = a.val[0];
        a1 = a.val[1];
        if (left) {
            a0 = neon_requant_x4(a0, vld1q_s32(mult + ch), vld1q_s32(shift + ch), zp, lo, hi);
            a1 = neon_requant_x4(a1, vld1q_s32(mult + ch + 4), vld1q_s32(shift + ch + 4), zp, lo, hi);
            o = vmovn_s16(vcombine_s16(vmovn_s32(a0), vmovn_s32(a1)));
        } else {
            /* No left shift: the shift table is -right. The saturating
               narrows clamp to the int8 range; a narrower [lo, hi] is
               applied to the eight bytes after. */
            a0 = neon_requantr_nc_x4(a0, vld1q_s32(mult + ch), vld1q_s32(shift + ch), zp, lo < zp);
            a1 = neon_requantr_nc_x4(a1, vld1q_s32(mult + ch + 4), vld1q_s32(shift + ch + 4), zp, lo < zp);
            o = vqmovn_s16(vcombine_s16(vqmovn_s32(a0), vqmovn_s32(a1)));
            if (lo > -128) {
                o = vmax_s8(o, vdup_n_s8((int8_t)lo));
            }
            if (hi < 127) {
                o = vmin_s8(o, vdup_n_s8((int8_t)hi));
            }
        }
        vst1_s8(y + ch, o);
    }
    if (ch < c) {
        neon_dwconvrq4_s8(y + ch, x + ch, xkh, xkw, w + ch, kh, kw, c, bias + ch, mult + ch, shift + ch, left, zp, lo, hi);
    }
}`)
	add("neon_maxpool_s8", []string{"neon_include", "maxpool_tail_s8"}, `/* y[ch] = min(max(m, lo), hi) with m the maximum over a < kh, b < kw of x[a*xkh + b*xkw + ch],
   sixteen channels per vector, then eight, the rest one at a time. */
static inline void neon_maxpool_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c, int32_t lo,
                                   int32_t hi)
{
    const int32_t c16 = c - c % 16;
    int32_t ch;
    for (ch = 0; ch < c16; ch += 16) {
        int8x16_t m = vld1q_s8(x + ch);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                m = vmaxq_s8(m, vld1q_s8(x + i * xkh + j * xkw + ch));
            }
        }
        m = vminq_s8(vmaxq_s8(m, vdupq_n_s8((int8_t)lo)), vdupq_n_s8((int8_t)hi));
        vst1q_s8(y + ch, m);
    }
    if (c - c16 >= 8) {
        int8x8_t m = vld1_s8(x + ch);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                m = vmax_s8(m, vld1_s8(x + i * xkh + j * xkw + ch));
            }
        }
        m = vmin_s8(vmax_s8(m, vdup_n_s8((int8_t)lo)), vdup_n_s8((int8_t)hi));
        vst1_s8(y + ch, m);
        ch += 8;
    }
    /* The tail from one bounded value (c16, or c16 + 8 after the half vector), as in
       dsp_sumpool_s8: a tail starting where a loop left off drew -Waggressive-loop-optimizations. */
    maxpool_tail_s8(y, x, xkh, xkw, kh, kw, c - c % 8, c, lo, hi);
}`)
	add("neon_sumpool_s8", []string{"neon_include", "sumpool_tail_s8"}, `/* acc[ch] += sum over a < kh, b < kw of x[a*xkh + b*xkw + ch], eight channels per step. */
static inline void neon_sumpool_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c)
{
    const int32_t c8 = c - c % 8; /* bounded for gcc, as in dsp_sumpool_s8 */
    int32_t ch;
    for (ch = 0; ch < c8; ch += 8) {
        int32x4_t lo = vld1q_s32(acc + ch);
        int32x4_t hi = vld1q_s32(acc + ch + 4);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                const int16x8_t v = vmovl_s8(vld1_s8(x + i * xkh + j * xkw + ch));
                lo = vaddw_s16(lo, vget_low_s16(v));
                hi = vaddw_high_s16(hi, v);
            }
        }
        vst1q_s32(acc + ch, lo);
        vst1q_s32(acc + ch + 4, hi);
    }
    sumpool_tail_s8(acc, x, xkh, xkw, kh, kw, c8, c);
}`)
	add("neon_pwrq_s8", []string{"neon_requant_s8"}, `/* The four sums of rows r0..r3 (four lanes each, from neon_dot_s8) plus the bias
   at b, requantized (multipliers m, shifts s) and stored as four int8 at y. */
static inline void neon_pwrq_out_s8(int8_t *y, int32x4_t r0, int32x4_t r1, int32x4_t r2, int32x4_t r3, const int32_t *b,
                                    const int32_t *m, const int32_t *s, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t a = vaddq_s32(vpaddq_s32(vpaddq_s32(r0, r1), vpaddq_s32(r2, r3)), vld1q_s32(b));
    const int16x4_t o = vmovn_s32(neon_requant_lr_x4(a, m, s, left, zp, lo, hi));
    int32_t t;
    t = vget_lane_s32(vreinterpret_s32_s8(vmovn_s16(vcombine_s16(o, o))), 0);
    memcpy(y, &t, 4);
}

/* The n <= 16 inputs at x as one vector, zero past n (the weight rows are zero there). */
static inline int8x16_t neon_pwrq_in_s8(const int8_t *x, int32_t n)
{
    int8_t t[16] = {0};
    memcpy(t, x, (size_t)n);
    return vld1q_s8(t);
}

/* One output pixel of a short reduction (n <= 16):
   y[j] = clamp(requant(bias[j] + sum over i < n of x[i] * w[16*j + i], mult[j], shift[j]) + zp, lo, hi)
   for j < m (a multiple of 4; each weight row padded to sixteen bytes). The
   input is one vector, read before any output is stored; each row's sum is one
   SDOT (four lanes), and two pairwise adds gather four rows' sums into one
   vector to requantize. */
static inline void neon_pwrq_s8(int8_t *y, const int8_t *x, const int8_t *w, int32_t m, int32_t n, const int32_t *bias,
                                const int32_t *mult, const int32_t *shift, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    const int8x16_t xv = neon_pwrq_in_s8(x, n);
    const int32x4_t z = vdupq_n_s32(0);
    int32_t j;
    for (j = 0; j < m; j += 4, w += 64) {
        neon_pwrq_out_s8(y + j, neon_dot_s8(z, xv, vld1q_s8(w)), neon_dot_s8(z, xv, vld1q_s8(w + 16)),
                         neon_dot_s8(z, xv, vld1q_s8(w + 32)), neon_dot_s8(z, xv, vld1q_s8(w + 48)), bias + j, mult + j,
                         shift + j, left, zp, lo, hi);
    }
}`)
	add("neon_pwrq2_s8", []string{"neon_pwrq_s8"}, `/* neon_pwrq_s8 for two pixels (x0 into y0, x1 into y1): each weight vector is
   loaded once for both, and both inputs are read before any output is stored. */
static inline void neon_pwrq2_s8(int8_t *y0, int8_t *y1, const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t m,
                                 int32_t n, const int32_t *bias, const int32_t *mult, const int32_t *shift, int32_t left,
                                 int32_t zp, int32_t lo, int32_t hi)
{
    const int8x16_t xv = neon_pwrq_in_s8(x0, n);
    const int8x16_t xu = neon_pwrq_in_s8(x1, n);
    const int32x4_t z = vdupq_n_s32(0);
    int32_t j;
    for (j = 0; j < m; j += 4, w += 64) {
        const int8x16_t w0 = vld1q_s8(w);
        const int8x16_t w1 = vld1q_s8(w + 16);
        const int8x16_t w2 = vld1q_s8(w + 32);
        const int8x16_t w3 = vld1q_s8(w + 48);
        neon_pwrq_out_s8(y0 + j, neon_dot_s8(z, xv, w0), neon_dot_s8(z, xv, w1), neon_dot_s8(z, xv, w2),
                         neon_dot_s8(z, xv, w3), bias + j, mult + j, shift + j, left, zp, lo, hi);
        neon_pwrq_out_s8(y1 + j, neon_dot_s8(z, xu, w0), neon_dot_s8(z, xu, w1), neon_dot_s8(z, xu, w2),
                         neon_dot_s8(z, xu, w3), bias + j, mult + j, shift + j, left, zp, lo, hi);
    }
}`)
	add("neon_copy_s8", nil, `static inline void neon_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n);
}`)
	add("neon_fill_s8", nil, `static inline void neon_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    memset(dst, v, (size_t)n);
}`)
	add("neon_copy_s32", nil, `static inline void neon_copy_s32(int32_t *dst, const int32_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(int32_t));
}`)
}
