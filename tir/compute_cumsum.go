package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.CumSum, computeCumSum) }

// computeCumSum: x viewed as [outer, depth, inner]; one running sum per
// (outer, inner), in float32 or 64-bit integers wrapped to the type.
func computeCumSum(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.CumSumAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.CumSumAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || xt.IsConst() {
		return nil, k.errorf("needs a non-constant input")
	}
	if xt.Quant != nil && len(xt.Quant.Scale) > 0 {
		return computeCumSumInt8(k, a, xt) // compute_cumsum_int8.go
	}
	y, yt := k.output()
	x := k.in(0)
	outer, depth, inner, err := axisView(xt.Shape, a.Axis)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	viewAs(x, []int{outer, depth, inner})
	viewAs(y, []int{outer, depth, inner})
	k.f.Op = "cumsum"
	accT, val := F32, func(e Expr) Expr { return e }
	if isInt(xt) {
		accT, val = I64, func(e Expr) Expr { return CastTo(I64, e) }
	}
	return Loop("o", outer, func(o Expr) Stmt {
		return Loop("i", inner, func(i Expr) Stmt {
			return Scalar("acc", accT, func(acc *Buffer) Stmt {
				return Block(Put(acc, Imm(accT, 0)), Loop("k", depth, func(kk Expr) Stmt {
					c := kk
					if a.Reverse {
						c = Sub(C(int64(depth-1)), kk)
					}
					var sum Expr = Add(At(acc), val(At(x, o, c, i)))
					if accT == I64 {
						sum = Call(IntrWrapAdd64, I64, At(acc), val(At(x, o, c, i))) // no signed overflow
					}
					add := Put(acc, sum)
					store := Put(y, CastTo(yt.DType, At(acc)), o, c, i)
					if a.Exclusive {
						return Block(store, add)
					}
					return Block(add, store)
				}))
			})
		})
	}), nil
}
