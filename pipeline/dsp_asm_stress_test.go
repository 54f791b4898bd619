package pipeline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The DSP helpers' asm statements leave gcc few registers (the 3x2 block
// takes twelve in each of its two statements, its weights held in r4-r8
// between them), and gcc's pre-allocation scheduler can stretch other
// values across them until it reports "impossible constraints" (found when
// a pair of pixels followed the triples in a 3-channel row form). Every
// form a convolution takes on the Cortex-M4 (pointwise, im2col, the row
// form over three input rows, with and without a ReLU, strides 1 and 2,
// widths leaving one or two pixels after the blocks, odd channel counts,
// the k0 epilogue, the unfused form), with the default blocks and with
// pairs and triples forced, compiles under every set of flags below.
//
// Not every layer × knob set × flag set is compiled (that was 1,284 gcc
// runs, a sixth of the pipeline package's time): the default knobs take
// every flag set; every other knob set takes the fewest registers (-fPIC
// with a frame pointer: r7 and r9 both taken) and one more flag set, which
// rotates with the layer, so across the 24 convolution layers each knob set
// meets each flag set.
func TestDSPAsmCompilesEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("long: many layers, four sets of flags")
	}
	b, cc := an386Compiler(t)
	type layer struct {
		name string
		g    func() *graph.Graph
	}
	var layers []layer
	for _, w := range []int{5, 8} {
		for _, c := range []int{3, 5, 8} {
			for _, s := range []int{1, 2} {
				for _, act := range []graph.Activation{graph.ActNone, graph.ActRelu} {
					w, c, s, act := w, c, s, act
					layers = append(layers, layer{fmt.Sprintf("conv3x3-w%d-c%d-s%d-%v", w, c, s, act), func() *graph.Graph {
						return tirtest.Conv3x3Size(5, w, c, 1, s, act, 3)
					}})
				}
			}
		}
	}
	for _, p := range [][4]int{{1, 25, 64, 64}, {2, 13, 64, 7}, {1, 26, 48, 96}, {2, 5, 128, 9}} {
		p := p
		for _, act := range []graph.Activation{graph.ActNone, graph.ActRelu} {
			act := act
			layers = append(layers, layer{fmt.Sprintf("pointwise-%v-%v", p, act), func() *graph.Graph {
				return tirtest.Conv1x1(p[0], p[1], p[2], p[3], act, 3)
			}})
		}
	}
	// Winograd over 16 and 44 channels (16 outputs: more live values than
	// 8), K in one iteration (the SMUAD asm) and in a loop (u1; 44: 22
	// words, never one iteration).
	for _, c := range []int{16, 44} {
		c := c
		layers = append(layers, layer{fmt.Sprintf("wino-c%d", c), func() *graph.Graph {
			return tirtest.Conv3x3Size(5, 7, c, 1, 1, graph.ActRelu, -128)
		}})
	}
	variants := []map[string]int{nil, {"block_px": 2}, {"block_px": 3}, {"conv_rows": 0, "block_px": 3}, {"requant_shift": 0, "block_px": 3}, {"gemm_fuse": 0, "block_px": 3}}
	// The Winograd GEMM (two tiles at a constant offset: the 2x2 asm) on
	// the layers that can take it.
	wino := []map[string]int{{"winograd": 1}, {"winograd": 1, "unroll_k": 1}}
	for li, l := range layers {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			units := map[int][]string{}
			dir := t.TempDir()
			vs := variants
			// Position-independent builds hold a PIC base in a register
			// (bare-metal journey: -fPIC -O2 did not build IC).
			opts := [][]string{{"-O2"}, {"-Os"}, {"-O2", "-fno-omit-frame-pointer"}, {"-O2", "-fPIC"}, {"-O3", "-fpie"}, {"-O2", "-fPIC", "-fno-omit-frame-pointer"}}
			switch {
			case strings.HasPrefix(l.name, "wino-"):
				vs = wino
				opts = append(opts, []string{"-O3"}, []string{"-O3", "-fno-omit-frame-pointer"}, []string{"-Os", "-fno-omit-frame-pointer"})
			case strings.Contains(l.name, "-c8-s1-"):
				vs = append(slices.Clip(variants), wino...)
			}
			for i, v := range vs {
				s, err := CompileGraph(l.g(), fmt.Sprintf("v%d", i), Options{Board: b, Target: "dsp", Knobs: map[string]map[string]int{"conv2d": v}, Version: "test"})
				if err != nil {
					t.Fatalf("%v: %v", v, err)
				}
				sub := filepath.Join(dir, fmt.Sprint(i))
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := WriteFiles(sub, s.Files); err != nil {
					t.Fatal(err)
				}
				for name := range s.Files {
					if strings.HasSuffix(name, ".c") {
						units[i] = append(units[i], filepath.Join(sub, name))
					}
				}
			}
			for oi, opt := range opts {
				for vi := range vs {
					if !compileWith(li, vi, oi, opt, len(opts)) {
						continue
					}
					for _, u := range units[vi] {
						args := append(append(b.GCCFlags(), opt...), "-std=c99", "-Werror", "-c", "-I", filepath.Dir(u), "-o", u+".o", u)
						if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
							t.Errorf("%s %v (knobs %v): %v\n%s", u, opt, vs[vi], err, firstLines(string(out), 6))
						}
					}
				}
			}
		})
	}
}

// compileWith is the covering of TestDSPAsmCompilesEverywhere: knob set
// vi of layer li compiles with flag set oi (of n) if it is the default
// knobs, the fewest-registers flags, or the flag set that rotates with the
// layer and the knob set.
func compileWith(li, vi, oi int, opt []string, n int) bool {
	return vi == 0 || (slices.Contains(opt, "-fPIC") && slices.Contains(opt, "-fno-omit-frame-pointer")) || oi == (li+vi)%n
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}
