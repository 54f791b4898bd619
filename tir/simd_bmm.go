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
		bn, ok := parseBMM(f)
		if !ok || knob(f, "simd", 1) == 0 {
			return fallback(f)
		}
		a, M, N, K, iV, jV, A, B, nb := bn.acc, bn.M, bn.N, bn.K, bn.iV, bn.jV, bn.A, bn.B, bn.nb
		gemv := prefix + "_" + KGemv
		ones := make([]int64, K)
		for i := range ones {
			ones[i] = 1
		}
		onesB := constBuf(f.Name+"_ones", graph.Int8, []int{K}, ones)
		at := bn.at
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
		g := *f
		g.Body = bn.inBatch(s)
		g.Knobs["simd"] = 1
		return &g, nil
	}
}
