package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// scheduleElemDSP: int8 element-wise kernels (add, sub, mul). Every
// subexpression that costs an intrinsic call but reads only one 8-bit input
// element (TFLite's per-input rescale of an add: requant((x − z) << 20, m,
// s)) becomes a 256-entry int32 table computed at compile time, indexed by
// that element; the output stage becomes dsp_requant_s8 where the shift
// allows. Knob lut (default 1; 0 keeps the arithmetic).
func scheduleElemDSP(f *PrimFunc) (*PrimFunc, error) {
	if knob(f, "lut", 1) == 0 {
		return f, nil
	}
	// An ADD or SUB over whole tensors: one flattened loop, the tables and
	// one SMMLA an element (IntrDSPAddLUT; IC's first Add 273,820 →
	// 151,577 instructions on mps2-an386, IC 9,874,648 → 9,665,677).
	if knob(f, "add_lut", 1) != 0 {
		if g, ok := dspAddLUT(f); ok {
			return g, nil
		}
	}
	n := 0
	g := *f
	ext := loopExtents(f.Body)
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		st, ok := s.(*Store)
		if !ok || st.Buf.Scope != ScopeParam {
			return s
		}
		table := func(vals []int64) *Buffer {
			n++
			return constBuf(fmt.Sprintf("%s_lut%d", f.Name, n), I32, []int{len(vals)}, vals)
		}
		v := lutize(st.Value, table)
		v = constTables(v, ext, table)
		return fastRequant(&Store{Buf: st.Buf, Indices: st.Indices, Value: v, Flat: st.Flat})
	}, nil)
	return &g, nil
}

// lutize replaces, top-down, each int32 subexpression of e that calls an
// intrinsic and reads exactly one distinct 8-bit element (and nothing else
// that varies) by a load from a table of its 256 values.
func lutize(e Expr, table func([]int64) *Buffer) Expr {
	return rewriteTopDown(e, func(e Expr) Expr {
		if l := singleByteLoad(flatConstLoads(e)); l != nil && e.Type() == I32 && callsIntrinsic(e) {
			if vals, ok := tabulate(flatConstLoads(e), l); ok {
				idx := Expr(CastTo(I32, l))
				if l.Buf.DType == graph.Int8 {
					idx = Add(idx, C(128))
				}
				return &Load{Buf: table(vals), Indices: []Expr{idx}}
			}
		}
		return nil
	})
}

// rewriteTopDown is e with each outermost subexpression that try replaces
// (a non-nil result) replaced, walking down Binary, Cast and Intrinsic
// nodes; e itself when nothing is.
func rewriteTopDown(e Expr, try func(Expr) Expr) Expr {
	if r := try(e); r != nil {
		return r
	}
	switch x := e.(type) {
	case *Binary:
		a, b := rewriteTopDown(x.A, try), rewriteTopDown(x.B, try)
		if a == x.A && b == x.B {
			return e
		}
		return &Binary{Op: x.Op, A: a, B: b}
	case *Cast:
		if y := rewriteTopDown(x.X, try); y != x.X {
			return &Cast{T: x.T, X: y}
		}
	case *Intrinsic:
		args := make([]Expr, len(x.Args))
		changed := false
		for i, a := range x.Args {
			args[i] = rewriteTopDown(a, try)
			changed = changed || args[i] != a
		}
		if changed {
			return &Intrinsic{Name: x.Name, T: x.T, Args: args}
		}
	}
	return e
}

func callsIntrinsic(e Expr) bool {
	found := false
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		if _, ok := x.(*Intrinsic); ok {
			found = true
		}
	})
	return found
}

// singleByteLoad returns the one 8-bit parameter load e reads (every
// occurrence the same element) when e reads nothing else that varies.
func singleByteLoad(e Expr) *Load {
	var l *Load
	key := ""
	ok := true
	inside := map[Expr]bool{}
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		ld, isLoad := x.(*Load)
		if !isLoad {
			return
		}
		if ld.Buf.Scope == ScopeConst && ld.Buf.Data != nil && constIndices(ld) {
			// A constant element (a scalar operand's c[0]): the table
			// folds it in (an attention's Mul by a scalar became one table
			// of its 256 results: 116,465 instructions → 30,000 on the M4).
			return
		}
		if ld.Buf.Scope == ScopeConst || (ld.Buf.DType != graph.Int8 && ld.Buf.DType != graph.UInt8) {
			ok = false
			return
		}
		k := String(ld)
		if l == nil {
			l, key = ld, k
		} else if k != key {
			ok = false
		}
		for _, i := range ld.Indices {
			VisitExprs(&Evaluate{X: i}, func(y Expr) { inside[y] = true })
		}
	})
	if !ok || l == nil {
		return nil
	}
	// Variables may appear only in the load's indices.
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		if v, isVar := x.(*Var); isVar && !inside[v] {
			ok = false
		}
	})
	if !ok {
		return nil
	}
	return l
}

// tabulate evaluates e for every value of the 8-bit load l.
func tabulate(e Expr, l *Load) (vals []int64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	key := String(l)
	lo, hi := int64(-128), int64(127)
	if l.Buf.DType == graph.UInt8 {
		lo, hi = 0, 255
	}
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	for v := lo; v <= hi; v++ {
		c := RewriteExpr(e, func(x Expr) Expr {
			if ld, isLoad := x.(*Load); isLoad && String(ld) == key {
				return &IntImm{T: l.Buf.DType, V: v}
			}
			return x
		})
		vals = append(vals, m.eval(c).i)
	}
	return vals, true
}

// flatConstLoads is e with every load of a constant buffer flat: a
// broadcast constant read as c[i0, i1, i2] with strides 0 on the axes it
// does not vary along reads c[i2], and a scalar's c[0, 0, 0] c[0].
func flatConstLoads(e Expr) Expr {
	return RewriteExpr(e, func(x Expr) Expr {
		if l, ok := x.(*Load); ok && l.Buf.Scope == ScopeConst && !l.Flat {
			return &Load{Buf: l.Buf, Indices: []Expr{flatIndex(l.Buf, l.Indices)}, Flat: true}
		}
		return x
	})
}

// constIndices reports whether every index of l is a constant.
func constIndices(l *Load) bool {
	for _, i := range l.Indices {
		if _, ok := IsConst(i); !ok {
			return false
		}
	}
	return true
}

// maxConstTable bounds the entries of a table constTables makes.
const maxConstTable = 4096

// loopExtents maps each loop variable of s whose loop runs over [0, n)
// with n constant to n.
func loopExtents(s Stmt) map[*Var]int64 {
	m := map[*Var]int64{}
	VisitStmts(s, func(x Stmt) {
		if l, ok := x.(*For); ok {
			lo, ok1 := IsConst(l.Min)
			n, ok2 := IsConst(l.Extent)
			if ok1 && ok2 && lo == 0 && n > 0 {
				m[l.Var] = n
			}
		}
	})
	return m
}

// constTables replaces, top-down, each int32 subexpression of e that calls
// an intrinsic and reads only constant buffers, indexed by one loop
// variable v (of extent at most maxConstTable), by a load from a table of
// its values over v, computed at compile time: an Add of a constant vector
// requantized that vector's elements once per output element (a
// LayerNorm's + beta: 94,596 instructions on the M4 for 49x64 outputs).
func constTables(e Expr, ext map[*Var]int64, table func([]int64) *Buffer) Expr {
	return rewriteTopDown(e, func(e Expr) Expr {
		if e.Type() != I32 || !callsIntrinsic(e) {
			return nil
		}
		flat := flatConstLoads(e)
		v, n, ok := constOverOneVar(flat, ext)
		if !ok {
			return nil
		}
		vals, ok := tabulateVar(flat, v, n, ext)
		switch {
		case !ok:
			return nil
		case v == nil:
			return &IntImm{T: I32, V: vals[0]}
		}
		return &Load{Buf: table(vals), Indices: []Expr{v}}
	})
}

// constOverOneVar returns the one variable e depends on, and its extent,
// when e reads only constant buffers (at least one) and that variable has a
// known extent of at most maxConstTable; variables of loops of one
// iteration are 0 and do not count (v is nil when none is left: e is a
// constant).
func constOverOneVar(e Expr, ext map[*Var]int64) (v *Var, n int64, ok bool) {
	ok = true
	loads := 0
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		switch y := x.(type) {
		case *Load:
			if y.Buf.Scope != ScopeConst || y.Buf.Data == nil {
				ok = false
			}
			loads++
		case *Var:
			if m, known := ext[y]; !known {
				ok = false
			} else if m > 1 {
				if v != nil && v != y {
					ok = false
				}
				v = y
			}
		}
	})
	if !ok || loads == 0 {
		return nil, 0, false
	}
	if v == nil {
		return nil, 1, true
	}
	if n = ext[v]; n > maxConstTable {
		return nil, 0, false
	}
	return v, n, true
}

// tabulateVar evaluates e for v = 0 .. n-1 (once when v is nil), the
// variables of one-iteration loops at 0.
func tabulateVar(e Expr, v *Var, n int64, ext map[*Var]int64) (vals []int64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	for w, k := range ext {
		if k == 1 {
			m.vars[w] = val{}
		}
	}
	for i := int64(0); i < n; i++ {
		if v != nil {
			m.vars[v] = val{i: i}
		}
		vals = append(vals, m.eval(e).i)
	}
	return vals, true
}
