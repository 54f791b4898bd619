package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The channel-pair schedule (knob pairs) computes what the compute
// definition does for pointwise convolutions (odd and even pixel counts,
// weights at ±127 in the largest reduction the 2^22 bound allows, 256,
// where 128·256·127 = 4,161,536 < 4,194,304) and fully connected layers of
// one or more rows; it declines odd channel counts, short reductions and
// weights past the bound (260 at ±127).
func TestPairsKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	pw := func(h, w, cin, cout int, zp int32, extreme bool) (*graph.Graph, *graph.Node) {
		return int8ConvHW(r, h, w, cin, cout, 1, 1, 0, zp, extreme)
	}
	fc := func(rows, k, n int, zp int32) (*graph.Graph, *graph.Node) { return int8FC(r, rows, k, n, zp) }
	type mk func() (*graph.Graph, *graph.Node)
	for _, c := range []struct {
		name string
		make mk
		want bool
	}{
		{"pw-3x5x32x6", func() (*graph.Graph, *graph.Node) { return pw(3, 5, 32, 6, 3, false) }, true},
		{"pw-2x2x40x8", func() (*graph.Graph, *graph.Node) { return pw(2, 2, 40, 8, -128, false) }, true},
		{"pw-1x1x32x2", func() (*graph.Graph, *graph.Node) { return pw(1, 1, 32, 2, 0, false) }, true},
		{"pw-extreme-k256", func() (*graph.Graph, *graph.Node) { return pw(1, 3, 256, 4, -5, true) }, true},
		{"pw-extreme-k260", func() (*graph.Graph, *graph.Node) { return pw(1, 3, 260, 4, -5, true) }, false},
		{"pw-odd-cout", func() (*graph.Graph, *graph.Node) { return pw(2, 3, 32, 5, 0, false) }, false},
		{"pw-short-k", func() (*graph.Graph, *graph.Node) { return pw(2, 3, 16, 4, 0, false) }, false},
		{"conv3x3-pointwise-form", func() (*graph.Graph, *graph.Node) { return int8ConvHW(r, 4, 4, 32, 4, 3, 1, 1, 0, false) }, false},
		{"fc-1x64x12", func() (*graph.Graph, *graph.Node) { return fc(1, 64, 12, 0) }, true},
		{"fc-3x32x10", func() (*graph.Graph, *graph.Node) { return fc(3, 32, 10, 9) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, n := c.make()
			base := computeFunc(t, g, n)
			f := withKnobs(computeFunc(t, g, n), map[string]int{"pairs": 1})
			s, ok := schedulePairs(f)
			if ok != c.want {
				t.Fatalf("schedulePairs: ok = %v, want %v", ok, c.want)
			}
			if !ok {
				return
			}
			if !usesIntrinsic(s, IntrGenPairs) {
				t.Fatalf("no %s call:\n%s", IntrGenPairs, s)
			}
			sameResult(t, fmt.Sprint(c.name), base, Finalize(s))
			if c.name == "pw-extreme-k256" {
				// At the bound: pixel q's inputs are −128 where channel
				// 2q's weights are positive and 127 elsewhere, so that
				// channel's sum is −Σ(128·w⁺ + 127·|w⁻|), about −4.16 M
				// of the 2^22 = 4.19 M the unpacking allows (random inputs
				// stay far below it; 22-bit packing passes them).
				w := g.Tensor("w").Data.I
				K, cout := 256, 4
				sameResultArgs(t, c.name+"-bound", base, Finalize(s), func(r *rand.Rand, f *PrimFunc) []*graph.Data {
					args := randomArgs(r, f)
					x := args[0].I
					for q := 0; q*K < len(x); q++ {
						ch := (2 * q) % cout
						for k := range K {
							x[q*K+k] = 127
							if w[ch*K+k] > 0 {
								x[q*K+k] = -128
							}
						}
					}
					return args
				})
			}
		})
	}
}

// The window form (schedulePairsWindow) computes what the compute
// definition does for 3×3 convolutions at strides 1 and 2 with padding
// (the padded taps read the input zero point), an unpadded 2×2 one, and a
// reduction of 36 over 4 input channels, and an RGB window of 27 padded
// to 28; it also takes a pointwise layer (one pixel per call:
// scheduleConvBlocked tries schedulePairs first), and declines odd Cout
// and windows below 8.
func TestPairsWindowKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	for _, c := range []struct {
		name                            string
		h, w, cin, cout, k, stride, pad int
		zp                              int32
		want                            bool
	}{
		{"3x3-s1-p1", 5, 6, 8, 6, 3, 1, 1, -128, true},
		{"3x3-s2-p1", 7, 7, 16, 4, 3, 2, 1, 3, true},
		{"2x2-s1-p0", 4, 5, 8, 2, 2, 1, 0, 0, true},
		{"3x3-cin4", 4, 4, 4, 4, 3, 1, 1, -1, true},
		{"pointwise", 3, 3, 32, 4, 1, 1, 0, 0, true},
		{"odd-cout", 5, 5, 8, 5, 3, 1, 1, 0, false},
		{"rgb-k27", 6, 5, 3, 4, 3, 2, 1, -128, true},
		{"short-k", 5, 5, 1, 4, 2, 1, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, false)
			base := computeFunc(t, g, n)
			f := withKnobs(computeFunc(t, g, n), map[string]int{"pairs": 1})
			s, ok := schedulePairsWindow(f)
			if ok != c.want {
				t.Fatalf("schedulePairsWindow: ok = %v, want %v", ok, c.want)
			}
			if !ok {
				return
			}
			if !usesIntrinsic(s, IntrGenPairs) {
				t.Fatalf("no %s call:\n%s", IntrGenPairs, s)
			}
			sameResult(t, c.name, base, Finalize(s))
		})
	}
}
