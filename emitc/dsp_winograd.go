package emitc

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrDSPWinoIn: the Winograd F(2×2, 3×3) input transform
// Bᵀ d B of one 4×4 tile, two int16 lanes per word (SSUB16/SADD16: the
// values stay within ±1020, so the lanes never wrap).
func init() {
	helperText[tir.IntrDSPWinoIn] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, `/* Winograd F(2x2, 3x3) input transform of one 4x4 tile of int16 pair words:
   d[r * rs + c * cs + k] is row r, column c, word k < n; v[(4r + c) * vs + k] = (B^T d B)[r][c]. */
static inline __attribute__((always_inline)) void dsp_wino_in_s16(int32_t *v, const int32_t *d, int32_t rs, int32_t cs, int32_t n, int32_t vs)
{
    /* Inlined, so the strides are constants: per word k, sixteen loads, the
       column transform into sixteen values, the row transform into sixteen
       stores, no array in memory between them. */
    const int32_t *const end = d + n;
    for (; d < end; ++d, ++v) {
        const int32_t d00 = d[0], d01 = d[cs], d02 = d[2 * cs], d03 = d[3 * cs];
        const int32_t d10 = d[rs], d11 = d[rs + cs], d12 = d[rs + 2 * cs], d13 = d[rs + 3 * cs];
        const int32_t d20 = d[2 * rs], d21 = d[2 * rs + cs], d22 = d[2 * rs + 2 * cs], d23 = d[2 * rs + 3 * cs];
        const int32_t d30 = d[3 * rs], d31 = d[3 * rs + cs], d32 = d[3 * rs + 2 * cs], d33 = d[3 * rs + 3 * cs];
        int32_t t0;
        int32_t t1;
        int32_t t2;
        int32_t t3;
        t0 = __ssub16(d00, d20);
        t1 = __ssub16(d01, d21);
        t2 = __ssub16(d02, d22);
        t3 = __ssub16(d03, d23);
        v[0] = __ssub16(t0, t2);
        v[vs] = __sadd16(t1, t2);
        v[2 * vs] = __ssub16(t2, t1);
        v[3 * vs] = __ssub16(t1, t3);
        t0 = __sadd16(d10, d20);
        t1 = __sadd16(d11, d21);
        t2 = __sadd16(d12, d22);
        t3 = __sadd16(d13, d23);
        v[4 * vs] = __ssub16(t0, t2);
        v[5 * vs] = __sadd16(t1, t2);
        v[6 * vs] = __ssub16(t2, t1);
        v[7 * vs] = __ssub16(t1, t3);
        t0 = __ssub16(d20, d10);
        t1 = __ssub16(d21, d11);
        t2 = __ssub16(d22, d12);
        t3 = __ssub16(d23, d13);
        v[8 * vs] = __ssub16(t0, t2);
        v[9 * vs] = __sadd16(t1, t2);
        v[10 * vs] = __ssub16(t2, t1);
        v[11 * vs] = __ssub16(t1, t3);
        t0 = __ssub16(d10, d30);
        t1 = __ssub16(d11, d31);
        t2 = __ssub16(d12, d32);
        t3 = __ssub16(d13, d33);
        v[12 * vs] = __ssub16(t0, t2);
        v[13 * vs] = __sadd16(t1, t2);
        v[14 * vs] = __ssub16(t2, t1);
        v[15 * vs] = __ssub16(t1, t3);
    }
}`}
	helperOrder = append(helperOrder, tir.IntrDSPWinoIn)
	for r := 1; r <= 2; r++ {
		for _, u := range tir.DSPMacUnrolls {
			addHelper(tir.DSPWinoMacName(r, u), []string{"dsp_acle"}, dspWinoMacC(r, u))
		}
	}
}

// dspWinoMacC prints tir.DSPWinoMacName: per tile position the r×2 block
// of dspMacC, its accumulators started at zero and stored to m, so no
// call per position loads, zeroes or stores them through memory. The
// tiles of a block are xs words apart (a constant once inlined), so two
// tiles take the LDM asm of the 2×2 block.
func dspWinoMacC(r, u int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* m[4*xi + 2*i + j] = sum over g < n/2, h < 2 of smlad(x[xi*ps + i*xs + 2g + h], w[xi*ws + 4g + 2j + h]), xi < 16, i < %d, j < 2. */\n", r)
	fmt.Fprintf(&b, "static inline __attribute__((always_inline)) void %s(int32_t *m, const int32_t *xt, int32_t ps, int32_t xs, const int32_t *wt, int32_t ws, int32_t n)\n{\n", tir.DSPWinoMacName(r, u))
	b.WriteString("    int32_t xi;\n")
	if r == 1 {
		b.WriteString("    (void)xs;\n")
	}
	b.WriteString("    for (xi = 0; xi < 16; ++xi, m += 4) {\n")
	b.WriteString("        const int32_t *x = xt + xi * ps;\n        const int32_t *w = wt + xi * ws;\n")
	// K in one iteration (n = 2u, the usual case: the schedule takes the
	// largest unroll that divides K): the LDM asm straight, its first group
	// starting the accumulators with SMUAD (no zeroing moves, no loop).
	cond := fmt.Sprintf("__builtin_constant_p(n) && n == %d", 2*u)
	if r == 2 {
		cond += fmt.Sprintf(" && __builtin_constant_p(xs) && xs >= 0 && xs <= %d", (1020-8*(u-1))/4)
	}
	b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM) && !defined(__clang__)\n")
	fmt.Fprintf(&b, "        if (%s) {\n", cond)
	for i := 0; i < r; i++ {
		for j := 0; j < 2; j++ {
			fmt.Fprintf(&b, "            int32_t a%d%d;\n", i, j)
		}
	}
	b.WriteString("            const int32_t *const x0 = x;\n")
	writeMacLDM(&b, r, 2, u, false, true, "            ")
	for i := 0; i < r; i++ {
		for j := 0; j < 2; j++ {
			fmt.Fprintf(&b, "            m[%d] = a%d%d;\n", 2*i+j, i, j)
		}
	}
	b.WriteString("            continue;\n        }\n#endif\n")
	for i := 0; i < r; i++ {
		for j := 0; j < 2; j++ {
			fmt.Fprintf(&b, "        int32_t a%d%d = 0;\n", i, j)
		}
	}
	writeMacLoop(&b, r, 2, u, false, "        ", "", true)
	for i := 0; i < r; i++ {
		for j := 0; j < 2; j++ {
			fmt.Fprintf(&b, "        m[%d] = a%d%d;\n", 2*i+j, i, j)
		}
	}
	b.WriteString("    }\n}")
	return b.String()
}
