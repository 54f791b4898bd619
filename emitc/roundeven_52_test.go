package emitc

import (
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/tir"
)

// The C of round_even_f32 (the float requantization of ONNX Runtime's
// QOperator layers: round((float)acc * scale) half to even, saturated to
// ±2^22) gives tir.RoundEvenF32 on ties at every magnitude up to 2^22, at
// and past the saturation bounds, on random floats on both sides of them,
// and for zeros, NaN and infinities. Session 52 replaced its
// truncate-and-compare body by adding 1.5·2^23 (the FPU's rounding to
// nearest even); the hand-worked cases are the definition's.
func TestRoundEvenF32MatchesGo52(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	type tc struct {
		x    float32
		want int32 // hand-worked, or any
	}
	const any = math.MinInt32
	cases := []tc{
		{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {0.49999997, 0}, {-0.49999997, 0},
		{0.50000006, 1}, {float32(math.Copysign(0, -1)), 0}, {1e-30, 0}, {3.4999998, 3},
		{4194303.5, 4194304}, {4194302.5, 4194302}, {-4194303.5, -4194304}, {4194304, 4194304}, {-4194304, -4194304},
		{4194304.5, 4194304}, {-4194304.5, -4194304}, {8388607, 4194304}, {1e30, 4194304}, {-1e30, -4194304},
		{float32(math.Inf(1)), 4194304}, {float32(math.Inf(-1)), -4194304}, {float32(math.NaN()), 0},
	}
	r := rand.New(rand.NewSource(52))
	for range 4000 {
		k := r.Int63n(1<<23) - 1<<22
		cases = append(cases, tc{float32(float64(k) + 0.5), any})
		cases = append(cases, tc{float32((r.Float64()*2 - 1) * math.Pow(2, float64(r.Intn(26)-2))), any})
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n\n")
	writeHelper(&src, tir.IntrRoundEven, map[string]bool{})
	src.WriteString("\nstatic float f(uint32_t b)\n{\n    float v;\n    memcpy(&v, &b, sizeof v);\n    return v;\n}\n\n")
	fmt.Fprintf(&src, "static const uint32_t v[%d] = {", len(cases))
	for i, c := range cases {
		if i > 0 {
			src.WriteString(", ")
		}
		fmt.Fprintf(&src, "0x%08xu", math.Float32bits(c.x))
	}
	fmt.Fprintf(&src, "};\n\nint main(void)\n{\n    int i;\n    for (i = 0; i < %d; ++i) {\n        printf(\"%%ld\\n\", (long)round_even_f32(f(v[i])));\n    }\n    return 0;\n}\n", len(cases))
	lines := runHostC(t, src.String())
	if len(lines) != len(cases) {
		t.Fatalf("%d results, want %d", len(lines), len(cases))
	}
	for i, c := range cases {
		g := tir.RoundEvenF32(c.x)
		if c.want != any && g != c.want {
			t.Errorf("RoundEvenF32(%v) = %d, hand-worked %d", c.x, g, c.want)
		}
		if want := fmt.Sprint(g); lines[i] != want {
			t.Errorf("round_even_f32(%v): C gives %s, Go %s", c.x, lines[i], want)
		}
	}
}
