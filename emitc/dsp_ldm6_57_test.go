package emitc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ldm6Stmt is one asm statement of writeMacLDM6's output: its instruction
// lines and its operand list (outputs, then inputs).
type ldm6Stmt struct {
	lines    []string
	operands int
}

var (
	ldm6Asm     = regexp.MustCompile(`__asm__\("([^"]*)"\n\s*: ([^\n]*)\n\s*: ([^\n]*)\n`)
	ldm6Operand = regexp.MustCompile(`"[=+&]*r"\(`)
)

func parseLDM6(t *testing.T, src string) []ldm6Stmt {
	t.Helper()
	var out []ldm6Stmt
	for _, m := range ldm6Asm.FindAllStringSubmatch(src, -1) {
		out = append(out, ldm6Stmt{
			lines:    strings.Split(m[1], `\n\t`),
			operands: len(ldm6Operand.FindAllString(m[2]+m[3], -1)),
		})
	}
	if len(out) == 0 {
		t.Fatalf("no asm statements in:\n%s", src)
	}
	return out
}

// The streamed one-row, four-channel block (writeMacLDM6), run by a small
// interpreter of its own asm text: every accumulator a0j must add, for
// every group s and half h, the activation word 2s + h times the weight
// word 8s + 2j + h (the 1x4 block's interleaved layout, as writeMacLDM
// reads it with two LDMs of four), each exactly once; the weight pointer
// must move 8u words; the loads must be u LDRDs and ⌈8u/6⌉ LDMs (four for
// three groups where writeMacLDM takes six); and no statement may name more
// than ldm6MaxOperands registers (the bound that keeps gcc building it with
// a frame pointer and a reserved r9).
func TestMacLDM6Stream57(t *testing.T) {
	for _, u := range []int{3, 4, 5, 6, 8, 10, 16, 24, 32} {
		t.Run(fmt.Sprint("u", u), func(t *testing.T) {
			var b strings.Builder
			writeMacLDM6(&b, u, "")
			stmts := parseLDM6(t, b.String())
			regs := map[string]int{} // register (or named operand) -> word it holds: weights w*1000+i, data d*1000+i
			wp := 0                  // weight pointer, in words
			type term struct{ x, w int }
			got := map[int]map[term]int{}
			var ldm, ldrd int
			ldmRe := regexp.MustCompile(`^ldmia %\[w\]!, \{([^}]*)\}$`)
			ldrdRe := regexp.MustCompile(`^ldrd %\[d0\], %\[d1\], \[%\[x0\], #(\d+)\]$`)
			smladRe := regexp.MustCompile(`^smlad %\[a0(\d)\], %\[(d[01])\], (r\d+), %\[a0(\d)\]$`)
			for _, s := range stmts {
				if s.operands > ldm6MaxOperands {
					t.Errorf("a statement names %d registers, over %d: %q", s.operands, ldm6MaxOperands, s.lines)
				}
				for _, l := range s.lines {
					switch {
					case ldmRe.MatchString(l):
						ldm++
						rs := strings.Split(ldmRe.FindStringSubmatch(l)[1], ", ")
						for k, r := range rs {
							if r != ldm6Regs[k] {
								t.Fatalf("%q: register %d is %s, want %s (ascending, no r7 or r9)", l, k, r, ldm6Regs[k])
							}
							regs[r] = wp
							wp++
						}
					case ldrdRe.MatchString(l):
						ldrd++
						off, _ := strconv.Atoi(ldrdRe.FindStringSubmatch(l)[1])
						if off%8 != 0 {
							t.Fatalf("%q: offset not a group's", l)
						}
						regs["d0"], regs["d1"] = off/4, off/4+1
					case smladRe.MatchString(l):
						m := smladRe.FindStringSubmatch(l)
						if m[1] != m[4] {
							t.Fatalf("%q adds to another accumulator", l)
						}
						j, _ := strconv.Atoi(m[1])
						x, okx := regs[m[2]]
						w, okw := regs[m[3]]
						if !okx || !okw {
							t.Fatalf("%q reads a register not loaded yet", l)
						}
						if got[j] == nil {
							got[j] = map[term]int{}
						}
						got[j][term{x, w}]++
					default:
						t.Fatalf("unexpected instruction %q", l)
					}
				}
			}
			if wp != 8*u {
				t.Errorf("weight pointer moved %d words, want %d", wp, 8*u)
			}
			if want := (8*u + 5) / 6; ldm != want || ldrd != u {
				t.Errorf("%d LDMs and %d LDRDs, want %d and %d", ldm, ldrd, want, u)
			}
			for j := 0; j < 4; j++ {
				want := map[term]int{}
				for s := 0; s < u; s++ {
					for h := 0; h < 2; h++ {
						want[term{2*s + h, 8*s + 2*j + h}] = 1
					}
				}
				if len(got[j]) != len(want) {
					t.Errorf("a0%d: %d distinct products, want %d", j, len(got[j]), len(want))
				}
				for k, n := range want {
					if got[j][k] != n {
						t.Errorf("a0%d: activation word %d × weight word %d added %d times, want %d", j, k.x, k.w, got[j][k], n)
					}
				}
			}
		})
	}
}
