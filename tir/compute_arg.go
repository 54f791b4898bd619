package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.ArgMax, computeArgMax) }

// computeArgMax: per (outer, inner) slice of the input viewed as
// [outer, depth, inner], the index of the first (or, SelectLast, the last)
// extreme element. 8-bit inputs compare as stored, as graph/interp does.
func computeArgMax(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.ArgAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.ArgAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || xt.IsConst() {
		return nil, k.errorf("needs a non-constant input")
	}
	y, yt := k.output()
	if yt.DType != I32 && yt.DType != I64 {
		return nil, k.errorf("output dtype %s, want int32 or int64", yt.DType)
	}
	if xt.DType == I64 {
		return nil, k.errorf("int64 input is not supported")
	}
	outer, depth, inner, err := axisView(xt.Shape, a.Axis)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	x := k.in(0)
	viewAs(x, []int{outer, depth, inner})
	viewAs(y, []int{outer, inner})
	k.f.Op = "argmax"
	if a.Min {
		k.f.Op = "argmin"
	}
	vt := F32
	if isInt(xt) {
		vt = I32
	}
	better := func(v, best Expr) Expr {
		switch {
		case a.Min && a.SelectLast:
			return LE(v, best)
		case a.Min:
			return LT(v, best)
		case a.SelectLast:
			return GE(v, best)
		}
		return GT(v, best)
	}
	return Loop("o", outer, func(o Expr) Stmt {
		return Loop("i", inner, func(i Expr) Stmt {
			return Scalar("best", vt, func(best *Buffer) Stmt {
				return Scalar("idx", I32, func(idx *Buffer) Stmt {
					return Block(
						Put(best, ld(x, o, C(0), i)),
						Put(idx, C(0)),
						Loop("c", depth, func(c Expr) Stmt {
							return Let("v", ld(x, o, c, i), func(v Expr) Stmt {
								return If(better(v, At(best)), Block(Put(best, v), Put(idx, c)))
							})
						}),
						Put(y, CastTo(yt.DType, At(idx)), o, i),
					)
				})
			})
		})
	}), nil
}
