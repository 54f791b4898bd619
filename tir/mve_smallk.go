package tir

// KPwRQ(y *i8, x *i8, wt *i8, m, n, bias *i32, mult *i32, shift *i32, left,
// zp, lo, hi): one output pixel of a short reduction, n <= 16 (mve and neon):
// y[j] = clamp(requant(bias[j] + Σ_{i<n} x[i]·wt[16·j + i], mult[j],
// shift[j]) + zp, lo, hi) for j < m, m a multiple of 4, each weight row
// padded to sixteen. left = 1 when some shift is positive (mve and neon).
const KPwRQ = "pwrq_s8"

// KPwRQ2(y0, y1 *i8, x0, x1 *i8, wt *i8, m, n, bias, mult, shift *i32, left,
// zp, lo, hi): KPwRQ for two pixels (x0 into y0, x1 into y1) sharing each
// weight load (mve and neon).
const KPwRQ2 = "pwrq2_s8"

func init() {
	for _, p := range SIMDPrefixes {
		// The C loads its pixels' inputs (one vector each) before it stores
		// an output, which an in-place pointwise layer relies on: so do
		// these.
		extIntrinsics[p+"_"+KPwRQ] = func(a []val) val {
			pwrqRun([]val{a[0]}, [][]int64{inputs(a[1], a[4].i)}, a[2:])
			return val{}
		}
		extIntrinsics[p+"_"+KPwRQ2] = func(a []val) val {
			pwrqRun([]val{a[0], a[1]}, [][]int64{inputs(a[2], a[6].i), inputs(a[3], a[6].i)}, a[4:])
			return val{}
		}
	}
}

// shortReductions turns each pixel's blocked GEMV from a bias table and its
// requantization into one KPwRQ where the reduction is at most maxN long
// (knob small_k, at most 16; 0 = never): the input is then one vector, each
// output one VMLADAV (one SDOT on NEON), and every four outputs are requantized in a vector
// without going through the accumulator buffer, where KGemvB stores them and
// KRequant loads them back (VWW's second pointwise layer, n = 8: 382,875 →
// 256,542 instructions on mps3-an547). The weights keep KGemvB's layout,
// which for n <= 16 is the rows padded to sixteen.
//
// With pairs, a loop over pixels whose body is one such call runs them two
// at a time (KPwRQ2: each weight vector loaded once for both), an odd last
// one alone.
func shortReductions(f *PrimFunc, prefix string, maxN int, pairs bool) *PrimFunc {
	if maxN <= 0 {
		return f
	}
	changed := false
	body := RewriteStmt(f.Body, func(s Stmt) Stmt {
		al, ok := s.(*Allocate)
		if !ok {
			return s
		}
		g, r, ok := gemvRequantBlock(prefix, al)
		if !ok {
			return s
		}
		acc, ok1 := g.Args[0].(*Ptr)
		init, ok2 := g.Args[1].(*Ptr)
		wb, ok3 := g.Args[3].(*Ptr)
		racc, ok4 := r.Args[1].(*Ptr)
		m, ok5 := IsConst(g.Args[4])
		n, ok6 := IsConst(g.Args[5])
		rn, ok7 := IsConst(r.Args[4])
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || acc.Buf != al.Buf || racc.Buf != al.Buf ||
			init.Buf == al.Buf || rn != m || m%4 != 0 || n > int64(min(maxN, 16)) || n <= 0 {
			return s
		}
		if i, ok := IsConst(acc.Index); !ok || i != 0 {
			return s
		}
		if i, ok := IsConst(racc.Index); !ok || i != 0 {
			return s
		}
		// BlockWeights with one column block (n <= 16) is the rows padded
		// to sixteen, in order: KPwRQ's layout.
		if i, ok := IsConst(wb.Index); !ok || i != 0 || wb.Buf.Data == nil || int64(len(wb.Buf.Data.I)) != m*16 {
			return s
		}
		changed = true
		return &Evaluate{X: Call(prefix+"_"+KPwRQ, I32, r.Args[0], g.Args[2], wb, C(m), C(n),
			g.Args[1], r.Args[2], r.Args[3], C(requantLeft(prefix, r)), r.Args[5], r.Args[6], r.Args[7])}
	}, nil)
	if !changed {
		return f
	}
	if pairs {
		body = RewriteStmt(body, func(s Stmt) Stmt {
			l, ok := s.(*For)
			if !ok {
				return s
			}
			e, ok := l.Body.(*Evaluate)
			if !ok {
				return s
			}
			c, ok := e.X.(*Intrinsic)
			ext, ok2 := IsConst(l.Extent)
			lo, ok3 := IsConst(l.Min)
			if !ok || !ok2 || !ok3 || c.Name != prefix+"_"+KPwRQ || ext < 2 {
				return s
			}
			v2 := NewVar(l.Var.Name + "2")
			at := func(e Expr, v Expr) Expr { return SimplifyExpr(SubstituteExpr(e, map[*Var]Expr{l.Var: v})) }
			even, odd := Add(C(lo), Mul(v2, C(2))), Add(C(lo), Add(Mul(v2, C(2)), C(1)))
			args := []Expr{at(c.Args[0], even), at(c.Args[0], odd), at(c.Args[1], even), at(c.Args[1], odd)}
			for _, a := range c.Args[2:] {
				if usesVar(a, l.Var) {
					return s // the tables move with the pixel: no pair shares them
				}
				args = append(args, a)
			}
			var out Stmt = &For{Var: v2, Min: C(0), Extent: C(ext / 2), Kind: l.Kind,
				Body: &Evaluate{X: Call(prefix+"_"+KPwRQ2, I32, args...)}}
			if ext%2 == 1 {
				last := make([]Expr, len(c.Args))
				for i, a := range c.Args {
					last[i] = at(a, C(lo+ext-1))
				}
				out = Block(out, &Evaluate{X: Call(c.Name, I32, last...)})
			}
			return out
		}, nil)
	}
	g := *f
	g.Body = body
	return &g
}

// inputs copies n values from x.
func inputs(x val, n int64) []int64 {
	return append([]int64(nil), x.p.I[x.i:x.i+n]...)
}

// pwrqRun is KPwRQ for each pixel's copied inputs xs[k] into ys[k]; a holds
// the shared arguments from the weights on (wt, m, n, bias, mult, shift,
// left, zp, lo, hi).
func pwrqRun(ys []val, xs [][]int64, a []val) {
	at := func(v val, i int64) *int64 { return &v.p.I[v.i+i] }
	wt, m, n := a[0], a[1].i, a[2].i
	bias, mult, shift, zp, lo, hi := a[3], a[4], a[5], a[7].i, a[8].i, a[9].i
	for k, y := range ys {
		for j := int64(0); j < m; j++ {
			acc := *at(bias, j)
			for i := int64(0); i < n; i++ {
				acc += xs[k][i] * *at(wt, 16*j+i)
			}
			v := int64(RequantQ(int32(acc), int32(*at(mult, j)), int32(*at(shift, j)))) + zp
			*at(y, j) = wrap(y.p.DType, min(max(v, lo), hi))
		}
	}
}
