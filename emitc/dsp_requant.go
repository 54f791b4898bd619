package emitc

import "github.com/mcugen/mcugen/tir"

// The C of tir.IntrDSPRequantP: the packed-parameter int8 requantization.

func init() {
	helperText[tir.IntrDSPRequantP] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, `/* clamp(requant(x, p[2], -(p[3] + 1)) + zp, lo, hi) with k0 = p[0] + p[1] * 2^32
   (dsp_requant_s8 with its parameters packed: two LDRDs); the sign correction
   -[x < 0] * 2^31 is a second SMLAL of (x >> 31, unsigned) by INT32_MIN. */
static inline int32_t dsp_requant_s8p(int32_t x, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    int32_t l;
    int32_t h;
    int32_t m;
    int32_t e1;
    int32_t y;
    DSP_LD2(p, 0, l, h);
    DSP_LD2(p, 2, m, e1);
    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"(x), "r"(m));
    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"((int32_t)((uint32_t)x >> 31)), "r"(INT32_MIN));
    y = __ssat((h >> e1) + zr, 8);
    if (lo > -128 && y < lo) {
        y = lo;
    }
    if (hi < 127 && y > hi) {
        y = hi;
    }
    return y;
}`}
	helperOrder = append(helperOrder, tir.IntrDSPRequantP)
	helperText[tir.IntrDSPRequantPR] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, `/* dsp_requant_s8p without the sign correction, for an output whose zero point is at
   or below lo (a fused ReLU): a negative x gives at most the zero point either way,
   which the clamp raises to lo. */
static inline int32_t dsp_requant_s8pr(int32_t x, const int32_t *p, int32_t zr, int32_t lo, int32_t hi)
{
    int32_t l;
    int32_t h;
    int32_t m;
    int32_t e1;
    int32_t y;
    DSP_LD2(p, 0, l, h);
    DSP_LD2(p, 2, m, e1);
    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"(x), "r"(m));
    y = __ssat((h >> e1) + zr, 8);
    if (lo > -128 && y < lo) {
        y = lo;
    }
    if (hi < 127 && y > hi) {
        y = hi;
    }
    return y;
}`}
	helperOrder = append(helperOrder, tir.IntrDSPRequantPR)
	helperText[tir.IntrDSPRequantR] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, `/* dsp_requant_s8 without the sign correction, for an output whose zero point is at or
   below lo (a fused ReLU). */
static inline int32_t dsp_requant_s8r(int32_t x, int32_t m, int64_t k0, int32_t e1, int32_t zr, int32_t lo, int32_t hi)
{
    int32_t l = (int32_t)(uint32_t)(uint64_t)k0;
    int32_t h = (int32_t)(k0 >> 32);
    int32_t y;
    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"(x), "r"(m));
    y = __ssat((h >> e1) + zr, 8);
    if (lo > -128 && y < lo) {
        y = lo;
    }
    if (hi < 127 && y > hi) {
        y = hi;
    }
    return y;
}`}
	helperOrder = append(helperOrder, tir.IntrDSPRequantR)
}
