package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

func init() {
	for _, n := range tir.DSPPwWords {
		for _, signed := range []bool{false, true} {
			addHelperGen(tir.DSPPwSName(n, signed), []string{"dsp_acle"}, func() string { return dspPwC(n, signed) })
		}
	}
}

// dspPwC prints tir.DSPPwSName: one pixel's n pair words x0..x(n-1) held in
// registers across the channels; per channel one LDM of its n weight words
// and its scaled bias (the bias register is the accumulator), n SMLADs, a
// second LDM of m and A (and D with signed: the sign correction, an AND
// with the accumulator's sign and a SUB) and the SMMLA, in one asm
// statement, then SSAT with the layer's shift t (a constant where the
// helper is inlined) and a byte store. The channel loop is unrolled
// whole (gcc's unroll pragma; c is a constant where the helper is
// inlined), so each store has its own offset and no loop is left. Without the asm (no optimization, clang, MCUGEN_NO_ASM) the same
// arithmetic in C with ACLE's __smlad.
func dspPwC(n int, signed bool) string {
	var b strings.Builder
	name, per := tir.DSPPwSName(n, signed), n+3
	if signed {
		per++
	}
	fmt.Fprintf(&b, "/* One pixel of a pointwise convolution with K = %d: x holds its %d widened pair words, tab\n", 2*n, n)
	fmt.Fprintf(&b, "   channel o's %d words at tab + %d*o (its scaled weight pair words, scaled bias, m, A", per, per)
	if signed {
		b.WriteString(", D")
	}
	b.WriteString(");\n   y[o] = clamp((SMMLA(acc, m, A")
	if signed {
		b.WriteString(" - (acc < 0 ? D : 0)")
	}
	b.WriteString(")) >> t, lo, hi) for o < c (tir/dsp_pw.go). */\n")
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int8_t *y, const int32_t *x, const int32_t *tab, int32_t c, int32_t t, int32_t lo, int32_t hi)\n{\n", name)
	for g := 0; g < n; g++ {
		fmt.Fprintf(&b, "    const int32_t x%d = x[%d];\n", g, g)
	}
	b.WriteString("    int32_t o = 0;\n")
	// The accumulator register and the weights' fixed registers: r10 holds
	// the bias, then the sum (LDM lists go up). Not r9, the platform
	// register (the PIC base with -msingle-pic-base, reserved with
	// -ffixed-r9), nor r7, a Thumb frame pointer.
	wregs := []string{"r4", "r5", "r6", "r8"}[:n]
	var asm strings.Builder
	fmt.Fprintf(&asm, "ldmia %%[p]!, {%s, r10}\\n\\t", strings.Join(wregs, ", "))
	for g := 0; g < n; g++ {
		fmt.Fprintf(&asm, "smlad r10, %%[x%d], %s, r10\\n\\t", g, wregs[g])
	}
	if signed {
		asm.WriteString("ldmia %[p]!, {r4, r5, r6}\\n\\tand r6, r6, r10, asr #31\\n\\tsub r5, r5, r6\\n\\t")
	} else {
		asm.WriteString("ldmia %[p]!, {r4, r5}\\n\\t")
	}
	asm.WriteString("smmla %[s], r10, r4, r5")
	var ins []string
	for g := 0; g < n; g++ {
		ins = append(ins, fmt.Sprintf("[x%d] \"r\"(x%d)", g, g))
	}
	clob := `"r4", "r5", "r10", "memory"`
	if n == 4 || signed {
		clob = `"r4", "r5", "r6", "r10", "memory"`
	}
	if n == 4 {
		clob = `"r4", "r5", "r6", "r8", "r10", "memory"`
	}
	channel := func(ind string, at string) string {
		var c strings.Builder
		fmt.Fprintf(&c, "%s{\n%s    int32_t s;\n", ind, ind)
		fmt.Fprintf(&c, "%s    __asm__(\"%s\"\n%s            : [s] \"=r\"(s), [p] \"+r\"(tab)\n%s            : %s\n%s            : %s);\n",
			ind, asm.String(), ind, ind, strings.Join(ins, ", "), ind, clob)
		fmt.Fprintf(&c, "%s    s = (int32_t)__builtin_arm_ssat(s >> t, 8);\n", ind)
		fmt.Fprintf(&c, "%s    if (lo > -128 && s < lo) {\n%s        s = lo;\n%s    }\n", ind, ind, ind)
		fmt.Fprintf(&c, "%s    if (hi < 127 && s > hi) {\n%s        s = hi;\n%s    }\n", ind, ind, ind)
		fmt.Fprintf(&c, "%s    y[%s] = (int8_t)s;\n%s}\n", ind, at, ind)
		return c.String()
	}
	b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)\n")
	b.WriteString("#if __GNUC__ >= 8 || defined(__clang__)\n#pragma GCC unroll 64\n#endif\n")
	b.WriteString("    for (; o < c; ++o) {\n")
	b.WriteString(channel("        ", "o"))
	b.WriteString("    }\n#else\n")
	b.WriteString("    for (; o < c; ++o, tab += " + fmt.Sprint(per) + ") {\n")
	fmt.Fprintf(&b, "        int32_t s = tab[%d];\n", n)
	for g := 0; g < n; g++ {
		fmt.Fprintf(&b, "        s = __smlad(x%d, tab[%d], s);\n", g, g)
	}
	fmt.Fprintf(&b, "        {\n            int32_t a = tab[%d];\n", n+2)
	if signed {
		fmt.Fprintf(&b, "            if (s < 0) {\n                a -= tab[%d];\n            }\n", n+3)
	}
	fmt.Fprintf(&b, "            s = (int32_t)(((int64_t)s * tab[%d]) >> 32) + a;\n        }\n", n+1)
	b.WriteString("        s = (int32_t)__builtin_arm_ssat(s >> t, 8);\n")
	b.WriteString("        if (lo > -128 && s < lo) {\n            s = lo;\n        }\n")
	b.WriteString("        if (hi < 127 && s > hi) {\n            s = hi;\n        }\n")
	b.WriteString("        y[o] = (int8_t)s;\n    }\n#endif\n}")
	return b.String()
}
