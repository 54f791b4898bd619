package emitc

import (
	"fmt"
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
