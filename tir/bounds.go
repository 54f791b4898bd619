package tir

// interval is a closed integer range.
type interval struct{ lo, hi int64 }

// PruneConditions uses the ranges of loop variables to decide integer
// comparisons (padding checks in a window that never leaves the image),
// then simplifies. It never changes what f computes.
func PruneConditions(f *PrimFunc) *PrimFunc {
	g := *f
	g.Body = SimplifyStmt(pruneStmt(f.Body, map[*Var]interval{}))
	if g.Body == nil {
		g.Body = &Seq{}
	}
	return &g
}

func pruneStmt(s Stmt, env map[*Var]interval) Stmt {
	ex := func(e Expr) Expr { return pruneExpr(e, env) }
	switch x := s.(type) {
	case nil:
		return nil
	case *For:
		lo, ok1 := IsConst(x.Min)
		n, ok2 := IsConst(x.Extent)
		if ok1 && ok2 && n > 0 {
			env[x.Var] = interval{lo, lo + n - 1}
			defer delete(env, x.Var)
		}
		return &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: pruneStmt(x.Body, env)}
	case *Seq:
		out := make([]Stmt, len(x.Stmts))
		for i, c := range x.Stmts {
			out[i] = pruneStmt(c, env)
		}
		return &Seq{Stmts: out}
	case *LetStmt:
		if r, ok := rangeOf(x.Value, env); ok {
			env[x.Var] = r
			defer delete(env, x.Var)
		}
		return &LetStmt{Var: x.Var, Value: ex(x.Value), Body: pruneStmt(x.Body, env)}
	case *IfThenElse:
		return &IfThenElse{Cond: ex(x.Cond), Then: pruneStmt(x.Then, env), Else: pruneStmt(x.Else, env)}
	case *Allocate:
		return &Allocate{Buf: x.Buf, Body: pruneStmt(x.Body, env)}
	case *Store:
		idx := make([]Expr, len(x.Indices))
		for i, e := range x.Indices {
			idx[i] = ex(e)
		}
		return &Store{Buf: x.Buf, Indices: idx, Value: ex(x.Value), Flat: x.Flat}
	case *Evaluate:
		return &Evaluate{X: ex(x.X)}
	}
	return s
}

func pruneExpr(e Expr, env map[*Var]interval) Expr {
	return RewriteExpr(e, func(e Expr) Expr {
		b, ok := e.(*Binary)
		if ok && (b.Op == OpMin || b.Op == OpMax) && b.A.Type() != F32 {
			ra, ok1 := rangeOf(b.A, env)
			rb, ok2 := rangeOf(b.B, env)
			if ok1 && ok2 {
				switch {
				case b.Op == OpMin && ra.hi <= rb.lo, b.Op == OpMax && ra.lo >= rb.hi:
					return b.A
				case b.Op == OpMin && rb.hi <= ra.lo, b.Op == OpMax && rb.lo >= ra.hi:
					return b.B
				}
			}
			return SimplifyNode(e)
		}
		if !ok || !b.Op.IsCompare() || b.A.Type() == F32 {
			return SimplifyNode(e)
		}
		ra, ok1 := rangeOf(b.A, env)
		rb, ok2 := rangeOf(b.B, env)
		if !ok1 || !ok2 {
			return e
		}
		t, f := &IntImm{T: B, V: 1}, &IntImm{T: B, V: 0}
		switch b.Op {
		case OpLT:
			if ra.hi < rb.lo {
				return t
			}
			if ra.lo >= rb.hi {
				return f
			}
		case OpLE:
			if ra.hi <= rb.lo {
				return t
			}
			if ra.lo > rb.hi {
				return f
			}
		case OpGT:
			if ra.lo > rb.hi {
				return t
			}
			if ra.hi <= rb.lo {
				return f
			}
		case OpGE:
			if ra.lo >= rb.hi {
				return t
			}
			if ra.hi < rb.lo {
				return f
			}
		}
		return e
	})
}

// rangeOf bounds an integer expression given variable ranges.
func rangeOf(e Expr, env map[*Var]interval) (interval, bool) {
	switch x := e.(type) {
	case *IntImm:
		return interval{x.V, x.V}, true
	case *Var:
		r, ok := env[x]
		return r, ok
	case *Cast:
		if x.T == F32 || x.X.Type() == F32 {
			return interval{}, false
		}
		r, ok := rangeOf(x.X, env)
		if !ok {
			lo, hi := x.X.Type().Range()
			r = interval{lo, hi}
		}
		lo, hi := x.T.Range()
		if r.lo < lo || r.hi > hi {
			return interval{}, false
		}
		return r, true
	case *Load:
		if x.Buf.DType == F32 || x.Buf.DType == I32 || x.Buf.DType == I64 {
			return interval{}, false
		}
		lo, hi := x.Buf.DType.Range()
		return interval{lo, hi}, true
	case *Binary:
		a, ok1 := rangeOf(x.A, env)
		b, ok2 := rangeOf(x.B, env)
		if !ok1 || !ok2 {
			return interval{}, false
		}
		switch x.Op {
		case OpAdd:
			return interval{a.lo + b.lo, a.hi + b.hi}, true
		case OpSub:
			return interval{a.lo - b.hi, a.hi - b.lo}, true
		case OpMul:
			p := []int64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
			r := interval{p[0], p[0]}
			for _, v := range p[1:] {
				r.lo, r.hi = min(r.lo, v), max(r.hi, v)
			}
			return r, true
		case OpDiv:
			if b.lo == b.hi && b.lo > 0 && a.lo >= 0 {
				return interval{a.lo / b.lo, a.hi / b.lo}, true
			}
		case OpMod:
			if b.lo == b.hi && b.lo > 0 && a.lo >= 0 {
				return interval{0, min(a.hi, b.lo-1)}, true
			}
		case OpMin:
			return interval{min(a.lo, b.lo), min(a.hi, b.hi)}, true
		case OpMax:
			return interval{max(a.lo, b.lo), max(a.hi, b.hi)}, true
		}
	}
	return interval{}, false
}

// PartitionLoop splits every loop named name into up to three loops: the
// first iterations, the middle ones for which every condition that depends
// on the loop variable is decided (and removed), and the last ones. Conv and
// pool padding checks vanish from the interior of the image this way.
func PartitionLoop(f *PrimFunc, name string) *PrimFunc {
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != name {
			return s
		}
		return partition(l)
	}, nil)
	return &g
}

func partition(l *For) Stmt {
	lo, ok1 := IsConst(l.Min)
	n, ok2 := IsConst(l.Extent)
	if !ok1 || !ok2 || n < 2 {
		return l
	}
	clean := func(a, b int64) (Stmt, bool) {
		body := SimplifyStmt(pruneStmt(l.Body, map[*Var]interval{l.Var: {a, b}}))
		ok := true
		VisitStmts(body, func(s Stmt) {
			if c, isIf := s.(*IfThenElse); isIf && usesVar(c.Cond, l.Var) {
				ok = false
			}
		})
		VisitExprs(body, func(e Expr) {
			if c, isSel := e.(*Select); isSel && usesVar(c.Cond, l.Var) {
				ok = false
			}
		})
		return body, ok
	}
	end := lo + n - 1
	a, b := int64(-1), int64(-1)
	for i := lo; i <= end; i++ {
		if _, ok := clean(i, i); ok {
			a = i
			break
		}
	}
	if a < 0 {
		return l
	}
	for i := end; i >= a; i-- {
		if _, ok := clean(i, i); ok {
			b = i
			break
		}
	}
	mid, ok := clean(a, b)
	if !ok || (a == lo && b == end && !hasCondOn(l.Body, l.Var)) {
		return l
	}
	var parts []Stmt
	if a > lo {
		parts = append(parts, &For{Var: l.Var, Min: C(lo), Extent: C(a - lo), Kind: l.Kind, Body: l.Body})
	}
	parts = append(parts, &For{Var: l.Var, Min: C(a), Extent: C(b - a + 1), Kind: l.Kind, Body: mid})
	if b < end {
		parts = append(parts, &For{Var: l.Var, Min: C(b + 1), Extent: C(end - b), Kind: l.Kind, Body: l.Body})
	}
	return Block(parts...)
}

func hasCondOn(s Stmt, v *Var) bool {
	found := false
	VisitStmts(s, func(s Stmt) {
		if c, ok := s.(*IfThenElse); ok && usesVar(c.Cond, v) {
			found = true
		}
	})
	return found
}
