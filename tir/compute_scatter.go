package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.Scatter, computeScatter) }

// computeScatter: the data copied into the output, then one pass over the
// updates in order. Each index is read at run time, counted from the end
// when negative, and the update is skipped unless the index falls inside
// its axis (graph/interp's scatterOp), so no store leaves the tensor.
func computeScatter(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.ScatterAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.ScatterAttrs")
	}
	xt, it, ut := k.g.In(k.n, 0), k.g.In(k.n, 1), k.g.In(k.n, 2)
	if xt == nil || it == nil || ut == nil || !it.DType.IsInt() {
		return nil, k.errorf("needs data, integer indices and updates")
	}
	if err := graph.ScatterShapes(a, xt.Shape, it.Shape, ut.Shape); err != nil {
		return nil, k.errorf("%v", err)
	}
	x, idx, upd := k.in(0), k.in(1), k.in(2)
	y, yt := k.output()
	if xt.Quant != nil && len(xt.Quant.Scale) > 0 {
		// A quantized copy of stored values (TFLite's DYNAMIC_UPDATE_SLICE):
		// no reduction, and one quantization throughout.
		if a.Reduction != "" || !xt.Quant.Equal(ut.Quant) || !xt.Quant.Equal(yt.Quant) {
			return nil, k.errorf("quantized Scatter is supported as a copy only (no reduction, one quantization)")
		}
	}
	k.f.Op = "scatter"
	combine := func(old, u Expr) Expr {
		if !isInt(yt) {
			switch a.Reduction {
			case "add":
				return Add(old, u)
			case "mul":
				return Mul(old, u)
			case "max":
				return Max(old, u)
			case "min":
				return Min(old, u)
			}
			return u
		}
		// In 64 bits, wrapped to the type; int64 through the wrapping
		// helpers (signed overflow is undefined in C).
		o, v := CastTo(I64, old), CastTo(I64, u)
		var r Expr
		switch a.Reduction {
		case "add":
			r = Add(o, v)
			if yt.DType == I64 {
				r = Call(IntrWrapAdd64, I64, o, v)
			}
		case "mul":
			r = Mul(o, v)
			if yt.DType == I64 {
				r = Call(IntrWrapMul64, I64, o, v)
			}
		case "max":
			r = Max(o, v)
		case "min":
			r = Min(o, v)
		default:
			return u
		}
		return CastTo(yt.DType, r)
	}
	// index binds the index v for an axis of size dim, counted from the
	// end when negative; body gets it and whether it is inside the axis.
	index := func(name string, v Expr, dim int, body func(i, ok Expr) Stmt) Stmt {
		v = CastTo(I64, v)
		d, zero := &IntImm{T: I64, V: int64(dim)}, &IntImm{T: I64, V: 0}
		return Let(name, Sel(LT(v, zero), Add(v, d), v), func(n Expr) Stmt {
			return body(CastTo(I32, n), And(GE(n, zero), LT(n, d)))
		})
	}
	if !a.ND {
		cp := elementwise(y, yt.Shape, func(iv []Expr) Expr { return At(x, iv...) })
		pass := Loops(loopNames(len(ut.Shape)), ut.Shape, func(iv []Expr) Stmt {
			return index("at", At(idx, iv...), xt.Shape[a.Axis], func(i, ok Expr) Stmt {
				dst := append([]Expr(nil), iv...)
				dst[a.Axis] = i
				return If(ok, Put(y, combine(At(y, dst...), At(upd, iv...)), dst...))
			})
		})
		return Block(cp, pass), nil
	}
	depth := it.Shape[len(it.Shape)-1]
	rows := graph.NumElements(it.Shape) / depth
	slice := graph.NumElements(xt.Shape[depth:])
	total := graph.NumElements(xt.Shape)
	viewAs(x, []int{total})
	viewAs(y, []int{total})
	viewAs(idx, []int{rows, depth})
	viewAs(upd, []int{rows, slice})
	strides := graph.Strides(xt.Shape)
	cp := Loop("i", total, func(i Expr) Stmt { return Put(y, At(x, i), i) })
	pass := Loop("r", rows, func(r Expr) Stmt {
		// The row's indices, bound one by one; the slice is written
		// only when every one is inside its axis.
		var build func(j int, base, ok Expr) Stmt
		build = func(j int, base, ok Expr) Stmt {
			if j == depth {
				return If(ok, Loop("s", slice, func(s Expr) Stmt {
					at := Add(base, s)
					return Put(y, combine(At(y, at), At(upd, r, s)), at)
				}))
			}
			return index(fmt.Sprintf("at%d", j), At(idx, r, C(int64(j))), xt.Shape[j], func(i, in Expr) Stmt {
				b := Mul(i, C(int64(strides[j])))
				if base != nil {
					b = Add(base, b)
				}
				if ok != nil {
					in = And(ok, in)
				}
				return build(j+1, b, in)
			})
		}
		return build(0, nil, nil)
	})
	return Block(cp, pass), nil
}
