package emitc

import (
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// The C of tir.IntrDSPDW3x3: one 3×3 depthwise output pixel over all
// channels with its epilogue, a shared out-of-line function (every 3×3
// depthwise layer calls it), specialised inside for the full window and
// for the full int8 output range.

func init() {
	tap := func(t int, check bool) string {
		s := `        {
            const int32_t xv = dsp_read32(XQ);
            const int32_t x02 = __sxtab16(o, xv);
            const int32_t x13 = dsp_sxtab16_ror8(o, xv);
            int32_t w0;
            int32_t w1;
            DSP_LD2(p, T2, w0, w1);
            a0 = __smlabb(x02, w0, a0);
            a2 = __smlatt(x02, w0, a2);
            a1 = __smlabb(x13, w1, a1);
            a3 = __smlatt(x13, w1, a3);
            __asm__ volatile("" ::: "memory");
        }
`
		cst := []string{"0", "cs", "2 * cs", "rs", "rs + cs", "rs + 2 * cs", "2 * rs", "2 * rs + cs", "2 * rs + 2 * cs"}[t]
		off := "(cst ? " + cst + " : off[" + itoa(t) + "])"
		if check {
			s = strings.ReplaceAll(s, "XQ", "x + (xk + "+off+")")
		} else {
			s = strings.ReplaceAll(s, "XQ", "xq + "+off)
		}
		s = strings.ReplaceAll(s, "T2", itoa(2*t))
		if check {
			s = "        if (mask & " + itoa(1<<t) + ") " + strings.TrimLeft(s, " ")
		}
		return s
	}
	body := func(check, clamp bool, corr ...bool) string {
		var b strings.Builder
		if check {
			b.WriteString("    for (; p < end; p += 38, xk += 4, out += 4) {\n")
		} else {
			b.WriteString("    for (; p < end; p += 38, xq += 4, out += 4) {\n")
		}
		b.WriteString("        int32_t a0;\n        int32_t a1;\n        int32_t a2;\n        int32_t a3;\n")
		b.WriteString("        DSP_LD2(p, 18, a0, a1);\n        DSP_LD2(p, 20, a2, a3);\n")
		for t := 0; t < 9; t++ {
			b.WriteString(tap(t, check))
		}
		sign := "1"
		if len(corr) > 0 && !corr[0] {
			sign = "0"
		}
		if clamp {
			b.WriteString("        DSP_DW3X3_STORE(1, " + sign + ");\n")
		} else {
			b.WriteString("        DSP_DW3X3_STORE(0, " + sign + ");\n")
		}
		b.WriteString("    }\n")
		return b.String()
	}
	code := `/* One output pixel of a 3x3 depthwise convolution over n channels (n % 4 == 0):
   for each channel quad q the stream p[38q..] holds the nine taps' pair words,
   then the four biases, then per channel the low and high words of k0, the multiplier and e1;
   out[c] = dsp_requant_s8(bias + sum over taps t in mask of (x[xi + (t/3)*rs + (t%3)*cs + c] + xo) * w, ...). */
#define DSP_DW3X3_RQ(a, j, clamp, sign) do { \
        int32_t lo; \
        int32_t hi; \
        int32_t m; \
        int32_t e1; \
        int32_t y; \
        const int32_t u = (int32_t)((uint32_t)(a) >> 31); \
        DSP_LD2(p, 22 + 4 * (j), lo, hi); \
        DSP_LD2(p, 24 + 4 * (j), m, e1); \
        __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(m)); \
        if (sign) { \
            __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(u), "r"(c31)); \
        } \
        y = (int32_t)__builtin_arm_ssat((hi >> e1) + zr, 8); \
        if (clamp) { \
            y = y < lo_ ? lo_ : y; \
            y = y > hi_ ? hi_ : y; \
        } \
        out[j] = (int8_t)y; \
    } while (0)
#define DSP_DW3X3_STORE(clamp, sign) do { \
        DSP_DW3X3_RQ(a0, 0, clamp, sign); \
        DSP_DW3X3_RQ(a1, 1, clamp, sign); \
        DSP_DW3X3_RQ(a2, 2, clamp, sign); \
        DSP_DW3X3_RQ(a3, 3, clamp, sign); \
    } while (0)
static void dsp_dw3x3_s8(int8_t *out, const int8_t *x, int32_t xi, int32_t rs, int32_t cs, const int32_t *p0, int32_t n,
                         int32_t xo, int32_t mask, int32_t zr, int32_t lo_, int32_t hi_, int32_t npx, int32_t xstep, int32_t relu)
{
    /* The sign correction -[acc < 0] * 2^31 is a second SMLAL of (acc >> 31 unsigned) by INT32_MIN. */
    const int32_t c31 = INT32_MIN;
    const int32_t o = (int32_t)(((uint32_t)xo << 16) | ((uint32_t)xo & 0xffffu));
    /* Unless gcc specialised rs and cs to constants (one clone for the whole model), the tap
       offsets live in memory so gcc keeps one pointer rather than nine spilled ones. */
    const int cst = __builtin_constant_p(rs) && __builtin_constant_p(cs);
    volatile int32_t off[9];
    if (!cst) {
    off[0] = 0;
    off[1] = cs;
    off[2] = 2 * cs;
    off[3] = rs;
    off[4] = rs + cs;
    off[5] = rs + 2 * cs;
    off[6] = 2 * rs;
    off[7] = 2 * rs + cs;
    off[8] = 2 * rs + 2 * cs;
    }
    const int32_t *const end = p0 + 38 * (n / 4);
    /* out advances by n per pixel inside the channel loop. */
    for (; npx > 0; --npx, xi += xstep) {
        const int32_t *p = p0;
        if (mask == 511) {
            const int8_t *xq = x + xi;
            if (lo_ == -128 && hi_ == 127 && relu) {
                /* The zero point is at -128: no sign correction (a negative accumulator
                   gives at most the zero point either way). */
` + indent(indent(body(false, false, false))) + `                continue;
            }
            if (lo_ == -128 && hi_ == 127) {
` + indent(indent(body(false, false))) + `                continue;
            }
` + indent(body(false, true)) + `            continue;
        } else {
            /* Padding: taps outside the image are skipped (never read). */
            int32_t xk = xi;
            if (lo_ == -128 && hi_ == 127) {
` + indent(indent(body(true, false))) + `                continue;
            }
` + indent(body(true, true)) + `        }
    }
}
#undef DSP_DW3X3_STORE
#undef DSP_DW3X3_RQ`
	helperText[tir.IntrDSPDW3x3] = struct {
		deps []string
		code string
	}{[]string{"dsp_acle"}, code}
	helperOrder = append(helperOrder, tir.IntrDSPDW3x3)
}

func itoa(v int) string {
	const d = "0123456789"
	if v < 10 {
		return d[v : v+1]
	}
	return itoa(v/10) + d[v%10:v%10+1]
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
