package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// KGemvB2(acc0 *i32, acc1 *i32, init *i32, x0 *i8, x1 *i8, wb *i8, m, n):
// KGemvB for two output pixels at once (each weight vector loaded once for
// both), both starting from init.
const KGemvB2 = "gemvb2_s8"

// KGemvB3(acc0, acc1, acc2 *i32, init *i32, x0, x1, x2 *i8, wb *i8, m, n):
// KGemvB for three output pixels at once, all starting from init (mve
// only: its asm keeps six accumulators in even core registers, two
// channels of the three pixels per pass).
const KGemvB3 = "gemvb3_s8"

// KGemvB3I(acc0, acc1, acc2 *i32, init *i32, xi *i8, wb *i8, m, n): KGemvB3
// over three windows interleaved in 16-byte chunks (pixel k's element i
// at xi[(i/16)·48 + k·16 + i%16]; n % 16 == 0), so that one pointer
// streams the three (mve only).
const KGemvB3I = "gemvb3i_s8"

func init() {
	for _, p := range SIMDPrefixes {
		name := p + "_" + KGemvB2
		extIntrinsics[name] = func(a []val) val {
			g := extIntrinsics[p+"_"+KGemvB]
			g([]val{a[0], a[2], a[3], a[5], a[6], a[7]})
			g([]val{a[1], a[2], a[4], a[5], a[6], a[7]})
			return val{}
		}
		extIntrinsics[p+"_"+KGemvB3I] = func(a []val) val {
			g := extIntrinsics[p+"_"+KGemvB]
			xi, n := a[4], a[7].i
			if n%16 != 0 {
				panic(fmt.Sprintf("%s_%s: n = %d", p, KGemvB3I, n))
			}
			for k := int64(0); k < 3; k++ {
				x := graph.NewData(xi.p.DType, []int{int(n)})
				for i := int64(0); i < n; i++ {
					x.I[i] = xi.p.I[xi.i+(i/16)*48+k*16+i%16]
				}
				g([]val{a[k], a[3], {p: x}, a[5], a[6], a[7]})
			}
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
	g, r, ok := gemvRequantBlock(prefix, al)
	if !ok {
		return f
	}
	if p, ok := g.Args[1].(*Ptr); !ok || p.Buf == al.Buf {
		return f // the GEMV must start from a bias table
	}
	if n, ok := IsConst(g.Args[5]); !ok || n < int64(minN) || n > int64(maxN) {
		return f
	}
	ow, ok1 := IsConst(inner.Extent)
	oh, ok2 := IsConst(outer.Extent)
	if !ok1 || !ok2 {
		return f
	}
	// Pixels must be contiguous across rows in x and y: coef(oh) = OW·coef(ow).
	for _, p := range []Expr{g.Args[2], r.Args[0]} {
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

// groupWindowPixels runs a windowed convolution's output pixels three at a
// time along each row (mve, KGemvB3I): the loop over ow whose body fills a
// window buffer with copies and fills and then, on an
// accumulator, runs KGemvB (from the bias, or from the accumulator after a
// copy of the bias) and one requantization becomes groups of three
// windows interleaved in 16-byte chunks, one KGemvB3I from the bias table
// and three requantizations; the last OW mod 3 pixels of a row run alone.
// Window copies and fills are split at the chunk boundaries; a reduction
// that is not a multiple of 16 is padded to one. f is returned unchanged
// where the shape differs or n is outside [minN, maxN].
func groupWindowPixels(f *PrimFunc, prefix string, minN, maxN int) *PrimFunc {
	var loop *For
	var win, accA *Allocate
	var fills []Stmt
	var init *Ptr
	var gem, rq *Intrinsic
	VisitStmts(f.Body, func(s Stmt) {
		l, ok := s.(*For)
		if !ok || loop != nil {
			return
		}
		w, ok := l.Body.(*Allocate)
		if !ok {
			return
		}
		seq, ok := w.Body.(*Seq)
		if !ok || len(seq.Stmts) < 2 {
			return
		}
		a, ok := seq.Stmts[len(seq.Stmts)-1].(*Allocate)
		if !ok {
			return
		}
		inner, ok := a.Body.(*Seq)
		if !ok || len(inner.Stmts) < 2 || len(inner.Stmts) > 3 {
			return
		}
		calls, ok := intrinsicCalls(inner.Stmts)
		if !ok {
			return
		}
		g, r := calls[len(calls)-2], calls[len(calls)-1]
		if !gemvRequant(prefix, g, r) {
			return
		}
		// The GEMV's init: the bias table itself, or the accumulator after
		// a copy of it.
		in, ok := g.Args[1].(*Ptr)
		if !ok {
			return
		}
		if in.Buf == a.Buf {
			if len(calls) != 3 || calls[0].Name != prefix+"_"+KCopy32 {
				return
			}
			src, ok := calls[0].Args[1].(*Ptr)
			if !ok || src.Buf.Scope != ScopeConst {
				return
			}
			in = src
		} else if len(calls) != 2 || in.Buf.Scope != ScopeConst {
			return
		}
		if x, ok := g.Args[2].(*Ptr); !ok || x.Buf != w.Buf {
			return
		}
		if ra, ok := r.Args[1].(*Ptr); !ok || ra.Buf != a.Buf {
			return
		}
		if n, ok := IsConst(g.Args[5]); !ok || n < int64(minN) || n > int64(maxN) {
			return
		}
		loop, win, accA, fills, init, gem, rq = l, w, a, seq.Stmts[:len(seq.Stmts)-1], in, g, r
	})
	if loop == nil {
		return f
	}
	ow, ok := IsConst(loop.Extent)
	if lo, ok2 := IsConst(loop.Min); !ok || !ok2 || lo != 0 || ow < 3 {
		return f
	}
	// A reduction that is not a multiple of 16 runs to the next one: the
	// blocked weights are already zero there (BlockWeights pads the last
	// column block), and the windows' padding bytes are zeroed once.
	n, _ := IsConst(gem.Args[5])
	n16 := (n + 15) / 16 * 16
	xi := NewBuffer(win.Buf.Name+"_x3", win.Buf.DType, []int{int(n16 / 16 * 48)}, ScopeLocal)
	q := NewVar(loop.Var.Name + "3")
	at := func(k int64) Expr { return Add(Mul(q, C(3)), C(k)) }
	var body []Stmt
	for k := int64(0); k < 3; k++ {
		st, ok := interleaveFills(Substitute(Block(fills...), map[*Var]Expr{loop.Var: at(k)}), win.Buf, xi, k, prefix)
		if !ok {
			return f
		}
		body = append(body, st)
	}
	var accs []*Buffer
	for k := 0; k < 3; k++ {
		accs = append(accs, NewBuffer(fmt.Sprintf("%s_%d", accA.Buf.Name, k), accA.Buf.DType, accA.Buf.Shape, ScopeLocal))
	}
	body = append(body, &Evaluate{X: Call(prefix+"_"+KGemvB3I, I32, &Ptr{Buf: accs[0], Index: C(0)}, &Ptr{Buf: accs[1], Index: C(0)},
		&Ptr{Buf: accs[2], Index: C(0)}, init, &Ptr{Buf: xi, Index: C(0)}, gem.Args[3], gem.Args[4], C(n16))})
	for k := int64(0); k < 3; k++ {
		st := Substitute(&Evaluate{X: rq}, map[*Var]Expr{loop.Var: at(k)})
		body = append(body, renameBufs(st, map[*Buffer]*Buffer{accA.Buf: accs[k]}))
	}
	var grp Stmt = Block(body...)
	for k := 2; k >= 0; k-- {
		grp = &Allocate{Buf: accs[k], Body: grp}
	}
	var pad []Stmt
	if n16 > n {
		for k := int64(0); k < 3; k++ {
			pad = append(pad, &Evaluate{X: Call(prefix+"_"+KFill8, I32, &Ptr{Buf: xi, Index: C((n16/16-1)*48 + k*16 + n%16)}, C(0), C(n16-n))})
		}
	}
	out := []Stmt{&Allocate{Buf: xi, Body: Block(append(pad, &For{Var: q, Min: C(0), Extent: C(ow / 3), Body: grp})...)}}
	for p := ow / 3 * 3; p < ow; p++ {
		out = append(out, Substitute(loop.Body, map[*Var]Expr{loop.Var: C(p)}))
	}
	g2 := *f
	g2.Body = SimplifyStmt(replaceStmt(f.Body, loop, func(Stmt) Stmt { return Block(out...) }))
	return &g2
}

// interleaveFills rewrites a window fill (copies and fills into win at
// constant offsets, under conditions) to write pixel k's window into the
// interleaved buffer xi: each 16-byte chunk c of win at xi[c·48 + k·16]
// (a copy or fill across chunks becomes one per chunk); ok is false for
// anything else.
func interleaveFills(s Stmt, win, xi *Buffer, k int64, prefix string) (Stmt, bool) {
	switch x := s.(type) {
	case *Seq:
		var out []Stmt
		for _, st := range x.Stmts {
			r, ok := interleaveFills(st, win, xi, k, prefix)
			if !ok {
				return nil, false
			}
			out = append(out, r)
		}
		return Block(out...), true
	case *IfThenElse:
		t, ok := interleaveFills(x.Then, win, xi, k, prefix)
		if !ok {
			return nil, false
		}
		var e Stmt
		if x.Else != nil {
			if e, ok = interleaveFills(x.Else, win, xi, k, prefix); !ok {
				return nil, false
			}
		}
		return &IfThenElse{Cond: x.Cond, Then: t, Else: e}, true
	case *Evaluate:
		c, ok := x.X.(*Intrinsic)
		if !ok || (c.Name != prefix+"_"+KCopy8 && c.Name != prefix+"_"+KFill8) || len(c.Args) != 3 {
			return nil, false
		}
		dst, ok := c.Args[0].(*Ptr)
		if !ok || dst.Buf != win {
			return nil, false
		}
		off, ok1 := IsConst(dst.Index)
		n, ok2 := IsConst(c.Args[2])
		if !ok1 || !ok2 || off < 0 || n <= 0 {
			return nil, false
		}
		// One copy or fill per chunk the range touches.
		var out []Stmt
		for o := off; o < off+n; {
			m := min(off+n, (o/16+1)*16) - o
			to := &Ptr{Buf: xi, Index: C((o/16)*48 + k*16 + o%16)}
			src := c.Args[1]
			if c.Name == prefix+"_"+KCopy8 {
				sp, ok := src.(*Ptr)
				if !ok {
					return nil, false
				}
				src = &Ptr{Buf: sp.Buf, Index: SimplifyExpr(Add(sp.Index, C(o-off)))}
			}
			out = append(out, &Evaluate{X: Call(c.Name, c.T, to, src, C(m))})
			o += m
		}
		return Block(out...), true
	}
	return nil, false
}

// intrinsicCalls returns the intrinsics that stmts evaluate, one each; ok
// is false if any statement is something else.
func intrinsicCalls(stmts []Stmt) ([]*Intrinsic, bool) {
	var calls []*Intrinsic
	for _, st := range stmts {
		e, ok := st.(*Evaluate)
		if !ok {
			return nil, false
		}
		c, ok := e.X.(*Intrinsic)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// gemvRequantBlock returns the two calls of al's body when it is exactly a
// blocked GEMV and a requantization (gemvRequant).
func gemvRequantBlock(prefix string, al *Allocate) (g, r *Intrinsic, ok bool) {
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 2 {
		return nil, nil, false
	}
	calls, ok := intrinsicCalls(seq.Stmts)
	if !ok || !gemvRequant(prefix, calls[0], calls[1]) {
		return nil, nil, false
	}
	return calls[0], calls[1], true
}

// requantLeft is the left argument of the fused kernels for requantization
// call r: 1 for KRequant (some shift is positive), 0 for KRequantR.
func requantLeft(prefix string, r *Intrinsic) int64 {
	if r.Name == prefix+"_"+KRequant {
		return 1
	}
	return 0
}

// gemvRequant reports whether g and r are a blocked GEMV and the
// requantization of its accumulators (prefix's micro-kernels).
func gemvRequant(prefix string, g, r *Intrinsic) bool {
	return g.Name == prefix+"_"+KGemvB && (r.Name == prefix+"_"+KRequant || r.Name == prefix+"_"+KRequantR)
}
