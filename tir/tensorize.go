package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// TensorIntrin describes an intrinsic that can replace a loop: Match looks at
// a (flattened) loop and, when the loop computes what the intrinsic
// computes, returns the statement that calls it.
type TensorIntrin struct {
	Name  string
	Match func(l *For) (Stmt, bool)
}

// Tensorize replaces loop name with the intrinsic's call when the loop
// matches it (buffers are flattened first), and fails otherwise. A target's
// schedule tensorizes its inner loops into the intrinsics it prints with
// SIMD instructions; the result computes the same values.
func Tensorize(f *PrimFunc, name string, in TensorIntrin) (*PrimFunc, error) {
	f = Flatten(f)
	return replaceLoop(f, name, func(l *For) (Stmt, error) {
		s, ok := in.Match(l)
		if !ok {
			return nil, fmt.Errorf("tir: tensorize: loop %s does not match %s", name, in.Name)
		}
		return s, nil
	})
}

// DotIntrin matches an 8-bit inner product accumulated into a scalar,
//
//	for k in 0..n: acc = acc + (int32(x{bx + k·sx}) + xo) * (int32(w{bw + k·sw}) + wo)
//
// and replaces it with acc = acc + @dot(&x{bx}, sx, &w{bw}, sw, n, xo, wo).
var DotIntrin = TensorIntrin{Name: IntrDot, Match: matchDot}

func matchDot(l *For) (Stmt, bool) {
	n, ok := IsConst(l.Extent)
	lo, ok2 := IsConst(l.Min)
	if !ok || !ok2 || lo != 0 {
		return nil, false
	}
	st, ok := l.Body.(*Store)
	if !ok || len(st.Buf.Shape) != 0 || st.Buf.DType != I32 {
		return nil, false
	}
	sum, ok := st.Value.(*Binary)
	if !ok || sum.Op != OpAdd {
		return nil, false
	}
	accLoad, ok := sum.A.(*Load)
	if !ok || accLoad.Buf != st.Buf {
		return nil, false
	}
	prod, ok := sum.B.(*Binary)
	if !ok || prod.Op != OpMul {
		return nil, false
	}
	xb, xi, xo, ok1 := operand8(prod.A)
	wb, wi, wo, ok2 := operand8(prod.B)
	if !ok1 || !ok2 {
		return nil, false
	}
	bx, sx, ok1 := affineIn(xi, l.Var)
	bw, sw, ok2 := affineIn(wi, l.Var)
	if !ok1 || !ok2 {
		return nil, false
	}
	call := Call(IntrDot, I32, &Ptr{Buf: xb, Index: bx}, C(sx), &Ptr{Buf: wb, Index: bw}, C(sw), C(n), C(xo), C(wo))
	return &Store{Buf: st.Buf, Indices: st.Indices, Value: Add(accLoad, call), Flat: st.Flat}, true
}

// operand8 matches int32(load of an 8-bit buffer) [+ constant].
func operand8(e Expr) (*Buffer, Expr, int64, bool) {
	var off int64
	if b, ok := e.(*Binary); ok && (b.Op == OpAdd || b.Op == OpSub) {
		c, ok := IsConst(b.B)
		if !ok {
			return nil, nil, 0, false
		}
		if b.Op == OpSub {
			c = -c
		}
		off, e = c, b.A
	}
	c, ok := e.(*Cast)
	if !ok || c.T != I32 {
		return nil, nil, 0, false
	}
	ld, ok := c.X.(*Load)
	if !ok || !ld.Flat || len(ld.Indices) != 1 {
		return nil, nil, 0, false
	}
	if ld.Buf.DType != graph.Int8 && ld.Buf.DType != graph.UInt8 {
		return nil, nil, 0, false
	}
	return ld.Buf, ld.Indices[0], off, true
}

// affineIn splits e into base + stride·v with base free of v.
func affineIn(e Expr, v *Var) (Expr, int64, bool) {
	lf := linear(SimplifyExpr(e))
	var stride int64
	for k, t := range lf.terms {
		if t.e == Expr(v) {
			stride = t.coef
			delete(lf.terms, k)
			continue
		}
		if usesVar(t.e, v) {
			return nil, 0, false
		}
	}
	return SimplifyExpr(lf.expr()), stride, true
}
