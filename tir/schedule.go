package tir

import (
	"fmt"
)

// Schedule primitives. Each takes a PrimFunc and returns a new one computing
// the same values with its loops rearranged; loops are named by their
// variable's name (the first loop of that name, outermost first). Tests run
// the interpreter before and after each primitive on random inputs.

// findLoop returns the first loop named name.
func findLoop(s Stmt, name string) *For {
	var found *For
	VisitStmts(s, func(s Stmt) {
		if f, ok := s.(*For); ok && found == nil && f.Var.Name == name {
			found = f
		}
	})
	return found
}

// replaceLoop rewrites the loop named name with fn.
func replaceLoop(f *PrimFunc, name string, fn func(l *For) (Stmt, error)) (*PrimFunc, error) {
	target := findLoop(f.Body, name)
	if target == nil {
		return nil, fmt.Errorf("tir: %s has no loop %q", f.Name, name)
	}
	var ferr error
	body := replaceStmt(f.Body, target, func(s Stmt) Stmt {
		r, err := fn(s.(*For))
		if err != nil {
			ferr = err
			return s
		}
		return r
	})
	if ferr != nil {
		return nil, ferr
	}
	g := *f
	g.Body = body
	return &g, nil
}

// replaceStmt rebuilds s with the statement old (by identity) replaced.
func replaceStmt(s, old Stmt, fn func(Stmt) Stmt) Stmt {
	if s == old {
		return fn(s)
	}
	switch x := s.(type) {
	case *For:
		b := replaceStmt(x.Body, old, fn)
		if b == x.Body {
			return s
		}
		c := *x
		c.Body = b
		return &c
	case *Seq:
		out := make([]Stmt, len(x.Stmts))
		ch := false
		for i, c := range x.Stmts {
			out[i] = replaceStmt(c, old, fn)
			ch = ch || out[i] != c
		}
		if !ch {
			return s
		}
		return &Seq{Stmts: out}
	case *LetStmt:
		b := replaceStmt(x.Body, old, fn)
		if b == x.Body {
			return s
		}
		return &LetStmt{Var: x.Var, Value: x.Value, Body: b}
	case *IfThenElse:
		t, e := replaceStmt(x.Then, old, fn), replaceStmt(x.Else, old, fn)
		if t == x.Then && e == x.Else {
			return s
		}
		return &IfThenElse{Cond: x.Cond, Then: t, Else: e}
	case *Allocate:
		b := replaceStmt(x.Body, old, fn)
		if b == x.Body {
			return s
		}
		return &Allocate{Buf: x.Buf, Body: b}
	}
	return s
}

func constExtent(l *For) (int64, error) {
	n, ok := IsConst(l.Extent)
	if !ok {
		return 0, fmt.Errorf("tir: loop %s has no constant extent", l.Var.Name)
	}
	return n, nil
}

// Split splits loop name into name_o (outer) and name_i (inner, factor
// iterations). When factor does not divide the extent, the body is guarded.
func Split(f *PrimFunc, name string, factor int) (*PrimFunc, error) {
	if factor <= 0 {
		return nil, fmt.Errorf("tir: split factor %d", factor)
	}
	return replaceLoop(f, name, func(l *For) (Stmt, error) {
		n, err := constExtent(l)
		if err != nil {
			return nil, err
		}
		outer, inner := NewVar(name+"_o"), NewVar(name+"_i")
		fc := int64(factor)
		idx := Add(Add(Mul(outer, C(fc)), inner), l.Min)
		body := Substitute(l.Body, map[*Var]Expr{l.Var: idx})
		if n%fc != 0 {
			body = If(LT(Add(Mul(outer, C(fc)), inner), C(n)), body)
		}
		return &For{Var: outer, Min: C(0), Extent: C((n + fc - 1) / fc), Kind: Serial,
			Body: &For{Var: inner, Min: C(0), Extent: C(fc), Kind: l.Kind, Body: body}}, nil
	})
}

// Reorder permutes a perfect nest of loops: the loops named in names must be
// nested directly in one another (in any order); they are rearranged so the
// first name is outermost.
func Reorder(f *PrimFunc, names ...string) (*PrimFunc, error) {
	if len(names) < 2 {
		return f, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	// The outermost of the named loops starts the nest.
	var top *For
	VisitStmts(f.Body, func(s Stmt) {
		if l, ok := s.(*For); ok && top == nil && want[l.Var.Name] {
			top = l
		}
	})
	if top == nil {
		return nil, fmt.Errorf("tir: %s has none of the loops %v", f.Name, names)
	}
	loops := map[string]*For{}
	cur := top
	for i := 0; i < len(names); i++ {
		if !want[cur.Var.Name] {
			return nil, fmt.Errorf("tir: loops %v are not a perfect nest (found %s)", names, cur.Var.Name)
		}
		loops[cur.Var.Name] = cur
		if i == len(names)-1 {
			break
		}
		next, ok := cur.Body.(*For)
		if !ok {
			return nil, fmt.Errorf("tir: loops %v are not a perfect nest below %s", names, cur.Var.Name)
		}
		cur = next
	}
	if len(loops) != len(names) {
		return nil, fmt.Errorf("tir: loops %v are not distinct", names)
	}
	innerBody := cur.Body
	for _, l := range loops {
		if _, ok := IsConst(l.Extent); !ok {
			return nil, fmt.Errorf("tir: loop %s has a variable extent", l.Var.Name)
		}
		if _, ok := IsConst(l.Min); !ok {
			return nil, fmt.Errorf("tir: loop %s has a variable start", l.Var.Name)
		}
	}
	body := innerBody
	for i := len(names) - 1; i >= 0; i-- {
		l := loops[names[i]]
		body = &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: body}
	}
	g := *f
	g.Body = replaceStmt(f.Body, top, func(Stmt) Stmt { return body })
	return &g, nil
}

// Fuse merges loop outer and the loop directly inside it, inner, into one
// loop named outer_inner over the product of their extents.
func Fuse(f *PrimFunc, outer, inner string) (*PrimFunc, error) {
	return replaceLoop(f, outer, func(lo *For) (Stmt, error) {
		li, ok := lo.Body.(*For)
		if !ok || li.Var.Name != inner {
			return nil, fmt.Errorf("tir: loop %s is not directly inside %s", inner, outer)
		}
		no, err := constExtent(lo)
		if err != nil {
			return nil, err
		}
		ni, err := constExtent(li)
		if err != nil {
			return nil, err
		}
		v := NewVar(outer + "_" + inner)
		body := Substitute(li.Body, map[*Var]Expr{
			lo.Var: Add(Div(v, C(ni)), lo.Min),
			li.Var: Add(Mod(v, C(ni)), li.Min),
		})
		return &For{Var: v, Min: C(0), Extent: C(no * ni), Kind: Serial, Body: body}, nil
	})
}

// Unroll marks loop name to be unrolled (ExpandUnrolled copies its body).
func Unroll(f *PrimFunc, name string) (*PrimFunc, error) {
	return setKind(f, name, Unrolled)
}

// Vectorize marks loop name for a target's SIMD lowering.
func Vectorize(f *PrimFunc, name string) (*PrimFunc, error) {
	return setKind(f, name, Vectorized)
}

func setKind(f *PrimFunc, name string, k ForKind) (*PrimFunc, error) {
	return replaceLoop(f, name, func(l *For) (Stmt, error) {
		c := *l
		c.Kind = k
		return &c, nil
	})
}

// maxUnroll bounds the statements an unrolled loop may produce.
const maxUnroll = 64

// ExpandUnrolled replaces every Unrolled loop with constant extent by copies
// of its body (loops too long to unroll stay serial).
func ExpandUnrolled(f *PrimFunc) *PrimFunc {
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Kind != Unrolled {
			return s
		}
		n, ok1 := IsConst(l.Extent)
		lo, ok2 := IsConst(l.Min)
		if !ok1 || !ok2 || n > maxUnroll {
			c := *l
			c.Kind = Serial
			return &c
		}
		out := make([]Stmt, 0, n)
		for i := lo; i < lo+n; i++ {
			out = append(out, Substitute(l.Body, map[*Var]Expr{l.Var: C(i)}))
		}
		return Block(out...)
	}, nil)
	return &g
}

// HoistInvariantIf moves a condition that does not depend on a loop's
// variable out of the loop: for v { if c { B } } becomes if c { for v { B } }.
// Applied everywhere, innermost first.
func HoistInvariantIf(f *PrimFunc) *PrimFunc {
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok {
			return s
		}
		c, ok := l.Body.(*IfThenElse)
		if !ok || c.Else != nil || usesVar(c.Cond, l.Var) {
			return s
		}
		return &IfThenElse{Cond: c.Cond, Then: &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: c.Then}}
	}, nil)
	return &g
}

func usesVar(e Expr, v *Var) bool {
	found := false
	VisitExprs(&Evaluate{X: e}, func(e Expr) {
		if e == v {
			found = true
		}
	})
	return found
}

// ComputeInline inlines an element-wise producer into its consumer: producer
// is a perfect loop nest ending in one store to buf; every load of buf in
// consumer is replaced by the producer's expression at that index. The result
// takes the producer's inputs instead of buf (the intermediate vanishes).
func ComputeInline(producer, consumer *PrimFunc, buf *Buffer) (*PrimFunc, error) {
	var vars []*Var
	s := producer.Body
	for {
		if l, ok := s.(*For); ok {
			if v, ok := IsConst(l.Min); !ok || v != 0 {
				return nil, fmt.Errorf("tir: inline: loop %s does not start at 0", l.Var.Name)
			}
			vars = append(vars, l.Var)
			s = l.Body
			continue
		}
		break
	}
	st, ok := s.(*Store)
	if !ok || st.Buf != buf || st.Flat {
		return nil, fmt.Errorf("tir: inline: %s is not a single store to %s", producer.Name, buf.Name)
	}
	if len(st.Indices) != len(vars) {
		return nil, fmt.Errorf("tir: inline: store indices do not match the loop nest")
	}
	for i, e := range st.Indices {
		if e != vars[i] {
			return nil, fmt.Errorf("tir: inline: %s does not store at its loop indices", producer.Name)
		}
	}
	var ierr error
	body := RewriteStmt(consumer.Body, nil, func(e Expr) Expr {
		l, ok := e.(*Load)
		if !ok || l.Buf != buf {
			return e
		}
		if l.Flat || len(l.Indices) != len(vars) {
			ierr = fmt.Errorf("tir: inline: %s loads %s with a different rank", consumer.Name, buf.Name)
			return e
		}
		m := map[*Var]Expr{}
		for i, v := range vars {
			m[v] = l.Indices[i]
		}
		return SubstituteExpr(st.Value, m)
	})
	if ierr != nil {
		return nil, ierr
	}
	g := *consumer
	g.Body = body
	g.Params = nil
	seen := map[*Buffer]bool{}
	for _, p := range append(append([]*Buffer{}, producer.Params...), consumer.Params...) {
		if p == buf || seen[p] {
			continue
		}
		seen[p] = true
		g.Params = append(g.Params, p)
	}
	return &g, nil
}
