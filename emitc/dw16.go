package emitc

import "github.com/mcugen/mcugen/tir"

func init() {
	addHelper("dw16_half", nil, `/* The low and high int16 of a word of two (tir.IntrDW16Row's weights), without relying on an
   implementation-defined conversion. */
static inline int32_t dw16_lo(int32_t w)
{
    const int32_t v = (int32_t)((uint32_t)w & 0xffffu);
    return v - ((v & 0x8000) << 1);
}

static inline int32_t dw16_hi(int32_t w)
{
    const int32_t v = (int32_t)((uint32_t)w >> 16);
    return v - ((v & 0x8000) << 1);
}`)
	addHelper("dw16_span", nil, `/* The taps k in [*k0, *k1) of a window of K taps d apart from i0 that fall inside [0, n). */
static inline void dw16_span(int32_t i0, int32_t K, int32_t d, int32_t n, int32_t *k0, int32_t *k1)
{
    int32_t a = 0, b = K;
    while (a < K && i0 + a * d < 0) {
        ++a;
    }
    while (b > a && i0 + (b - 1) * d >= n) {
        --b;
    }
    *k0 = a;
    *k1 = b;
}`)
	addHelper(tir.IntrSMMULR, nil, `/* (a * m + 2^31) >> 32 (SMMULR; tir.IntrSMMULR): a 16x8 layer's 64-bit requantization where
   the compiler proved the sum fits int32 and the shift leaves it exact. */
static inline int32_t smmulr_s32(int64_t a, int32_t m)
{
    int32_t v;
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(MCUGEN_NO_ASM)
    __asm__("smmulr %0, %1, %2" : "=r"(v) : "r"((int32_t)a), "r"(m));
#else
    v = (int32_t)(((int64_t)(int32_t)a * m + INT64_C(0x80000000)) >> 32);
#endif
    return v;
}`)
	addHelper("dw16_out", []string{tir.IntrSMMULR}, `/* (a * m + 2^31) >> 32 (SMMULR) clamped to [lo, hi] (an int16 range): tir.IntrDW16Row's
   requantization. */
static inline MCUGEN_ALWAYS_INLINE int32_t dw16_out(int32_t a, int32_t m, int32_t lo, int32_t hi)
{
    int32_t v = smmulr_s32(a, m);
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(MCUGEN_NO_ASM)
    /* The int16 range and ReLU's are one saturation (lo and hi are constants where this inlines). */
    if (lo == -32768 && hi == 32767) {
        __asm__("ssat %0, #16, %1" : "=r"(v) : "r"(v));
        return v;
    }
    if (lo == 0 && hi == 32767) {
        __asm__("usat %0, #15, %1" : "=r"(v) : "r"(v));
        return v;
    }
#endif
    return v < lo ? lo : v > hi ? hi : v;
}`)
	addHelper(tir.IntrDW16Row, []string{"dw16_half", "dw16_out", "dw16_span"}, `/* One output row of a 16x8 depthwise convolution (tir.IntrDW16Row). For each output pixel and
   quad of channels: each channel's bias plus its taps inside the image, summed in 32 bits (the
   compiler took this form only where no sum can leave int32), then dw16_out. x is the image
   [H][W][C] and ih0 the window's top row (negative above the image); w holds each quad's taps as
   two words of int16 pairs, p each quad's four biases and then its four multipliers. With the
   DSP extension a tap is two loads of input pairs and two SMLABB and two SMLATT against the
   weight words. Interior pixels take the whole window with offsets the compiler knows. C is a
   multiple of 4. */
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(MCUGEN_NO_ASM) && !defined(__ARM_BIG_ENDIAN)
#define DW16_TAP(xp, wp, s0, s1, s2, s3)                                                                    \
    {                                                                                          \
        const int16_t *xt_ = (xp);                                                             \
        const int32_t *wt_ = (wp);                                                             \
        int32_t x01_, x23_;                                                                    \
        memcpy(&x01_, xt_, 4);                                                                 \
        memcpy(&x23_, xt_ + 2, 4);                                                             \
        __asm__("smlabb %0, %1, %2, %0" : "+r"(s0) : "r"(x01_), "r"(wt_[0]));                  \
        __asm__("smlatt %0, %1, %2, %0" : "+r"(s1) : "r"(x01_), "r"(wt_[0]));                  \
        __asm__("smlabb %0, %1, %2, %0" : "+r"(s2) : "r"(x23_), "r"(wt_[1]));                  \
        __asm__("smlatt %0, %1, %2, %0" : "+r"(s3) : "r"(x23_), "r"(wt_[1]));                  \
    }
/* Two outputs as one word: PKHBT and a store. */
#define DW16_STORE2(yp, v0, v1)                                                                \
    {                                                                                          \
        int32_t t_;                                                                            \
        __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(t_) : "r"((int32_t)(v0)), "r"((int32_t)(v1))); \
        memcpy((yp), &t_, 4);                                                                  \
    }
/* The same with the weights read in order: one LDRD that steps wp. */
#define DW16_TAPW(xp, wp, s0, s1, s2, s3)                                                      \
    {                                                                                          \
        const int16_t *xt_ = (xp);                                                             \
        int32_t x01_, x23_, w01_, w23_;                                                        \
        memcpy(&x01_, xt_, 4);                                                                 \
        memcpy(&x23_, xt_ + 2, 4);                                                             \
        __asm__("ldrd %0, %1, [%2], #8" : "=r"(w01_), "=r"(w23_), "+r"(wp) : : "memory");       \
        __asm__("smlabb %0, %1, %2, %0" : "+r"(s0) : "r"(x01_), "r"(w01_));                    \
        __asm__("smlatt %0, %1, %2, %0" : "+r"(s1) : "r"(x01_), "r"(w01_));                    \
        __asm__("smlabb %0, %1, %2, %0" : "+r"(s2) : "r"(x23_), "r"(w23_));                    \
        __asm__("smlatt %0, %1, %2, %0" : "+r"(s3) : "r"(x23_), "r"(w23_));                    \
    }
#else
#define DW16_STORE2(yp, v0, v1)                                                                \
    {                                                                                          \
        (yp)[0] = (int16_t)(v0);                                                               \
        (yp)[1] = (int16_t)(v1);                                                               \
    }
#define DW16_TAPW(xp, wp, s0, s1, s2, s3)                                                      \
    {                                                                                          \
        DW16_TAP(xp, wp, s0, s1, s2, s3)                                                       \
        wp += 2;                                                                               \
    }
#define DW16_TAP(xp, wp, s0, s1, s2, s3)                                                       \
    {                                                                                          \
        const int16_t *xt_ = (xp);                                                             \
        const int32_t *wt_ = (wp);                                                             \
        s0 += xt_[0] * dw16_lo(wt_[0]);                                                        \
        s1 += xt_[1] * dw16_hi(wt_[0]);                                                        \
        s2 += xt_[2] * dw16_lo(wt_[1]);                                                        \
        s3 += xt_[3] * dw16_hi(wt_[1]);                                                        \
    }
#endif
static inline MCUGEN_ALWAYS_INLINE void dw16_row_s16s8(int16_t *y, const int16_t *x, const int32_t *w, const int32_t *p,
                                                                 int32_t H, int32_t W, int32_t C, int32_t OW, int32_t ih0,
                                                                 int32_t sw, int32_t pl, int32_t KH, int32_t KW, int32_t dh,
                                                                 int32_t dw, int32_t lo, int32_t hi)
{
    int32_t kh0, kh1, ow;
    dw16_span(ih0, KH, dh, H, &kh0, &kh1);
    for (ow = 0; ow < OW; ++ow, y += C) {
        const int32_t iw0 = ow * sw - pl;
        int32_t kw0, kw1, q;
        int full;
        dw16_span(iw0, KW, dw, W, &kw0, &kw1);
        full = kh0 == 0 && kh1 == KH && kw0 == 0 && kw1 == KW;
        for (q = 0; q < C; q += 4) {
            const int32_t *wq = w + q / 2 * KH * KW;
            const int32_t *pq = p + 2 * q;
            int32_t a0 = pq[0], a1 = pq[1], a2 = pq[2], a3 = pq[3];
            int32_t kh, kw;
            if (full) {
                const int16_t *xq = x + (ih0 * W + iw0) * C + q;
                const int32_t *wp = wq;
#if __GNUC__ >= 8 || defined(__clang__)
#pragma GCC unroll 16
#endif
                for (kh = 0; kh < KH; ++kh) {
#if __GNUC__ >= 8 || defined(__clang__)
#pragma GCC unroll 16
#endif
                    for (kw = 0; kw < KW; ++kw) {
                        DW16_TAPW(xq + (kh * dh * W + kw * dw) * C, wp, a0, a1, a2, a3)
                    }
                }
            } else if (kh0 == 0 && kh1 == KH) {
                /* A column at the image's left or right edge: the rows unrolled. */
                const int16_t *xq = x + ih0 * W * C + q;
#if __GNUC__ >= 8 || defined(__clang__)
#pragma GCC unroll 16
#endif
                for (kh = 0; kh < KH; ++kh) {
                    for (kw = kw0; kw < kw1; ++kw) {
                        DW16_TAP(xq + (kh * dh * W + iw0 + kw * dw) * C, wq + 2 * (kh * KW + kw), a0, a1, a2, a3)
                    }
                }
            } else {
                for (kh = kh0; kh < kh1; ++kh) {
                    for (kw = kw0; kw < kw1; ++kw) {
                        DW16_TAP(x + ((ih0 + kh * dh) * W + iw0 + kw * dw) * C + q, wq + 2 * (kh * KW + kw), a0, a1, a2, a3)
                    }
                }
            }
            DW16_STORE2(y + q, dw16_out(a0, pq[4], lo, hi), dw16_out(a1, pq[5], lo, hi))
            DW16_STORE2(y + q + 2, dw16_out(a2, pq[6], lo, hi), dw16_out(a3, pq[7], lo, hi))
        }
    }
}
#undef DW16_TAP
#undef DW16_TAPW
#undef DW16_STORE2`)
}

func init() {
	addHelper(tir.IntrMVEDW16Row, []string{"mve_include", "dw16_span"}, `/* One output row of a 16x8 depthwise convolution on Helium (tir.IntrMVEDW16Row): eight
   channels a step. A tap is one VLDRH of eight inputs and one of their eight weights, VMULLB and
   VMULLT (the even and the odd channels' 32-bit products) and two VADDs; the sums start from the
   biases (even channels, then odd) and requantize by VRMULH with the multipliers, then VMAX,
   VMIN, and VMOVNB/VMOVNT back into channel order for one VSTRH. No sum leaves int32 (the
   compiler took this form only where it cannot). */
#define MVE_DW16_TAP(xp, wp)                                                                   \
    {                                                                                          \
        const int16x8_t xv_ = vldrhq_s16(xp);                                                  \
        const int16x8_t wv_ = vldrhq_s16(wp);                                                  \
        ae = vaddq_s32(ae, vmullbq_int_s16(xv_, wv_));                                         \
        ao = vaddq_s32(ao, vmulltq_int_s16(xv_, wv_));                                         \
    }
MVE_INLINE void mve_dw16_row_s16s8(int16_t *y, const int16_t *x, const int16_t *w, const int32_t *p, int32_t H,
                                   int32_t W, int32_t C, int32_t OW, int32_t ih0, int32_t sw, int32_t pl, int32_t KH,
                                   int32_t KW, int32_t dh, int32_t dw, int32_t lo, int32_t hi)
{
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    int32_t kh0, kh1, ow;
    dw16_span(ih0, KH, dh, H, &kh0, &kh1);
    for (ow = 0; ow < OW; ++ow, y += C) {
        const int32_t iw0 = ow * sw - pl;
        int32_t kw0, kw1, q;
        dw16_span(iw0, KW, dw, W, &kw0, &kw1);
        for (q = 0; q < C; q += 8) {
            const int16_t *wq = w + q * KH * KW;
            const int32_t *pq = p + 2 * q;
            int32x4_t ae = vldrwq_s32(pq), ao = vldrwq_s32(pq + 4);
            int32_t kh, kw;
            for (kh = kh0; kh < kh1; ++kh) {
                const int16_t *xr = x + (ih0 + kh * dh) * W * C + q;
                for (kw = kw0; kw < kw1; ++kw) {
                    MVE_DW16_TAP(xr + (iw0 + kw * dw) * C, wq + 8 * (kh * KW + kw))
                }
            }
            ae = vminq_s32(vmaxq_s32(vrmulhq_s32(ae, vldrwq_s32(pq + 8)), vlo), vhi);
            ao = vminq_s32(vmaxq_s32(vrmulhq_s32(ao, vldrwq_s32(pq + 12)), vlo), vhi);
            vstrhq_s16(y + q, vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), ae), ao));
        }
    }
}
#undef MVE_DW16_TAP`)
}

func init() {
	addHelper(tir.IntrNEONDW16Row, []string{"neon_include", "dw16_span"}, `/* One output row of a 16x8 depthwise convolution with NEON (tir.IntrNEONDW16Row, the layouts
   of tir.IntrMVEDW16Row): eight channels a step, a tap one load of inputs and one of weights and
   SMLAL/SMLAL2 into two vectors of 32-bit sums (channels 0-3 and 4-7; the parameters' even and
   odd halves zipped into that order); the requantization SMULL and a rounding narrowing shift by
   32 (SMMULR's (a * m + 2^31) >> 32), clamped and narrowed for one store. No sum leaves int32
   (the compiler took this form only where it cannot). */
static inline void neon_dw16_row_s16s8(int16_t *y, const int16_t *x, const int16_t *w, const int32_t *p, int32_t H,
                                       int32_t W, int32_t C, int32_t OW, int32_t ih0, int32_t sw, int32_t pl, int32_t KH,
                                       int32_t KW, int32_t dh, int32_t dw, int32_t lo, int32_t hi)
{
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    int32_t kh0, kh1, ow;
    dw16_span(ih0, KH, dh, H, &kh0, &kh1);
    for (ow = 0; ow < OW; ++ow, y += C) {
        const int32_t iw0 = ow * sw - pl;
        int32_t kw0, kw1, q;
        dw16_span(iw0, KW, dw, W, &kw0, &kw1);
        for (q = 0; q < C; q += 8) {
            const int16_t *wq = w + q * KH * KW;
            const int32_t *pq = p + 2 * q;
            const int32x4_t be = vld1q_s32(pq), bo = vld1q_s32(pq + 4);
            const int32x4_t me = vld1q_s32(pq + 8), mo = vld1q_s32(pq + 12);
            int32x4_t a0 = vzip1q_s32(be, bo), a1 = vzip2q_s32(be, bo);
            const int32x4_t m0 = vzip1q_s32(me, mo), m1 = vzip2q_s32(me, mo);
            int32_t kh, kw;
            for (kh = kh0; kh < kh1; ++kh) {
                const int16_t *xr = x + (ih0 + kh * dh) * W * C + q;
                for (kw = kw0; kw < kw1; ++kw) {
                    const int16x8_t xv = vld1q_s16(xr + (iw0 + kw * dw) * C);
                    const int16x8_t wv = vld1q_s16(wq + 8 * (kh * KW + kw));
                    a0 = vmlal_s16(a0, vget_low_s16(xv), vget_low_s16(wv));
                    a1 = vmlal_high_s16(a1, xv, wv);
                }
            }
            a0 = vcombine_s32(vrshrn_n_s64(vmull_s32(vget_low_s32(a0), vget_low_s32(m0)), 32),
                              vrshrn_n_s64(vmull_high_s32(a0, m0), 32));
            a1 = vcombine_s32(vrshrn_n_s64(vmull_s32(vget_low_s32(a1), vget_low_s32(m1)), 32),
                              vrshrn_n_s64(vmull_high_s32(a1, m1), 32));
            a0 = vminq_s32(vmaxq_s32(a0, vlo), vhi);
            a1 = vminq_s32(vmaxq_s32(a1, vlo), vhi);
            vst1q_s16(y + q, vcombine_s16(vmovn_s32(a0), vmovn_s32(a1)));
        }
    }
}`)
}
