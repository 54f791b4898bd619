package tir

import (
	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.SignalFftAutoScale, computeSignalFftAutoScale) }

// computeSignalFftAutoScale lowers SignalFftAutoScale
// (interp.signalFftAutoScale): TFLite Micro's MaxAbs16 loop, then the
// exponent 15 − bit length of the maximum, counted as the powers of two
// 2^0 … 2^14 above it (0 for a maximum of 0 or −32768), then the input
// times 2^exponent or, with Bits, the exponent.
func computeSignalFftAutoScale(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalFftAutoScaleAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || xt.DType != I16 || len(xt.Shape) != 1 {
		return nil, k.errorf("needs SignalFftAutoScaleAttrs and a 1-D int16 input")
	}
	x := k.in(0)
	y, _ := k.output()
	k.f.Op = "signal_fft_auto_scale"
	n := xt.Shape[0]
	return Scalar("mx", I32, func(mx *Buffer) Stmt {
		m := At(mx)
		find := Loop("i", n, func(i Expr) Stmt {
			return Let("v", CastTo(I32, At(x, i)), func(v Expr) Stmt {
				neg := Sub(C(0), v)
				return Put(mx, Sel(GT(v, m), v, Sel(GT(neg, m), CastTo(I32, CastTo(I16, neg)), m)))
			})
		})
		var bits Expr = C(0)
		for b := range 15 {
			bits = Add(bits, Sel(LT(m, C(1<<b)), C(1), C(0)))
		}
		bits = Sel(GT(m, C(0)), bits, C(0))
		return Block(Put(mx, C(0)), find, Let("bits", bits, func(s Expr) Stmt {
			if a.Bits {
				viewAs(y, []int{1})
				return Put(y, s, C(0))
			}
			return Loop("i", n, func(i Expr) Stmt {
				return Put(y, CastTo(I16, Mul(CastTo(I32, At(x, i)), Shl(C(1), s))), i)
			})
		}))
	}), nil
}
