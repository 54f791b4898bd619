package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.Gather, computeGather) }

// computeGather: one load per output element from an index read at run
// time, normalized as graph/interp.GatherIndex does (negative from the
// end, clamped into the axis), so no load leaves the tensor.
func computeGather(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.GatherAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.GatherAttrs")
	}
	xt, it := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if xt == nil || it == nil || !it.DType.IsInt() {
		return nil, k.errorf("needs data and integer indices")
	}
	if a.Axis < 0 || a.Axis >= len(xt.Shape) {
		return nil, k.errorf("axis %d out of range for %v", a.Axis, xt.Shape)
	}
	x, idx := k.in(0), k.in(1)
	y, yt := k.output()
	dim := int64(xt.Shape[a.Axis])
	r := len(it.Shape)
	k.f.Op = "gather"
	norm := func(v Expr) Expr {
		v = CastTo(I64, v)
		d, zero := &IntImm{T: I64, V: dim}, &IntImm{T: I64, V: 0}
		v = Sel(LT(v, zero), Add(v, d), v)
		return CastTo(I32, Min(Max(v, zero), &IntImm{T: I64, V: dim - 1}))
	}
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		src := make([]Expr, len(xt.Shape))
		if a.Elements {
			copy(src, iv)
			src[a.Axis] = norm(At(idx, iv...))
		} else {
			for d := range src {
				switch {
				case d < a.Axis:
					src[d] = iv[d]
				case d == a.Axis:
					src[d] = norm(At(idx, iv[a.Axis:a.Axis+r]...))
				default:
					src[d] = iv[d-1+r]
				}
			}
		}
		return At(x, src...)
	}), nil
}
