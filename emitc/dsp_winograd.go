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
	}{[]string{"dsp_acle"}, winoInC()}
	helperOrder = append(helperOrder, tir.IntrDSPWinoIn)
	for r := 1; r <= 2; r++ {
		for _, u := range tir.DSPMacUnrolls {
			addHelperGen(tir.DSPWinoMacName(r, u), []string{"dsp_acle"}, func() string { return dspWinoMacC(r, u) })
		}
	}
}

// winoBt is Bᵀ of F(2×2, 3×3), a row at a time: row i is op(x_a, x_b).
var winoBt = [4]struct {
	op   string
	a, b int
}{{"__ssub16", 0, 2}, {"__sadd16", 1, 2}, {"__ssub16", 2, 1}, {"__ssub16", 1, 3}}

// winoInC prints dsp_wino_in_s16: per word, the tile's sixteen loads, then
// for each row i of Bᵀ d the four column values t_c, and from them row i
// of (Bᵀ d) B, four stores; the same table serves both sides.
func winoInC() string {
	var b strings.Builder
	b.WriteString(`/* Winograd F(2x2, 3x3) input transform of one 4x4 tile of int16 pair words:
   d[r * rs + c * cs + k] is row r, column c, word k < n; v[(4r + c) * vs + k] = (B^T d B)[r][c]. */
static inline MCUGEN_ALWAYS_INLINE void dsp_wino_in_s16(int32_t *v, const int32_t *d, int32_t rs, int32_t cs, int32_t n, int32_t vs)
{
    /* Inlined, so the strides are constants: per word k, sixteen loads, the
       column transform into sixteen values, the row transform into sixteen
       stores, no array in memory between them. */
    const int32_t *const end = d + n;
    for (; d < end; ++d, ++v) {
`)
	for r := 0; r < 4; r++ {
		var ds []string
		for c := 0; c < 4; c++ {
			ds = append(ds, fmt.Sprintf("d%d%d = d[%d * rs + %d * cs]", r, c, r, c))
		}
		fmt.Fprintf(&b, "        const int32_t %s;\n", strings.Join(ds, ", "))
	}
	b.WriteString("        int32_t t0;\n        int32_t t1;\n        int32_t t2;\n        int32_t t3;\n")
	for i, row := range winoBt {
		for c := 0; c < 4; c++ {
			fmt.Fprintf(&b, "        t%d = %s(d%d%d, d%d%d);\n", c, row.op, row.a, c, row.b, c)
		}
		for j, col := range winoBt {
			fmt.Fprintf(&b, "        v[%d * vs] = %s(t%d, t%d);\n", 4*i+j, col.op, col.a, col.b)
		}
	}
	b.WriteString("    }\n}")
	return b.String()
}

// dspWinoMacC prints tir.DSPWinoMacName: per tile position the r×2 block
// of dspMacC, its accumulators started at zero and stored to m, so no
// call per position loads, zeroes or stores them through memory. The
// tiles of a block are xs words apart (a constant once inlined), so two
// tiles take the LDM asm of the 2×2 block.
func dspWinoMacC(r, u int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* m[4*xi + 2*i + j] = sum over g < n/2, h < 2 of smlad(x[xi*ps + i*xs + 2g + h], w[xi*ws + 4g + 2j + h]), xi < 16, i < %d, j < 2. */\n", r)
	fmt.Fprintf(&b, "static inline MCUGEN_ALWAYS_INLINE void %s(int32_t *m, const int32_t *xt, int32_t ps, int32_t xs, const int32_t *wt, int32_t ws, int32_t n)\n{\n", tir.DSPWinoMacName(r, u))
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
	b.WriteString("#if defined(__OPTIMIZE__) && !defined(MCUGEN_NO_ASM)\n")
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
	// Otherwise the loop in C for two tiles (the two-row asm inside the
	// 16-position loop found no registers at -O3, or at -Os with a frame
	// pointer: review finding); one tile's asm stays.
	writeMacLoop(&b, r, 2, u, false, "        ", "", false)
	for i := 0; i < r; i++ {
		for j := 0; j < 2; j++ {
			fmt.Fprintf(&b, "        m[%d] = a%d%d;\n", 2*i+j, i, j)
		}
	}
	b.WriteString("    }\n}")
	return b.String()
}
