package emitc

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The C of requant_fast_s8 (the generic schedules' int8 output stage) gives
// TFLite's MultiplyByQuantizedMultiplier plus zero point and clamp, taken
// from graph/qmath, for every right shift 1..31, extreme and random
// accumulators and multipliers, the zero point folded into k0 (shifts up
// to 22) or added after, and full, ReLU-like and narrow clamps; on the host
// under ASan and UBSan.
func TestRequantFastMatchesTFLite(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	r := rand.New(rand.NewSource(11))
	xs := []int32{math.MinInt32, math.MinInt32 + 1, -1 << 24, -65537, -1000, -3, -2, -1, 0, 1, 2, 3, 1000, 65537, 1 << 24, math.MaxInt32 - 1, math.MaxInt32}
	ms := []int32{0, 1, 1 << 30, 1<<30 + 1, 1518500250, math.MaxInt32 - 1, math.MaxInt32}
	type tc struct {
		x, m               int32
		e                  int
		zp, lo, hi, zk, zr int64
		k0                 int64
		want               int64
	}
	var cases []tc
	add := func(x, m int32, e int, zp, lo, hi int64) {
		zk, zr := int64(0), zp
		if e <= 22 {
			zk, zr = zp, 0
		}
		// k0 as tir.IntrDSPRequant documents it: 2^30 + 2^(30+e) + zk·2^(31+e).
		k0 := int64(1)<<30 + int64(1)<<(30+e) + zk<<(31+e)
		want := min(max(int64(tir.RequantQ(x, m, int32(-e)))+zp, lo), hi)
		cases = append(cases, tc{x, m, e, zp, lo, hi, zk, zr, k0, want})
	}
	clamps := [][3]int64{{0, -128, 127}, {-128, -128, 127}, {5, 5, 127}, {-3, -100, 100}, {127, -128, 127}}
	for e := 1; e <= 31; e++ {
		for _, x := range xs {
			for _, m := range ms {
				c := clamps[(int(x&7)+e)%len(clamps)]
				add(x, m, e, c[0], c[1], c[2])
			}
		}
		for range 200 {
			x := int32(r.Uint32())
			if r.Intn(2) == 0 {
				x >>= r.Intn(31)
			}
			m := int32(1<<30 + r.Int63n(1<<30))
			c := clamps[r.Intn(len(clamps))]
			add(x, m, e, c[0], c[1], c[2])
		}
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n" + helperCode(tir.IntrRequantFast) + "\n\n")
	src.WriteString("static const struct { int32_t x, m; int64_t k0; int32_t e1, zr, lo, hi; } cases[] = {\n")
	for _, c := range cases {
		fmt.Fprintf(&src, "    {%d, %d, INT64_C(%d), %d, %d, %d, %d},\n", c.x, c.m, c.k0, c.e-1, c.zr, c.lo, c.hi)
	}
	src.WriteString("};\n\nint main(void)\n{\n    size_t i;\n    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {\n" +
		"        printf(\"%ld\\n\", (long)requant_fast_s8(cases[i].x, cases[i].m, cases[i].k0, cases[i].e1, cases[i].zr, cases[i].lo, cases[i].hi));\n" +
		"    }\n    return 0;\n}\n")
	// The C uses INT32_MIN written as a decimal literal: keep it in range.
	lines := runHostC(t, strings.ReplaceAll(src.String(), "{-2147483648,", "{INT32_MIN,"))
	if len(lines) != len(cases) {
		t.Fatalf("%d results for %d cases", len(lines), len(cases))
	}
	bad := 0
	for i, c := range cases {
		got, err := strconv.ParseInt(lines[i], 10, 64)
		if err != nil || got != c.want {
			bad++
			if bad <= 10 {
				t.Errorf("x %d, m %d, shift -%d, zp %d, [%d, %d]: C gives %s, TFLite %d", c.x, c.m, c.e, c.zp, c.lo, c.hi, lines[i], c.want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ", bad, len(cases))
	}
}

// The channel-pair kernels (tir.IntrGenPairs, knob pairs, the Cortex-M3's
// default) give the reference interpreter's outputs on the host under ASan
// and UBSan, for pointwise convolutions with an odd and an even pixel
// count, with and without a fused ReLU, and 3×3 convolutions through
// their padded windows (one pixel, two pairs per input load), and build
// for a Cortex-M4.
func TestGenericPairsHost(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *graph.Graph
	}{
		{"pw-3x5x32x6", tirtest.Conv1x1(3, 5, 32, 6, graph.ActNone, 7)},
		{"pw-4x4x64x8-relu", tirtest.Conv1x1(4, 4, 64, 8, graph.ActRelu, -128)},
		{"pw-1x1x48x4", tirtest.Pointwise(1, 1, 48, 4)},
		{"conv3x3-s1", tirtest.ConvK(5, 6, 8, 6, 3, 1, graph.ActNone, 3)},
		{"conv3x3-s2-relu", tirtest.ConvK(7, 7, 16, 4, 3, 2, graph.ActRelu, -128)},
		{"rgb-k27", tirtest.ConvRGB(6, 5, 4, 2, graph.ActRelu, -128)},
		{"conv3x3-cin1-k12", tirtest.ConvK(5, 6, 1, 6, 3, 1, graph.ActNone, 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := tir.Generic.WithKnobs("conv2d", map[string]int{"pairs": 1})
			_, files := checkModelTarget(t, c.g, Options{Prefix: "m"}, target, 6)
			// A reduction of 16 or more steps calls the always-inline
			// form, a shorter one (the 3x3 window of one channel: 9,
			// padded to 12) the plain one.
			call := tir.IntrGenPairs + "_i(&"
			if strings.HasSuffix(c.name, "-k12") {
				call = tir.IntrGenPairs + "(&"
			}
			if !bytes.Contains(files["m.c"], []byte(call)) {
				t.Fatalf("no %s call in the C", call)
			}
		})
	}
}

// runHostC builds the C program src for the host (hostFlags: ASan and
// UBSan), runs it and returns its output's fields.
func runHostC(t *testing.T, src string) []string {
	t.Helper()
	dir := t.TempDir()
	cfile, exe := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", append(append([]string{}, hostFlags...), "-o", exe, cfile)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
