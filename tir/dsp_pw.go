package tir

import (
	"fmt"
	"math"
	"strings"
)

// DSPPwSName is the one-pixel pointwise helper for short reductions (n = 2
// or 4 pair words: K = 4 or 8), every output channel from one table with
// DSPGemmSName's shared-shift epilogue:
//
//	dsp_pw_s8ps_nN(y *int8, x *int32, tab *int32, c, T, lo, hi):
//	for o < c, with P = n + 3 words per channel at tab + P·o:
//	  s = tab[P·o + n] + Σ_{g < n} dot2(x[g], tab[P·o + g])
//	  y[o] = clamp((⌊s·tab[P·o + n + 1] / 2^32⌋ + tab[P·o + n + 2]) >> T, lo, hi)
//
// and with signed (DSPGemmSNName's sign correction) P = n + 4 and
// tab[P·o + n + 3] taken off A where s < 0. A channel's weights, scaled
// bias and requantization words are consecutive, so one LDM loads the
// weights and the bias and a second the multiplier and A: K = 8 takes
// nine instructions an output where the 2×2 blocks spend about twelve on
// loads, loop and epilogue around their eight SMLADs (VWW's 48×48 8→16
// layer). The pixel's activations stay in registers across the channels.
func DSPPwSName(n int, signed bool) string {
	if signed {
		return fmt.Sprintf("dsp_pw_s8psn_n%d", n)
	}
	return fmt.Sprintf("dsp_pw_s8ps_n%d", n)
}

// DSPPwWords are the reductions (pair words) DSPPwSName has helpers for.
var DSPPwWords = []int{2, 4}

func init() {
	for _, n := range DSPPwWords {
		for _, signed := range []bool{false, true} {
			name := DSPPwSName(n, signed)
			extIntrinsics[name] = pwIntrinsic(name, int64(n), signed)
		}
	}
}

// pwIntrinsic is the semantics of DSPPwSName: arguments y, x, tab, c, T,
// lo, hi.
func pwIntrinsic(name string, n int64, signed bool) func([]val) val {
	per := n + 3
	if signed {
		per++
	}
	return func(a []val) val {
		y, x, tab, c, t, lo, hi := a[0], a[1], a[2], a[3].i, a[4].i, a[5].i, a[6].i
		if c <= 0 {
			panic(fmt.Sprintf("%s: c = %d", name, c))
		}
		for o := int64(0); o < c; o++ {
			w := func(q int64) int64 { return tab.p.I[tab.i+per*o+q] }
			s := w(n)
			for g := int64(0); g < n; g++ {
				s += dot2(x.p.I[x.i+g], w(g))
			}
			if s > math.MaxInt32 || s < math.MinInt32 {
				panic("int32 overflow in " + name)
			}
			A := w(n + 2)
			if signed && s < 0 {
				A -= w(n + 3)
			}
			y.p.I[y.i+o] = smmlaRequant(name, s, w(n+1), A, t, lo, hi)
		}
		return val{}
	}
}

// pwCall is gemmFused's one-pixel form for a short reduction
// (DSPPwSName): one table of every channel's scaled weight words, scaled
// bias and requantization words (from the shift plan sp, per words a
// channel in sp.tab), and one call whose outputs start at y. ok is false
// where the helper does not apply.
func (g *gemmSpec) pwCall(sp shiftPlan, per int, signed bool, y Expr, args []Expr) (Stmt, bool) {
	n := g.K4 / 2
	if !g.smallK || g.R != 1 || g.segs != nil || g.dead != nil || g.w8 || (n != 2 && n != 4) {
		return nil, false
	}
	tab := g.consts.get(g.w, "pw", func() *Buffer {
		words := make([]int64, 0, (n+per)*g.Cout)
		for oc := range g.Cout {
			for k := range n {
				words = append(words, sp.w[g.wordOf(oc, k)])
			}
			// The plan's order is m, A, bias (, D); the helper's bias, m, A (, D).
			p := sp.tab[per*oc : per*oc+per]
			words = append(words, p[2], p[0], p[1])
			if signed {
				words = append(words, p[3])
			}
		}
		return constBuf(strings.TrimSuffix(g.w.Name, "_weights_s16")+"_pw", I32, []int{len(words)}, words)
	})
	call := Call(DSPPwSName(n, signed), I32, ptr(g.store.Buf, y), ptr(g.xb, C(0)), ptr(tab, C(0)), C(int64(g.Cout)), args[0], args[1], args[2])
	return &Evaluate{X: call}, true
}
