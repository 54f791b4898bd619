package emitc

import (
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of the dsp requantization intrinsics (tir/dsp_intrin.go and
// tir/dsp_requant.go have their semantics): parameters as immediates or
// packed per channel (two LDRDs), with or without the sign correction.

func init() {
	addHelper(tir.IntrDSPRequant, []string{"dsp_acle"}, requantC(false, true, `/* clamp(requant(x, m, -(e1 + 1)) + zk + zr, lo, hi) for m >= 0, with
   k0 = 2^30 + 2^(31 + e1) + zk * 2^(32 + e1): TFLite's two roundings and
   the zero point folded into one SMLAL, a sign correction and a shift of
   the high word (tir/dsp_intrin.go has the derivation). SSAT does the int8
   clamp; the tests on lo and hi fold away for the full range. */`))
	addHelper(tir.IntrDSPRequantP, []string{"dsp_acle"}, requantC(true, true, `/* clamp(requant(x, p[2], -(p[3] + 1)) + zp, lo, hi) with k0 = p[0] + p[1] * 2^32
   (dsp_requant_s8 with its parameters packed: two LDRDs); the sign correction
   -[x < 0] * 2^31 is a second SMLAL of (x >> 31, unsigned) by INT32_MIN. */`))
	addHelper(tir.IntrDSPRequantR, []string{"dsp_acle"}, requantC(false, false, `/* dsp_requant_s8 without the sign correction, for an output whose zero point is at or
   below lo (a fused ReLU). */`))
	addHelper(tir.IntrDSPRequantPR, []string{"dsp_acle"}, requantC(true, false, `/* dsp_requant_s8p without the sign correction, for an output whose zero point is at
   or below lo (a fused ReLU): a negative x gives at most the zero point either way,
   which the clamp raises to lo. */`))
}

// requantC prints one requantization helper: packed takes k0, m and e1 from
// p (two LDRDs), else as arguments; sign adds TFLite's sign correction
// -[x < 0] * 2^31 as a second SMLAL.
func requantC(packed, sign bool, comment string) string {
	var b strings.Builder
	name, params, load := "dsp_requant_s8", "int32_t m, int64_t k0, int32_t e1", `    int32_t l = (int32_t)(uint32_t)(uint64_t)k0;
    int32_t h = (int32_t)(k0 >> 32);
    int32_t y;
`
	if packed {
		name, params, load = "dsp_requant_s8p", "const int32_t *p", `    int32_t l;
    int32_t h;
    int32_t m;
    int32_t e1;
    int32_t y;
    DSP_LD2(p, 0, l, h);
    DSP_LD2(p, 2, m, e1);
`
	}
	if !sign {
		name += "r"
	}
	b.WriteString(comment + "\nstatic inline int32_t " + name + "(int32_t x, " + params + ", int32_t zr, int32_t lo, int32_t hi)\n{\n" + load)
	if sign && !packed {
		b.WriteString("    /* x * m + k0, then the sign correction -[x < 0] * 2^31 as a second SMLAL. */\n")
	}
	b.WriteString(`    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"(x), "r"(m));` + "\n")
	if sign {
		b.WriteString(`    __asm__("smlal %0, %1, %2, %3" : "+r"(l), "+r"(h) : "r"((int32_t)((uint32_t)x >> 31)), "r"(INT32_MIN));` + "\n")
	}
	b.WriteString(`    y = (int32_t)__builtin_arm_ssat((h >> e1) + zr, 8);
    if (lo > -128 && y < lo) {
        y = lo;
    }
    if (hi < 127 && y > hi) {
        y = hi;
    }
    return y;
}`)
	return b.String()
}
