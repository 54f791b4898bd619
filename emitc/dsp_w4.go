package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The packed int4 weights' micro-kernels (tir.DSPMacW4Name, knob
// dsp.weights = 4) and the row sum their accumulators start from
// (tir.IntrDSPSumPairs); tir/dsp_w4.go has the layout and the exact
// semantics. C over <arm_acle.h> and the dsp helpers' DSP_LD2, with one
// asm statement a channel word in the one-row blocks (writeW4Asm), guarded
// as the dsp helpers' one-row asm is.

func init() {
	addHelper(tir.IntrDSPSumPairs, []string{"dsp_acle"}, `/* The sum of both int16 halves of n pair words: a widened row's sum. */
static inline int32_t dsp_sum_pairs(const int32_t *x, int32_t n)
{
    int32_t s = 0;
    int32_t i;
    for (i = 0; i < n; ++i) {
        s = __smlad(x[i], 0x00010001, s);
    }
    return s;
}`)
	for _, b := range tir.DSPMacBlocks {
		for _, u := range tir.DSPMacUnrolls {
			if u%2 != 0 {
				continue
			}
			addHelperGen(tir.DSPMacW4Name(b[0], b[1], u), []string{"dsp_acle"}, func() string { return dspMacW4C(b[0], b[1], u) })
		}
	}
}

// dspMacW4C prints the r×c block over packed int4 weights (each stored plus
// 8, an unsigned nibble), u groups of four k (u/2 weight words a channel)
// per iteration: per word p of a channel, p & M, (p >> 8) & M, (p >> 4) & M
// and (p >> 12) & M with M = 0x000F000F are the pair words that the rows'
// activation words 4G..4G+3 pair with, no sign extension needed: one AND
// (of a shifted operand) and one SMLAD per two MACs of a row. The caller
// starts the accumulators 8·Σx lower (tir.IntrDSPSumPairs).
func dspMacW4C(r, c, u int) string {
	var b strings.Builder
	name := tir.DSPMacW4Name(r, c, u)
	fmt.Fprintf(&b, "/* acc[i*%d + j] += sum over G < n/4, t < 2, h < 2 of smlad(x[i*xs + 4G + 2t + h],\n"+
		"   (nib(w[%d*G + 4j + h], t), nib(w[%d*G + 4j + h + 2], t))), i < %d, j < %d:\n"+
		"   nib(b, 0) is byte b's low nibble, nib(b, 1) its high one, unsigned (the weight plus 8). */\n", c, 4*c, 4*c, r, c)
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int32_t *acc, const int32_t *x, int32_t xs, const int8_t *w, int32_t n)\n{\n", name)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "    int32_t a%d%d = acc[%d];\n", i, j, i*c+j)
		}
	}
	for i := 0; i < r; i++ {
		fmt.Fprintf(&b, "    const int32_t *x%d = x + %d * xs;\n", i, i)
	}
	b.WriteString("    const int32_t *const end = x0 + n;\n")
	if r == 1 {
		// The mask in a register: AND with a shifted register operand is
		// then one instruction a pair word.
		b.WriteString("    const uint32_t m = 0x000f000fu;\n")
		b.WriteString("    (void)xs;\n")
	}
	b.WriteString("    while (x0 < end) {\n")
	in := "        "
	for i := 0; i < r; i++ {
		fmt.Fprintf(&b, "%sint32_t p%d;\n%sint32_t q%d;\n%sint32_t r%d;\n%sint32_t s%d;\n", in, i, in, i, in, i, in, i)
	}
	for st := 0; st < u/2; st++ {
		for i := 0; i < r; i++ {
			fmt.Fprintf(&b, "%sDSP_LD2(x%d, %d, p%d, q%d);\n", in, i, 4*st, i, i)
			fmt.Fprintf(&b, "%sDSP_LD2(x%d, %d, r%d, s%d);\n", in, i, 4*st+2, i, i)
		}
		if r == 1 {
			writeW4Asm(&b, c, st, in)
		}
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "%s{\n", in)
			jn := in + "    "
			fmt.Fprintf(&b, "%sconst uint32_t wv = (uint32_t)dsp_read32(w + %d);\n", jn, 4*(c*st+j))
			if r == 1 {
				fmt.Fprintf(&b, "%sa0%d = __smlad(p0, (int32_t)(wv & m), a0%d);\n", jn, j, j)
				fmt.Fprintf(&b, "%sa0%d = __smlad(q0, (int32_t)((wv >> 8) & m), a0%d);\n", jn, j, j)
				fmt.Fprintf(&b, "%sa0%d = __smlad(r0, (int32_t)((wv >> 4) & m), a0%d);\n", jn, j, j)
				fmt.Fprintf(&b, "%sa0%d = __smlad(s0, (int32_t)((wv >> 12) & m), a0%d);\n", jn, j, j)
			} else {
				fmt.Fprintf(&b, "%sconst int32_t w0 = (int32_t)(wv & 0x000f000fu);\n", jn)
				fmt.Fprintf(&b, "%sconst int32_t w1 = (int32_t)((wv >> 8) & 0x000f000fu);\n", jn)
				fmt.Fprintf(&b, "%sconst int32_t w2 = (int32_t)((wv >> 4) & 0x000f000fu);\n", jn)
				fmt.Fprintf(&b, "%sconst int32_t w3 = (int32_t)((wv >> 12) & 0x000f000fu);\n", jn)
				for i := 0; i < r; i++ {
					fmt.Fprintf(&b, "%sa%d%d = __smlad(p%d, w0, a%d%d);\n", jn, i, j, i, i, j)
					fmt.Fprintf(&b, "%sa%d%d = __smlad(q%d, w1, a%d%d);\n", jn, i, j, i, i, j)
					fmt.Fprintf(&b, "%sa%d%d = __smlad(r%d, w2, a%d%d);\n", jn, i, j, i, i, j)
					fmt.Fprintf(&b, "%sa%d%d = __smlad(s%d, w3, a%d%d);\n", jn, i, j, i, i, j)
				}
			}
			fmt.Fprintf(&b, "%s}\n", in)
		}
		if r == 1 {
			b.WriteString("#endif\n")
		}
	}
	fmt.Fprintf(&b, "%sw += %d;\n", in, 2*c*u)
	for i := 0; i < r; i++ {
		fmt.Fprintf(&b, "%sx%d += %d;\n", in, i, 2*u)
	}
	b.WriteString("    }\n")
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "    acc[%d] = a%d%d;\n", i*c+j, i, j)
		}
	}
	b.WriteString("}")
	return b.String()
}

// writeW4Asm prints, for one activation row, the asm form of word group st
// of each of the c channels: one statement a channel, LDR of its weight
// word, then per pair word an AND of the word (shifted) with the mask and
// an SMLAD, nine instructions for eight MACs where gcc, left to the C form,
// hoists the loads of an unrolled loop and spills the masked words. It is
// guarded as the dsp helpers' one-row asm is (writeMacLoop): optimised
// builds without MCUGEN_NO_ASM, and for four channels not -Os nor
// position-independent code; the C form is the #else.
func writeW4Asm(b *strings.Builder, c, st int, in string) {
	if c == 4 {
		b.WriteString("#if defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__PIC__)\n")
	} else {
		b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)\n")
	}
	for j := 0; j < c; j++ {
		fmt.Fprintf(b, "%s{\n", in)
		jn := in + "    "
		fmt.Fprintf(b, "%suint32_t v;\n%suint32_t t;\n", jn, jn)
		fmt.Fprintf(b, "%s__asm__(\"ldr %%[v], [%%[w], %%[o]]\\n\\t\"\n", jn)
		for k, sh := range []string{"", ", lsr #8", ", lsr #4", ", lsr #12"} {
			end := "\\n\\t"
			if k == 3 {
				end = ""
			}
			fmt.Fprintf(b, "%s        \"and %%[t], %%[m], %%[v]%s\\n\\t\"\n", jn, sh)
			fmt.Fprintf(b, "%s        \"smlad %%[a], %%[%c], %%[t], %%[a]%s\"\n", jn, "pqrs"[k], end)
		}
		fmt.Fprintf(b, "%s        : [a] \"+r\"(a0%d), [v] \"=&r\"(v), [t] \"=&r\"(t)\n", jn, j)
		fmt.Fprintf(b, "%s        : [w] \"r\"(w), [o] MCUGEN_ASM_IMM(%d), [m] \"r\"(m), [p] \"r\"(p0), [q] \"r\"(q0), [r] \"r\"(r0), [s] \"r\"(s0),\n", jn, 4*(c*st+j))
		fmt.Fprintf(b, "%s          \"m\"(*(const dsp_byte_quad *)(w + %d)));\n", jn, 4*(c*st+j))
		fmt.Fprintf(b, "%s}\n", in)
	}
	b.WriteString("#else\n")
}
