package tir

// shortCopiesAsLoops turns the gen_copy_s8 calls of f (copyNest's runs)
// that the core's memcpy would copy slower than an element loop back into
// element loops: runs under f.Knobs["copy_min"] bytes and, with
// f.Knobs["copy_aligned"], runs whose destination, source or length are
// not multiples of four bytes. ARMv6-M's memcpy (newlib-nano) copies byte
// by byte under 16 bytes or unaligned, after a call: a review measured
// channel concatenations of 8-byte runs 44% slower than the element loop
// on the micro:bit, aligned runs of 16 bytes or more faster (a 16×16×16
// channel concatenation 11,067 → 7,234 instructions).
func shortCopiesAsLoops(f *PrimFunc) {
	minRun := int64(f.Knobs["copy_min"])
	aligned := f.Knobs["copy_aligned"] != 0
	if minRun <= 0 && !aligned {
		return
	}
	f.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		ev, ok := s.(*Evaluate)
		if !ok {
			return s
		}
		c, ok := ev.X.(*Intrinsic)
		if !ok || c.Name != "gen_"+KCopy8 || len(c.Args) != 3 {
			return s
		}
		dst, ok1 := c.Args[0].(*Ptr)
		src, ok2 := c.Args[1].(*Ptr)
		n, ok3 := IsConst(c.Args[2])
		if !ok1 || !ok2 || !ok3 {
			return s
		}
		if n >= minRun && (!aligned || n%4 == 0 && multipleOf4(dst.Index) && multipleOf4(src.Index)) {
			return s
		}
		return Loop("i_c", int(n), func(i Expr) Stmt {
			return &Store{Buf: dst.Buf, Indices: []Expr{SimplifyExpr(Add(dst.Index, i))},
				Value: &Load{Buf: src.Buf, Indices: []Expr{SimplifyExpr(Add(src.Index, i))}, Flat: true}, Flat: true}
		})
	}, nil)
}

// multipleOf4 reports whether the affine index e is a multiple of four for
// every value of its variables (its constant and each coefficient are);
// false where e is not affine in them.
func multipleOf4(e Expr) bool {
	vars := map[*Var]bool{}
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		if v, ok := x.(*Var); ok {
			vars[v] = true
		}
	})
	// at is e with v = k and every other variable 0 (v nil: all 0).
	at := func(v *Var, k int64) (int64, bool) {
		m := map[*Var]Expr{}
		for w := range vars {
			m[w] = C(0)
		}
		if v != nil {
			m[v] = C(k)
		}
		return IsConst(SimplifyExpr(SubstituteExpr(e, m)))
	}
	base, ok := at(nil, 0)
	if !ok || base%4 != 0 {
		return false
	}
	for v := range vars {
		x, ok := at(v, 1)
		y, ok2 := at(v, 2)
		if !ok || !ok2 || (x-base)%4 != 0 || y-x != x-base {
			return false
		}
	}
	return true
}
