package tir

import (
	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.SignalEnergy, computeSignalEnergy) }

// computeSignalEnergy lowers SignalEnergy (interp.Energy): re² + im² of
// bins Start to End − 1 in int64 (at most 2^31, so the uint32 value
// itself), the other bins 0.
func computeSignalEnergy(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalEnergyAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || xt.DType != I16 || len(xt.Shape) != 1 {
		return nil, k.errorf("needs SignalEnergyAttrs and a 1-D int16 input")
	}
	x := k.in(0)
	y, yt := k.output()
	if yt.DType != I64 {
		return nil, k.errorf("output is %s, want int64 (TFLite's uint32)", yt.DType)
	}
	bins := xt.Shape[0] / 2
	viewAs(x, []int{bins, 2})
	k.f.Op = "signal_energy"
	ss := []Stmt{Loop("i", bins, func(i Expr) Stmt { return Put(y, Imm(I64, 0), i) })}
	if a.End > a.Start {
		ss = append(ss, Loop("i", a.End-a.Start, func(i Expr) Stmt {
			b := Add(i, C(int64(a.Start)))
			re, im := CastTo(I64, At(x, b, C(0))), CastTo(I64, At(x, b, C(1)))
			return Put(y, Add(Mul(re, re), Mul(im, im)), b)
		}))
	}
	return Block(ss...), nil
}
