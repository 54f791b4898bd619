package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// FoldConstTaps evaluates at compile time the reduction statements that
// read only constants: after FoldInputOffset and PartitionLoop, the taps of
// a border piece that fall on padding add (−input offset)·W, a sum over
// weights alone. For every loop named name (the output channel) whose body
// is an accumulator block, such statements (using no variable but that
// loop's and their own) become one addition of a per-channel table
// computed by the interpreter, so the border pieces run and take as little
// code as the interior.
func FoldConstTaps(f *PrimFunc, name string) (*PrimFunc, error) {
	var ferr error
	count := 0
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != name || ferr != nil {
			return s
		}
		r, err := foldConstTaps(f, l, &count)
		if err != nil {
			ferr = err
			return s
		}
		return r
	}, nil)
	if ferr != nil {
		return nil, ferr
	}
	return &g, nil
}

// constOnly reports whether st loads only constant buffers with data (and
// acc) and uses no variable bound outside it except those in vs.
func constOnly(st Stmt, acc *Buffer, vs map[*Var]bool) bool {
	bound := map[*Var]bool{}
	for v := range vs {
		bound[v] = true
	}
	VisitStmts(st, func(s Stmt) {
		switch x := s.(type) {
		case *For:
			bound[x.Var] = true
		case *LetStmt:
			bound[x.Var] = true
		case *Allocate:
			bound[nil] = true // no locals
		case *Store:
			if x.Buf != acc {
				bound[nil] = true
			}
		case *Evaluate:
			bound[nil] = true
		}
	})
	if bound[nil] {
		return false
	}
	ok := true
	VisitExprs(st, func(e Expr) {
		switch x := e.(type) {
		case *Var:
			if !bound[x] {
				ok = false
			}
		case *Load:
			if x.Buf != acc && (x.Buf.Scope != ScopeConst || x.Buf.Data == nil) {
				ok = false
			}
		case *Ptr, *Intrinsic:
			ok = false
		}
	})
	return ok
}

func foldConstTaps(f *PrimFunc, l *For, count *int) (Stmt, error) {
	n, ok1 := IsConst(l.Extent)
	lo, ok2 := IsConst(l.Min)
	al, ok3 := l.Body.(*Allocate)
	if !ok1 || !ok2 || !ok3 || lo != 0 || len(al.Buf.Shape) != 0 || al.Buf.DType != I32 {
		return l, nil
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) < 3 {
		return l, nil
	}
	acc := al.Buf
	red := seq.Stmts[1 : len(seq.Stmts)-1]
	if !onlyAccAdds(red, acc) {
		return l, nil
	}
	// The updates only add to acc, so loops over several of them may be
	// distributed: the constant parts split off from the rest.
	var taps, rest []Stmt
	for _, st := range red {
		c, r := splitConst(st, acc, map[*Var]bool{l.Var: true})
		if c != nil {
			taps = append(taps, c)
		}
		if r != nil {
			rest = append(rest, r)
		}
	}
	if len(taps) == 0 {
		return l, nil
	}
	tb := NewBuffer("taps", I32, []int{int(n)}, ScopeParam)
	tb.Writes = true
	eval := &PrimFunc{Name: f.Name + " taps", Params: []*Buffer{tb}, Body: &For{Var: l.Var, Min: C(0), Extent: C(n),
		Body: &Allocate{Buf: acc, Body: Block(append(append([]Stmt{Put(acc, C(0))}, taps...), Put(tb, At(acc), l.Var))...)}}}
	out := graph.NewData(I32, []int{int(n)})
	if err := Run(eval, []*graph.Data{out}); err != nil {
		return nil, fmt.Errorf("tir: %s: folding constant taps: %v", f.Name, err)
	}
	*count++
	table := constBuf(fmt.Sprintf("%s_taps%d", f.Name, *count), I32, []int{int(n)}, out.I)
	stmts := append([]Stmt{seq.Stmts[0], Put(acc, Add(At(acc), At(table, l.Var)))}, rest...)
	stmts = append(stmts, seq.Stmts[len(seq.Stmts)-1])
	return &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: &Allocate{Buf: acc, Body: &Seq{Stmts: stmts}}}, nil
}

// onlyAccAdds reports whether every store in ss is acc = acc + (x not
// reading acc) and nothing else reads acc.
func onlyAccAdds(ss []Stmt, acc *Buffer) bool {
	ok := true
	one := map[*Buffer]bool{acc: true}
	for _, st := range ss {
		VisitStmts(st, func(s Stmt) {
			switch x := s.(type) {
			case *Store:
				b, isAdd := x.Value.(*Binary)
				if x.Buf != acc || !isAdd || b.Op != OpAdd {
					ok = false
					return
				}
				if l, isLoad := b.A.(*Load); !isLoad || l.Buf != acc || readsAny(&Evaluate{X: b.B}, one) {
					ok = false
				}
			case *IfThenElse:
				if readsAny(&Evaluate{X: x.Cond}, one) {
					ok = false
				}
			case *LetStmt:
				if readsAny(&Evaluate{X: x.Value}, one) {
					ok = false
				}
			case *Evaluate, *Allocate:
				ok = false
			}
		})
	}
	return ok
}

// splitConst splits a sum of acc updates into the part constOnly accepts
// and the rest (either may be nil), distributing loops with constant
// bounds over sequences; vs are the variables the constant part may use.
func splitConst(st Stmt, acc *Buffer, vs map[*Var]bool) (c, r Stmt) {
	if constOnly(st, acc, vs) {
		return st, nil
	}
	switch x := st.(type) {
	case *For:
		if _, ok := IsConst(x.Min); !ok {
			return nil, st
		}
		if _, ok := IsConst(x.Extent); !ok {
			return nil, st
		}
		inner := map[*Var]bool{x.Var: true}
		for v := range vs {
			inner[v] = true
		}
		bc, br := splitConst(x.Body, acc, inner)
		if bc == nil {
			return nil, st
		}
		c = &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: bc}
		if br != nil {
			r = &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: br}
		}
		return c, r
	case *Seq:
		var cs, rs []Stmt
		for _, s := range x.Stmts {
			a, b := splitConst(s, acc, vs)
			if a != nil {
				cs = append(cs, a)
			}
			if b != nil {
				rs = append(rs, b)
			}
		}
		if len(cs) == 0 {
			return nil, st
		}
		c = Block(cs...)
		if len(rs) > 0 {
			r = Block(rs...)
		}
		return c, r
	}
	return nil, st
}
