package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C spellings of tir's DSP micro-kernel intrinsics (tir/dsp_intrin.go
// has their exact semantics). Each is one static inline helper over gcc's
// <arm_acle.h>; they are printed only into models scheduled for "dsp".

func init() {
	add := func(name string, deps []string, code string) {
		helperText[name] = struct {
			deps []string
			code string
		}{deps, code}
		helperOrder = append(helperOrder, name)
	}
	add("dsp_acle", nil, `#include <arm_acle.h>

/* Rotate right by 8 (gcc folds it into SXTB16's ROR operand). */
static inline int32_t dsp_ror8(int32_t v)
{
    return (int32_t)(((uint32_t)v >> 8) | ((uint32_t)v << 24));
}

static inline int32_t dsp_read32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}`)
	for _, b := range tir.DSPMacBlocks {
		add(tir.DSPMacName(b[0], b[1]), []string{"dsp_acle"}, dspMacC(b[0], b[1]))
	}
	add(tir.IntrDSPDW4, []string{"dsp_acle"}, `/* acc[j] += (x[j] + xo) * w[perm[j]], perm = {0, 2, 1, 3}: four channels
   of one tap, channels (0, 2) and (1, 3) paired by SXTAB16. */
static inline void dsp_dw4_s8(int32_t *acc, const int8_t *x, const int16_t *w, int32_t xo)
{
    const int32_t o = (int32_t)(((uint32_t)xo << 16) | ((uint32_t)xo & 0xffffu));
    const int32_t xv = dsp_read32(x);
    const int32_t x02 = __sxtab16(o, xv);
    const int32_t x13 = __sxtab16(o, dsp_ror8(xv));
    const int32_t w02 = dsp_read32(w);
    const int32_t w13 = dsp_read32(w + 2);
    acc[0] = __smlabb(x02, w02, acc[0]);
    acc[2] = __smlatt(x02, w02, acc[2]);
    acc[1] = __smlabb(x13, w13, acc[1]);
    acc[3] = __smlatt(x13, w13, acc[3]);
}`)
}

// dspMacC prints the r×c int8 dot-product block: acc[i*c + j] += Σ_k
// x[i*xs + k] * w[j*ws + k]. Four k at a time, each x and w word is split
// by SXTB16 into its even and odd bytes (both operands the same way, so
// the pairs match) and two SMLADs add the four products.
func dspMacC(r, c int) string {
	var b strings.Builder
	name := tir.DSPMacName(r, c)
	fmt.Fprintf(&b, "/* acc[i*%d + j] += sum_k x[i*xs + k] * w[j*ws + k], i < %d, j < %d. */\n", c, r, c)
	fmt.Fprintf(&b, "static inline void %s(int32_t *acc, const int8_t *x, int32_t xs, const int8_t *w, int32_t ws, int32_t n)\n{\n", name)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "    int32_t a%d%d = acc[%d];\n", i, j, i*c+j)
		}
	}
	b.WriteString("    int32_t k = 0;\n")
	if r == 1 {
		b.WriteString("    (void)xs;\n")
	}
	if c == 1 {
		b.WriteString("    (void)ws;\n")
	}
	b.WriteString("    for (; k + 4 <= n; k += 4) {\n")
	for i := 0; i < r; i++ {
		fmt.Fprintf(&b, "        const int32_t xv%d = dsp_read32(x + %s k);\n", i, off("xs", i))
		fmt.Fprintf(&b, "        const int32_t xe%d = __sxtb16(xv%d);\n", i, i)
		fmt.Fprintf(&b, "        const int32_t xo%d = __sxtb16(dsp_ror8(xv%d));\n", i, i)
	}
	for j := 0; j < c; j++ {
		fmt.Fprintf(&b, "        {\n            const int32_t wv = dsp_read32(w + %s k);\n", off("ws", j))
		b.WriteString("            const int32_t we = __sxtb16(wv);\n            const int32_t wo = __sxtb16(dsp_ror8(wv));\n")
		for i := 0; i < r; i++ {
			fmt.Fprintf(&b, "            a%d%d = __smlad(xe%d, we, a%d%d);\n", i, j, i, i, j)
			fmt.Fprintf(&b, "            a%d%d = __smlad(xo%d, wo, a%d%d);\n", i, j, i, i, j)
		}
		b.WriteString("        }\n")
	}
	b.WriteString("    }\n    for (; k < n; ++k) {\n")
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			fmt.Fprintf(&b, "        a%d%d += (int32_t)x[%s k] * (int32_t)w[%s k];\n", i, j, off("xs", i), off("ws", j))
		}
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

func off(s string, i int) string {
	switch i {
	case 0:
		return ""
	case 1:
		return s + " +"
	}
	return fmt.Sprintf("%d * %s +", i, s)
}
