package tir

import "github.com/mcugen/mcugen/graph"

// widenKernelRows fills one window of the im2col column for a convolution
// whose input channels are not a multiple of four but whose kernel rows
// are: KW·Cg int8 values, adjacent in the input (the kw taps Cg apart, the
// channels 1 apart), a multiple of four. Each kernel row is widened
// straight from the input (dsp_widen_s8 of KW·Cg values: an LDR and two
// SXTAB16 per four) where all of its taps are inside; a row with a tap
// outside goes through a staging row of its own, padded with the input
// zero point (which widens to 0). The column's layout is the one the
// whole-window staging row gave: widening is per group of four values, and
// every kernel row starts a group, so the weights are the same.
//
// KWS's first layer (10×4, one channel, 25×5×64) staged every window byte
// by byte through a condition per tap, 28% of the layer.
//
// at is the window's first column word, K the window's values and K4 its
// padded length (the words from K on are zeros), m binds the window's
// output position.
func (c *convNest) widenKernelRows(name string, col *Buffer, at, K, K4, rowK int, a *accNest, xFlat Expr, m map[*Var]Expr) Stmt {
	var out []Stmt
	for k := K; k < K4; k += 2 {
		out = append(out, flatStore(col, C(int64((at*2+k)/2)), C(0)))
	}
	zp := &IntImm{T: graph.Int8, V: -a.xOff}
	out = append(out, loopK("kh", c.KH, Serial, func(kh Expr) Stmt {
		bind := func(kw, ic Expr) map[*Var]Expr {
			b := map[*Var]Expr{c.kh: kh, c.kw: kw, c.ic: ic}
			for v, e := range m {
				b[v] = e
			}
			return b
		}
		dst := Add(Mul(kh, C(int64(rowK/2))), C(int64(at)))
		direct := dspWiden(col, dst, a.x.Buf, SimplifyExpr(SubstituteExpr(xFlat, bind(C(0), C(0)))), rowK, a.xOff)
		if a.cond == nil {
			return direct
		}
		// The condition is a conjunction of bounds linear in kw and ic:
		// true at the row's first and last tap, it is true at every tap
		// between them.
		inside := And(SimplifyExpr(SubstituteExpr(a.cond, bind(C(0), C(0)))),
			SimplifyExpr(SubstituteExpr(a.cond, bind(C(int64(c.KW-1)), C(int64(c.Cg-1))))))
		stage := NewBuffer(name+"_krow", graph.Int8, []int{rowK}, ScopeLocal)
		// The row's taps one by one (rowK is small: a kernel row), each
		// condition simplified for its own tap: at a left or right border
		// the column bounds are constants there (KWS's 10×4 layer: two of
		// its five window columns are borders, and their per-tap tests
		// were most of the staging).
		var taps []Stmt
		for kw := 0; kw < c.KW; kw++ {
			for ic := 0; ic < c.Cg; ic++ {
				b := bind(C(int64(kw)), C(int64(ic)))
				to := C(int64(kw*c.Cg + ic))
				in := SimplifyExpr(SubstituteExpr(a.cond, b))
				load := flatStore(stage, to, SimplifyExpr(SubstituteExpr(a.x, b)))
				switch v, ok := IsConst(in); {
				case ok && v != 0:
					taps = append(taps, load)
				case ok:
					taps = append(taps, flatStore(stage, to, zp))
				default:
					taps = append(taps, &IfThenElse{Cond: in, Then: load, Else: flatStore(stage, to, zp)})
				}
			}
		}
		staged := Block(taps...)
		return &IfThenElse{Cond: inside, Then: direct,
			Else: &Allocate{Buf: stage, Body: Block(staged, dspWiden(col, dst, stage, C(0), rowK, a.xOff))}}
	}))
	return Block(out...)
}
