package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrMVEDWLanes5 and tir.IntrMVEDWLanes7: one output line of
// a 5×5 or 7×7 depthwise convolution on Helium with four adjacent outputs
// of one channel in the lanes (tir/mve_dwlanes.go). Each tap is one
// widening load at a constant offset of the plane pointer and one VMLA by
// the tap's weight, which gcc loads from the channel's table (k² weights
// are more than the core registers); the requantization and the byte
// scatter back to the pixels are mve_dwl3_s8's.
func init() {
	addHelper("mve_dwlk_rq", []string{"mve_dwl3_s8"}, `/* The requantization of mve_dwl3_rq with a clamp short of the int8 range by compares against
   the bounds as scalars and predicated VDUPs: no vectors of the bounds, which took two of the
   eight Q registers the taps, the multiplier, the shift and the scatter offsets need (gcc
   spilled: 274,398 instructions against 200,630 for a ReLU6 layer). */
MVE_INLINE int32x4_t mve_dwlk_rq(int32x4_t a, int32x4_t m, int32x4_t s, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    if (left || (lo == -128 && hi == 127)) {
        return mve_dwl3_rq(a, m, s, left, zp, lo, hi);
    }
    a = mve_requantr_nc_x4(a, m, s, zp, lo < zp);
    a = vdupq_m_n_s32(a, lo, vcmpltq_n_s32(a, lo));
    return vdupq_m_n_s32(a, hi, vcmpgtq_n_s32(a, hi));
}`)
	for _, k := range []int{5, 7} {
		name := tir.IntrMVEDWLanes5
		if k == 7 {
			name = tir.IntrMVEDWLanes7
		}
		addHelperGen(name, []string{"mve_requant_s8", "mve_requantr_s8", "mve_iota", "mve_dwl3_s8", "mve_dwlk_rq"},
			func() string { return mveDWLanesKC(k) })
	}
}

// mveDWLanesKC prints mve_dwlK_s8.
func mveDWLanesKC(k int) string {
	name := fmt.Sprintf("mve_dwl%d_s8", k)
	words := k*k + 3
	var taps strings.Builder
	for r := 0; r < k; r++ {
		for t := 0; t < k; t++ {
			col := fmt.Sprintf("%d", t)
			if t > 0 {
				col = fmt.Sprintf("(stride == 2 ? %d * hs + %d : %d)", t%2, t/2, t)
			}
			fmt.Fprintf(&taps, "    a = vmlaq_n_s32(a, vldrbq_s32(r + s%d + %s), p[%d]);\n", r, col, r*k+t)
		}
	}
	return fmt.Sprintf(`/* One output line of a %[1]dx%[1]d depthwise conv, four adjacent outputs of one channel
   per vector (tir/mve_dwlanes.go): for ch < c and j < ow, with P = p + %[2]d*ch and the
   channel's plane rows r_k = q + ch*cs + s_k (k < %[1]d; laid out by mve_dwplanes_s8),
   acc = P[%[3]d] + sum over k, t < %[1]d of r_k[col(j*stride + t)] * P[%[1]d*k + t] and
   y[j*ys + ch] = clamp(requant(acc, P[%[4]d], P[%[5]d]) + zp, lo, hi). Each tap is one
   widening load and one VMLA by the weight. */
MVE_INLINE int32x4_t %[7]s_vec(const int8_t *r, const int32_t *p, int32_t s0, int32_t s1, int32_t s2, int32_t s3, int32_t s4,
                                  int32_t s5, int32_t s6, int32_t rs, int32_t stride, int32x4_t m, int32x4_t s, int32_t left,
                                  int32_t zp, int32_t lo, int32_t hi)
{
    const int32_t hs = rs / 2;
    int32x4_t a = vdupq_n_s32(p[%[3]d]);
    %[8]s
    (void)hs;
%[6]s    return mve_dwlk_rq(a, m, s, left, zp, lo, hi);
}
MVE_INLINE void %[7]s(int8_t *y, const int8_t *q, int32_t s0, int32_t s1, int32_t s2, int32_t s3, int32_t s4,
                            int32_t s5, int32_t s6, int32_t cs, int32_t rs, const int32_t *p, int32_t c, int32_t ow,
                            int32_t ys, int32_t stride, int32_t left, int32_t zp, int32_t lo, int32_t hi)
{
    const uint32x4_t off = vmulq_n_u32(vldrwq_u32(mve_iota_u32), (uint32_t)ys);
    int32_t ch;
    for (ch = 0; ch < c; ++ch, p += %[2]d, q += cs) {
        const int32x4_t m = vdupq_n_s32(p[%[4]d]);
        const int32x4_t s = vdupq_n_s32(p[%[5]d]);
        const int8_t *r = q;
        int8_t *o = y + ch;
        int32_t k;
        /* The whole vectors, then the tail's lanes. */
        for (k = ow / 4; k > 0; --k, r += 4, o += 4 * ys) {
            vstrbq_scatter_offset_s32(o, off, %[7]s_vec(r, p, s0, s1, s2, s3, s4, s5, s6, rs, stride, m, s, left, zp, lo, hi));
        }
        if (ow %% 4 != 0) {
            /* The tail's lanes by a predicated scatter (mve_dwl3_s8 says why). */
            vstrbq_scatter_offset_p_s32(o, off, %[7]s_vec(r, p, s0, s1, s2, s3, s4, s5, s6, rs, stride, m, s, left, zp, lo, hi),
                                        vctp32q((uint32_t)(ow %% 4)));
        }
    }
}`, k, words, k*k, k*k+1, k*k+2, taps.String(), name, unusedRows(k))
}

// unusedRows voids the row offsets a k×k kernel does not read.
func unusedRows(k int) string {
	var parts []string
	for i := k; i < 7; i++ {
		parts = append(parts, fmt.Sprintf("(void)s%d;", i))
	}
	return strings.Join(parts, " ")
}
