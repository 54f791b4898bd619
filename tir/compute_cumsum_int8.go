package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// computeCumSumInt8 is TFLite Micro's int8 CUMSUM (qmath.SumInt8Params;
// graph/interp follows its steps). Its rescaled values (q − z_x)·2^20·½ are
// exactly (q − z_x)·2^19, and the sum starts at −z_x·2^19, so each line keeps
// the integer sum s = −z_x + Σ(q − z_x) and an output is
// requant(s·2^19 wrapped to int32) + z_y, clamped: TFLite Micro's int32 sum,
// additions wrapping, without a multiply per value.
func computeCumSumInt8(k *kctx, a *graph.CumSumAttrs, xt *graph.Tensor) (Stmt, error) {
	y, yt := k.output()
	if !a.TFLiteInt8 || xt.DType != graph.Int8 || yt.DType != graph.Int8 {
		return nil, k.errorf("quantized CumSum is TFLite Micro's int8 kernel only")
	}
	sx, zx, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	sy, zy, err := quantParams(yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	p, err := qmath.SumInt8ParamsFor("CUMSUM", sx, zx, sy, zy)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	if p.InMult != 1<<30 || p.InShift != 0 || p.LeftShift != 20 {
		return nil, k.errorf("input rescaling %d·2^%d is not one half", p.InMult, p.InShift)
	}
	x := k.in(0)
	outer, depth, inner, err := axisView(xt.Shape, a.Axis)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	if depth >= 1<<23 {
		return nil, k.errorf("axis of %d elements: the sum could leave int32", depth)
	}
	viewAs(x, []int{outer, depth, inner})
	viewAs(y, []int{outer, depth, inner})
	k.f.Op = "cumsum"
	out := func(s Expr) Expr {
		acc := CastTo(I32, Mul(CastTo(I64, s), Imm(I64, 1<<19)))
		v := Add(Requant(acc, C(int64(p.OutMult)), C(int64(p.OutShift))), C(int64(zy)))
		return CastTo(yt.DType, Clamp(v, C(-128), C(127)))
	}
	return Loop("o", outer, func(o Expr) Stmt {
		return Loop("i", inner, func(i Expr) Stmt {
			return Scalar("acc", I32, func(acc *Buffer) Stmt {
				return Block(Put(acc, C(-int64(zx))), Loop("k", depth, func(kk Expr) Stmt {
					c := kk
					if a.Reverse {
						c = Sub(C(int64(depth-1)), kk)
					}
					add := Put(acc, Add(At(acc), Add(CastTo(I32, At(x, o, c, i)), C(-int64(zx)))))
					store := Put(y, out(At(acc)), o, c, i)
					if a.Exclusive {
						return Block(store, add)
					}
					return Block(add, store)
				}))
			})
		})
	}), nil
}
