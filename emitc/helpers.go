package emitc

import "sync"

// helperText is the C of each helper function the kernels may call, with the
// helpers it needs itself. Each is the C spelling of a tir intrinsic (see
// tir/fixedpoint.go for the same maths in Go) or of min/max.
var helperText = map[string]struct {
	deps []string
	code string
}{
	"min_i32": {nil, `static inline int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }`},
	// Plain int64 arithmetic modulo 2^64 (tir.IntrWrapAdd64 ...): no signed overflow.
	"wrap_add_s64": {nil, `static inline int64_t wrap_add_s64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }`},
	"wrap_sub_s64": {nil, `static inline int64_t wrap_sub_s64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }`},
	"wrap_mul_s64": {nil, `static inline int64_t wrap_mul_s64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }`},
	"max_i32":      {nil, `static inline int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }`},
	"min_i64":      {nil, `static inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }`},
	"max_i64":      {nil, `static inline int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }`},
	"min_f32":      {nil, `static inline float min_f32(float a, float b) { return a < b ? a : b; }`},
	"max_f32":      {nil, `static inline float max_f32(float a, float b) { return a > b ? a : b; }`},
	"srdhm": {nil, `/* gemmlowp SaturatingRoundingDoublingHighMul. */
static inline int32_t srdhm(int32_t a, int32_t b)
{
    const int64_t ab = (int64_t)a * (int64_t)b;
    const int64_t v = ab + (ab >= 0 ? (INT64_C(1) << 30) : (1 - (INT64_C(1) << 30)));
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    /* v / 2^31, truncating toward zero */
    return (int32_t)((v + (v < 0 ? (INT64_C(1) << 31) - 1 : 0)) >> 31);
}`},
	"rdivpot": {nil, `/* gemmlowp RoundingDivideByPOT. */
static inline int32_t rdivpot(int32_t x, int32_t exponent)
{
    const int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}`},
	"mul_round_pos": {nil, `/* rdivpot(srdhm(a, b), s) for a, b >= 0 and s in [0, 31] (tir.IntrMulRoundPos): on
   non-negative values both roundings are half up. h < 2^31, so h + 2^(s-1) fits 32 bits unsigned.
   (A softmax whose shift passes 31 takes a branch of its own a row: tir/compute_pool.go.) */
static inline int32_t mul_round_pos(int32_t a, int32_t b, int32_t s)
{
    const uint32_t h = (uint32_t)(((int64_t)a * (int64_t)b + (INT64_C(1) << 30)) >> 31);
    return s > 0 ? (int32_t)((h + (UINT32_C(1) << (s - 1))) >> s) : (int32_t)h;
}`},
	"requant": {[]string{"srdhm", "rdivpot"}, `/* TFLite MultiplyByQuantizedMultiplier. */
static inline int32_t requant(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return rdivpot(srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}`},
	"requant64": {nil, `/* TFLite MultiplyByQuantizedMultiplier for a 64-bit accumulator (its 16x8 layers): the
   multiplier rounded to 16 bits, then one rounding, half up; |x| < 2^47, shift < 8. */
static inline int32_t requant64(int64_t x, int32_t multiplier, int32_t shift)
{
    const int64_t m16 = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + 32768) >> 16 : 0x7FFF;
    const int32_t total = 15 - shift;
    return (int32_t)((x * m16 + ((int64_t)1 << (total - 1))) >> total);
}`},
	"dot_s16s8": {nil, `/* Sum over i < n of x[i] * w[i] in 64 bits (tir.IntrDotS16S8), w's groups of four stored in
   the order 0, 2, 1, 3 and its tail of n % 4 in order. With the DSP extension a group is one
   word that SXTB16 splits into the pairs (w0, w1) and (w2, w3), against x's pairs, by two
   SMLALDs; elsewhere a loop over the same layout. */
static inline int64_t dot_s16s8(const int16_t *x, const int8_t *w, int32_t n)
{
    int64_t acc = 0;
    int32_t i = 0;
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(MCUGEN_NO_ASM) && !defined(__ARM_BIG_ENDIAN)
    for (; i + 8 <= n; i += 8) {
        int32_t wa, wb, x01, x23, x45, x67, w01, w23, w45, w67;
        memcpy(&wa, w + i, 4);
        memcpy(&wb, w + i + 4, 4);
        memcpy(&x01, x + i, 4);
        memcpy(&x23, x + i + 2, 4);
        memcpy(&x45, x + i + 4, 4);
        memcpy(&x67, x + i + 6, 4);
        __asm__("sxtb16 %0, %2\n\tsxtb16 %1, %2, ror #8" : "=&r"(w01), "=r"(w23) : "r"(wa));
        __asm__("sxtb16 %0, %2\n\tsxtb16 %1, %2, ror #8" : "=&r"(w45), "=r"(w67) : "r"(wb));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x01), "r"(w01));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x23), "r"(w23));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x45), "r"(w45));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x67), "r"(w67));
    }
    for (; i + 4 <= n; i += 4) {
        int32_t wv, x01, x23, w01, w23;
        memcpy(&wv, w + i, 4);
        memcpy(&x01, x + i, 4);
        memcpy(&x23, x + i + 2, 4);
        __asm__("sxtb16 %0, %2\n\tsxtb16 %1, %2, ror #8" : "=&r"(w01), "=r"(w23) : "r"(wv));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x01), "r"(w01));
        __asm__("smlald %Q0, %R0, %1, %2" : "+r"(acc) : "r"(x23), "r"(w23));
    }
#endif
    for (; i + 4 <= n; i += 4) {
        acc += (int32_t)x[i] * w[i] + (int32_t)x[i + 1] * w[i + 2] + (int32_t)x[i + 2] * w[i + 1] + (int32_t)x[i + 3] * w[i + 3];
    }
    for (int32_t r = n - i; r > 0; --r, ++i) { /* (counted down: gcc -O2 warned of i's overflow in i < n) */
        acc += (int32_t)x[i] * w[i];
    }
    return acc;
}`},
	"dot_s16s16": {nil, `/* init plus the sum over i < n of x[i] * w[i], wrapped to 32 bits as TFLite Micro's int32 sums
   are (tir.IntrDotS16S16): SMLAD on pairs where the core has the DSP extension (its sum wraps
   the same way), else a loop in unsigned arithmetic. */
static inline int32_t dot_s16s16(const int16_t *x, const int16_t *w, int32_t n, int32_t init)
{
    uint32_t acc = (uint32_t)init;
    int32_t i = 0;
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(MCUGEN_NO_ASM) && !defined(__ARM_BIG_ENDIAN)
    for (; i + 4 <= n; i += 4) {
        int32_t x01, x23, w01, w23;
        memcpy(&x01, x + i, 4);
        memcpy(&x23, x + i + 2, 4);
        memcpy(&w01, w + i, 4);
        memcpy(&w23, w + i + 2, 4);
        __asm__("smlad %0, %1, %2, %0" : "+r"(acc) : "r"(x01), "r"(w01));
        __asm__("smlad %0, %1, %2, %0" : "+r"(acc) : "r"(x23), "r"(w23));
    }
#endif
    for (; i < n; ++i) {
        acc += (uint32_t)((int32_t)x[i] * w[i]);
    }
    return (int32_t)acc;
}`},
	"dot4_s16s8": {nil, `/* Four output channels' sums over one input run (tir.IntrDot4S16S8): out[j] = sum over i < n
   of x[i] * w[j * stride + i], each channel's weights in dot_s16s8's layout. 32-bit sums: the
   compiler takes this only where the weights keep every partial sum inside int32 whatever the
   input. With the DSP extension each weight word is split by SXTB16 into two pairs, multiplied
   with x's pairs by SMLAD; elsewhere a loop over the same layout. */
static inline void dot4_s16s8(const int16_t *x, const int8_t *w, int32_t stride, int32_t n, int32_t *out)
{
    const int8_t *w0 = w, *w1 = w + stride, *w2 = w + 2 * stride, *w3 = w + 3 * stride;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* no partial sum leaves int32 (the compiler checked); unsigned keeps gcc from reasoning about overflow */
    int32_t i = 0;
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__ARM_BIG_ENDIAN) && \
    !defined(__PIC__) && defined(__ARM_FEATURE_UNALIGNED)
    if (__builtin_constant_p(stride) && stride >= 0 && stride <= 1365) {
        /* A whole step in one asm statement (its temporaries its own): gcc's allocation around
           the smaller statements spilled in the loop where the caller's epilogue changed. Its
           word loads may be unaligned (an odd stride or channel count): only where the core
           allows that (not under -mno-unaligned-access; review finding). */
        const int16_t *xp = x;
        const int8_t *wp = w;
        for (; i + 4 <= n; i += 4) {
            int32_t x01, x23, u, lo, hi;
            __asm__("ldr %[x01], [%[xp]], #4\n\tldr %[x23], [%[xp]], #4\n\t"
                    "ldr %[u], [%[wp], %[o1]]\n\tsxtb16 %[lo], %[u]\n\tsxtb16 %[hi], %[u], ror #8\n\t"
                    "smlad %[s1], %[x01], %[lo], %[s1]\n\tsmlad %[s1], %[x23], %[hi], %[s1]\n\t"
                    "ldr %[u], [%[wp], %[o2]]\n\tsxtb16 %[lo], %[u]\n\tsxtb16 %[hi], %[u], ror #8\n\t"
                    "smlad %[s2], %[x01], %[lo], %[s2]\n\tsmlad %[s2], %[x23], %[hi], %[s2]\n\t"
                    "ldr %[u], [%[wp], %[o3]]\n\tsxtb16 %[lo], %[u]\n\tsxtb16 %[hi], %[u], ror #8\n\t"
                    "smlad %[s3], %[x01], %[lo], %[s3]\n\tsmlad %[s3], %[x23], %[hi], %[s3]\n\t"
                    "ldr %[u], [%[wp]], #4\n\tsxtb16 %[lo], %[u]\n\tsxtb16 %[hi], %[u], ror #8\n\t"
                    "smlad %[s0], %[x01], %[lo], %[s0]\n\tsmlad %[s0], %[x23], %[hi], %[s0]"
                    : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [xp] "+r"(xp), [wp] "+r"(wp),
                      [x01] "=&r"(x01), [x23] "=&r"(x23), [u] "=&r"(u), [lo] "=&r"(lo), [hi] "=&r"(hi)
                    : [o1] MCUGEN_ASM_IMM(stride), [o2] MCUGEN_ASM_IMM(2 * stride), [o3] MCUGEN_ASM_IMM(3 * stride)
                    : "memory");
        }
    }
    /* One channel's four weights: a word split by SXTB16 into two pairs, two SMLADs. */
#define DOT4_LANE(s, wp)                                                                        \
    memcpy(&u, (wp) + i, 4);                                                                    \
    __asm__("sxtb16 %0, %2\n\tsxtb16 %1, %2, ror #8" : "=&r"(lo), "=r"(hi) : "r"(u));             \
    __asm__("smlad %0, %1, %2, %0" : "+r"(s) : "r"(x01), "r"(lo));                              \
    __asm__("smlad %0, %1, %2, %0" : "+r"(s) : "r"(x23), "r"(hi));
    for (; i + 4 <= n; i += 4) {
        int32_t x01, x23, u, lo, hi;
        memcpy(&x01, x + i, 4);
        memcpy(&x23, x + i + 2, 4);
        DOT4_LANE(s0, w0)
        DOT4_LANE(s1, w1)
        DOT4_LANE(s2, w2)
        DOT4_LANE(s3, w3)
    }
#undef DOT4_LANE
#endif
    for (; i + 4 <= n; i += 4) {
        const int32_t a = x[i], b = x[i + 1], c = x[i + 2], d = x[i + 3];
        s0 += (uint32_t)(a * w0[i] + b * w0[i + 2] + c * w0[i + 1] + d * w0[i + 3]);
        s1 += (uint32_t)(a * w1[i] + b * w1[i + 2] + c * w1[i + 1] + d * w1[i + 3]);
        s2 += (uint32_t)(a * w2[i] + b * w2[i + 2] + c * w2[i + 1] + d * w2[i + 3]);
        s3 += (uint32_t)(a * w3[i] + b * w3[i + 2] + c * w3[i + 1] + d * w3[i + 3]);
    }
    for (int32_t r = n - i; r > 0; --r, ++i) { /* (counted down: gcc -O2 warned of i's overflow in i < n) */
        s0 += (uint32_t)(x[i] * w0[i]);
        s1 += (uint32_t)(x[i] * w1[i]);
        s2 += (uint32_t)(x[i] * w2[i]);
        s3 += (uint32_t)(x[i] * w3[i]);
    }
    out[0] = (int32_t)s0;
    out[1] = (int32_t)s1;
    out[2] = (int32_t)s2;
    out[3] = (int32_t)s3;
}`},
	"lut_s16": {nil, `/* TFLite's int16 table lookup (LUTLookup): the entry at v's high 9 bits plus the slope to the
   next entry times v's low 7 bits, rounded. */
static inline int16_t lut_s16(int16_t v, const int16_t *lut)
{
    const int32_t index = 256 + (v >> 7);
    const int32_t offset = v & 0x7f;
    const int32_t slope = (int16_t)(lut[index + 1] - lut[index]);
    return (int16_t)(lut[index] + ((slope * offset + 64) >> 7));
}`},
	"softmax_s16": {[]string{"requant", "clz32", "lut_s16"}, `/* TFLite's SoftmaxInt16 on one row (tir.IntrSoftmaxS16): each difference from the maximum
   rescaled onto [-10, 0] and looked up in the exp table, the sum normalised and its reciprocal
   looked up in the 1/(1+x) table, each exponential scaled by it into [0, 32767]. */
static inline void softmax_s16(const int16_t *x, int16_t *y, int32_t depth, int32_t mult, int32_t shift,
                               const int16_t *exp_lut, const int16_t *recip_lut)
{
    int32_t mx = -32768, sum = 0, c;
    for (c = 0; c < depth; c++) {
        mx = x[c] > mx ? x[c] : mx;
    }
    for (c = 0; c < depth; c++) {
        int32_t d = requant(x[c] - mx, mult, shift) + 32767;
        d = d < -32768 ? -32768 : d > 32767 ? 32767 : d;
        y[c] = lut_s16((int16_t)d, exp_lut);
        sum += y[c];
    }
    {
        /* sum >= 32767 (the maximum's exponential): h <= 17. */
        const int32_t h = clz32((uint32_t)sum);
        const int32_t shifted = (int32_t)((((int64_t)sum << (h - 1)) + (INT32_C(1) << 13)) >> 14);
        int32_t sym = shifted - ((INT32_C(1) << 15) + (INT32_C(1) << 16));
        const int64_t r = lut_s16((int16_t)(sym < -32768 ? -32768 : sym > 32767 ? 32767 : sym), recip_lut);
        const int32_t rs = 31 - h;
        for (c = 0; c < depth; c++) {
            const int64_t v = ((int64_t)y[c] * r + ((int64_t)1 << (rs - 1))) >> rs;
            y[c] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
        }
    }
}`},
	"requant_fast_s8": {nil, `/* clamp(requant(x, m, -(e1 + 1)) + zk + zr, lo, hi) for m >= 0 (tir.IntrRequantFast),
   with k0 = 2^30 + 2^(31 + e1) + zk * 2^(32 + e1): TFLite's two roundings and the
   zero point folded into one 64-bit multiply-add (an SMLAL on a Cortex-M3), the
   sign correction -[x < 0] * 2^31 and a shift of the high word; lo and hi are
   constants, so the tests on them fold away for the int8 range. */
#if defined(__GNUC__) && !defined(MCUGEN_NO_ASM) && (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__))
/* ARMv6-M (and v8-M Baseline) has no 32 x 32 -> 64 multiply: x * m from four 16 x 16 MULS and
   ADDS/ADCS carries in asm (five low registers, so r7 may be the frame pointer), then
   + k0 - [x < 0] * 2^31 in 32-bit halves, k0 given as its words kl, kh: only the high word is
   kept, so each add contributes its carry. About 25 instructions where gcc calls
   __aeabi_lmul (about 60 with the call and its sign extensions), and where 64-bit C sums
   went through the stack (about 30 more). */
static inline int32_t requant_fast_s8w(int32_t x, int32_t m, uint32_t kl, int32_t kh, int32_t e1, int32_t zr, int32_t lo, int32_t hi)
{
    uint32_t t;
    uint32_t u;
    int32_t h = x, b = m, al, bl;
    int32_t y;
    __asm__(".syntax unified\n\t"
            "uxth %[al], %[h]\n\t"        /* x = xh * 2^16 + xl, m likewise */
            "asrs %[h], %[h], #16\n\t"
            "uxth %[bl], %[b]\n\t"
            "asrs %[b], %[b], #16\n\t"
            "movs %[t], %[al]\n\t"
            "muls %[t], %[bl], %[t]\n\t"  /* xl * ml: the low word */
            "muls %[al], %[b], %[al]\n\t" /* xl * mh */
            "muls %[bl], %[h], %[bl]\n\t" /* xh * ml */
            "muls %[h], %[b], %[h]\n\t"   /* xh * mh: the high word */
            "lsls %[b], %[bl], #16\n\t"   /* + xh * ml * 2^16 */
            "asrs %[bl], %[bl], #16\n\t"
            "adds %[t], %[t], %[b]\n\t"
            "adcs %[h], %[h], %[bl]\n\t"
            "lsls %[b], %[al], #16\n\t"   /* + xl * mh * 2^16 */
            "asrs %[al], %[al], #16\n\t"
            "adds %[t], %[t], %[b]\n\t"
            "adcs %[h], %[h], %[al]"
            : [h] "+&l"(h), [b] "+&l"(b), [al] "=&l"(al), [bl] "=&l"(bl), [t] "=&l"(t)
            :
            : "cc");
    u = t + kl;
    h = (int32_t)((uint32_t)h + (uint32_t)kh + (uint32_t)(u < t));
    if (x < 0) {
        h = (int32_t)((uint32_t)h - 1u + (uint32_t)(u + 0x80000000u < u));
    }
    y = (h >> e1) + zr;
    return y < lo ? lo : (y > hi ? hi : y);
}
static inline int32_t requant_fast_s8(int32_t x, int32_t m, int64_t k0, int32_t e1, int32_t zr, int32_t lo, int32_t hi)
{
    return requant_fast_s8w(x, m, (uint32_t)k0, (int32_t)((uint64_t)k0 >> 32), e1, zr, lo, hi);
}
#else
static inline int32_t requant_fast_s8(int32_t x, int32_t m, int64_t k0, int32_t e1, int32_t zr, int32_t lo, int32_t hi)
{
    const int64_t t = (int64_t)x * m + k0 - (x < 0 ? (INT64_C(1) << 31) : 0);
    int32_t y = ((int32_t)(t >> 32) >> e1) + zr;
#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)
    /* SSAT: gcc does not find it for the clamp inside a loop. */
    y = (int32_t)__builtin_arm_ssat(y, 8);
    if (lo > -128 && y < lo) {
        y = lo;
    }
    if (hi < 127 && y > hi) {
        y = hi;
    }
    return y;
#else
    return y < lo ? lo : (y > hi ? hi : y);
#endif
}
/* requant_fast_s8 with k0 as its two words (kl low, kh high). */
static inline int32_t requant_fast_s8w(int32_t x, int32_t m, uint32_t kl, int32_t kh, int32_t e1, int32_t zr, int32_t lo, int32_t hi)
{
    return requant_fast_s8(x, m, (int64_t)kl + (int64_t)kh * INT64_C(4294967296), e1, zr, lo, hi);
}
#endif
`},
	"gen_pair_out": {[]string{"requant_fast_s8"}, `/* The two channels of one packed sum a = s0 + s1 * 2^23 (|s0| < 2^22), requantized with
   their five-word tables p: bias, multiplier, k0 (low, high), e1. */
static inline void gen_pair_out(int8_t *y, int64_t a, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    const int32_t s = (int32_t)((uint32_t)a << 9) >> 9;
    y[0] = (int8_t)requant_fast_s8w(s + p[0], p[1], (uint32_t)p[2], p[3], p[4], zr, lo, hi);
    y[1] = (int8_t)requant_fast_s8w((int32_t)((a - s) >> 23) + p[5], p[6], (uint32_t)p[7], p[8], p[9], zr, lo, hi);
}`},
	"gen_pairs_s8": {[]string{"gen_pairs_s8_i"}, `/* gen_pairs_s8_i, inlined where the compiler judges it pays (gcc: everywhere; clang: not
   in its own judgment of the helper's size); calls with n of 16 or more take gen_pairs_s8_i. */
static inline void gen_pairs_s8(int8_t *y, int32_t ys, const int8_t *x, int32_t xs, int32_t r, const int32_t *w, int32_t n,
                                int32_t np, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    gen_pairs_s8_i(y, ys, x, xs, r, w, n, np, p, zr, lo, hi);
}`},
	"gen_pairs_s8_i": {[]string{"gen_pair_out"}, `/* A pointwise convolution or fully connected layer over r (1 or 2) pixels x, xs apart,
   with the weights of channels 2j and 2j + 1 packed in one word per step,
   w[j * n + k] = w0 + w1 * 2^23, n a multiple of four (tir.IntrGenPairs): one 64-bit
   accumulator per pixel and pair (an SMLAL per step on a Cortex-M3) holds s0 + s1 * 2^23,
   and the compile-time bound |s0| < 2^22 makes its low 23 bits, sign-extended, s0. Two
   pixels share each weight load; one pixel runs two pairs per input load. Four steps per
   iteration. Always inlined: its constant r, n and np then choose the path and bound the
   loops. */
static inline MCUGEN_ALWAYS_INLINE void gen_pairs_s8_i(int8_t *y, int32_t ys, const int8_t *x, int32_t xs, int32_t r, const int32_t *w, int32_t n,
                                                       int32_t np, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    const int8_t *x1 = x + xs;
    int32_t j = 0;
    int32_t k;
    if (r == 2) {
        for (; j < np; ++j, w += n) {
            int64_t a0 = 0;
            int64_t a1 = 0;
            for (k = 0; k < n; k += 4) {
                a0 += (int64_t)x[k] * w[k];
                a1 += (int64_t)x1[k] * w[k];
                a0 += (int64_t)x[k + 1] * w[k + 1];
                a1 += (int64_t)x1[k + 1] * w[k + 1];
                a0 += (int64_t)x[k + 2] * w[k + 2];
                a1 += (int64_t)x1[k + 2] * w[k + 2];
                a0 += (int64_t)x[k + 3] * w[k + 3];
                a1 += (int64_t)x1[k + 3] * w[k + 3];
            }
            gen_pair_out(y + 2 * j, a0, p + 10 * j, zr, lo, hi);
            gen_pair_out(y + ys + 2 * j, a1, p + 10 * j, zr, lo, hi);
        }
        return;
    }
    for (; j + 2 <= np; j += 2, w += 2 * n) {
        const int32_t *w1 = w + n;
        int64_t a0 = 0;
        int64_t a1 = 0;
        for (k = 0; k < n; k += 4) {
            a0 += (int64_t)x[k] * w[k];
            a1 += (int64_t)x[k] * w1[k];
            a0 += (int64_t)x[k + 1] * w[k + 1];
            a1 += (int64_t)x[k + 1] * w1[k + 1];
            a0 += (int64_t)x[k + 2] * w[k + 2];
            a1 += (int64_t)x[k + 2] * w1[k + 2];
            a0 += (int64_t)x[k + 3] * w[k + 3];
            a1 += (int64_t)x[k + 3] * w1[k + 3];
        }
        gen_pair_out(y + 2 * j, a0, p + 10 * j, zr, lo, hi);
        gen_pair_out(y + 2 * j + 2, a1, p + 10 * j + 10, zr, lo, hi);
    }
    if (j < np) {
        int64_t a0 = 0;
        for (k = 0; k < n; k += 4) {
            a0 += (int64_t)x[k] * w[k];
            a0 += (int64_t)x[k + 1] * w[k + 1];
            a0 += (int64_t)x[k + 2] * w[k + 2];
            a0 += (int64_t)x[k + 3] * w[k + 3];
        }
        gen_pair_out(y + 2 * j, a0, p + 10 * j, zr, lo, hi);
    }
}`},
	"gen_quad_dot": {nil, `/* a[h] += sum_{k<n} x[k] * w[4k + h], h < 4, n a positive multiple of four: the inner product
   of gen_quad_s8. On ARMv6-M (and v8-M Baseline), asm: the accumulators in r8-r11, one LDM of
   four activations and, per activation, one LDM of four weights and four MULS, ADD pairs;
   x word-aligned (an unaligned load faults there), else copied 64 bytes at a time. */
#if defined(__GNUC__) && !defined(MCUGEN_NO_ASM) && (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__))
/* One activation (r3) by its four channels' weights: one LDM of them, a MULS and an ADD into
   the accumulators r8-r11 each. */
#define GEN_QUAD_MAC4 \
    "ldm r2!, {r4-r7}\n\t" \
    "muls r4, r3, r4\n\t" \
    "add r8, r4\n\t" \
    "muls r5, r3, r5\n\t" \
    "add r9, r5\n\t" \
    "muls r6, r3, r6\n\t" \
    "add r10, r6\n\t" \
    "muls r7, r3, r7\n\t" \
    "add r11, r7\n\t"
/* naked: no frame (r7 free, whatever the optimization level); the asm saves what it uses. */
__attribute__((naked, noinline)) static void gen_quad_dot_a(int32_t *a __attribute__((unused)), const int8_t *x __attribute__((unused)),
                                                            const int32_t *w __attribute__((unused)), int32_t n __attribute__((unused)))
{
    __asm__(".syntax unified\n\t"
            "push {r4-r7, lr}\n\t"
            "mov r4, r8\n\t"
            "mov r5, r9\n\t"
            "mov r6, r10\n\t"
            "mov r7, r11\n\t"
            "push {r4-r7}\n\t"
            "push {r0}\n\t"
            "ldm r0!, {r4-r7}\n\t"
            "mov r8, r4\n\t"
            "mov r9, r5\n\t"
            "mov r10, r6\n\t"
            "mov r11, r7\n\t"
            "adds r3, r1, r3\n\t"
            "mov r12, r3\n"
            "1:\n\t"
            "ldm r1!, {r0}\n\t"
            "sxtb r3, r0\n\t"
            GEN_QUAD_MAC4
            "lsls r3, r0, #16\n\t"
            "asrs r3, r3, #24\n\t"
            GEN_QUAD_MAC4
            "lsls r3, r0, #8\n\t"
            "asrs r3, r3, #24\n\t"
            GEN_QUAD_MAC4
            "asrs r3, r0, #24\n\t"
            GEN_QUAD_MAC4
            "cmp r1, r12\n\t"
            "bne 1b\n\t"
            "pop {r0}\n\t"
            "mov r4, r8\n\t"
            "mov r5, r9\n\t"
            "mov r6, r10\n\t"
            "mov r7, r11\n\t"
            "stm r0!, {r4-r7}\n\t"
            "pop {r4-r7}\n\t"
            "mov r8, r4\n\t"
            "mov r9, r5\n\t"
            "mov r10, r6\n\t"
            "mov r11, r7\n\t"
            "pop {r4-r7, pc}");
}
#undef GEN_QUAD_MAC4
static inline void gen_quad_dot(int32_t *a, const int8_t *x, const int32_t *w, int32_t n)
{
    int32_t b[16];
    if (((uintptr_t)x & 3u) == 0) {
        gen_quad_dot_a(a, x, w, n);
        return;
    }
    while (n > 0) {
        const int32_t m = n < 64 ? n : 64;
        memcpy(b, x, (size_t)m);
        gen_quad_dot_a(a, (const int8_t *)b, w, m);
        x += m;
        w += 4 * m;
        n -= m;
    }
}
#else
static inline void gen_quad_dot(int32_t *a, const int8_t *x, const int32_t *w, int32_t n)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    int32_t k;
    for (k = 0; k < n; ++k, w += 4) {
        const int32_t v = x[k];
        a0 += v * w[0];
        a1 += v * w[1];
        a2 += v * w[2];
        a3 += v * w[3];
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#endif`},
	"gen_quad_s8": {[]string{"requant_fast_s8", "gen_quad_dot"}, `/* A pointwise convolution or fully connected layer over r pixels x, xs apart, four channels a
   step (tir.IntrGenQuad): w holds, per group j of four channels, n steps of their four int32
   weights; p five words per channel (bias, multiplier, k0 low and high, e1). */
static inline void gen_quad_s8(int8_t *y, int32_t ys, const int8_t *x, int32_t xs, int32_t r, const int32_t *w, int32_t n,
                               int32_t nq, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    int32_t i;
    for (i = 0; i < r; ++i, x += xs, y += ys) {
        const int32_t *wq = w;
        const int32_t *pq = p;
        int8_t *yq = y;
        int32_t j;
        for (j = 0; j < nq; ++j, wq += 4 * n, pq += 20, yq += 4) {
            int32_t a[4];
            int32_t h;
            a[0] = pq[0];
            a[1] = pq[5];
            a[2] = pq[10];
            a[3] = pq[15];
            gen_quad_dot(a, x, wq, n);
            for (h = 0; h < 4; ++h) {
                const int32_t *ph = pq + 5 * h;
                yq[h] = (int8_t)requant_fast_s8w(a[h], ph[1], (uint32_t)ph[2], ph[3], ph[4], zr, lo, hi);
            }
        }
    }
}`},
	"gen_copy_s8": {nil, `/* dst[i] = src[i], i < n: a window row of gen_pairs_s8's convolutions, a run of a concatenation, slice, pad or copying reshape. */
static inline void gen_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n);
}`},
	"gen_copy_s16": {nil, `/* dst[i] = src[i], i < n, int16: an SVDF's int16 state moving one step. */
static inline void gen_copy_s16(int16_t *dst, const int16_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n * sizeof *dst);
}`},
	"gen_flip_s8": {nil, `/* dst[i] = src[i] with its top bit flipped, i < n, one of them uint8 and the other int8: a
   requantization between zero points 128 apart at one scale (u - 128, or s + 128), a word at a time
   where the core loads words at any address (ARMv6-M does not: gcc calls memcpy for each word there). */
static inline void gen_flip_s8(void *dst, const void *src, int32_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    int32_t i = 0;
#if defined(__ARM_FEATURE_UNALIGNED)
    for (; i + 8 <= n; i += 8) {
        uint32_t a;
        uint32_t b;
        memcpy(&a, s + i, 4);
        memcpy(&b, s + i + 4, 4);
        a ^= 0x80808080u;
        b ^= 0x80808080u;
        memcpy(d + i, &a, 4);
        memcpy(d + i + 4, &b, 4);
    }
#endif
    for (; i < n; ++i) {
        d[i] = (uint8_t)(s[i] ^ 0x80u);
    }
}`},
	"gen_fill_s8": {nil, `/* dst[i] = v, i < n: a window's padding. */
static inline void gen_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    memset(dst, v, (size_t)n);
}`},
	"sat_shl": {nil, `/* gemmlowp SaturatingRoundingMultiplyByPOT for a positive exponent. */
static inline int32_t sat_shl(int32_t x, int32_t n)
{
    if (x > (INT32_MAX >> n)) {
        return INT32_MAX;
    }
    if (x < (INT32_MIN >> n)) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << n);
}`},
	"one_over_one_plus_x": {[]string{"srdhm", "sat_shl"}, `/* gemmlowp one_over_one_plus_x_for_x_in_0_1 (Q0.31), Newton-Raphson. */
static int32_t one_over_one_plus_x(int32_t a)
{
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = (int32_t)((uint32_t)1515870810 + (uint32_t)srdhm(half_den, -1010580540));
    int i;
    for (i = 0; i < 3; ++i) {
        const int32_t hdx = srdhm(half_den, x);
        const int32_t one_minus = (int32_t)((uint32_t)(INT32_C(1) << 29) - (uint32_t)hdx);
        x = (int32_t)((uint32_t)x + (uint32_t)sat_shl(srdhm(x, one_minus), 2));
    }
    return sat_shl(x, 1);
}`},
	"clz32": {nil, `/* Leading zero bits of x (32 for 0): gcc's and clang's builtin on a 32-bit int or long
   (one CLZ on Armv7-M), or a loop (a 16-bit int, as on AVR, with no 32-bit long builtin). */
static inline int32_t clz32(uint32_t x)
{
#if defined(__GNUC__) && defined(__SIZEOF_INT__) && __SIZEOF_INT__ == 4
    return x ? (int32_t)__builtin_clz(x) : 32;
#elif defined(__GNUC__) && defined(__SIZEOF_LONG__) && __SIZEOF_LONG__ == 4
    return x ? (int32_t)__builtin_clzl(x) : 32;
#else
    int32_t n = 0;
    while (n < 32 && !(x & (UINT32_C(1) << (31 - n)))) {
        ++n;
    }
    return n;
#endif
}`},
	"recip": {[]string{"one_over_one_plus_x", "clz32"}, `/* TFLite GetReciprocal: Q0.31 scale of 1/x for x in Q(int_bits). */
static inline int32_t recip(int32_t x, int32_t int_bits)
{
    const int32_t headroom = clz32((uint32_t)x);
    (void)int_bits;
    return one_over_one_plus_x((int32_t)(((uint32_t)x << headroom) - (UINT32_C(1) << 31)));
}`},
	"log_q12_q5": {[]string{"srdhm", "rdivpot", "sat_shl", "one_over_one_plus_x", "clz32"}, `/* TFLite log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>: ln z for a Q12.19
   z >= 1, as Q5.26 (graph/qmath's LogQ12ToQ5); plain sums wrap, as there. */
static int32_t log_q12_q5(int32_t z)
{
    const int32_t quarter = rdivpot(536870912, 6);
    const int32_t h = clz32((uint32_t)z);
    const int32_t ra = sat_shl(srdhm(sat_shl(z, h - 1), 1518500250), 1);
    const int64_t za64 = (int64_t)sat_shl(12 - h, 25) + quarter;
    const int32_t hb = clz32((uint32_t)srdhm(z, 1518500250)) - 1;
    const int32_t rb = sat_shl(z, hb);
    const int64_t zb64 = (int64_t)sat_shl(12 - hb, 25) - quarter;
    const int32_t za = za64 > INT32_MAX ? INT32_MAX : za64 < INT32_MIN ? INT32_MIN : (int32_t)za64;
    const int32_t zb = zb64 > INT32_MAX ? INT32_MAX : zb64 < INT32_MIN ? INT32_MIN : (int32_t)zb64;
    const int32_t r = ra < rb ? ra : rb;
    const int32_t zp = za > zb ? za : zb;
    const int64_t ps = (int64_t)r + 1805811301;
    const int32_t p = (int32_t)((ps + (ps >= 0 ? 1 : -1)) / 2);
    int32_t q = (int32_t)((uint32_t)r - UINT32_C(1805811301));
    int32_t c;
    int32_t num;
    int32_t den;
    int32_t acc;
    q = (int32_t)((uint32_t)q + (uint32_t)q);
    c = srdhm(q, q);
    num = (int32_t)((uint32_t)srdhm(q, r) + (uint32_t)srdhm(srdhm(q, c), 117049297));
    den = (int32_t)((uint32_t)srdhm(p, (int32_t)(UINT32_C(1057819769) + (uint32_t)q + (uint32_t)srdhm(127690142, c))) + (uint32_t)srdhm(638450708, q));
    acc = (int32_t)((uint32_t)srdhm(zp, 1488522236) + (uint32_t)srdhm(rdivpot(num, 6), one_over_one_plus_x(den)));
    return sat_shl(acc, 1);
}`},
	"div_q8": {[]string{"srdhm", "rdivpot", "recip", "recip_shift"}, `/* TFLite int8 DIV of two values less their zero points (tir.IntrDivQ8): the signs moved
   onto a, the Q0.31 reciprocal of b, a scaled up by its redundant sign bits, then rescaled
   by (m, shift); b = 0 gives +-2^30 by a's sign, a shift past 31 bits 0 (qmath.DivInt8). */
static int32_t div_q8(int32_t a, int32_t b, int32_t m, int32_t shift)
{
    int32_t h;
    int32_t e;
    int32_t v;
    if (b == 0) {
        return a > 0 ? (INT32_C(1) << 30) : (a < 0 ? -(INT32_C(1) << 30) : 0);
    }
    if (b < 0) {
        a = -a;
        b = -b;
    }
    h = a < 0 ? clz32(~(uint32_t)a) - 1 : clz32((uint32_t)a) - 1;
    e = h + recip_shift(b, 31) - shift;
    v = srdhm(srdhm((int32_t)((uint32_t)a << h), recip(b, 31)), m);
    return e > 31 ? 0 : rdivpot(v, e);
}`},
	"inv_sqrt_mult": {[]string{"srdhm", "rdivpot", "sat_shl", "clz32"}, `/* TFLite GetInvSqrtQuantizedMultiplierExp(x, -1), the multiplier (tir.IntrInvSqrtMult):
   1/sqrt(x) for x > 1 by five Newton steps in Q3.28 (INT32_MAX for x <= 1). */
static int32_t inv_sqrt_mult(int32_t x)
{
    int32_t shift = 11;
    int32_t pairs;
    int32_t half;
    int32_t y = INT32_C(1) << 28;
    int32_t i;
    if (x <= 1) {
        return INT32_MAX;
    }
    while (x >= (INT32_C(1) << 29)) {
        x /= 4;
        ++shift;
    }
    pairs = (clz32((uint32_t)x) - 1) / 2 - 1;
    shift -= pairs;
    x = (int32_t)((uint32_t)x << (2 * pairs));
    half = rdivpot(x >> 1, 1);
    for (i = 0; i < 5; ++i) {
        const int32_t y3 = sat_shl(srdhm(srdhm(y, y), y), 6);
        y = sat_shl((int32_t)((uint32_t)srdhm(INT32_C(402653184), y) - (uint32_t)srdhm(half, y3)), 3);
    }
    y = srdhm(y, INT32_C(1518500250));
    return shift < 0 ? (int32_t)((uint32_t)y << -shift) : y;
}`},
	"inv_sqrt_shift": {[]string{"clz32"}, `/* TFLite GetInvSqrtQuantizedMultiplierExp(x, -1), the shift (tir.IntrInvSqrtShift). */
static inline int32_t inv_sqrt_shift(int32_t x)
{
    int32_t shift = 11;
    if (x <= 1) {
        return 0;
    }
    while (x >= (INT32_C(1) << 29)) {
        x /= 4;
        ++shift;
    }
    shift -= (clz32((uint32_t)x) - 1) / 2 - 1;
    return shift < 0 ? 0 : -shift;
}`},
	"recip_shift": {[]string{"clz32"}, `/* TFLite GetReciprocal: the number of bits over unit. */
static inline int32_t recip_shift(int32_t x, int32_t int_bits)
{
    return int_bits - clz32((uint32_t)x);
}`},
}

func init() {
	helperText["quantize_f32"] = struct {
		deps []string
		code string
	}{nil, `/* round(x / scale) with x / scale divided in float as TFLite's and ONNX's
   reference kernels do, rounded half away from zero (TFLite) or half to
   even (even != 0, ONNX), saturated to int32. No libm and no double, so a
   single-precision FPU does it all. */
static inline int32_t quantize_f32(float x, float scale, int32_t even)
{
    const float q = x / scale;
    float r;
    float f;
#if defined(__GNUC__) && defined(__ARM_FP) && (__ARM_FP & 4) && !defined(__aarch64__) && !defined(MCUGEN_NO_ASM)
    if (even) {
        /* A single-precision FPU's VCVTR rounds as the FPSCR says, half to
           even by default (as the addition below relies on too), saturates
           to int32 and gives NaN 0: the same result in one instruction. */
        int32_t n;
        __asm__("vcvtr.s32.f32 %1, %2\n\tvmov %0, %1" : "=r"(n), "=&t"(r) : "t"(q));
        return n;
    }
#if defined(__ARM_FEATURE_DSP)
    {
        /* Half away from zero without a branch: t = trunc(q) (VCVT
           saturates, NaN 0); below 2^24 in magnitude q - t is exact and
           trunc(2(q - t)) is the rounding's step, -1, 0 or 1; above it q
           is whole and the step 0; past int32 the difference and the step
           have q's sign, and QADD saturates. */
        int32_t n, c;
        __asm__("vcvt.s32.f32 %[r], %[q]\n\t"
                "vmov %[n], %[r]\n\t"
                "vcvt.f32.s32 %[r], %[r]\n\t"
                "vsub.f32 %[f], %[q], %[r]\n\t"
                "vadd.f32 %[f], %[f], %[f]\n\t"
                "vcvt.s32.f32 %[f], %[f]\n\t"
                "vmov %[c], %[f]\n\t"
                "qadd %[n], %[n], %[c]"
                : [n] "=&r"(n), [c] "=&r"(c), [r] "=&t"(r), [f] "=&t"(f)
                : [q] "t"(q));
        return n;
    }
#endif
#endif
    if (q > -4194304.0f && q < 4194304.0f) {
        /* q + 1.5 * 2^23 lies in [2^23, 2^24], where floats are the
           integers: the FPU rounds q half to even into its low mantissa
           bits (C rounds an assignment to float whatever FLT_EVAL_METHOD).
           A tie it took to the even side is taken away from zero for
           TFLite; q - r is exact there. */
        union {
            float f;
            int32_t i;
        } b;
        int32_t n;
        b.f = q + 12582912.0f;
        n = b.i - 0x4B400000;
        if (!even) {
            f = q - (float)n;
            if (f == 0.5f && q > 0.0f) {
                n += 1;
            } else if (f == -0.5f && q < 0.0f) {
                n -= 1;
            }
        }
        return n;
    }
    if (q != q) {
        return 0;
    }
    if (q >= 2147483648.0f) {
        return INT32_MAX;
    }
    if (q <= -2147483648.0f) {
        return INT32_MIN;
    }
    if (q >= 8388608.0f || q <= -8388608.0f) {
        return (int32_t)q;
    }
    r = (float)(int32_t)q;
    f = q - r;
    if (even) {
        const int32_t odd = (int32_t)r & 1;
        if (f > 0.5f || (f == 0.5f && odd)) {
            r += 1.0f;
        } else if (f < -0.5f || (f == -0.5f && odd)) {
            r -= 1.0f;
        }
    } else if (f >= 0.5f) {
        r += 1.0f;
    } else if (f <= -0.5f) {
        r -= 1.0f;
    }
    return (int32_t)r;
}`}
	helperText["quantize_f32_s8"] = struct {
		deps []string
		code string
	}{[]string{"quantize_f32"}, `/* quantize_f32 plus the zero point zp, clamped to int8 (tir.IntrQuantizeS8): with the DSP
   extension a saturating add and SSAT, two instructions for the clamp's compares. */
static inline int32_t quantize_f32_s8(float x, float scale, int32_t zp, int32_t even)
{
    int32_t n = quantize_f32(x, scale, even);
#if defined(__GNUC__) && defined(__ARM_FEATURE_DSP) && !defined(__aarch64__) && !defined(MCUGEN_NO_ASM)
    __asm__("qadd %0, %0, %1\n\tssat %0, #8, %0" : "+r"(n) : "r"(zp));
    return n;
#else
    n = n < -128 - zp ? -128 - zp : n;
    n = n > 127 - zp ? 127 - zp : n;
    return n + zp;
#endif
}`}
	helperText["quantize_f32_64"] = struct {
		deps []string
		code string
	}{[]string{"quantize_f32"}, `/* quantize_f32 saturated to +-2^40 instead of int32, for an int32 output whose zero
   point is added after: a quotient at or past 2^31 is a whole float already. */
static inline int64_t quantize_f32_64(float x, float scale, int32_t even)
{
    const float q = x / scale;
    if (q != q) {
        return 0;
    }
    if (q >= 1099511627776.0f) {
        return INT64_C(1099511627776);
    }
    if (q <= -1099511627776.0f) {
        return -INT64_C(1099511627776);
    }
    if (q >= 2147483648.0f || q <= -2147483648.0f) {
        return (int64_t)q;
    }
    return quantize_f32(x, scale, even);
}`}
	helperText["round_even_f32"] = struct {
		deps []string
		code string
	}{nil, `/* x rounded half to even, saturated to +-2^22 (NaN: 0). x + 1.5 * 2^23 lies in
   [2^23, 2^24], where floats are the integers: the FPU rounds x half to even into
   its low mantissa bits (C rounds an assignment to float whatever FLT_EVAL_METHOD). */
static inline int32_t round_even_f32(float x)
{
    union {
        float f;
        uint32_t u;
    } b;
    uint32_t k;
    b.f = x + 12582912.0f;
    /* Inside [2^23, 2^24] exactly when x rounds into [-2^22, 2^22]; past it (a
       larger x, an infinity, a NaN) the bits fall outside, and x saturates. */
    k = b.u - 0x4B000000u;
    if (k > 0x800000u) {
        return x != x ? 0 : x > 0.0f ? 4194304 : -4194304;
    }
    return (int32_t)k - 0x400000;
}`}
}

// addHelper registers the C of a helper (after the helpers it needs).
func addHelper(name string, deps []string, code string) {
	helperText[name] = struct {
		deps []string
		code string
	}{deps, code}
	helperOrder = append(helperOrder, name)
}

// addHelperGen registers a helper whose C is printed by gen the first time
// a model needs it. The DSP micro-kernels come in hundreds of block and
// unroll variants: printing them all at start-up cost every mcugen command
// (--version included) 125 ms and 75 MB of allocation.
func addHelperGen(name string, deps []string, gen func() string) {
	addHelper(name, deps, "")
	helperGens[name] = sync.OnceValue(gen)
}

// helperGens prints the helpers registered by addHelperGen.
var helperGens = map[string]func() string{}

// helperCode is helper h's C.
func helperCode(h string) string {
	if gen, ok := helperGens[h]; ok {
		return gen()
	}
	return helperText[h].code
}

// helperOrder is the order helpers are printed in (dependencies first).
var helperOrder = []string{"min_i32", "max_i32", "min_i64", "max_i64", "min_f32", "max_f32",
	"wrap_add_s64", "wrap_sub_s64", "wrap_mul_s64",
	"srdhm", "rdivpot", "mul_round_pos", "requant", "requant64", "requant_fast_s8", "dot_s16s8", "dot_s16s16", "dot4_s16s8", "lut_s16", "gen_pair_out", "gen_pairs_s8_i", "gen_pairs_s8", "gen_quad_dot", "gen_quad_s8", "gen_copy_s8", "gen_copy_s16", "gen_fill_s8", "gen_flip_s8", "sat_shl", "one_over_one_plus_x", "clz32", "softmax_s16", "recip", "recip_shift", "div_q8", "inv_sqrt_mult", "inv_sqrt_shift", "log_q12_q5",
	"quantize_f32", "quantize_f32_s8", "quantize_f32_64", "round_even_f32"}
