package emitc

import "github.com/mcugen/mcugen/tir"

// The C of tir.IntrDSPCol33C3: a 3×3 window of an RGB input as 14 pair
// words, two words and a byte a kernel row (tir/dsp_col33.go has the
// layout). Inlined into the layer, so rs is a constant there and every
// load has an immediate offset.
func init() {
	addHelper(tir.IntrDSPCol33C3, []string{"dsp_acle"}, `/* One 3x3 window of three int8 channels plus off (rows rs bytes apart) as 14 pair words:
   dst[4r..4r+3] = (v0, v2), (v1, v3), (v4, v6), (v5, v7) of row r's nine bytes v0..v8,
   dst[12] = (row 0's v8, row 1's v8), dst[13] = row 2's v8 (its high half the sign). */
static inline MCUGEN_ALWAYS_INLINE void dsp_col33c3_s8(int32_t *dst, const int8_t *src, int32_t rs, int32_t off)
{
    const int32_t o = (int32_t)(((uint32_t)off << 16) | ((uint32_t)off & 0xffffu));
    /* The rows written out: DSP_ST2's offset is an asm immediate, which a loop index is
       only once the compiler unrolls the loop (not at -O0 or -Og, nor in clang's -O1 and
       -Os builds: a review, session 55). */
#define DSP_COL33_ROW(r) do { \
        const int32_t a_ = dsp_read32(src + (r) * rs); \
        const int32_t b_ = dsp_read32(src + (r) * rs + 4); \
        DSP_ST2(dst, 4 * (r), __sxtab16(o, a_), dsp_sxtab16_ror8(o, a_)); \
        DSP_ST2(dst, 4 * (r) + 2, __sxtab16(o, b_), dsp_sxtab16_ror8(o, b_)); \
    } while (0)
    DSP_COL33_ROW(0);
    DSP_COL33_ROW(1);
    DSP_COL33_ROW(2);
#undef DSP_COL33_ROW
    {
        const int32_t e = (int32_t)(((uint32_t)(int32_t)src[8] & 0xffffu) | ((uint32_t)(int32_t)src[rs + 8] << 16));
        DSP_ST2(dst, 12, __sadd16(e, o), (int32_t)src[2 * rs + 8] + off);
    }
}`)
}
