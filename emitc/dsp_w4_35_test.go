package emitc

import (
	"fmt"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/tir"
)

// The packed int4 micro-kernels' C (every block shape, unrolls 2 to 32)
// and dsp_sum_pairs compute, from accumulators started 8·Σx lower as the
// schedule starts them, each output's dot product of the activations with
// the int4 weights, written out here independently of tir's semantics, on
// the host under ASan and UBSan, -std=c99 -pedantic -Wall -Wextra -Werror:
// the ACLE intrinsics are replaced by portable C of what the instructions
// do (SMLAD wrapping as the instruction does, LDRD), so the nibble packing
// and the lanes are checked off the target, in the C form (MCUGEN_NO_ASM);
// mps2-an386 runs the real instructions and the one-row asm
// (pipeline's TestInt4FCUnderQEMU).
func TestDSPMacW4CMatchesDotProducts(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: package emitc's host run of the int4 kernels skipped")
	}
	r := rand.New(rand.NewSource(35))
	var src strings.Builder
	// The C forms: the asm is the target's (-O1 defines __OPTIMIZE__).
	src.WriteString(`#define MCUGEN_NO_ASM
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline int32_t dsp_read32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
#define DSP_LD2(p, i, lo, hi) ((lo) = (p)[(i)], (hi) = (p)[(i) + 1])
static int32_t lane(int32_t v, int k) { return (int32_t)(int16_t)(uint16_t)((uint32_t)v >> (16 * k)); }
static int32_t shim_smlad(int32_t a, int32_t b, int32_t c)
{
    const int64_t s = (int64_t)c + (int64_t)lane(a, 0) * lane(b, 0) + (int64_t)lane(a, 1) * lane(b, 1);
    return (int32_t)(uint32_t)(uint64_t)s;
}
#define __smlad shim_smlad

`)
	src.WriteString(alwaysInlineDef + asmImmDef)
	src.WriteString(helperCode(tir.IntrDSPSumPairs))
	src.WriteString("\n\n")
	type call struct {
		name           string
		r, c, n, nb, K int
		x              []int64 // activation values, row-major r × K
		w              []int64 // weights, cout × K
	}
	var calls []call
	seen := map[string]bool{}
	for _, b := range tir.DSPMacBlocks {
		for _, u := range []int{2, 4, 8, 16, 24, 32} {
			R, Cc := b[0], b[1]
			n := 2 * u * 2 // pair words a row: two iterations
			K := 2 * n
			nb := 2
			cl := call{name: tir.DSPMacW4Name(R, Cc, u), r: R, c: Cc, n: n, nb: nb, K: K}
			cl.x = make([]int64, R*K)
			for i := range cl.x {
				cl.x[i] = []int64{-255, 255, int64(r.Intn(511) - 255)}[r.Intn(3)]
			}
			cl.w = make([]int64, nb*Cc*K)
			for i := range cl.w {
				cl.w[i] = []int64{-8, 7, int64(r.Intn(16) - 8)}[r.Intn(3)]
			}
			calls = append(calls, cl)
			if !seen[cl.name] {
				seen[cl.name] = true
				src.WriteString(dspMacW4C(R, Cc, u))
				src.WriteString("\n\n")
			}
		}
	}
	src.WriteString("int main(void)\n{\n")
	for ci, cl := range calls {
		// Activation pair words as IntrDSPWiden lays them out.
		var xw []string
		for i := 0; i < cl.r; i++ {
			for g := 0; g < cl.K/4; g++ {
				a := func(k int) int64 { return cl.x[i*cl.K+4*g+k] }
				xw = append(xw, fmt.Sprint(pair(a(0), a(2))), fmt.Sprint(pair(a(1), a(3))))
			}
		}
		var wb []string
		for _, v := range tir.DSPPackWeights4(cl.w, cl.nb*cl.c, cl.K, cl.K, cl.c) {
			wb = append(wb, fmt.Sprint(v))
		}
		fmt.Fprintf(&src, "    {\n        static const int32_t x%d[] = {%s};\n        static const int8_t w%d[] = {%s};\n        int32_t b;\n",
			ci, strings.Join(xw, ", "), ci, strings.Join(wb, ", "))
		fmt.Fprintf(&src, "        for (b = 0; b < %d; ++b) {\n            int32_t acc[%d];\n            int32_t i;\n", cl.nb, cl.r*cl.c)
		fmt.Fprintf(&src, "            for (i = 0; i < %d; ++i) {\n                acc[i] = 1000 * i - 7 - 8 * dsp_sum_pairs(x%d + i / %d * %d, %d);\n            }\n", cl.r*cl.c, ci, cl.c, cl.n, cl.n)
		fmt.Fprintf(&src, "            %s(acc, x%d, %d, w%d + b * %d, %d);\n", cl.name, ci, cl.n, ci, cl.c*cl.K/2, cl.n)
		fmt.Fprintf(&src, "            for (i = 0; i < %d; ++i) {\n                printf(\"%%ld\\n\", (long)acc[i]);\n            }\n        }\n    }\n", cl.r*cl.c)
	}
	src.WriteString("    return 0;\n}\n")
	lines := runHostC(t, src.String())
	at := 0
	for _, cl := range calls {
		for b := 0; b < cl.nb; b++ {
			for i := 0; i < cl.r; i++ {
				for j := 0; j < cl.c; j++ {
					want := int64(1000*(i*cl.c+j) - 7)
					oc := b*cl.c + j
					for k := 0; k < cl.K; k++ {
						want += cl.x[i*cl.K+k] * cl.w[oc*cl.K+k]
					}
					if at >= len(lines) {
						t.Fatalf("%d results", len(lines))
					}
					got, err := strconv.ParseInt(lines[at], 10, 64)
					if err != nil || got != want {
						t.Fatalf("%s block %d: acc[%d] = %s, want %d", cl.name, b, i*cl.c+j, lines[at], want)
					}
					at++
				}
			}
		}
	}
	if at != len(lines) {
		t.Fatalf("%d results, want %d", len(lines), at)
	}
}

// pair is the int16 pair word (lo, hi) as an int32.
func pair(lo, hi int64) int32 { return int32(uint32(uint16(lo)) | uint32(uint16(hi))<<16) }
