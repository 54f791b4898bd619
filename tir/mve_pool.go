package tir

import "fmt"

// KSumPool(acc *i32, x *i8, xkh, xkw, kh, kw, c):
// acc[ch] += Σ_{a<kh, b<kw} x[a·xkh + b·xkw + ch] for ch < c.
const KSumPool = "sumpool_s8"

func init() {
	// The dsp target has a sum pool too (SXTAB16 into int16 lanes).
	for _, p := range append([]string{"dsp"}, SIMDPrefixes...) {
		extIntrinsics[p+"_"+KSumPool] = func(a []val) val {
			acc, x, xkh, xkw, kh, kw, c := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i, a[6].i
			for ch := int64(0); ch < c; ch++ {
				s := acc.p.I[acc.i+ch]
				for p := int64(0); p < kh; p++ {
					for q := int64(0); q < kw; q++ {
						s += x.p.I[x.i+p*xkh+q*xkw+ch]
					}
				}
				acc.p.I[acc.i+ch] = s
			}
			return val{}
		}
	}
}

// simdAvgPool schedules an int8 average pool whose windows need no padding
// checks: an accumulator per channel, the window taps outside the channel
// loop, and the taps × channels nest tensorized into <prefix>_sumpool_s8;
// the rounding division stays scalar. Anything else takes the fallback.
func simdAvgPool(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		g, err := simdPool(f, prefix)
		if err != nil {
			if f.Knobs == nil {
				f.Knobs = map[string]int{}
			}
			f.Knobs["simd"] = 0
			return fallback(f)
		}
		g.Knobs["simd"] = 1
		return g, nil
	}
}

func simdPool(f *PrimFunc, prefix string) (*PrimFunc, error) {
	f = Flatten(stripUnitLoops(PruneConditions(Simplify(f))))
	if f.Knobs == nil {
		f.Knobs = map[string]int{}
	}
	l := findLoop(f.Body, "c")
	if l == nil {
		return nil, fmt.Errorf("no channel loop")
	}
	m, ok := IsConst(l.Extent)
	if !ok {
		return nil, fmt.Errorf("channel extent")
	}
	al, ok := l.Body.(*Allocate)
	if !ok || len(al.Buf.Shape) != 0 || al.Buf.DType != I32 {
		return nil, fmt.Errorf("no int32 accumulator")
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 3 {
		return nil, fmt.Errorf("unexpected body")
	}
	init, ok := seq.Stmts[0].(*Store)
	if v, isC := IsConst(init.Value); !ok || !isC || v != 0 {
		return nil, fmt.Errorf("accumulator does not start at 0")
	}
	acc := al.Buf
	var loops []*For
	var upd *Store
	VisitStmts(seq.Stmts[1], func(s Stmt) {
		switch s := s.(type) {
		case *For:
			loops = append(loops, s)
		case *Store:
			upd = s
		}
	})
	if upd == nil || len(loops) > 2 || hasCond(seq.Stmts[1]) {
		return nil, fmt.Errorf("reduction is not a plain window sum")
	}
	sum, ok := upd.Value.(*Binary)
	if !ok || sum.Op != OpAdd {
		return nil, fmt.Errorf("not a sum")
	}
	if a, ok := sum.A.(*Load); !ok || a.Buf != acc {
		return nil, fmt.Errorf("not a sum")
	}
	x, off, ok := castLoad(sum.B)
	if !ok || off != 0 || !x.Flat {
		return nil, fmt.Errorf("not an int8 sum")
	}
	idx := x.Indices[0]
	var st, ext [2]int64
	ext = [2]int64{1, 1}
	for i, lp := range loops {
		slot := i + 2 - len(loops)
		var ok1 bool
		idx, st[slot], ok1 = affineIn(idx, lp.Var)
		n, ok2 := IsConst(lp.Extent)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("window index")
		}
		ext[slot] = n
	}
	xb, xc, ok := affineIn(idx, l.Var)
	if !ok || xc != 1 {
		return nil, fmt.Errorf("channels not contiguous")
	}
	accv := NewBuffer("acc", I32, []int{int(m)}, ScopeLocal)
	c1, c3 := NewVar("c"), NewVar("c")
	zero := &For{Var: c1, Min: C(0), Extent: C(m), Body: &Store{Buf: accv, Indices: []Expr{c1}, Value: C(0), Flat: true}}
	red := &Evaluate{X: Call(prefix+"_"+KSumPool, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: x.Buf, Index: xb},
		C(st[0]), C(st[1]), C(ext[0]), C(ext[1]), C(m))}
	out := Substitute(seq.Stmts[2], map[*Var]Expr{l.Var: c3})
	out = RewriteStmt(out, nil, func(e Expr) Expr {
		if ld, ok := e.(*Load); ok && ld.Buf == acc {
			return &Load{Buf: accv, Indices: []Expr{c3}, Flat: true}
		}
		return e
	})
	body := &Allocate{Buf: accv, Body: Block(zero, red, &For{Var: c3, Min: C(0), Extent: C(m), Body: out})}
	f.Body = replaceStmt(f.Body, l, func(Stmt) Stmt { return body })
	return f, nil
}
