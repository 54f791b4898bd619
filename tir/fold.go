package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// FoldInputOffset rewrites an integer reduction
//
//	acc = init
//	for r...: [if inside:] acc = acc + (X + c) * W
//
// where W reads only constants and loop variables, into
//
//	acc = init + T[v]
//	for r...: acc = acc + (inside ? X : −c) * W
//
// with T[v] = c·Σ_r W tabulated at compile time for the one enclosing loop
// variable v that W depends on (the output channel). The two compute the
// same int32 sums: a skipped tap becomes (−c + c)·W = 0, and the rest is
// distributivity. Padding checks then no longer guard statements, so
// PartitionLoop can clear them from the interior, and the per-tap add of the
// input offset disappears.
func FoldInputOffset(f *PrimFunc) (*PrimFunc, error) {
	var ferr error
	outer := map[*Var]interval{}
	var walk func(s Stmt) Stmt
	walk = func(s Stmt) Stmt {
		switch x := s.(type) {
		case *For:
			lo, ok1 := IsConst(x.Min)
			n, ok2 := IsConst(x.Extent)
			if ok1 && ok2 && n > 0 {
				outer[x.Var] = interval{lo, lo + n - 1}
				defer delete(outer, x.Var)
			}
			return &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: walk(x.Body)}
		case *Seq:
			out := make([]Stmt, len(x.Stmts))
			for i, c := range x.Stmts {
				out[i] = walk(c)
			}
			return &Seq{Stmts: out}
		case *Allocate:
			if r, ok, err := foldAcc(f, x, outer); err != nil {
				ferr = err
			} else if ok {
				return r
			}
			return &Allocate{Buf: x.Buf, Body: walk(x.Body)}
		}
		return s
	}
	body := walk(f.Body)
	if ferr != nil {
		return nil, ferr
	}
	g := *f
	g.Body = body
	return &g, nil
}

func foldAcc(f *PrimFunc, a *Allocate, outer map[*Var]interval) (Stmt, bool, error) {
	acc := a.Buf
	seq, ok := a.Body.(*Seq)
	if !ok || len(acc.Shape) != 0 || acc.DType != I32 || len(seq.Stmts) < 2 {
		return nil, false, nil
	}
	init, ok := seq.Stmts[0].(*Store)
	if !ok || init.Buf != acc {
		return nil, false, nil
	}
	// The reduction nest.
	var loops []*For
	s := seq.Stmts[1]
	for {
		l, ok := s.(*For)
		if !ok {
			break
		}
		loops = append(loops, l)
		s = l.Body
	}
	if len(loops) == 0 {
		return nil, false, nil
	}
	var cond Expr
	if c, ok := s.(*IfThenElse); ok && c.Else == nil {
		cond, s = c.Cond, c.Then
	}
	st, ok := s.(*Store)
	if !ok || st.Buf != acc {
		return nil, false, nil
	}
	sum, ok := st.Value.(*Binary)
	if !ok || sum.Op != OpAdd {
		return nil, false, nil
	}
	if l, ok := sum.A.(*Load); !ok || l.Buf != acc {
		return nil, false, nil
	}
	prod, ok := sum.B.(*Binary)
	if !ok || prod.Op != OpMul {
		return nil, false, nil
	}
	xo, ok := prod.A.(*Binary)
	if !ok || (xo.Op != OpAdd && xo.Op != OpSub) {
		return nil, false, nil
	}
	c, ok := IsConst(xo.B)
	if !ok || c == 0 {
		return nil, false, nil
	}
	if xo.Op == OpSub {
		c = -c
	}
	X, W := xo.A, prod.B
	// W: constants and loop variables only, one enclosing variable at most.
	red := map[*Var]bool{}
	for _, l := range loops {
		red[l.Var] = true
		if _, ok := IsConst(l.Extent); !ok {
			return nil, false, nil
		}
	}
	var ov *Var
	clean := true
	VisitExprs(&Evaluate{X: W}, func(e Expr) {
		switch x := e.(type) {
		case *Load:
			if x.Buf.Scope != ScopeConst {
				clean = false
			}
		case *Var:
			if red[x] {
				return
			}
			if _, ok := outer[x]; !ok || (ov != nil && ov != x) {
				clean = false
			}
			ov = x
		case *Intrinsic, *Ptr:
			clean = false
		}
	})
	if !clean {
		return nil, false, nil
	}
	// T[v] = c · Σ_r W, evaluated by the interpreter.
	rng := interval{0, 0}
	if ov != nil {
		rng = outer[ov]
	}
	vals := make([]int64, rng.hi-rng.lo+1)
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	var sumOver func(d int) int64
	sumOver = func(d int) int64 {
		if d == len(loops) {
			return m.eval(W).i
		}
		lo, _ := IsConst(loops[d].Min)
		n, _ := IsConst(loops[d].Extent)
		var t int64
		for i := lo; i < lo+n; i++ {
			m.vars[loops[d].Var] = val{i: i}
			t += sumOver(d + 1)
		}
		return t
	}
	var perr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				perr = fmt.Errorf("tir: fold offset: %v", r)
			}
		}()
		for v := rng.lo; v <= rng.hi; v++ {
			if ov != nil {
				m.vars[ov] = val{i: v}
			}
			t := c * sumOver(0)
			if t > 1<<31-1 || t < -(1<<31) {
				perr = fmt.Errorf("tir: fold offset: folded sum %d overflows int32", t)
				return
			}
			vals[v-rng.lo] = t
		}
	}()
	if perr != nil {
		return nil, false, perr
	}
	table := constBuf(f.Name+"_offset", I32, []int{len(vals)}, vals)
	var idx Expr = C(0)
	if ov != nil {
		idx = Sub(ov, C(rng.lo))
	}
	newInit := &Store{Buf: acc, Indices: init.Indices, Value: Add(init.Value, At(table, idx)), Flat: init.Flat}
	S := X
	if cond != nil {
		S = Sel(cond, X, C(-c))
	}
	var body Stmt = &Store{Buf: acc, Indices: st.Indices, Value: Add(sum.A, Mul(S, W)), Flat: st.Flat}
	for i := len(loops) - 1; i >= 0; i-- {
		l := loops[i]
		body = &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: body}
	}
	rest := append([]Stmt{newInit, body}, seq.Stmts[2:]...)
	return &Allocate{Buf: acc, Body: &Seq{Stmts: rest}}, true, nil
}
