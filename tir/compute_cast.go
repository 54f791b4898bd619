package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.Cast, computeCast) }

// computeCast converts each element by graph.CastData's rules: a float to
// an integer type is NaN -> 0, saturated at the type's range (compared in
// float: the bounds round to float32, and every float between the rounded
// bound and the true one truncates to the bound anyway), else truncated by
// C's conversion; to bool, x != 0; the rest is C's conversion (integers
// wrap, as gcc defines it).
func computeCast(k *kctx) (Stmt, error) {
	y, yt := k.output()
	x, err := k.operand(0, yt.Shape)
	if err != nil {
		return nil, err
	}
	xt := k.g.In(k.n, 0)
	if xt.Quant != nil || yt.Quant != nil {
		return nil, k.errorf("cast of quantized tensors")
	}
	k.f.Op = "cast"
	to := yt.DType
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		v := At(x, iv...)
		switch {
		case to == graph.Bool:
			zero := Imm(xt.DType, 0)
			if xt.DType == F32 {
				zero = F(0)
			}
			return CastTo(graph.Bool, NE(v, zero))
		case xt.DType == F32 && to != F32:
			lo, hi := to.Range()
			return Sel(NE(v, v), Imm(to, 0),
				Sel(GE(v, F(float32(hi))), Imm(to, hi),
					Sel(LE(v, F(float32(lo))), Imm(to, lo), CastTo(to, v))))
		}
		return CastTo(to, v)
	}), nil
}
