package tir

import "fmt"

// KGemvB2(acc0 *i32, acc1 *i32, init *i32, x0 *i8, x1 *i8, wb *i8, m, n):
// KGemvB for two output pixels at once (each weight vector loaded once for
// both), both starting from init.
const KGemvB2 = "gemvb2_s8"

// KGemvB3(acc0, acc1, acc2 *i32, init *i32, x0, x1, x2 *i8, wb *i8, m, n):
// KGemvB for three output pixels at once, all starting from init (mve
// only: its asm keeps six accumulators in even core registers, two
// channels of the three pixels per pass).
const KGemvB3 = "gemvb3_s8"

func init() {
	for _, p := range SIMDPrefixes {
		name := p + "_" + KGemvB2
		extIntrinsics[name] = func(a []val) val {
			g := extIntrinsics[p+"_"+KGemvB]
			g([]val{a[0], a[2], a[3], a[5], a[6], a[7]})
			g([]val{a[1], a[2], a[4], a[5], a[6], a[7]})
			return val{}
		}
		extIntrinsics[p+"_"+KGemvB3] = func(a []val) val {
			g := extIntrinsics[p+"_"+KGemvB]
			for i := 0; i < 3; i++ {
				g([]val{a[i], a[3], a[4+i], a[7], a[8], a[9]})
			}
			return val{}
		}
	}
}

// pairPixels runs a 1×1 convolution's output pixels two at a time (knob
// pixel_pairs / pixel_pairs_max: the range of reduction lengths n that pair;
// measured on the M55, longer reductions lose to register spills): when input and output pixels are contiguous across rows,
// the row and column loops fuse into one pixel loop whose pairs share the
// weight loads (gemvb2); an odd last pixel runs alone.
//
// group 3 runs them three at a time (KGemvB3), a last one or two alone.
func pairPixels(f *PrimFunc, prefix string, minN, maxN, group int) *PrimFunc {
	var outer, inner *For
	var al *Allocate
	VisitStmts(f.Body, func(s Stmt) {
		o, ok := s.(*For)
		if !ok {
			return
		}
		in, ok := o.Body.(*For)
		if !ok {
			return
		}
		a, ok := in.Body.(*Allocate)
		if !ok {
			return
		}
		outer, inner, al = o, in, a
	})
	if al == nil {
		return f
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 2 {
		return f
	}
	calls := make([]*Intrinsic, 2)
	for i, s := range seq.Stmts {
		e, ok := s.(*Evaluate)
		if !ok {
			return f
		}
		if calls[i], ok = e.X.(*Intrinsic); !ok {
			return f
		}
	}
	if calls[0].Name != prefix+"_"+KGemvB || (calls[1].Name != prefix+"_"+KRequant && calls[1].Name != prefix+"_"+KRequantR) {
		return f
	}
	if p, ok := calls[0].Args[1].(*Ptr); !ok || p.Buf == al.Buf {
		return f // the GEMV must start from a bias table
	}
	if n, ok := IsConst(calls[0].Args[5]); !ok || n < int64(minN) || n > int64(maxN) {
		return f
	}
	ow, ok1 := IsConst(inner.Extent)
	oh, ok2 := IsConst(outer.Extent)
	if !ok1 || !ok2 {
		return f
	}
	// Pixels must be contiguous across rows in x and y: coef(oh) = OW·coef(ow).
	for _, p := range []Expr{calls[0].Args[2], calls[1].Args[0]} {
		ptr, ok := p.(*Ptr)
		if !ok {
			return f
		}
		_, co, ok1 := affineIn(ptr.Index, outer.Var)
		_, ci, ok2 := affineIn(ptr.Index, inner.Var)
		if !ok1 || !ok2 || co != ow*ci {
			return f
		}
	}
	at := func(v Expr) Stmt {
		return Substitute(al, map[*Var]Expr{outer.Var: C(0), inner.Var: v})
	}
	q2 := NewVar("px2")
	a0 := al.Buf
	bufs := []*Buffer{a0}
	for k := 1; k < group; k++ {
		bufs = append(bufs, NewBuffer(fmt.Sprintf("%s_%d", a0.Name, k), a0.DType, a0.Shape, ScopeLocal))
	}
	px := func(e Expr, k int64) Expr {
		return SubstituteExpr(e, map[*Var]Expr{outer.Var: C(0), inner.Var: Add(Mul(q2, C(int64(group))), C(k))})
	}
	g := calls[0]
	r := calls[1]
	var gem Expr
	if group == 3 {
		gem = Call(prefix+"_"+KGemvB3, I32, g.Args[0], &Ptr{Buf: bufs[1], Index: C(0)}, &Ptr{Buf: bufs[2], Index: C(0)}, g.Args[1],
			px(g.Args[2], 0), px(g.Args[2], 1), px(g.Args[2], 2), g.Args[3], g.Args[4], g.Args[5])
	} else {
		gem = Call(prefix+"_"+KGemvB2, I32, g.Args[0], &Ptr{Buf: bufs[1], Index: C(0)}, g.Args[1], px(g.Args[2], 0), px(g.Args[2], 1), g.Args[3], g.Args[4], g.Args[5])
	}
	stmts := []Stmt{&Evaluate{X: gem}}
	for k := range group {
		acc := r.Args[1]
		if k > 0 {
			acc = &Ptr{Buf: bufs[k], Index: C(0)}
		}
		stmts = append(stmts, &Evaluate{X: Call(r.Name, I32, append([]Expr{px(r.Args[0], int64(k)), acc}, r.Args[2:]...)...)})
	}
	var grp Stmt = Block(stmts...)
	for k := group - 1; k >= 0; k-- {
		grp = &Allocate{Buf: bufs[k], Body: grp}
	}
	P := oh * ow
	G := int64(group)
	var body Stmt = &For{Var: q2, Min: C(0), Extent: C(P / G), Body: grp}
	for p := P / G * G; p < P; p++ {
		body = Block(body, at(C(p)))
	}
	g2 := *f
	g2.Body = replaceStmt(f.Body, outer, func(Stmt) Stmt { return body })
	g2.Body = SimplifyStmt(g2.Body)
	return &g2
}
