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
	n := 0
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		st, ok := s.(*Store)
		if !ok || st.Buf.Scope != ScopeParam {
			return s
		}
		v := lutize(st.Value, func(vals []int64) *Buffer {
			n++
			return constBuf(fmt.Sprintf("%s_lut%d", f.Name, n), I32, []int{len(vals)}, vals)
		})
		return fastRequant(&Store{Buf: st.Buf, Indices: st.Indices, Value: v, Flat: st.Flat})
	}, nil)
	return &g, nil
}

// lutize replaces, top-down, each int32 subexpression of e that calls an
// intrinsic and reads exactly one distinct 8-bit element (and nothing else
// that varies) by a load from a table of its 256 values.
func lutize(e Expr, table func([]int64) *Buffer) Expr {
	if l := singleByteLoad(e); l != nil && e.Type() == I32 && callsIntrinsic(e) {
		if vals, ok := tabulate(e, l); ok {
			idx := Expr(CastTo(I32, l))
			if l.Buf.DType == graph.Int8 {
				idx = Add(idx, C(128))
			}
			return &Load{Buf: table(vals), Indices: []Expr{idx}}
		}
	}
	switch x := e.(type) {
	case *Binary:
		a, b := lutize(x.A, table), lutize(x.B, table)
		if a == x.A && b == x.B {
			return e
		}
		return &Binary{Op: x.Op, A: a, B: b}
	case *Cast:
		if y := lutize(x.X, table); y != x.X {
			return &Cast{T: x.T, X: y}
		}
	case *Intrinsic:
		args := make([]Expr, len(x.Args))
		changed := false
		for i, a := range x.Args {
			args[i] = lutize(a, table)
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
