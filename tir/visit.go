package tir

// RewriteExpr rebuilds e bottom-up, applying f to every node after its
// children have been rewritten. f returns its argument to keep a node.
func RewriteExpr(e Expr, f func(Expr) Expr) Expr {
	switch x := e.(type) {
	case *Binary:
		a, b := RewriteExpr(x.A, f), RewriteExpr(x.B, f)
		if a != x.A || b != x.B {
			e = &Binary{Op: x.Op, A: a, B: b}
		}
	case *Cast:
		if v := RewriteExpr(x.X, f); v != x.X {
			e = &Cast{T: x.T, X: v}
		}
	case *Select:
		c, a, b := RewriteExpr(x.Cond, f), RewriteExpr(x.A, f), RewriteExpr(x.B, f)
		if c != x.Cond || a != x.A || b != x.B {
			e = &Select{Cond: c, A: a, B: b}
		}
	case *Load:
		idx, ch := rewriteList(x.Indices, f)
		if ch {
			e = &Load{Buf: x.Buf, Indices: idx, Flat: x.Flat}
		}
	case *Intrinsic:
		args, ch := rewriteList(x.Args, f)
		if ch {
			e = &Intrinsic{Name: x.Name, T: x.T, Args: args}
		}
	case *Ptr:
		if i := RewriteExpr(x.Index, f); i != x.Index {
			e = &Ptr{Buf: x.Buf, Index: i}
		}
	}
	return f(e)
}

func rewriteList(l []Expr, f func(Expr) Expr) ([]Expr, bool) {
	out := make([]Expr, len(l))
	ch := false
	for i, a := range l {
		out[i] = RewriteExpr(a, f)
		ch = ch || out[i] != a
	}
	return out, ch
}

// RewriteStmt rebuilds s bottom-up: every expression goes through fe (may be
// nil), then every statement through fs (may be nil) after its children.
func RewriteStmt(s Stmt, fs func(Stmt) Stmt, fe func(Expr) Expr) Stmt {
	if s == nil {
		return nil
	}
	ex := func(e Expr) Expr {
		if fe == nil || e == nil {
			return e
		}
		return RewriteExpr(e, fe)
	}
	var r Stmt
	switch x := s.(type) {
	case *For:
		r = &For{Var: x.Var, Min: ex(x.Min), Extent: ex(x.Extent), Kind: x.Kind, Body: RewriteStmt(x.Body, fs, fe)}
	case *Seq:
		out := make([]Stmt, 0, len(x.Stmts))
		for _, c := range x.Stmts {
			if c2 := RewriteStmt(c, fs, fe); c2 != nil {
				out = append(out, c2)
			}
		}
		r = &Seq{Stmts: out}
	case *Store:
		idx := make([]Expr, len(x.Indices))
		for i, a := range x.Indices {
			idx[i] = ex(a)
		}
		r = &Store{Buf: x.Buf, Indices: idx, Value: ex(x.Value), Flat: x.Flat}
	case *LetStmt:
		r = &LetStmt{Var: x.Var, Value: ex(x.Value), Body: RewriteStmt(x.Body, fs, fe)}
	case *IfThenElse:
		r = &IfThenElse{Cond: ex(x.Cond), Then: RewriteStmt(x.Then, fs, fe), Else: RewriteStmt(x.Else, fs, fe)}
	case *Evaluate:
		r = &Evaluate{X: ex(x.X)}
	case *Allocate:
		r = &Allocate{Buf: x.Buf, Body: RewriteStmt(x.Body, fs, fe)}
	default:
		panic("tir: unknown statement")
	}
	if fs != nil {
		r = fs(r)
	}
	return r
}

// VisitExprs calls f on every expression node in s (pre-order within each tree).
func VisitExprs(s Stmt, f func(Expr)) {
	var ve func(e Expr)
	ve = func(e Expr) {
		if e == nil {
			return
		}
		f(e)
		switch x := e.(type) {
		case *Binary:
			ve(x.A)
			ve(x.B)
		case *Cast:
			ve(x.X)
		case *Select:
			ve(x.Cond)
			ve(x.A)
			ve(x.B)
		case *Load:
			for _, i := range x.Indices {
				ve(i)
			}
		case *Intrinsic:
			for _, a := range x.Args {
				ve(a)
			}
		case *Ptr:
			ve(x.Index)
		}
	}
	VisitStmts(s, func(s Stmt) {
		switch x := s.(type) {
		case *For:
			ve(x.Min)
			ve(x.Extent)
		case *Store:
			for _, i := range x.Indices {
				ve(i)
			}
			ve(x.Value)
		case *LetStmt:
			ve(x.Value)
		case *IfThenElse:
			ve(x.Cond)
		case *Evaluate:
			ve(x.X)
		}
	})
}

// VisitStmts calls f on every statement in s, parents first.
func VisitStmts(s Stmt, f func(Stmt)) {
	if s == nil {
		return
	}
	f(s)
	switch x := s.(type) {
	case *For:
		VisitStmts(x.Body, f)
	case *Seq:
		for _, c := range x.Stmts {
			VisitStmts(c, f)
		}
	case *LetStmt:
		VisitStmts(x.Body, f)
	case *IfThenElse:
		VisitStmts(x.Then, f)
		VisitStmts(x.Else, f)
	case *Allocate:
		VisitStmts(x.Body, f)
	}
}

// Substitute replaces variables by expressions in s.
func Substitute(s Stmt, m map[*Var]Expr) Stmt {
	return RewriteStmt(s, nil, func(e Expr) Expr {
		if v, ok := e.(*Var); ok {
			if r, ok := m[v]; ok {
				return r
			}
		}
		return e
	})
}

// SubstituteExpr replaces variables by expressions in e.
func SubstituteExpr(e Expr, m map[*Var]Expr) Expr {
	return RewriteExpr(e, func(e Expr) Expr {
		if v, ok := e.(*Var); ok {
			if r, ok := m[v]; ok {
				return r
			}
		}
		return e
	})
}
