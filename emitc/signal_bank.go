package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir"
)

// The C of the signal filter bank intrinsics (tir/compute_signal_bank.go),
// TFLite Micro's signal/src arithmetic on uint32 and uint64 values carried
// as int64_t: interp's Sig* functions are the Go side. Every product and
// sum that TFLite Micro computes unsigned is unsigned here too.
func init() {
	addHelper("sig_sqrt32", []string{"clz32"}, `/* TFLite Micro's Sqrt32: the rounded square root of num, bit by bit. */
static inline uint32_t sig_sqrt32(uint32_t num)
{
    uint32_t res = 0, bit;
    int32_t top, it;
    if (num == 0) {
        return 0;
    }
    top = clz32(num) | 1;
    bit = UINT32_C(1) << (31 - top);
    for (it = (31 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != UINT32_C(0xFFFF)) {
        ++res;
    }
    return (uint32_t)(uint16_t)res;
}`)
	addHelper("sig_sqrt64", []string{"clz32", "sig_sqrt32"}, `/* TFLite Micro's Sqrt64: the rounded square root of num, bit by bit. */
static inline uint32_t sig_sqrt64(uint64_t num)
{
    uint64_t res = 0, bit;
    int32_t top, it;
    if ((num >> 32) == 0) {
        return sig_sqrt32((uint32_t)num);
    }
    top = clz32((uint32_t)(num >> 32)) | 1;
    bit = UINT64_C(1) << (63 - top);
    for (it = (63 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != UINT64_C(0xFFFFFFFF)) {
        ++res;
    }
    return (uint32_t)res;
}`)
	addHelper(tir.IntrSigFBTerm, nil, `/* A filter bank term: acc + w * x modulo 2^64 (x is uint32), as TFLite Micro sums in uint64. */
static inline int64_t sig_fb_term(int64_t acc, int32_t w, int64_t x)
{
    return (int64_t)((uint64_t)acc + (uint64_t)(int64_t)w * (uint64_t)(uint32_t)x);
}`)
	addHelper(tir.IntrSigFBSqrt, []string{"sig_sqrt64"}, `/* FilterbankSqrt of one channel: the root of x (uint64) shifted right (0 past 31 bits). */
static inline int64_t sig_fb_sqrt(int64_t x, int32_t shift)
{
    uint32_t r = sig_sqrt64((uint64_t)x);
    if (shift > 31) {
        return 0;
    }
    return (int64_t)(shift < 0 ? r : r >> shift);
}`)
	addHelper(tir.IntrSigNoise, nil, `/* FilterbankSpectralSubtraction: one channel's next noise estimate (uint32 values). */
static inline int64_t sig_noise(int64_t x, int64_t prev, int64_t s, int64_t om, int32_t sb, int32_t ssb, int32_t clamp)
{
    uint32_t up = (uint32_t)x << sb;
    uint32_t e = (uint32_t)(((uint64_t)up * (uint32_t)s + (uint64_t)(uint32_t)prev * (uint32_t)om) >> ssb);
    if (clamp && e > up) {
        e = up;
    }
    return (int64_t)e;
}`)
	addHelper(tir.IntrSigSubtract, nil, `/* FilterbankSpectralSubtraction: one channel's output given its next noise estimate. */
static inline int64_t sig_subtract(int64_t x, int64_t est, int64_t min_signal, int32_t sb, int32_t ssb)
{
    uint32_t up = (uint32_t)x << sb;
    uint32_t e = (uint32_t)est;
    uint32_t fl = (uint32_t)(((uint64_t)(uint32_t)x * (uint32_t)min_signal) >> ssb);
    uint32_t sub;
    if (e > up) {
        e = up;
    }
    sub = (up - e) >> sb;
    return (int64_t)(sub > fl ? sub : fl);
}`)
	addHelper(tir.IntrSigPCANIdx, []string{"clz32"}, `/* PCAN: the first gain table entry WideDynamicFunction reads for noise estimate x. */
static inline int32_t sig_pcan_idx(int64_t x)
{
    uint32_t u = (uint32_t)x;
    return u <= 2 ? (int32_t)u : 4 * (32 - clz32(u)) - 6;
}`)
	addHelper(tir.IntrSigPCANGain, []string{"clz32"}, `/* PCAN: TFLite Micro's WideDynamicFunction of x from table entries l0, l1, l2 (int32 arithmetic, wrapping). */
static inline int32_t sig_pcan_gain(int64_t x, int32_t l0, int32_t l1, int32_t l2)
{
    uint32_t u = (uint32_t)x, f;
    int32_t interval, frac, r;
    if (u <= 2) {
        return l0;
    }
    interval = 32 - clz32(u);
    f = interval < 11 ? u << (11 - interval) : u >> (interval - 11);
    frac = (int32_t)(f & 0x3FF);
    r = (l2 * frac) >> 5;
    r += (int32_t)((uint32_t)l1 << 5);
    r = (int32_t)((uint32_t)r * (uint32_t)frac);
    r = (int32_t)((uint32_t)r + UINT32_C(16384)) >> 15;
    r += l0;
    return (int32_t)(int16_t)r;
}`)
	addHelper(tir.IntrSigPCANOut, nil, `/* PCAN: x (uint32) times the gain, shifted, then PcanShrink. */
static inline int64_t sig_pcan_out(int64_t x, int32_t gain, int32_t shift)
{
    uint32_t snr = (uint32_t)(((uint64_t)(uint32_t)x * (uint32_t)gain) >> shift);
    if (snr < (UINT32_C(2) << 12)) {
        return (int64_t)((snr * snr) >> 20);
    }
    return (int64_t)((snr >> 6) - 64);
}`)
	addHelperGen("sig_log32", []string{"clz32"}, func() string {
		var b strings.Builder
		b.WriteString("/* TFLite Micro's Log32: the natural log of x in Q16 scaled by out_scale; the table is\n   log2(1 + i/128) - i/128 in Q16 (interp.SigLogLUT). */\nstatic const uint16_t sig_log_lut[130] = {")
		for i, v := range interp.SigLogLUT() {
			if i%16 == 0 {
				b.WriteString("\n    ")
			} else {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%d,", v)
		}
		b.WriteString(`
};
static inline uint32_t sig_log32(uint32_t x, uint32_t out_scale)
{
    uint32_t integer = (uint32_t)(31 - clz32(x)), seg, log2, loge;
    int32_t frac = (int32_t)(x - (UINT32_C(1) << integer)), c0, c1, seg_base, rel;
    if (integer < 16) {
        frac <<= 16 - integer;
    } else {
        frac >>= integer - 16;
    }
    seg = (uint32_t)frac >> 9;
    c0 = (int32_t)sig_log_lut[seg];
    c1 = (int32_t)sig_log_lut[seg + 1];
    seg_base = (int32_t)((UINT32_C(65536) >> 7) * seg);
    rel = ((c1 - c0) * (frac - seg_base)) >> 16;
    log2 = (integer << 16) + (uint32_t)(frac + c0 + rel);
    loge = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16);
    return (out_scale * loge + 32768) >> 16;
}`)
		return b.String()
	})
	addHelper(tir.IntrSigFBLog, []string{"sig_log32"}, `/* FilterbankLog of one channel: the scaled log of x << corr, at most 32767, 0 for 0 and 1. */
static inline int32_t sig_fb_log(int64_t x, int32_t scale, int32_t corr)
{
    uint32_t s = (uint32_t)x << corr, v;
    if (s <= 1) {
        return 0;
    }
    v = sig_log32(s, (uint32_t)scale);
    return (int32_t)(v < 32767 ? v : 32767);
}`)
}
