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
	g.Body = partitionWalk(f.Body, name, map[*Var]interval{})
	return &g
}

// partitionWalk partitions the loops named name inside s, knowing the ranges
// of the loops around them.
func partitionWalk(s Stmt, name string, env map[*Var]interval) Stmt {
	switch x := s.(type) {
	case *For:
		lo, ok1 := IsConst(x.Min)
		n, ok2 := IsConst(x.Extent)
		known := ok1 && ok2 && n > 0
		if known {
			env[x.Var] = interval{lo, lo + n - 1}
		}
		l := &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: partitionWalk(x.Body, name, env)}
		if known {
			delete(env, x.Var)
		}
		if x.Var.Name == name {
			return partition(l, env)
		}
		return l
	case *Seq:
		out := make([]Stmt, len(x.Stmts))
		for i, c := range x.Stmts {
			out[i] = partitionWalk(c, name, env)
		}
		return &Seq{Stmts: out}
	case *LetStmt:
		return &LetStmt{Var: x.Var, Value: x.Value, Body: partitionWalk(x.Body, name, env)}
	case *IfThenElse:
		return &IfThenElse{Cond: x.Cond, Then: partitionWalk(x.Then, name, env), Else: partitionWalk(x.Else, name, env)}
	case *Allocate:
		return &Allocate{Buf: x.Buf, Body: partitionWalk(x.Body, name, env)}
	}
	return s
}

// maxPartitions bounds the pieces one loop may be split into.
const maxPartitions = 8

// partition splits l into runs of consecutive iterations whose conditions
// are decided the same way, each run with its conditions pruned.
func partition(l *For, outer map[*Var]interval) Stmt {
	lo, ok1 := IsConst(l.Min)
	n, ok2 := IsConst(l.Extent)
	if !ok1 || !ok2 || n < 1 || n > 4096 {
		return l
	}
	prune := func(a, b int64) Stmt {
		env := map[*Var]interval{l.Var: {a, b}}
		for v, r := range outer {
			env[v] = r
		}
		return SimplifyStmt(pruneStmt(l.Body, env))
	}
	end := lo + n - 1
	keys := make([]string, n)
	for i := lo; i <= end; i++ {
		keys[i-lo] = StmtString(prune(i, i))
	}
	var parts []Stmt
	for a := lo; a <= end; {
		b := a
		for b < end && keys[b+1-lo] == keys[a-lo] {
			b++
		}
		body := prune(a, b)
		if StmtString(body) != keys[a-lo] {
			// The interval did not decide what every point decides: one piece per point.
			for i := a; i <= b; i++ {
				parts = append(parts, &For{Var: l.Var, Min: C(i), Extent: C(1), Kind: l.Kind, Body: prune(i, i)})
			}
		} else {
			parts = append(parts, &For{Var: l.Var, Min: C(a), Extent: C(b - a + 1), Kind: l.Kind, Body: body})
		}
		if len(parts) > maxPartitions {
			return l
		}
		a = b + 1
	}
	return Block(parts...)
}
