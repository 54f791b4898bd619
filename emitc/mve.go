package emitc

// The C spellings of tir's SIMD micro-kernels for the "mve" target
// (tir/mve_intrin.go has their exact semantics): static inline helpers over
// gcc's <arm_mve.h>, tail-predicated with VCTP. Printed only into models
// scheduled for "mve".

import (
	"fmt"
	"strings"
)

func init() {
	add := addHelper
	add("mve_include", nil, `#if !defined(__ARM_FEATURE_MVE)
#error "this model was compiled for Helium (target mve): build it with -mcpu=cortex-m55 (or -m85), or recompile it with --target dsp or generic"
#endif
#include <arm_mve.h>

#if defined(__GNUC__)
#define MVE_INLINE static inline MCUGEN_ALWAYS_INLINE
#else
#define MVE_INLINE static inline
#endif

/* Tails are stored through a vector on the stack and memcpy, never with a
   predicated store: gcc 12 describes VSTRB/VSTRW under a predicate as a store
   of the whole vector, so its dead-store elimination could drop an earlier
   store to the bytes past the tail (a window's padding, the next pixel's
   window) that the predicate leaves alone. A compiler barrier follows the
   store to the stack: gcc 12.2 at -O2 moved the byte reads of such a tail
   above its VSTRB where a kernel was inlined with constant arguments (the
   depthwise lanes kernels, review, session 54). */
#if defined(__GNUC__)
#define MVE_STACK_BARRIER() __asm__ volatile("" ::: "memory")
#else
#define MVE_STACK_BARRIER() ((void)0)
#endif
/* y[i] = low byte of lane i of v, i < min(n, 4). */
MVE_INLINE void mve_st8x4_tail(int8_t *y, int32x4_t v, int32_t n)
{
    if (n >= 4) {
        vstrbq_s32(y, v);
    } else {
        int8_t t[4];
        vstrbq_s32(t, v);
        MVE_STACK_BARRIER();
        memcpy(y, t, (size_t)n);
    }
}

/* y[i] = lane i of v, i < min(n, 4). */
MVE_INLINE void mve_st32_tail(int32_t *y, int32x4_t v, int32_t n)
{
    if (n >= 4) {
        vstrwq_s32(y, v);
    } else {
        int32_t t[4];
        vstrwq_s32(t, v);
        MVE_STACK_BARRIER();
        memcpy(y, t, 4 * (size_t)n);
    }
}`)
	add("mve_dot_s16s8", []string{"mve_include"}, `/* Sum over i < n of x[i] * w[i] in 64 bits (tir.IntrMVEDotS16S8): eight int16 inputs and
   eight int8 weights, widened by VLDRB.S16, per VMLALDAVA; the tail predicated. */
MVE_INLINE int64_t mve_dot_s16s8(const int16_t *x, const int8_t *w, int32_t n)
{
    int64_t acc = 0;
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc = vmlaldavaq_s16(acc, vldrhq_s16(x + i), vldrbq_s16(w + i));
    }
    if (i < n) {
        const mve_pred16_t p = vctp16q((uint32_t)(n - i));
        acc = vmlaldavaq_p_s16(acc, vldrhq_z_s16(x + i, p), vldrbq_z_s16(w + i, p), p);
    }
    return acc;
}`)
	add("mve_dot4_s16s8", []string{"mve_include"}, `/* out[j] = sum over i < n of x[i] * w[j * stride + i] in 64 bits, j < 4
   (tir.IntrMVEDot4S16S8): each vector of eight inputs is loaded once for the four
   channels; the tail predicated. */
MVE_INLINE void mve_dot4_s16s8(const int16_t *x, const int8_t *w, int32_t stride, int32_t n, int64_t *out)
{
    const int8_t *w1 = w + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    int64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t xv = vldrhq_s16(x + i);
        a0 = vmlaldavaq_s16(a0, xv, vldrbq_s16(w + i));
        a1 = vmlaldavaq_s16(a1, xv, vldrbq_s16(w1 + i));
        a2 = vmlaldavaq_s16(a2, xv, vldrbq_s16(w2 + i));
        a3 = vmlaldavaq_s16(a3, xv, vldrbq_s16(w3 + i));
    }
    if (i < n) {
        const mve_pred16_t p = vctp16q((uint32_t)(n - i));
        const int16x8_t xv = vldrhq_z_s16(x + i, p);
        a0 = vmlaldavaq_p_s16(a0, xv, vldrbq_z_s16(w + i, p), p);
        a1 = vmlaldavaq_p_s16(a1, xv, vldrbq_z_s16(w1 + i, p), p);
        a2 = vmlaldavaq_p_s16(a2, xv, vldrbq_z_s16(w2 + i, p), p);
        a3 = vmlaldavaq_p_s16(a3, xv, vldrbq_z_s16(w3 + i, p), p);
    }
    out[0] = a0;
    out[1] = a1;
    out[2] = a2;
    out[3] = a3;
}`)
	add("mve_gemv_s8", []string{"mve_include"}, `/* acc[j] += sum over i < n of x[i] * w[j*ws + i], for j < m. Four rows of w
   share each 16-byte input vector (VMLADAVA); the tail is predicated. */
MVE_INLINE void mve_gemv_s8(int32_t *acc, const int8_t *x, const int8_t *w, int32_t ws, int32_t m, int32_t n)
{
    const int32_t full = n & ~15;
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        const int8_t *w1 = w + ws;
        const int8_t *w2 = w1 + ws;
        const int8_t *w3 = w2 + ws;
        int32_t a0 = acc[0];
        int32_t a1 = acc[1];
        int32_t a2 = acc[2];
        int32_t a3 = acc[3];
        int32_t i;
        for (i = 0; i < full; i += 16) {
            const int8x16_t xv = vldrbq_s8(x + i);
            a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w + i));
            a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1 + i));
            a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2 + i));
            a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3 + i));
        }
        if (full < n) {
            const mve_pred16_t p = vctp8q((uint32_t)(n - full));
            const int8x16_t xv = vldrbq_z_s8(x + full, p);
            a0 = vmladavaq_p_s8(a0, xv, vldrbq_z_s8(w + full, p), p);
            a1 = vmladavaq_p_s8(a1, xv, vldrbq_z_s8(w1 + full, p), p);
            a2 = vmladavaq_p_s8(a2, xv, vldrbq_z_s8(w2 + full, p), p);
            a3 = vmladavaq_p_s8(a3, xv, vldrbq_z_s8(w3 + full, p), p);
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        acc += 4;
        w = w3 + ws;
    }
    for (j = m & 3; j > 0; --j) {
        int32_t a0 = acc[0];
        int32_t i;
        for (i = 0; i < n; i += 16) {
            const mve_pred16_t p = vctp8q((uint32_t)(n - i));
            a0 = vmladavaq_p_s8(a0, vldrbq_z_s8(x + i, p), vldrbq_z_s8(w + i, p), p);
        }
        acc[0] = a0;
        acc += 1;
        w += ws;
    }
}`)
	add("mve_gemvb_s8", []string{"mve_include"}, `/* acc[j] = init[j] + sum over i < n of x[i] * W[j][i], for j < m (a multiple of 4), with
   W stored in blocks of 4 rows x 16 columns (zero-padded): the four weight
   vectors of a block are consecutive, so the loop streams through w. */
MVE_INLINE void mve_gemvb_s8(int32_t *acc, const int32_t *init, const int8_t *x, const int8_t *w, int32_t m, int32_t n)
{
    const int32_t full = n & ~15;
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        int32_t a0 = init[0];
        int32_t a1 = init[1];
        int32_t a2 = init[2];
        int32_t a3 = init[3];
        int32_t i;
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
        /* One asm loop (DLS/LE, post-incremented loads, the accumulators in
           even core registers by constraint "Te"): ten instructions per
           sixteen k where gcc's loop takes twelve. */
        if (full > 0) {
            const int8_t *xp = x;
            __asm__ volatile("dls lr, %[cnt]\n"
                    "1:\n\tvldrb.u8 q0, [%[xp]], #16\n\t"
                    "vldrb.u8 q1, [%[w]], #16\n\tvmladava.s8 %[a0], q0, q1\n\t"
                    "vldrb.u8 q2, [%[w]], #16\n\tvmladava.s8 %[a1], q0, q2\n\t"
                    "vldrb.u8 q1, [%[w]], #16\n\tvmladava.s8 %[a2], q0, q1\n\t"
                    "vldrb.u8 q2, [%[w]], #16\n\tvmladava.s8 %[a3], q0, q2\n\t"
                    "le lr, 1b"
                    : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3),
                      [xp] "+r"(xp), [w] "+r"(w)
                    : [cnt] "r"(full >> 4)
                    : "q0", "q1", "q2", "lr", "memory");
        }
        (void)i;
#else
        for (i = 0; i < full; i += 16) {
            const int8x16_t xv = vldrbq_s8(x + i);
            a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w + 16));
            a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w + 32));
            a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w + 48));
            w += 64;
        }
#endif
        if (full < n) {
            const int8x16_t xv = vldrbq_z_s8(x + full, vctp8q((uint32_t)(n - full)));
            a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w + 16));
            a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w + 32));
            a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w + 48));
            w += 64;
        }
        acc[0] = a0;
        acc[1] = a1;
        acc[2] = a2;
        acc[3] = a3;
        acc += 4;
        init += 4;
    }
}`)
	add("mve_gemvb2_s8", []string{"mve_gemvb_s8"}, `/* mve_gemvb_s8 for two pixels x0, x1 (accumulators acc0, acc1, both from init): each
   16-byte weight vector is loaded once and used for both. */
MVE_INLINE void mve_gemvb2_s8(int32_t *acc0, int32_t *acc1, const int32_t *init, const int8_t *x0, const int8_t *x1,
                              const int8_t *w, int32_t m, int32_t n)
{
    const int32_t full = n & ~15;
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        int32_t a0 = init[0];
        int32_t a1 = init[1];
        int32_t a2 = init[2];
        int32_t a3 = init[3];
        int32_t b0 = a0;
        int32_t b1 = a1;
        int32_t b2 = a2;
        int32_t b3 = a3;
        int32_t i;
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
        /* Two passes of one asm loop each, channels 0-1 then 2-3, with their
           four accumulators in operands of constraint "Te" (even core
           registers, which VMLADAVA writes) and the count in lr (DLS/LE):
           left to the intrinsics, gcc keeps its loop count in lr and moves
           and spills eight accumulators around every VMLADAVA. Two passes
           load the activations twice but need only seven core registers,
           so they build with a frame pointer too (one pass with all eight
           accumulators does not: it needs a count register besides lr). */
        if (full > 0) {
            /* One pass: channels c and c + 1 (their weights from w0) of both pixels. */
#define MVE_GEMV2_PASS(p0, p1, q0_, q1_, w0)                                                          \
    do {                                                                                              \
        const int8_t *xp = x0;                                                                        \
        const int8_t *yp = x1;                                                                        \
        const int8_t *wp = (w0);                                                                      \
        __asm__ volatile("dls lr, %[cnt]\n"                                                                    \
                "1:\n\tvldrb.u8 q0, [%[xp]], #16\n\tvldrb.u8 q1, [%[yp]], #16\n\t"                     \
                "vldrb.u8 q2, [%[w]], #16\n\tvmladava.s8 %[a0], q0, q2\n\tvmladava.s8 %[b0], q1, q2\n\t" \
                "vldrb.u8 q3, [%[w]], #48\n\tvmladava.s8 %[a1], q0, q3\n\tvmladava.s8 %[b1], q1, q3\n\t" \
                "le lr, 1b"                                                                           \
                : [a0] "+Te"(p0), [a1] "+Te"(p1), [b0] "+Te"(q0_), [b1] "+Te"(q1_),                  \
                  [xp] "+r"(xp), [yp] "+r"(yp), [w] "+r"(wp)                                          \
                : [cnt] "r"(full >> 4)                                                                \
                : "q0", "q1", "q2", "q3", "lr", "memory");                                            \
    } while (0)
            MVE_GEMV2_PASS(a0, a1, b0, b1, w);
            MVE_GEMV2_PASS(a2, a3, b2, b3, w + 32);
#undef MVE_GEMV2_PASS
            w += 4 * full;
        }
        (void)i;
#else
        for (i = 0; i < full; i += 16) {
            const int8x16_t xv = vldrbq_s8(x0 + i);
            const int8x16_t yv = vldrbq_s8(x1 + i);
            int8x16_t wv = vldrbq_s8(w);
            a0 = vmladavaq_s8(a0, xv, wv);
            b0 = vmladavaq_s8(b0, yv, wv);
            wv = vldrbq_s8(w + 16);
            a1 = vmladavaq_s8(a1, xv, wv);
            b1 = vmladavaq_s8(b1, yv, wv);
            wv = vldrbq_s8(w + 32);
            a2 = vmladavaq_s8(a2, xv, wv);
            b2 = vmladavaq_s8(b2, yv, wv);
            wv = vldrbq_s8(w + 48);
            a3 = vmladavaq_s8(a3, xv, wv);
            b3 = vmladavaq_s8(b3, yv, wv);
            w += 64;
        }
#endif
        if (full < n) {
            const mve_pred16_t p = vctp8q((uint32_t)(n - full));
            const int8x16_t xv = vldrbq_z_s8(x0 + full, p);
            const int8x16_t yv = vldrbq_z_s8(x1 + full, p);
            int8x16_t wv = vldrbq_s8(w);
            a0 = vmladavaq_s8(a0, xv, wv);
            b0 = vmladavaq_s8(b0, yv, wv);
            wv = vldrbq_s8(w + 16);
            a1 = vmladavaq_s8(a1, xv, wv);
            b1 = vmladavaq_s8(b1, yv, wv);
            wv = vldrbq_s8(w + 32);
            a2 = vmladavaq_s8(a2, xv, wv);
            b2 = vmladavaq_s8(b2, yv, wv);
            wv = vldrbq_s8(w + 48);
            a3 = vmladavaq_s8(a3, xv, wv);
            b3 = vmladavaq_s8(b3, yv, wv);
            w += 64;
        }
        acc0[0] = a0;
        acc0[1] = a1;
        acc0[2] = a2;
        acc0[3] = a3;
        acc1[0] = b0;
        acc1[1] = b1;
        acc1[2] = b2;
        acc1[3] = b3;
        acc0 += 4;
        acc1 += 4;
        init += 4;
    }
}`)
	add("mve_gemv3", []string{"mve_gemvb_s8"}, `/* What the three-pixel GEMVs share: channels 2h and 2h + 1 of a block of four for
   the three pixels start from init (MVE_GEMV3_INIT), take the products of three
   activation vectors with two weight vectors (MVE_GEMV3_MAC: the weights of the
   two channels at wp and wp + 16) and are stored before the other half starts,
   so that only six accumulators are live (MVE_GEMV3_STORE). */
#define MVE_GEMV3_INIT(h)            \
    int32_t a0 = init[2 * (h)];      \
    int32_t a1 = init[2 * (h) + 1];  \
    int32_t b0 = a0;                 \
    int32_t b1 = a1;                 \
    int32_t c0 = a0;                 \
    int32_t c1 = a1
#define MVE_GEMV3_MAC(xv, yv, zv, wp)                 \
    do {                                              \
        int8x16_t wv_ = vldrbq_s8(wp);                \
        a0 = vmladavaq_s8(a0, (xv), wv_);             \
        b0 = vmladavaq_s8(b0, (yv), wv_);             \
        c0 = vmladavaq_s8(c0, (zv), wv_);             \
        wv_ = vldrbq_s8((wp) + 16);                   \
        a1 = vmladavaq_s8(a1, (xv), wv_);             \
        b1 = vmladavaq_s8(b1, (yv), wv_);             \
        c1 = vmladavaq_s8(c1, (zv), wv_);             \
    } while (0)
#define MVE_GEMV3_STORE(h)           \
    do {                             \
        acc0[2 * (h)] = a0;          \
        acc0[2 * (h) + 1] = a1;      \
        acc1[2 * (h)] = b0;          \
        acc1[2 * (h) + 1] = b1;      \
        acc2[2 * (h)] = c0;          \
        acc2[2 * (h) + 1] = c1;      \
    } while (0)`)
	add("mve_gemvb3_s8", []string{"mve_gemv3"}, `/* mve_gemvb_s8 for three pixels x0, x1, x2 (accumulators acc0, acc1, acc2, all from init):
   each 16-byte weight vector is loaded once and used for the three. */
#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(MCUGEN_NO_ASM)
/* The k loop of one half: one asm loop with six accumulators in even core
   registers (constraint "Te", which VMLADAVA writes; r0 to r12 have seven),
   the count in lr (DLS/LE) and four pointers in the others: twelve
   instructions per sixteen k and 96 MACs, where two pixels take nine per 64.
   At -Os (Zephyr's default) gcc 12 found no registers for it ("impossible
   constraints": review, session 51), so the C form below runs there. */
#define MVE_GEMV3_K(wh)                                                                                   \
    do {                                                                                                  \
        const int8_t *xp = x0;                                                                            \
        const int8_t *yp = x1;                                                                            \
        const int8_t *zp = x2;                                                                            \
        const int8_t *wp = (wh);                                                                          \
        __asm__ volatile("dls lr, %[cnt]\n"                                                                        \
                "1:\n\tvldrb.u8 q0, [%[xp]], #16\n\tvldrb.u8 q1, [%[yp]], #16\n\t"                         \
                "vldrb.u8 q2, [%[zp]], #16\n\tvldrb.u8 q3, [%[w]], #16\n\t"                               \
                "vmladava.s8 %[a0], q0, q3\n\tvmladava.s8 %[b0], q1, q3\n\tvmladava.s8 %[c0], q2, q3\n\t"     \
                "vldrb.u8 q3, [%[w]], #48\n\t"                                                              \
                "vmladava.s8 %[a1], q0, q3\n\tvmladava.s8 %[b1], q1, q3\n\tvmladava.s8 %[c1], q2, q3\n\t"     \
                "le lr, 1b"                                                                               \
                : [a0] "+Te"(a0), [a1] "+Te"(a1), [b0] "+Te"(b0), [b1] "+Te"(b1), [c0] "+Te"(c0), [c1] "+Te"(c1), \
                  [xp] "+r"(xp), [yp] "+r"(yp), [zp] "+r"(zp), [w] "+r"(wp)                               \
                : [cnt] "r"(full >> 4)                                                                    \
                : "q0", "q1", "q2", "q3", "lr", "memory");                                                \
    } while (0)
#else
#define MVE_GEMV3_K(wh)                                                                                   \
    do {                                                                                                  \
        int32_t i;                                                                                        \
        for (i = 0; i < full; i += 16) {                                                                  \
            MVE_GEMV3_MAC(vldrbq_s8(x0 + i), vldrbq_s8(x1 + i), vldrbq_s8(x2 + i), (wh) + 4 * i);         \
        }                                                                                                 \
    } while (0)
#endif
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
/* The k loop of one half unrolled, for a constant reduction of at most 256
   (all whole vectors): the loads at immediate offsets of pointers that do not
   move (no copies to make per half, no loop), the weights as words (VLDRW
   reaches 508 bytes, VLDRB 127, so 128 k per asm statement; the blocks are
   16-byte aligned). At -Os the pointers go in low registers: with "r", gcc 12
   found no registers there with a frame pointer (and "l" costs moves at -O2). */
#if defined(__OPTIMIZE_SIZE__)
#define MVE_GEMV3_P(v) "l"(v)
#else
#define MVE_GEMV3_P(v) "r"(v)
#endif
`+mveGemv3KUClang(false)+`#define MVE_GEMV3_KU(wh)                                                                                  \
    do {                                                                                                  \
        MVE_GEMV3_KU1(x0, x1, x2, (wh), (full > 128 ? 128 : full) >> 4);                                  \
        if (full > 128) {                                                                                 \
            MVE_GEMV3_KU1(x0 + 128, x1 + 128, x2 + 128, (wh) + 512, (full - 128) >> 4);                   \
        }                                                                                                 \
    } while (0)
#define MVE_GEMV3_UNROLL (__builtin_constant_p(full) && __builtin_constant_p(n) && full == n && full > 0 && full <= 256)
#else
#define MVE_GEMV3_KU(wh) MVE_GEMV3_K(wh)
#define MVE_GEMV3_UNROLL 0
#endif
/* One half: the predicated tail (n % 16 values) first, then the k loop. */
#define MVE_GEMV3_HALF(h)                                                                                 \
    do {                                                                                                  \
        const int8_t *const wh = w + 32 * (h);                                                            \
        MVE_GEMV3_INIT(h);                                                                                \
        if (MVE_GEMV3_UNROLL) {                                                                           \
            MVE_GEMV3_KU(wh);                                                                             \
        } else {                                                                                          \
            if (full < n) {                                                                               \
                const mve_pred16_t p = vctp8q((uint32_t)(n - full));                                      \
                MVE_GEMV3_MAC(vldrbq_z_s8(x0 + full, p), vldrbq_z_s8(x1 + full, p), vldrbq_z_s8(x2 + full, p), \
                              wh + 4 * full);                                                             \
            }                                                                                             \
            if (full > 0) {                                                                               \
                MVE_GEMV3_K(wh);                                                                          \
            }                                                                                             \
        }                                                                                                 \
        MVE_GEMV3_STORE(h);                                                                               \
    } while (0)
MVE_INLINE void mve_gemvb3_s8(int32_t *acc0, int32_t *acc1, int32_t *acc2, const int32_t *init, const int8_t *x0,
                              const int8_t *x1, const int8_t *x2, const int8_t *w, int32_t m, int32_t n)
{
    const int32_t full = n & ~15;
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        MVE_GEMV3_HALF(0);
        MVE_GEMV3_HALF(1);
        w += 4 * full + (full < n ? 64 : 0);
        acc0 += 4;
        acc1 += 4;
        acc2 += 4;
        init += 4;
    }
}
#undef MVE_GEMV3_HALF
#undef MVE_GEMV3_K
#undef MVE_GEMV3_KU
#undef MVE_GEMV3_KU1
#undef MVE_GEMV3_P
#undef MVE_GEMV3_UNROLL`)
	add("mve_gemvb3i_s8", []string{"mve_gemv3"}, `/* mve_gemvb3_s8 over three windows interleaved in 16-byte chunks (pixel k's element i at
   xi[(i / 16) * 48 + k * 16 + i % 16]; n % 16 == 0): one pointer streams the three, so
   the asm needs nine core registers, which leaves room for a frame pointer. */
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
#define MVE_GEMV3I_K(wh)                                                                                  \
    do {                                                                                                  \
        const int8_t *xp = xi;                                                                            \
        const int8_t *wp = (wh);                                                                          \
        __asm__ volatile("dls lr, %[cnt]\n"                                                                        \
                "1:\n\tvldrb.u8 q0, [%[xp]], #16\n\tvldrb.u8 q1, [%[xp]], #16\n\t"                         \
                "vldrb.u8 q2, [%[xp]], #16\n\tvldrb.u8 q3, [%[w]], #16\n\t"                               \
                "vmladava.s8 %[a0], q0, q3\n\tvmladava.s8 %[b0], q1, q3\n\tvmladava.s8 %[c0], q2, q3\n\t"     \
                "vldrb.u8 q3, [%[w]], #48\n\t"                                                              \
                "vmladava.s8 %[a1], q0, q3\n\tvmladava.s8 %[b1], q1, q3\n\tvmladava.s8 %[c1], q2, q3\n\t"     \
                "le lr, 1b"                                                                               \
                : [a0] "+Te"(a0), [a1] "+Te"(a1), [b0] "+Te"(b0), [b1] "+Te"(b1), [c0] "+Te"(c0), [c1] "+Te"(c1), \
                  [xp] "+r"(xp), [w] "+r"(wp)                                                             \
                : [cnt] "r"(n >> 4)                                                                       \
                : "q0", "q1", "q2", "q3", "lr", "memory");                                                \
    } while (0)
#else
#define MVE_GEMV3I_K(wh)                                                                                  \
    do {                                                                                                  \
        int32_t i;                                                                                        \
        for (i = 0; i < n; i += 16) {                                                                     \
            MVE_GEMV3_MAC(vldrbq_s8(xi + 3 * i), vldrbq_s8(xi + 3 * i + 16), vldrbq_s8(xi + 3 * i + 32), (wh) + 4 * i); \
        }                                                                                                 \
    } while (0)
#endif
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
/* The k loop unrolled for a constant n of at most 640: the windows streamed by
   one post-incremented pointer, the weights as words at immediate offsets
   (VLDRW reaches 508 bytes: eight steps of sixteen k per asm statement). */
`+mveGemv3KUClang(true)+`#define MVE_GEMV3I_KU(wh)                                                                                 \
    do {                                                                                                  \
        const int8_t *xp = xi;                                                                            \
        MVE_GEMV3I_KU1((wh), n >= 128 ? 8 : n >> 4);                                                      \
        if (n > 128) {                                                                                    \
            MVE_GEMV3I_KU1((wh) + 512, n >= 256 ? 8 : (n - 128) >> 4);                                    \
        }                                                                                                 \
        if (n > 256) {                                                                                    \
            MVE_GEMV3I_KU1((wh) + 1024, n >= 384 ? 8 : (n - 256) >> 4);                                   \
        }                                                                                                 \
        if (n > 384) {                                                                                    \
            MVE_GEMV3I_KU1((wh) + 1536, n >= 512 ? 8 : (n - 384) >> 4);                                   \
        }                                                                                                 \
        if (n > 512) {                                                                                    \
            MVE_GEMV3I_KU1((wh) + 2048, (n - 512) >> 4);                                                  \
        }                                                                                                 \
    } while (0)
#define MVE_GEMV3I_UNROLL (__builtin_constant_p(n) && n > 0 && n <= 640)
#else
#define MVE_GEMV3I_KU(wh) MVE_GEMV3I_K(wh)
#define MVE_GEMV3I_UNROLL 0
#endif
#define MVE_GEMV3I_HALF(h)                                                                                \
    do {                                                                                                  \
        MVE_GEMV3_INIT(h);                                                                                \
        if (MVE_GEMV3I_UNROLL) {                                                                          \
            MVE_GEMV3I_KU(w + 32 * (h));                                                                  \
        } else {                                                                                          \
            MVE_GEMV3I_K(w + 32 * (h));                                                                   \
        }                                                                                                 \
        MVE_GEMV3_STORE(h);                                                                               \
    } while (0)
MVE_INLINE void mve_gemvb3i_s8(int32_t *acc0, int32_t *acc1, int32_t *acc2, const int32_t *init, const int8_t *xi,
                               const int8_t *w, int32_t m, int32_t n)
{
    int32_t j;
    for (j = m >> 2; j > 0; --j) {
        MVE_GEMV3I_HALF(0);
        MVE_GEMV3I_HALF(1);
        w += 4 * n;
        acc0 += 4;
        acc1 += 4;
        acc2 += 4;
        init += 4;
    }
}
#undef MVE_GEMV3I_HALF
#undef MVE_GEMV3I_K
#undef MVE_GEMV3I_KU
#undef MVE_GEMV3I_KU1
#undef MVE_GEMV3I_UNROLL`)
	add("mve_dwconv_s8", []string{"mve_include"}, `/* Depthwise taps, four channels per vector:
   acc[ch] += sum over a < kh, b < kw of x[a*xkh + b*xkw + ch] * w[(a*kw + b)*c + ch].
   3x3 taps are unrolled; only a last partial vector is predicated. */
MVE_INLINE void mve_dwconv_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                                 int32_t kh, int32_t kw, int32_t c)
{
    int32_t ch = 0;
    if (kh == 3 && kw == 3) {
        for (; ch + 4 <= c; ch += 4) {
            const int8_t *xr = x + ch;
            const int8_t *wr = w + ch;
            int32x4_t a = vldrwq_s32(acc + ch);
            int32_t i;
            for (i = 0; i < 3; ++i) {
                a = vaddq_s32(a, vmulq_s32(vldrbq_s32(xr), vldrbq_s32(wr)));
                a = vaddq_s32(a, vmulq_s32(vldrbq_s32(xr + xkw), vldrbq_s32(wr + c)));
                a = vaddq_s32(a, vmulq_s32(vldrbq_s32(xr + 2 * xkw), vldrbq_s32(wr + 2 * c)));
                xr += xkh;
                wr += 3 * c;
            }
            vstrwq_s32(acc + ch, a);
        }
    }
    for (; ch < c; ch += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(c - ch));
        int32x4_t a = vldrwq_z_s32(acc + ch, p);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                const int32x4_t xv = vldrbq_z_s32(x + i * xkh + j * xkw + ch, p);
                const int32x4_t wv = vldrbq_z_s32(w + (i * kw + j) * c + ch, p);
                a = vaddq_s32(a, vmulq_s32(xv, wv));
            }
        }
        mve_st32_tail(acc + ch, a, c - ch);
    }
}`)
	add("mve_requant_s8", []string{"mve_include"}, `/* Four lanes of mve_requant_s8 (see there). */
MVE_INLINE int32x4_t mve_requant_x4(int32x4_t v, int32x4_t m, int32x4_t s, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t r = vminq_s32(s, vdupq_n_s32(0));
    v = vshlq_s32(v, vmaxq_s32(s, vdupq_n_s32(0)));
    v = vqrdmulhq_s32(v, m);
    if (lo < zp) { /* else exact without the fix-up: see mve_requantr_x4 */
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, r), 31));
    }
    v = vrshlq_s32(v, r);
    v = vaddq_n_s32(v, zp);
    return vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* y[i] = clamp(MultiplyByQuantizedMultiplier(acc[i], mult[i], shift[i]) + zp, lo, hi),
   four lanes at a time: VQRDMULH equals SaturatingRoundingDoublingHighMul
   (INT32_MIN * INT32_MIN saturates in both); RoundingDivideByPOT is VRSHL
   after the sign fix-up (x & -right) >> 31. */
MVE_INLINE void mve_requant_s8(int8_t *y, const int32_t *acc, const int32_t *mult, const int32_t *shift,
                                  int32_t n, int32_t zp, int32_t lo, int32_t hi)
{
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vstrbq_s32(y + i, mve_requant_x4(vldrwq_s32(acc + i), vldrwq_s32(mult + i), vldrwq_s32(shift + i), zp, lo, hi));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        mve_st8x4_tail(y + i, mve_requant_x4(vldrwq_z_s32(acc + i, p), vldrwq_z_s32(mult + i, p), vldrwq_z_s32(shift + i, p), zp, lo, hi), n - i);
    }
}`)
	add("mve_requantr_s8", []string{"mve_include"}, `/* mve_requant_s8 for shifts <= 0 (no left shift): shift[i] is -right. */
/* fix = 0 drops RoundingDivideByPOT's sign fix-up. That is exact when the
   clamp's lower bound is at least the zero point (lo >= zp, e.g. a fused
   ReLU): the fix-up changes only negative x, where both roundings give a
   value <= 0, which the clamp maps to lo either way. */
MVE_INLINE int32x4_t mve_requantr_nc_x4(int32x4_t v, int32x4_t m, int32x4_t r, int32_t zp, int32_t fix)
{
    v = vqrdmulhq_s32(v, m);
    if (fix) {
        v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, r), 31));
    }
    return vaddq_n_s32(vrshlq_s32(v, r), zp);
}

MVE_INLINE int32x4_t mve_requantr_x4(int32x4_t v, int32x4_t m, int32x4_t r, int32_t zp, int32x4_t lo, int32x4_t hi, int32_t fix)
{
    return vminq_s32(vmaxq_s32(mve_requantr_nc_x4(v, m, r, zp, fix), lo), hi);
}

MVE_INLINE void mve_requantr_s8(int8_t *y, const int32_t *acc, const int32_t *mult, const int32_t *shift,
                                int32_t n, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t vlo = vdupq_n_s32(lo);
    const int32x4_t vhi = vdupq_n_s32(hi);
    int32_t i = 0;
    if (lo == -128 && hi == 127 && !(lo < zp)) {
        /* The zero point a vector (gcc rebuilt the scalar each time) and the
           clamp a saturating shift. */
        const int32x4_t vz = vdupq_n_s32(zp);
        for (; i + 4 <= n; i += 4) {
            const int32x4_t v = vrshlq_s32(vqrdmulhq_s32(vldrwq_s32(acc + i), vldrwq_s32(mult + i)), vldrwq_s32(shift + i));
            vstrbq_s32(y + i, vshrq_n_s32(vqshlq_n_s32(vaddq_s32(v, vz), 24), 24));
        }
    }
    for (; i + 4 <= n; i += 4) {
        vstrbq_s32(y + i, mve_requantr_x4(vldrwq_s32(acc + i), vldrwq_s32(mult + i), vldrwq_s32(shift + i), zp, vlo, vhi, lo < zp));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        mve_st8x4_tail(y + i, mve_requantr_x4(vldrwq_z_s32(acc + i, p), vldrwq_z_s32(mult + i, p), vldrwq_z_s32(shift + i, p), zp, vlo, vhi, lo < zp), n - i);
    }
}`)
	add("mve_dwconvrq_s8", []string{"mve_requant_s8", "mve_requantr_s8"}, `/* One output pixel of an int8 depthwise conv, eight channels per step:
   y[ch] = clamp(requant(bias[ch] + sum over taps of x[a*xkh + b*xkw + ch] * w[(a*kw + b)*c + ch],
   mult[ch], shift[ch]) + zp, lo, hi). Channels are widened to 16 bits; VMULLB
   and VMULLT give the even and odd channels' 32-bit products, so the even and
   odd accumulators (bias, multipliers and shifts loaded deinterleaved by VLD2) are
   requantized apart and VMOVNB/VMOVNT put them back in order. c % 4 == 0: a
   last four channels (c % 8 == 4, as a pruned layer can have) go in 32-bit
   lanes, loaded widened and in order. */
MVE_INLINE void mve_dwconvrq_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, const int8_t *w,
                                int32_t kh, int32_t kw, int32_t c, const int32_t *bias, const int32_t *mult,
                                const int32_t *shift, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t vlo = vdupq_n_s32(lo);
    const int32x4_t vhi = vdupq_n_s32(hi);
    int32_t ch;
    for (ch = 0; ch + 8 <= c; ch += 8) {
        const int32x4x2_t b = vld2q_s32(bias + ch);
        int32x4_t ae = b.val[0];
        int32x4_t ao = b.val[1];
        int16x8_t o;
        int32_t i;
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
        if (kh == 3 && kw == 3 && __builtin_constant_p(xkw) && __builtin_constant_p(xkh) && __builtin_constant_p(c) &&
            xkw > 0 && xkw <= 127 && c > 0 && c <= 127 && xkh - 2 * xkw > 0 && xkh - 2 * xkw <= 4095) {
            /* The nine taps in one asm statement: post-incremented loads by
               the (constant) pixel and channel strides, one add per kernel
               row, no loop; gcc's own code for the loop over the rows moves
               the accumulators between Q registers. The widening loads take
               low base registers ("l"). */
            const int8_t *xp = x + ch;
            const int8_t *wp = w + ch;
            /* One tap: x at xp (then xp += post), w at wp (then wp += c). */
#define MVE_DW_TAP(post, wpost) "vldrb.s16 q0, [%[xp]]" post "\n\tvldrb.s16 q1, [%[wp]]" wpost "\n\t" \
    "vmullb.s16 q2, q0, q1\n\tvmullt.s16 q3, q0, q1\n\tvadd.i32 %q[ae], %q[ae], q2\n\tvadd.i32 %q[ao], %q[ao], q3\n\t"
#define MVE_DW_ROW MVE_DW_TAP(", %[xkw]", ", %[c]") MVE_DW_TAP(", %[xkw]", ", %[c]") MVE_DW_TAP("", ", %[c]")
            __asm__ volatile(MVE_DW_ROW "add %[xp], %[xp], %[xrow]\n\t" MVE_DW_ROW "add %[xp], %[xp], %[xrow]\n\t"
                    MVE_DW_TAP(", %[xkw]", ", %[c]") MVE_DW_TAP(", %[xkw]", ", %[c]") MVE_DW_TAP("", "")
                    : [ae] "+w"(ae), [ao] "+w"(ao), [xp] "+l"(xp), [wp] "+l"(wp)
                    : [xkw] MCUGEN_ASM_IMM(xkw), [c] MCUGEN_ASM_IMM(c), [xrow] MCUGEN_ASM_IMM(xkh - 2 * xkw)
                    : "q0", "q1", "q2", "q3", "memory");
#undef MVE_DW_ROW
#undef MVE_DW_TAP
        } else
#endif
        if (kh == 3 && kw == 3) {
            /* The 3x3 taps with constant offsets (a loop over the rows only). */
            const int8_t *xr = x + ch;
            const int8_t *wr = w + ch;
            for (i = 0; i < 3; ++i, xr += xkh, wr += 3 * c) {
                int16x8_t xv = vldrbq_s16(xr);
                int16x8_t wv = vldrbq_s16(wr);
                ae = vaddq_s32(ae, vmullbq_int_s16(xv, wv));
                ao = vaddq_s32(ao, vmulltq_int_s16(xv, wv));
                xv = vldrbq_s16(xr + xkw);
                wv = vldrbq_s16(wr + c);
                ae = vaddq_s32(ae, vmullbq_int_s16(xv, wv));
                ao = vaddq_s32(ao, vmulltq_int_s16(xv, wv));
                xv = vldrbq_s16(xr + 2 * xkw);
                wv = vldrbq_s16(wr + 2 * c);
                ae = vaddq_s32(ae, vmullbq_int_s16(xv, wv));
                ao = vaddq_s32(ao, vmulltq_int_s16(xv, wv));
            }
        } else {
            for (i = 0; i < kh; ++i) {
                const int8_t *xr = x + i * xkh + ch;
                const int8_t *wr = w + i * kw * c + ch;
                int32_t j;
                for (j = 0; j < kw; ++j) {
                    const int16x8_t xv = vldrbq_s16(xr + j * xkw);
                    const int16x8_t wv = vldrbq_s16(wr + j * c);
                    ae = vaddq_s32(ae, vmullbq_int_s16(xv, wv));
                    ao = vaddq_s32(ao, vmulltq_int_s16(xv, wv));
                }
            }
        }
        {
            const int32x4x2_t m = vld2q_s32(mult + ch);
            const int32x4x2_t s = vld2q_s32(shift + ch);
            if (left) {
                ae = mve_requant_x4(ae, m.val[0], s.val[0], zp, lo, hi);
                ao = mve_requant_x4(ao, m.val[1], s.val[1], zp, lo, hi);
            } else if (lo == -128 && hi == 127) {
                /* The clamp to the int8 range as a saturating shift (no
                   constant vectors to keep in Q registers). */
                ae = vshrq_n_s32(vqshlq_n_s32(mve_requantr_nc_x4(ae, m.val[0], s.val[0], zp, lo < zp), 24), 24);
                ao = vshrq_n_s32(vqshlq_n_s32(mve_requantr_nc_x4(ao, m.val[1], s.val[1], zp, lo < zp), 24), 24);
            } else {
                ae = vminq_s32(vmaxq_s32(mve_requantr_nc_x4(ae, m.val[0], s.val[0], zp, lo < zp), vlo), vhi);
                ao = vminq_s32(vmaxq_s32(mve_requantr_nc_x4(ao, m.val[1], s.val[1], zp, lo < zp), vlo), vhi);
            }
        }
        o = vreinterpretq_s16_s32(ae);
        o = vmovnbq_s32(o, ae);
        o = vmovntq_s32(o, ao);
        vstrbq_s16(y + ch, o);
    }
    if (ch < c) {
        int32x4_t a = vldrwq_s32(bias + ch);
        const int32x4_t m = vldrwq_s32(mult + ch);
        const int32x4_t s = vldrwq_s32(shift + ch);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            int32_t j;
            for (j = 0; j < kw; ++j) {
                a = vaddq_s32(a, vmulq_s32(vldrbq_s32(x + i * xkh + j * xkw + ch), vldrbq_s32(w + (i * kw + j) * c + ch)));
            }
        }
        if (left) {
            a = mve_requant_x4(a, m, s, zp, lo, hi);
        } else {
            a = vminq_s32(vmaxq_s32(mve_requantr_nc_x4(a, m, s, zp, lo < zp), vlo), vhi);
        }
        vstrbq_s32(y + ch, a);
    }
}`)
	add("mve_iota", []string{"mve_include"}, `/* 0, 1, 2, ... as vectors, loaded from tables: with VIDUP's 0, 1, 2, 3 gcc 12 at -O1
   miscompiled mve_dwl3_s8, writing one output in four on alternate rows of a 3x3
   depthwise layer (review, session 51; -fno-tree-ccp avoided it too, so a compiler
   bug, it seems). */
static const uint16_t mve_iota_u16[8] __attribute__((aligned(16))) = {0, 1, 2, 3, 4, 5, 6, 7};
static const uint32_t mve_iota_u32[4] __attribute__((aligned(16))) = {0, 1, 2, 3};`)
	add("mve_dwplanes_s8", []string{"mve_include", "mve_iota"}, `/* One input line laid out as channel planes (tir/mve_dwlanes.go):
   dst[ch*cs + col(q)] = x[(q - padl)*xs + ch] where 0 <= q - padl < n, else zp, for
   q < nq and ch < c (a multiple of 4); col(q) = q, or with ph the even columns first:
   (q % 2)*(rs / 2) + q / 2. A pixel's channels go eight at a time to eight planes in
   one byte scatter (7*cs < 65536). */
/* cnt pixels x, x + xs, ... to the plane columns d, d + 1, ...: eight channels of a
   pixel per byte scatter (offsets o8: 0, cs, ..., 7cs), a last four with o4. */
MVE_INLINE void mve_dwplanes_run(uint8_t *d, const uint8_t *x, int32_t cnt, int32_t xs, int32_t c, int32_t cs,
                                 uint16x8_t o8, uint32x4_t o4)
{
    for (; cnt > 0; --cnt, ++d, x += xs) {
        int32_t ch = 0;
        for (; ch + 8 <= c; ch += 8) {
            vstrbq_scatter_offset_u16(d + ch * cs, o8, vldrbq_u16(x + ch));
        }
        if (ch < c) {
            vstrbq_scatter_offset_u32(d + ch * cs, o4, vldrbq_u32(x + ch));
        }
    }
}

MVE_INLINE void mve_dwplanes_s8(int8_t *dst, const int8_t *x, int32_t n, int32_t xs, int32_t c, int32_t cs,
                                int32_t rs, int32_t nq, int32_t padl, int32_t ph, int32_t zp)
{
    const uint16x8_t o8 = vmulq_n_u16(vldrhq_u16(mve_iota_u16), (uint16_t)cs);
    const uint32x4_t o4 = vmulq_n_u32(vldrwq_u32(mve_iota_u32), (uint32_t)cs);
    uint8_t *d = (uint8_t *)dst;
    int32_t q;
    const uint16x8_t z = vdupq_n_u16((uint16_t)(uint8_t)zp);
    /* The columns outside the line (before it, after it): the zero point. */
    for (q = padl > 0 ? 0 : padl + n; q < nq; q = q + 1 == padl ? padl + n : q + 1) {
        uint8_t *e = d + (ph ? (q & 1) * (rs >> 1) + (q >> 1) : q);
        int32_t ch = 0;
        for (; ch + 8 <= c; ch += 8) {
            vstrbq_scatter_offset_u16(e + ch * cs, o8, z);
        }
        if (ch < c) {
            vstrbq_scatter_offset_u32(e + ch * cs, o4, vreinterpretq_u32_u16(z));
        }
    }
    /* The line's pixels, in column order (ph: the even columns, then the odd). */
    if (!ph) {
        mve_dwplanes_run(d + padl, (const uint8_t *)x, n, xs, c, cs, o8, o4);
    } else {
        const int32_t i0 = padl & 1; /* the first pixel in an even column */
        mve_dwplanes_run(d + (padl + i0) / 2, (const uint8_t *)x + i0 * xs, (n - i0 + 1) / 2, 2 * xs, c, cs, o8, o4);
        mve_dwplanes_run(d + (rs >> 1) + (padl + 1 - i0) / 2, (const uint8_t *)x + (1 - i0) * xs, (n - 1 + i0 + 1) / 2,
                         2 * xs, c, cs, o8, o4);
    }
}`)
	add("mve_dwl3_s8", []string{"mve_requant_s8", "mve_requantr_s8", "mve_iota"}, `/* Four outputs of mve_dwl3_s8 at the plane pointer r: nine widening loads and VMLAs by the weights, requantized. */
#define MVE_DWL3_VEC() mve_dwl3_rq(vmlaq_n_s32(vmlaq_n_s32(vmlaq_n_s32(vmlaq_n_s32(vmlaq_n_s32(vmlaq_n_s32(vmlaq_n_s32( \
    vmlaq_n_s32(vmlaq_n_s32(b, vldrbq_s32(r + s0), w0), vldrbq_s32(r + s0 + t1), w1), vldrbq_s32(r + s0 + t2), w2), \
    vldrbq_s32(r + s1), w3), vldrbq_s32(r + s1 + t1), w4), vldrbq_s32(r + s1 + t2), w5), vldrbq_s32(r + s2), w6), \
    vldrbq_s32(r + s2 + t1), w7), vldrbq_s32(r + s2 + t2), w8), m, s, left, zp, lo, hi)

MVE_INLINE int32x4_t mve_dwl3_rq(int32x4_t a, int32x4_t m, int32x4_t s, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    if (left) {
        return mve_requant_x4(a, m, s, zp, lo, hi);
    }
    if (lo == -128 && hi == 127) {
        return vshrq_n_s32(vqshlq_n_s32(mve_requantr_nc_x4(a, m, s, zp, lo < zp), 24), 24);
    }
    return vminq_s32(vmaxq_s32(mve_requantr_nc_x4(a, m, s, zp, lo < zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* One output line of a 3x3 depthwise conv, four adjacent outputs of one channel
   per vector (tir/mve_dwlanes.go): for ch < c and j < ow, with P = p + 12*ch and the
   channel's plane rows r_k = q + ch*cs + s_k (laid out by mve_dwplanes_s8),
   acc = P[9] + sum over k, t < 3 of r_k[col(j*stride + t)] * P[3k + t] and
   y[j*ys + ch] = clamp(requant(acc, P[10], P[11]) + zp, lo, hi). Each tap is one
   widening load and one VMLA by the weight; the outputs go back to their pixels
   in one byte scatter. */
MVE_INLINE void mve_dwl3_s8(int8_t *y, const int8_t *q, int32_t s0, int32_t s1, int32_t s2, int32_t cs, int32_t rs,
                            const int32_t *p, int32_t c, int32_t ow, int32_t ys, int32_t stride, int32_t left,
                            int32_t zp, int32_t lo, int32_t hi)
{
    const uint32x4_t off = vmulq_n_u32(vldrwq_u32(mve_iota_u32), (uint32_t)ys);
    const int32_t t1 = stride == 2 ? rs / 2 : 1;
    const int32_t t2 = stride == 2 ? 1 : 2;
    int32_t ch;
    for (ch = 0; ch < c; ++ch, p += 12, q += cs) {
        const int32_t w0 = p[0];
        const int32_t w1 = p[1];
        const int32_t w2 = p[2];
        const int32_t w3 = p[3];
        const int32_t w4 = p[4];
        const int32_t w5 = p[5];
        const int32_t w6 = p[6];
        const int32_t w7 = p[7];
        const int32_t w8 = p[8];
        const int32x4_t b = vdupq_n_s32(p[9]);
        const int32x4_t m = vdupq_n_s32(p[10]);
        const int32x4_t s = vdupq_n_s32(p[11]);
        const int8_t *r = q;
        int8_t *o = y + ch;
        int32_t k;
#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)
        if (__builtin_constant_p(s0) && __builtin_constant_p(s1) && __builtin_constant_p(s2) && __builtin_constant_p(t1) &&
            __builtin_constant_p(t2) && __builtin_constant_p(ys) && __builtin_constant_p(ow) && s0 >= 0 && s1 >= 0 &&
            s2 >= 0 && s0 + t1 <= 127 && s1 + t1 <= 127 && s2 + t1 <= 127 && s0 + t2 <= 127 && s1 + t2 <= 127 &&
            s2 + t2 <= 127 && (s0 == 0 || s1 == 0 || s2 == 0) && ys > 0 && 4 * ys <= 4095 && ow > 0 && !left && lo == -128 && hi == 127 && zp == -128) {
            /* Each vector in two asm statements (gcc 12 cannot give an M55 asm
               statement more than about nine core registers): the taps at
               constant offsets of one (low) pointer, the weights in registers
               (gcc's own code reloaded some from the stack). The second takes the
               kernel row in ring slot 0, whose first tap, at offset 0, comes last
               and steps the pointer (a post-increment). */
            const int32_t zc = s0 == 0 ? 0 : s1 == 0 ? 1 : 2;
            const int32_t za = zc == 0 ? 1 : 0;
            const int32_t zb = zc == 2 ? 1 : 2;
#define MVE_DWL3_S(k) ((k) == 0 ? s0 : (k) == 1 ? s1 : s2)
            const int32_t *const pa = p + 3 * za;
            const int32_t *const pb = p + 3 * zb;
            const int32_t *const pc = p + 3 * zc;
            const int32x4_t v0 = vdupq_n_s32(pa[0]);
            const int32x4_t z = vdupq_n_s32(zp);
            const int32_t bi = p[9];
            const int32_t a1 = pa[1], a2 = pa[2], b0 = pb[0], b1 = pb[1], b2 = pb[2];
            const int32_t c0 = pc[0], c1 = pc[1], c2 = pc[2];
            const int8_t *rr = r;
            int8_t *oo = o;
            /* Two kernel rows into acc, the first tap a VMLAS (x * w + bias). */
#define MVE_DWL3_AB(acc, rr) \
    __asm__ volatile("vldrb.s32 %q[a], [%[r], %[oa0]]\n\tvmlas.s32 %q[a], %q[v0], %[bi]\n\t" \
                     "vldrb.s32 q1, [%[r], %[oa1]]\n\tvmla.s32 %q[a], q1, %[a1]\n\t" \
                     "vldrb.s32 q1, [%[r], %[oa2]]\n\tvmla.s32 %q[a], q1, %[a2]\n\t" \
                     "vldrb.s32 q1, [%[r], %[ob0]]\n\tvmla.s32 %q[a], q1, %[b0]\n\t" \
                     "vldrb.s32 q1, [%[r], %[ob1]]\n\tvmla.s32 %q[a], q1, %[b1]\n\t" \
                     "vldrb.s32 q1, [%[r], %[ob2]]\n\tvmla.s32 %q[a], q1, %[b2]" \
                     : [a] "=&w"(acc) \
                     : [r] "l"(rr), [bi] "r"(bi), [a1] "r"(a1), [a2] "r"(a2), [b0] "r"(b0), [b1] "r"(b1), \
                       [b2] "r"(b2), [v0] "w"(v0), [oa0] MCUGEN_ASM_IMM(MVE_DWL3_S(za)), [oa1] MCUGEN_ASM_IMM(MVE_DWL3_S(za) + t1), \
                       [oa2] MCUGEN_ASM_IMM(MVE_DWL3_S(za) + t2), [ob0] MCUGEN_ASM_IMM(MVE_DWL3_S(zb)), [ob1] MCUGEN_ASM_IMM(MVE_DWL3_S(zb) + t1), \
                       [ob2] MCUGEN_ASM_IMM(MVE_DWL3_S(zb) + t2) \
                     : "q1", "memory")
            /* The third row (slot 0) and the requantization, clamped to the int8 range. */
#define MVE_DWL3_C(post) "vldrb.s32 q1, [%[r], %[t1]]\n\tvmla.s32 %q[a], q1, %[c1]\n\t" \
                         "vldrb.s32 q1, [%[r], %[t2]]\n\tvmla.s32 %q[a], q1, %[c2]\n\t" \
                         "vldrb.s32 q1, [%[r]]" post "\n\tvmla.s32 %q[a], q1, %[c0]\n\t" \
                         "vqrdmulh.s32 %q[a], %q[a], %q[m]\n\tvrshl.s32 %q[a], %q[a], %q[s]\n\t" \
                         "vadd.i32 %q[a], %q[a], %q[z]\n\tvqshl.s32 %q[a], %q[a], #24\n\tvshr.s32 %q[a], %q[a], #24\n\t"
#define MVE_DWL3_C_IN [c0] "r"(c0), [c1] "r"(c1), [c2] "r"(c2), [m] "w"(m), [s] "w"(s), [z] "w"(z), \
                      [t1] MCUGEN_ASM_IMM(t1), [t2] MCUGEN_ASM_IMM(t2)
            int8_t *const oend = oo + ow / 4 * 4 * ys;
            while (oo != oend) {
                int32x4_t acc;
                MVE_DWL3_AB(acc, rr);
                __asm__ volatile(MVE_DWL3_C(", #4") "vstrb.32 %q[a], [%[o], %q[off]]\n\tadd %[o], %[o], %[ys4]"
                                 : [a] "+w"(acc), [r] "+l"(rr), [o] "+r"(oo)
                                 : MVE_DWL3_C_IN, [off] "w"(off), [ys4] MCUGEN_ASM_IMM(4 * ys)
                                 : "q1", "memory");
            }
            if (ow % 4 != 0) {
                /* The last outputs through a vector on the stack. */
                int8_t t[4];
                int32_t i;
                int32x4_t acc;
                MVE_DWL3_AB(acc, rr);
                __asm__ volatile(MVE_DWL3_C("") "vstrb.32 %q[a], [%[o]]"
                                 : [a] "+w"(acc)
                                 : [r] "l"(rr), [o] "l"(t), MVE_DWL3_C_IN
                                 : "q1", "memory");
                for (i = 0; i < ow % 4; ++i) {
                    oo[i * ys] = t[i];
                }
            }
#undef MVE_DWL3_S
#undef MVE_DWL3_AB
#undef MVE_DWL3_C
#undef MVE_DWL3_C_IN
            continue;
        }
#endif
        /* The whole vectors, then the tail's lanes. */
        for (k = ow / 4; k > 0; --k, r += 4, o += 4 * ys) {
            vstrbq_scatter_offset_s32(o, off, MVE_DWL3_VEC());
        }
        if (ow % 4 != 0) {
            /* The tail's lanes by a predicated scatter to their pixels: through a vector on
               the stack read back a byte at a time, gcc 12.2 at -O2 moved the reads above the
               store where the kernel was inlined with constant arguments (review, session 54:
               wrong outputs on one-line maps of 4 or 8 channels). */
            vstrbq_scatter_offset_p_s32(o, off, MVE_DWL3_VEC(), vctp32q((uint32_t)(ow % 4)));
        }
    }
}`)
	add("mve_pwrq_s8", []string{"mve_requant_s8", "mve_requantr_s8"}, `/* Four output channels of mve_pwrq_s8 (multipliers m, shifts s) requantized and stored at y. */
MVE_INLINE void mve_pwrq_out_s8(int8_t *y, int32x4_t a, int32x4_t m, int32x4_t s, int32_t left, int32_t zp, int32_t lo,
                                int32_t hi)
{
    if (left) {
        a = mve_requant_x4(a, m, s, zp, lo, hi);
    } else if (lo == -128 && hi == 127) {
        /* The clamp to the int8 range as a saturating shift. */
        a = vshrq_n_s32(vqshlq_n_s32(mve_requantr_nc_x4(a, m, s, zp, lo < zp), 24), 24);
    } else {
        a = vminq_s32(vmaxq_s32(mve_requantr_nc_x4(a, m, s, zp, lo < zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
    }
    vstrbq_s32(y, a);
}

/* Four accumulators in one vector, through memory: two STRDs and a VLDRW.
   (gcc's own lane inserts take five instructions and a zeroed vector; the
   dual-lane VMOV from core registers is left alone, as QEMU 7.2 and the
   assemblers disagree on which register goes to which lane.) */
MVE_INLINE int32x4_t mve_vec4_s32(int32_t a0, int32_t a1, int32_t a2, int32_t a3)
{
    int32_t t[4];
    t[0] = a0;
    t[1] = a1;
    t[2] = a2;
    t[3] = a3;
    return vldrwq_s32(t);
}

/* One output pixel of a short reduction (n <= 16):
   y[j] = clamp(requant(bias[j] + sum over i < n of x[i] * w[16*j + i], mult[j], shift[j]) + zp, lo, hi)
   for j < m (a multiple of 4; each weight row padded to sixteen bytes). The
   input is one predicated vector; each output is one VMLADAV, and four
   outputs are requantized together in a vector. */
MVE_INLINE void mve_pwrq_s8(int8_t *y, const int8_t *x, const int8_t *w, int32_t m, int32_t n, const int32_t *bias,
                            const int32_t *mult, const int32_t *shift, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    const int8x16_t xv = vldrbq_z_s8(x, vctp8q((uint32_t)n));
    int32_t j;
    for (j = 0; j < m; j += 4, w += 64) {
        const int32x4_t a = mve_vec4_s32(vmladavq_s8(xv, vldrbq_s8(w)), vmladavq_s8(xv, vldrbq_s8(w + 16)),
                                         vmladavq_s8(xv, vldrbq_s8(w + 32)), vmladavq_s8(xv, vldrbq_s8(w + 48)));
        mve_pwrq_out_s8(y + j, vaddq_s32(a, vldrwq_s32(bias + j)), vldrwq_s32(mult + j), vldrwq_s32(shift + j), left, zp, lo, hi);
    }
}`)
	add("mve_pwrq2_s8", []string{"mve_pwrq_s8"}, `/* mve_pwrq_s8 for two pixels (x0 into y0, x1 into y1): each weight vector,
   bias, multiplier and shift is loaded once for both. */
MVE_INLINE void mve_pwrq2_s8(int8_t *y0, int8_t *y1, const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t m,
                             int32_t n, const int32_t *bias, const int32_t *mult, const int32_t *shift, int32_t left,
                             int32_t zp, int32_t lo, int32_t hi)
{
    const mve_pred16_t p = vctp8q((uint32_t)n);
    const int8x16_t xv = vldrbq_z_s8(x0, p);
    const int8x16_t xu = vldrbq_z_s8(x1, p);
    int32_t j;
    for (j = 0; j < m; j += 4, w += 64) {
        const int8x16_t w0 = vldrbq_s8(w);
        const int8x16_t w1 = vldrbq_s8(w + 16);
        const int8x16_t w2 = vldrbq_s8(w + 32);
        const int8x16_t w3 = vldrbq_s8(w + 48);
        const int32x4_t b = vldrwq_s32(bias + j);
        const int32x4_t mv = vldrwq_s32(mult + j);
        const int32x4_t sv = vldrwq_s32(shift + j);
        /* Both pixels' sums in one array, then two VLDRWs (two mve_vec4_s32
           calls shared one stack slot, and gcc copied vectors in and out of it). */
        int32_t t[8];
        t[0] = vmladavq_s8(xv, w0);
        t[1] = vmladavq_s8(xv, w1);
        t[2] = vmladavq_s8(xv, w2);
        t[3] = vmladavq_s8(xv, w3);
        t[4] = vmladavq_s8(xu, w0);
        t[5] = vmladavq_s8(xu, w1);
        t[6] = vmladavq_s8(xu, w2);
        t[7] = vmladavq_s8(xu, w3);
        mve_pwrq_out_s8(y0 + j, vaddq_s32(vldrwq_s32(t), b), mv, sv, left, zp, lo, hi);
        mve_pwrq_out_s8(y1 + j, vaddq_s32(vldrwq_s32(t + 4), b), mv, sv, left, zp, lo, hi);
    }
}`)
	add("mve_sumpool_s8", []string{"mve_include"}, `/* acc[ch] += sum over a < kh, b < kw of x[a*xkh + b*xkw + ch], four channels per vector. */
MVE_INLINE void mve_sumpool_s8(int32_t *acc, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c)
{
    int32_t ch;
    for (ch = 0; ch < c; ch += 4) {
        const mve_pred16_t p = vctp32q((uint32_t)(c - ch));
        int32x4_t a = vldrwq_z_s32(acc + ch, p);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            const int8_t *xr = x + i * xkh + ch;
            int32_t j;
            for (j = 0; j < kw; ++j) {
                a = vaddq_s32(a, vldrbq_z_s32(xr + j * xkw, p));
            }
        }
        mve_st32_tail(acc + ch, a, c - ch);
    }
}`)
	add("mve_maxpool_s8", []string{"mve_include"}, `/* y[ch] = min(max(m, lo), hi) with m the maximum over a < kh, b < kw of x[a*xkh + b*xkw + ch],
   sixteen channels per vector (the last one predicated). */
MVE_INLINE void mve_maxpool_s8(int8_t *y, const int8_t *x, int32_t xkh, int32_t xkw, int32_t kh, int32_t kw, int32_t c, int32_t lo, int32_t hi)
{
    int32_t ch;
    for (ch = 0; ch < c; ch += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(c - ch));
        int8x16_t m = vldrbq_z_s8(x + ch, p);
        int32_t i;
        for (i = 0; i < kh; ++i) {
            const int8_t *xr = x + i * xkh + ch;
            int32_t j;
            for (j = 0; j < kw; ++j) {
                m = vmaxq_s8(m, vldrbq_z_s8(xr + j * xkw, p));
            }
        }
        m = vminq_s8(vmaxq_s8(m, vdupq_n_s8((int8_t)lo)), vdupq_n_s8((int8_t)hi));
        vstrbq_p_s8(y + ch, m, p);
    }
}`)
	add("mve_copy_s8", []string{"mve_include"}, `/* dst[i] = src[i], i < n: whole vectors, the tail with memcpy (constant
   after inlining: a few core loads and stores; see mve_st8x4_tail). */
MVE_INLINE void mve_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vstrbq_s8(dst + i, vldrbq_s8(src + i));
    }
    if (i < n) {
        memcpy(dst + i, src + i, (size_t)(n - i));
    }
}`)
	add("mve_fill_s8", []string{"mve_include"}, `/* dst[i] = v, i < n (as mve_copy_s8). */
MVE_INLINE void mve_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vstrbq_s8(dst + i, vdupq_n_s8((int8_t)v));
    }
    if (i < n) {
        memset(dst + i, v, (size_t)(n - i));
    }
}`)
	add("mve_copy_s32", []string{"mve_include"}, `MVE_INLINE void mve_copy_s32(int32_t *dst, const int32_t *src, int32_t n)
{
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vstrwq_s32(dst + i, vldrwq_s32(src + i));
    }
    if (i < n) {
        memcpy(dst + i, src + i, 4 * (size_t)(n - i));
    }
}`)
}

// mveGemv3KUClang is MVE_GEMV3_KU1 (interleaved: MVE_GEMV3I_KU1) with every
// step count (1 to 8) written out as a statement of its own, the offsets as
// numbers; the constant count picks one. The steps were once a .rept with
// offsets in .set symbols: clang's assembler resolves a .set symbol's uses
// at the end, not where they are, and neither compiler's size estimate of an
// asm statement sees a .rept's repeats (ResNet on the M55 under clang: a
// low-overhead loop's LE out of range at -O1 and -Oz, one output wrong at
// -O3; IC under gcc -fPIC, and a 7×7 layer over 7 channels under plain gcc
// -O2, session 57's review: a literal pool out of a load's reach, "offset
// out of range"). So every compiler takes this form: IC on the M55 2,354,991
// → 2,356,944 instructions with gcc (+0.08%); blank lines that made the
// .rept's size estimate right cost more (+0.23%).
func mveGemv3KUClang(interleaved bool) string {
	var b strings.Builder
	name, params := "MVE_GEMV3_KU1", "(xa, xb, xc, wq, cnt)"
	if interleaved {
		name, params = "MVE_GEMV3I_KU1", "(wq, cnt)"
	}
	line := func(f string, a ...any) {
		fmt.Fprintf(&b, "%-104s\\\n", fmt.Sprintf(f, a...))
	}
	b.WriteString("/* Each step count written out, no .rept or .set (emitc.mveGemv3KUClang). */\n")
	b.WriteString("#define " + name + params + " \\\n")
	line("    do {")
	line("        switch (cnt) {")
	for k := 1; k <= 8; k++ {
		line("        case %d:", k)
		var steps []string
		for i := 0; i < k; i++ {
			if interleaved {
				steps = append(steps, "vldrb.u8 q0, [%[xp]], #16\\n\\tvldrb.u8 q1, [%[xp]], #16\\n\\tvldrb.u8 q2, [%[xp]], #16\\n\\t")
			} else {
				steps = append(steps, fmt.Sprintf("vldrb.u8 q0, [%%[xp], #%[1]d]\\n\\tvldrb.u8 q1, [%%[yp], #%[1]d]\\n\\tvldrb.u8 q2, [%%[zp], #%[1]d]\\n\\t", 16*i))
			}
			steps[i] += fmt.Sprintf("vldrw.u32 q3, [%%[w], #%d]\\n\\tvmladava.s8 %%[a0], q0, q3\\n\\tvmladava.s8 %%[b0], q1, q3\\n\\tvmladava.s8 %%[c0], q2, q3\\n\\t"+
				"vldrw.u32 q3, [%%[w], #%d]\\n\\tvmladava.s8 %%[a1], q0, q3\\n\\tvmladava.s8 %%[b1], q1, q3\\n\\tvmladava.s8 %%[c1], q2, q3", 64*i, 64*i+16)
		}
		line("            __asm__ volatile(")
		for i, st := range steps {
			sep := "\\n\\t"
			if i == len(steps)-1 {
				sep = ""
			}
			line("                \"%s%s\"", st, sep)
		}
		if interleaved {
			line("                : [a0] \"+Te\"(a0), [a1] \"+Te\"(a1), [b0] \"+Te\"(b0), [b1] \"+Te\"(b1), [c0] \"+Te\"(c0), [c1] \"+Te\"(c1), [xp] \"+r\"(xp)")
			line("                : [w] \"r\"(wq)")
		} else {
			line("                : [a0] \"+Te\"(a0), [a1] \"+Te\"(a1), [b0] \"+Te\"(b0), [b1] \"+Te\"(b1), [c0] \"+Te\"(c0), [c1] \"+Te\"(c1)")
			line("                : [xp] MVE_GEMV3_P(xa), [yp] MVE_GEMV3_P(xb), [zp] MVE_GEMV3_P(xc), [w] MVE_GEMV3_P(wq)")
		}
		line("                : \"q0\", \"q1\", \"q2\", \"q3\", \"memory\");")
		line("            break;")
	}
	line("        default:")
	line("            break;")
	line("        }")
	b.WriteString("    } while (0)\n")
	return b.String()
}
