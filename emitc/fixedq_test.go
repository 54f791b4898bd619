package emitc

import (
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph/qmath"
	"github.com/mcugen/mcugen/tir"
)

// The C of div_q8 (int8 DIV) gives graph/qmath's DivInt8 (which TFLite
// Micro's div_test.cc vectors hold) for every dividend and divisor an int8
// DIV can see, zero divisors included, under three multipliers: TFLite's
// test's (shift 7), a larger ratio and a small one whose shifts run past 31
// bits; on the host under ASan and UBSan.
func TestDivQ8MatchesQmath(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	type mult struct {
		m  int32
		sh int
	}
	var ms []mult
	for _, r := range [][3]float32{{0.00784313772, 0.00784313772, 0.00784313772}, {1, 1, 1.0 / 64}, {0.01, 1, 1}} {
		m, sh := qmath.DivMultiplier(r[0], r[1], r[2])
		ms = append(ms, mult{m, sh})
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n")
	writeHelper(&src, tir.IntrDivQ8, map[string]bool{})
	src.WriteString("\nint main(void)\n{\n    int32_t a;\n    int32_t b;\n")
	for _, m := range ms {
		fmt.Fprintf(&src, "    for (a = -255; a <= 255; ++a) {\n        for (b = -255; b <= 255; ++b) {\n"+
			"            printf(\"%%ld\\n\", (long)div_q8(a, b, %d, %d));\n        }\n    }\n", m.m, m.sh)
	}
	src.WriteString("    return 0;\n}\n")
	lines := runHostC(t, src.String())
	if len(lines) != len(ms)*511*511 {
		t.Fatalf("%d results, want %d", len(lines), len(ms)*511*511)
	}
	i := 0
	for _, m := range ms {
		for a := int32(-255); a <= 255; a++ {
			for b := int32(-255); b <= 255; b++ {
				want := qmath.DivInt8(a, b, m.m, m.sh)
				if got, err := strconv.ParseInt(lines[i], 10, 64); err != nil || got != int64(want) {
					t.Fatalf("div_q8(%d, %d, %d, %d): C gives %s, qmath %d", a, b, m.m, m.sh, lines[i], want)
				}
				i++
			}
		}
	}
}

// The C of inv_sqrt_mult and inv_sqrt_shift (int8 L2_NORMALIZATION) gives
// graph/qmath's GetInvSqrtQuantizedMultiplierExp(x, -1) at 0, 1, every power
// of two and its neighbours, and random sums of squares, large ones
// included.
func TestInvSqrtMatchesQmath(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	xs := []int32{-5, 0, 1, 2, 3, 1<<31 - 1}
	for b := 2; b <= 30; b++ {
		xs = append(xs, 1<<b-1, 1<<b, 1<<b+1)
	}
	r := rand.New(rand.NewSource(7))
	for range 2000 {
		xs = append(xs, int32(r.Int63n(1<<31)), int32(r.Int63n(1<<17)))
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n")
	seen := map[string]bool{}
	writeHelper(&src, tir.IntrInvSqrtMult, seen)
	writeHelper(&src, tir.IntrInvSqrtShift, seen)
	src.WriteString("static const int32_t xs[] = {\n")
	for _, x := range xs {
		fmt.Fprintf(&src, "    %d,\n", x)
	}
	src.WriteString("};\n\nint main(void)\n{\n    size_t i;\n    for (i = 0; i < sizeof xs / sizeof xs[0]; ++i) {\n" +
		"        printf(\"%ld,%ld\\n\", (long)inv_sqrt_mult(xs[i]), (long)inv_sqrt_shift(xs[i]));\n    }\n    return 0;\n}\n")
	lines := runHostC(t, src.String())
	if len(lines) != len(xs) {
		t.Fatalf("%d results for %d inputs", len(lines), len(xs))
	}
	for i, x := range xs {
		m, sh := qmath.GetInvSqrtQuantizedMultiplierExp(x, -1)
		if want := fmt.Sprintf("%d,%d", m, sh); lines[i] != want {
			t.Fatalf("inv_sqrt(%d): C gives %s, qmath %s", x, lines[i], want)
		}
	}
}

// The C of quantize_f32 gives tir.QuantizeF32 (a float32 quotient, TFLite's
// half away from zero or ONNX's half to even) on hand-worked quotients, on
// ties, at the int32 limits, for NaN and infinities, and on random values
// near ties; 0.017549999 / 0.0039 is 4.49999988, whose float quotient is the
// tie 4.5: TFLite gives 5, ONNX 4.
func TestQuantizeF32MatchesGo(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	type tc struct {
		x, s     float32
		away, ev int32 // hand-worked, or -999 for "compare with Go only"
	}
	const any = -999
	cases := []tc{
		{math.Float32frombits(0x3c8fc504), math.Float32frombits(0x3b7f9724), 5, 4},
		{-math.Float32frombits(0x3c8fc504), math.Float32frombits(0x3b7f9724), -5, -4},
		{2.5, 1, 3, 2}, {-2.5, 1, -3, -2}, {3.5, 1, 4, 4}, {0.49999997, 1, 0, 0},
		{1e10, 1, math.MaxInt32, math.MaxInt32}, {-1e10, 1, math.MinInt32, math.MinInt32},
		{2147483648, 1, math.MaxInt32, math.MaxInt32}, {-2147483648, 1, math.MinInt32, math.MinInt32},
		{16777217, 2, 8388608, 8388608}, {float32(math.NaN()), 1, 0, 0},
		{float32(math.Inf(1)), 1, math.MaxInt32, math.MaxInt32}, {1, 0, math.MaxInt32, math.MaxInt32},
	}
	r := rand.New(rand.NewSource(11))
	for range 3000 {
		s := float32(r.Float64()*0.1 + 1e-4)
		k := r.Intn(400) - 200
		x := float32((float64(k) + 0.5) * float64(s))
		x = math.Nextafter32(x, float32(r.Intn(3)-1)*1e9)
		cases = append(cases, tc{x, s, any, any})
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n\n")
	writeHelper(&src, tir.IntrQuantize, map[string]bool{})
	src.WriteString("\nstatic float f(uint32_t b)\n{\n    float v;\n    memcpy(&v, &b, sizeof v);\n    return v;\n}\n\nint main(void)\n{\n")
	for _, c := range cases {
		fmt.Fprintf(&src, "    printf(\"%%ld,%%ld\\n\", (long)quantize_f32(f(0x%08xu), f(0x%08xu), 0), (long)quantize_f32(f(0x%08xu), f(0x%08xu), 1));\n",
			math.Float32bits(c.x), math.Float32bits(c.s), math.Float32bits(c.x), math.Float32bits(c.s))
	}
	src.WriteString("    return 0;\n}\n")
	lines := runHostC(t, src.String())
	if len(lines) != len(cases) {
		t.Fatalf("%d results, want %d", len(lines), len(cases))
	}
	for i, c := range cases {
		ga, ge := tir.QuantizeF32(c.x, c.s, false), tir.QuantizeF32(c.x, c.s, true)
		if c.away != any && (ga != c.away || ge != c.ev) {
			t.Errorf("QuantizeF32(%v, %v) = %d, %d; hand-worked %d, %d", c.x, c.s, ga, ge, c.away, c.ev)
		}
		if want := fmt.Sprintf("%d,%d", ga, ge); lines[i] != want {
			t.Errorf("quantize_f32(%v, %v): C gives %s, Go %s", c.x, c.s, lines[i], want)
		}
	}
}

// The C of mul_round_pos (a softmax's scale times an exponential) equals
// gemmlowp's RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(a, b), s),
// tir.RDivPOT(tir.SRDHM(a, b), s), on random non-negative operands and
// the edges (0, 1, 2^31 - 1, halves that round) at every shift 0..31, on
// the host under ASan and UBSan.
func TestMulRoundPosMatchesGemmlowp(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	r := rand.New(rand.NewSource(22))
	vals := []int32{0, 1, 2, 3, 1 << 30, math.MaxInt32, math.MaxInt32 - 1, 1 << 15, (1 << 16) + 1}
	for len(vals) < 60 {
		vals = append(vals, int32(r.Int63n(math.MaxInt32)))
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n")
	writeHelper(&src, tir.IntrMulRoundPos, map[string]bool{})
	fmt.Fprintf(&src, "\nstatic const int32_t v[%d] = {", len(vals))
	for i, v := range vals {
		if i > 0 {
			src.WriteString(", ")
		}
		fmt.Fprintf(&src, "%d", v)
	}
	src.WriteString("};\n\nint main(void)\n{\n    int i;\n    int j;\n    int32_t s;\n")
	fmt.Fprintf(&src, "    for (i = 0; i < %d; ++i) {\n        for (j = 0; j < %d; ++j) {\n            for (s = 0; s < 32; ++s) {\n"+
		"                printf(\"%%ld\\n\", (long)mul_round_pos(v[i], v[j], s));\n            }\n        }\n    }\n    return 0;\n}\n", len(vals), len(vals))
	lines := runHostC(t, src.String())
	if len(lines) != len(vals)*len(vals)*32 {
		t.Fatalf("%d results, want %d", len(lines), len(vals)*len(vals)*32)
	}
	k := 0
	for _, a := range vals {
		for _, b := range vals {
			for s := int32(0); s < 32; s++ {
				want := tir.RDivPOT(tir.SRDHM(a, b), s)
				if got, err := strconv.ParseInt(lines[k], 10, 64); err != nil || got != int64(want) {
					t.Fatalf("mul_round_pos(%d, %d, %d): C gives %s, gemmlowp %d", a, b, s, lines[k], want)
				}
				k++
			}
		}
	}
}
