package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// CacheWindow copies the part of buf that the body of loop at reads into a
// local buffer at the top of that body, padding positions outside buf with
// zero, and makes the body read the copy. Every load of buf inside the loop
// must index each dimension with base + (affine in the loops inside at),
// with the same base for all loads. A conv's input window (KH×KW×Cin) cached
// at its output-pixel loop is the use: SIMD schedules then read a dense,
// padded window.
func CacheWindow(f *PrimFunc, buf *Buffer, at string) (*PrimFunc, error) {
	return CacheWindowPad(f, buf, at, 0)
}

// CacheWindowPad is CacheWindow with the given padding value.
func CacheWindowPad(f *PrimFunc, buf *Buffer, at string, pad int64) (*PrimFunc, error) {
	return replaceLoop(f, at, func(l *For) (Stmt, error) {
		inner := map[*Var]interval{}
		var bad error
		VisitStmts(l.Body, func(s Stmt) {
			if fl, ok := s.(*For); ok {
				lo, ok1 := IsConst(fl.Min)
				n, ok2 := IsConst(fl.Extent)
				if !ok1 || !ok2 || n <= 0 {
					bad = fmt.Errorf("tir: cache: loop %s has no constant bounds", fl.Var.Name)
				}
				inner[fl.Var] = interval{lo, lo + n - 1}
			}
			if lt, ok := s.(*LetStmt); ok {
				inner[lt.Var] = interval{} // let variables inside make indices non-affine
			}
		})
		if bad != nil {
			return nil, bad
		}
		rank := len(buf.Shape)
		var bases []string
		var baseExprs []Expr
		lo := make([]int64, rank)
		hi := make([]int64, rank)
		first := true
		split := func(idx []Expr) ([]Expr, []Expr, error) {
			base := make([]Expr, rank)
			off := make([]Expr, rank)
			for d, e := range idx {
				lf := linear(SimplifyExpr(e))
				b, o := constForm(0), constForm(lf.c)
				for k, t := range lf.terms {
					v, isVar := t.e.(*Var)
					_, isInner := inner[v]
					switch {
					case isVar && isInner:
						o.terms[k] = t
					case usesAny(t.e, inner):
						return nil, nil, fmt.Errorf("tir: cache: index %s of %s is not affine in the inner loops", String(e), buf.Name)
					default:
						b.terms[k] = t
					}
				}
				base[d], off[d] = b.expr(), o.expr()
			}
			return base, off, nil
		}
		var serr error
		VisitExprs(l.Body, func(e Expr) {
			ld, ok := e.(*Load)
			if !ok || ld.Buf != buf || serr != nil {
				return
			}
			if ld.Flat {
				serr = fmt.Errorf("tir: cache: %s is already flattened", buf.Name)
				return
			}
			base, off, err := split(ld.Indices)
			if err != nil {
				serr = err
				return
			}
			for d := range base {
				r, ok := rangeOf(off[d], inner)
				if !ok {
					serr = fmt.Errorf("tir: cache: cannot bound %s", String(off[d]))
					return
				}
				key := String(base[d])
				if first {
					bases = append(bases, key)
					baseExprs = append(baseExprs, base[d])
					lo[d], hi[d] = r.lo, r.hi
				} else {
					if bases[d] != key {
						serr = fmt.Errorf("tir: cache: loads of %s have different bases %s and %s", buf.Name, bases[d], key)
						return
					}
					lo[d], hi[d] = min(lo[d], r.lo), max(hi[d], r.hi)
				}
			}
			first = false
		})
		if serr != nil {
			return nil, serr
		}
		if first {
			return nil, fmt.Errorf("tir: cache: loop %s does not read %s", at, buf.Name)
		}
		shape := make([]int, rank)
		for d := range shape {
			shape[d] = int(hi[d] - lo[d] + 1)
		}
		win := NewBuffer(buf.Name+"_win", buf.DType, shape, ScopeLocal)
		// Fill: win[w] = in-bounds ? buf[base + lo + w] : pad.
		names := make([]string, rank)
		for d := range names {
			names[d] = fmt.Sprintf("w%d", d)
		}
		fill := Loops(names, shape, func(w []Expr) Stmt {
			src := make([]Expr, rank)
			var conds []Expr
			clamped := make([]Expr, rank)
			for d := range src {
				src[d] = Add(Add(baseExprs[d], C(lo[d])), w[d])
				conds = append(conds, GE(src[d], C(0)), LT(src[d], C(int64(buf.Shape[d]))))
				clamped[d] = Clamp(src[d], C(0), C(int64(buf.Shape[d]-1)))
			}
			var padv Expr = &IntImm{T: buf.DType, V: pad}
			if buf.DType == graph.Float32 {
				padv = F(float32(pad))
			}
			return Put(win, Sel(AllOf(conds...), At(buf, clamped...), padv), w...)
		})
		body := RewriteStmt(l.Body, nil, func(e Expr) Expr {
			ld, ok := e.(*Load)
			if !ok || ld.Buf != buf {
				return e
			}
			_, off, _ := split(ld.Indices)
			idx := make([]Expr, rank)
			for d := range idx {
				idx[d] = Sub(off[d], C(lo[d]))
			}
			return At(win, idx...)
		})
		return &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind,
			Body: &Allocate{Buf: win, Body: Block(fill, body)}}, nil
	})
}

func usesAny(e Expr, vars map[*Var]interval) bool {
	found := false
	VisitExprs(&Evaluate{X: e}, func(e Expr) {
		if v, ok := e.(*Var); ok {
			if _, in := vars[v]; in {
				found = true
			}
		}
	})
	return found
}
