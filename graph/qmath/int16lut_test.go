package qmath

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The int16 softmax tables against the functions they sample: exp on
// [-10, 0] and 1/(1+x) on [0, 1] in Q0.15, every entry within one step of
// the function's own value at its point (the midpoint correction moves an
// entry by at most one), monotone, with the ends worked by hand: exp(0) *
// 32768 clamps to 32767; exp(-10) * 32768 = 1.488 rounds to 1, but the
// segment's midpoint exp(-9.990) * 32768 = 1.502 rounds to 2 where the
// interpolation gives round((1.517 + 1) / 2) = 1, so the entry is 1 minus
// round(-1/2) = 2; 1/(1+0) clamps to 32767 and 1/2 is 16384.
func TestSoftmaxInt16Tables(t *testing.T) {
	exp, recip := SoftmaxInt16Tables()
	if len(exp) != Int16LUTSize || len(recip) != Int16LUTSize {
		t.Fatalf("sizes %d %d", len(exp), len(recip))
	}
	if exp[512] != 32767 || exp[0] != 2 || recip[0] != 32767 || recip[512] != 16384 {
		t.Errorf("ends: exp %d..%d, recip %d..%d", exp[0], exp[512], recip[0], recip[512])
	}
	for i := 0; i < Int16LUTSize; i++ {
		x := -10 + 10*float64(i)/512
		if d := math.Abs(float64(exp[i]) - math.Exp(x)*32768); d > 1.5 && !(i == 512 && exp[i] == 32767) {
			t.Errorf("exp[%d] = %d, exp(%g) * 32768 = %g", i, exp[i], x, math.Exp(x)*32768)
		}
		u := float64(i) / 512
		if d := math.Abs(float64(recip[i]) - 32768/(1+u)); d > 1.5 && !(i == 0 && recip[i] == 32767) {
			t.Errorf("recip[%d] = %d, 32768 / (1 + %g) = %g", i, recip[i], u, 32768/(1+u))
		}
		if i > 0 && (exp[i] < exp[i-1] || recip[i] > recip[i-1]) {
			t.Errorf("not monotone at %d", i)
		}
	}
}

// The tables are single-precision arithmetic and expf: the same algorithm
// compiled by the host's C compiler (IEEE single precision, no fused
// multiply-adds, glibc's expf) gives the same 1,026 entries. This checks Go's
// float32 rounding and ExpF32 against C's, not the algorithm (both are
// written from TFLite's LUTPopulateInt16).
func TestInt16LUTMatchesC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is absent (Debian package gcc)")
	}
	src := `#include <math.h>
#include <stdio.h>
static float f_exp(float x) { return expf(x); }
static float f_recip(float x) { return 1.0f / (1.0f + x); }
static void lut(float is, int iz, float os, int oz, float (*f)(float)) {
    const float in_min = is * (float)(-32768 - iz), in_max = is * (float)(32767 - iz);
    const float out_min = os * (float)(-32768 - oz), out_max = os * (float)(32767 - oz);
    const float step = (in_max - in_min) / 512, half = step / 2;
    const float inv = (float)65536 / (out_max - out_min);
    for (int i = 0; i < 512; i++) {
        float v = f(in_min + i * step), m = f(in_min + i * step + half), n = f(in_min + (i + 1) * step);
        float s = roundf(v * inv), ip = roundf((n * inv + roundf(v * inv)) / 2), mv = roundf(m * inv);
        float b = roundf((ip - mv) / 2), r = s - b;
        printf("%d\n", (int)(r < -32768 ? -32768 : r > 32767 ? 32767 : r));
    }
    float r = roundf(f(in_max) * inv);
    printf("%d\n", (int)(r < -32768 ? -32768 : r > 32767 ? 32767 : r));
}
int main(void) {
    const float range = 65535;
    lut(10.0f / range, 32767, 2.0f / range, 0, f_exp);
    lut(1.0f / range, -32768, 2.0f / range, 0, f_recip);
    return 0;
}
`
	dir := t.TempDir()
	c := filepath.Join(dir, "lut.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "lut")
	if out, err := exec.Command(gcc, "-std=c99", "-O2", "-ffp-contract=off", "-o", exe, c, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	exp, recip := SoftmaxInt16Tables()
	var want []string
	for _, v := range append(exp, recip...) {
		want = append(want, fmt.Sprint(v))
	}
	got := strings.Fields(string(out))
	if len(got) != len(want) {
		t.Fatalf("C printed %d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("entry %d: C %s, Go %s", i, got[i], want[i])
		}
	}
}

// The int16 softmax against the float softmax it approximates: within 7
// steps of 1/32768 (TFLite Micro's own test tolerance) plus the error the
// sum of exponentials carries into the reciprocal (each table value is off
// by up to about a step, and the sum is at least 32767: a relative error of
// depth/32768 on every output), never negative.
func TestSoftmaxInt16Row(t *testing.T) {
	exp, recip := SoftmaxInt16Tables()
	scale := float32(10.0 / 32768) // inputs in [-10, 10)
	m, sh := SoftmaxInt16Params(scale, 1)
	seed := uint64(5)
	next := func() int64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int64(int16(seed >> 48))
	}
	for _, depth := range []int{1, 2, 4, 10, 37, 100} {
		for trial := 0; trial < 20; trial++ {
			in, out := make([]int64, depth), make([]int64, depth)
			for i := range in {
				in[i] = next()
			}
			SoftmaxInt16Row(in, out, m, sh, exp, recip)
			mx := math.Inf(-1)
			for _, v := range in {
				mx = math.Max(mx, float64(v)*float64(scale))
			}
			var sum float64
			for _, v := range in {
				sum += math.Exp(float64(v)*float64(scale) - mx)
			}
			for i, v := range in {
				want := math.Exp(float64(v)*float64(scale)-mx) / sum * 32768
				if out[i] < 0 || math.Abs(float64(out[i])-want) > 7+want*float64(depth)/32768 {
					t.Fatalf("depth %d: out[%d] = %d, float %.1f (inputs %v)", depth, i, out[i], want, in)
				}
			}
		}
	}
}
