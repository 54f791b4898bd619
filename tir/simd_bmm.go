package tir

import (
	"github.com/mcugen/mcugen/graph"
)

// scheduleBMMSIMD is the "mve" and "neon" targets' int8 batch_matmul: a
// product of two activations whose operands both hold the reduction axis
// innermost (the form scheduleBMMDSP takes) runs on the targets' GEMV
// micro-kernel (KGemv: VMLADAVA on Helium, SDOT-free widening on NEON),
// with the operands' offsets taken out of the loop:
//
//	Σ_k (a_k + ao)(b_k + bo) = Σ_k a_k·b_k + ao·Σ_k b_k + bo·Σ_k a_k + K·ao·bo
//
// For each batch the column sums of B are one KGemv against a vector of
// ones; for each row of A its sum is another, then the row's accumulators
// start from the offset terms and one KGemv adds every column's products.
// Where the form does not match, fallback schedules the kernel.
func scheduleBMMSIMD(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		if floatKernel(f) {
			return fallback(f)
		}
		fallback := func(f *PrimFunc) (*PrimFunc, error) {
			f.Knobs["simd"] = 0
			return fallback(f)
		}
		a, err := parseAccNestAny(f)
		if err != nil || len(a.outer) < 2 || len(a.red) != 1 || a.cond != nil || knob(f, "simd", 1) == 0 {
			return fallback(f)
		}
		oe, err := a.extents(a.outer)
		if err != nil {
			return fallback(f)
		}
		if v, ok := IsConst(a.init); !ok || v != 0 {
			return fallback(f)
		}
		nb := len(a.outer) - 2
		M, N := oe[nb], oe[nb+1]
		K := int(mustConst(a.red[0].Extent))
		iV, jV, kV := a.outer[nb].Var, a.outer[nb+1].Var, a.red[0].Var
		A, B := a.x.Buf, a.w.Buf
		idxIs := func(l *Load, p, q *Var) bool {
			if len(l.Indices) != nb+2 {
				return false
			}
			for d := 0; d < nb; d++ {
				if l.Indices[d] != Expr(a.outer[d].Var) {
					return false
				}
			}
			return l.Indices[nb] == Expr(p) && l.Indices[nb+1] == Expr(q)
		}
		if A == B || A.DType != graph.Int8 || B.DType != graph.Int8 || !idxIs(a.x, iV, kV) || !idxIs(a.w, kV, jV) ||
			A.Strides[nb+1] != 1 || B.Strides[nb] != 1 {
			return fallback(f)
		}
		gemv := prefix + "_" + KGemv
		ones := make([]int64, K)
		for i := range ones {
			ones[i] = 1
		}
		onesB := constBuf(f.Name+"_ones", graph.Int8, []int{K}, ones)
		batch := make([]Expr, nb)
		for d := range batch {
			batch[d] = a.outer[d].Var
		}
		at := func(b *Buffer, p, q Expr) Expr { return flatIndex(b, append(append([]Expr{}, batch...), p, q)) }
		bs := int64(B.Strides[nb+1]) // column j of B starts at j·bs
		ao, bo := a.xOff, a.wOff
		store := fastRequantAs(a.store, IntrRequantFast, nil)
		call := func(acc *Buffer, x, w Expr, ws, m int64) Stmt {
			return &Evaluate{X: Call(gemv, I32, ptr(acc, C(0)), x, w, C(ws), C(m), C(int64(K)))}
		}
		colsum := NewBuffer(f.Name+"_colsum", I32, []int{N}, ScopeLocal)
		rowsum := NewBuffer(f.Name+"_rowsum", I32, []int{1}, ScopeLocal)
		accv := NewBuffer(f.Name+"_acc", I32, []int{N}, ScopeLocal)
		zero := func(b *Buffer, n int) Stmt {
			return loopK("j", n, Serial, func(j Expr) Stmt { return flatStore(b, j, C(0)) })
		}
		var sums []Stmt
		if ao != 0 {
			sums = append(sums, zero(colsum, N), call(colsum, ptr(onesB, C(0)), ptr(B, at(B, C(0), C(0))), bs, int64(N)))
		}
		row := Loop("i", M, func(i Expr) Stmt {
			var ss []Stmt
			var rs Expr = C(0)
			if bo != 0 {
				ss = append(ss, flatStore(rowsum, C(0), C(0)), call(rowsum, ptr(A, at(A, i, C(0))), ptr(onesB, C(0)), 0, 1))
				rs = &Load{Buf: rowsum, Indices: []Expr{C(0)}, Flat: true}
			}
			ss = append(ss, loopK("j", N, Serial, func(j Expr) Stmt {
				var v Expr = Add(Mul(rs, C(bo)), C(int64(K)*ao*bo))
				if ao != 0 {
					v = Add(Mul(&Load{Buf: colsum, Indices: []Expr{j}, Flat: true}, C(ao)), v)
				}
				return flatStore(accv, j, v)
			}))
			ss = append(ss, call(accv, ptr(A, at(A, i, C(0))), ptr(B, at(B, C(0), C(0))), bs, int64(N)))
			ss = append(ss, loopK("j", N, Serial, func(j Expr) Stmt {
				st := Substitute(store, map[*Var]Expr{iV: i, jV: j})
				return replaceAcc(st, a.acc, accv, j)
			}))
			body := Block(ss...)
			if bo != 0 {
				body = &Allocate{Buf: rowsum, Body: body}
			}
			return &Allocate{Buf: accv, Body: body}
		})
		var s Stmt = Block(append(sums, row)...)
		if ao != 0 {
			s = &Allocate{Buf: colsum, Body: s}
		}
		for d := nb - 1; d >= 0; d-- {
			l := *a.outer[d]
			l.Body = s
			s = &l
		}
		g := *f
		g.Body = s
		g.Knobs["simd"] = 1
		return &g, nil
	}
}
