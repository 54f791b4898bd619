package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.TopK, computeTopK) }

// computeTopK: per (outer, inner) slice of the input viewed as [outer,
// depth, inner], K passes over the slice, each finding the first element
// (in graph.TopK's order) that comes after the previous pass's pick: O(K ×
// depth) comparisons and no buffer. An element precedes another if it is
// larger (smaller) or equal and earlier; NaN, unequal to itself, is above
// every number, and equal to NaN. 8-bit inputs order as stored.
func computeTopK(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.TopKAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.TopKAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || xt.IsConst() {
		return nil, k.errorf("needs a non-constant input")
	}
	if xt.DType == I64 {
		return nil, k.errorf("int64 input is not supported")
	}
	y, yt := k.output()
	if a.Indices && yt.DType != I32 && yt.DType != I64 {
		return nil, k.errorf("indices output dtype %s, want int32 or int64", yt.DType)
	}
	outer, depth, inner, err := axisView(xt.Shape, a.Axis)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	if a.K < 1 || a.K > depth {
		return nil, k.errorf("k %d out of range for an axis of %d", a.K, depth)
	}
	x := k.in(0)
	viewAs(x, []int{outer, depth, inner})
	viewAs(y, []int{outer, a.K, inner})
	k.f.Op = "topk"
	vt := F32
	if isInt(xt) {
		vt = I32
	}
	float := vt == F32
	// above(u, v): u ranks above v (larger, or NaN over a number).
	above := func(u, v Expr) Expr {
		if !a.Largest {
			u, v = v, u
		}
		if float {
			return Or(GT(u, v), And(NE(u, u), EQ(v, v)))
		}
		return GT(u, v)
	}
	same := func(u, v Expr) Expr {
		if float {
			return Or(EQ(u, v), And(NE(u, u), NE(v, v)))
		}
		return EQ(u, v)
	}
	// before(u, i, v, j): element (u at i) precedes (v at j).
	before := func(u, i, v, j Expr) Expr { return Or(above(u, v), And(same(u, v), LT(i, j))) }
	return Loop("o", outer, func(o Expr) Stmt {
		return Loop("i", inner, func(i Expr) Stmt {
			return Scalar("prev", vt, func(prev *Buffer) Stmt {
				return Scalar("prev_at", I32, func(prevAt *Buffer) Stmt {
					return Block(
						Put(prev, ld(x, o, C(0), i)),
						Put(prevAt, C(-1)),
						Loop("j", a.K, func(j Expr) Stmt {
							return Scalar("best", vt, func(best *Buffer) Stmt {
								return Scalar("best_at", I32, func(bestAt *Buffer) Stmt {
									// Candidates come after the previous pick
									// (every element on the first pass).
									after := func(v, c Expr) Expr {
										return Or(LT(At(prevAt), C(0)), before(At(prev), At(prevAt), v, c))
									}
									var out Expr = At(bestAt)
									if !a.Indices {
										out = At(best)
									}
									return Block(
										Put(best, ld(x, o, C(0), i)),
										Put(bestAt, C(-1)),
										Loop("c", depth, func(c Expr) Stmt {
											return Let("v", ld(x, o, c, i), func(v Expr) Stmt {
												take := And(after(v, c), Or(LT(At(bestAt), C(0)), before(v, c, At(best), At(bestAt))))
												return If(take, Block(Put(best, v), Put(bestAt, c)))
											})
										}),
										Put(y, CastTo(yt.DType, out), o, j, i),
										Put(prev, At(best)),
										Put(prevAt, At(bestAt)),
									)
								})
							})
						}),
					)
				})
			})
		})
	}), nil
}
