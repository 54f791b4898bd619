package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

func init() { register(graph.SignalIrfft, computeSignalIrfft) }

// computeSignalIrfft lowers the int16 SignalIrfft (interp.RfftPlan's
// RunInverse, TFLite Micro's kiss_fftri in 16-bit fixed point) with no
// buffer of its own: kiss_fftri's split of the N + 1 bins is computed
// point by point, each of its N complex points written where kissfft's
// decimation in time reads it (the plan's order) in the frame's output,
// then the inverse butterflies run there in place (kissStages). Point 0
// comes from bins 0 and N; point k < N/2 from bins k and N − k, as point
// N − k (its imaginary part negated) for k ≥ N/2.
func computeSignalIrfft(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalRfftAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || xt.DType != I16 || len(xt.Shape) < 1 {
		return nil, k.errorf("needs SignalRfftAttrs and an int16 input")
	}
	p, err := interp.NewIrfftPlan(a.FFTLength)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	n := p.N
	l := 2 * (n + 1)
	r := len(xt.Shape)
	if xt.Shape[r-1] != l {
		return nil, k.errorf("frames of %d values, want %d", xt.Shape[r-1], l)
	}
	frames := graph.NumElements(xt.Shape) / l
	x := k.in(0)
	y, _ := k.output()
	viewAs(x, []int{frames, l})
	viewAs(y, []int{frames, 2 * n})
	k.f.Op = "signal_irfft"
	permT, twT, supT := fftTables(k.n.Name, p, max(n/2, 1))
	twAt := func(t *Buffer, j Expr) kcx {
		return kcx{CastTo(I32, At(t, j, C(0))), CastTo(I32, At(t, j, C(1)))}
	}
	return Loop("f", frames, func(f Expr) Stmt {
		bin := func(b Expr) kcx {
			return kcx{CastTo(I32, At(x, f, Mul(b, C(2)))), CastTo(I32, At(x, f, Add(Mul(b, C(2)), C(1))))}
		}
		ld := func(j Expr) kcx {
			return kcx{CastTo(I32, At(y, f, Mul(j, C(2)))), CastTo(I32, At(y, f, Add(Mul(j, C(2)), C(1))))}
		}
		st := func(j Expr, v kcx) Stmt {
			return Block(Put(y, CastTo(I16, v.r), f, Mul(j, C(2))), Put(y, CastTo(I16, v.i), f, Add(Mul(j, C(2)), C(1))))
		}
		// split puts kiss_fftri's point for bins kk and N − kk (1 ≤ kk ≤
		// N/2) at j: the sum, or with minus the difference conjugated.
		split := func(j, kk Expr, minus bool) Stmt {
			b := bin(Sub(C(int64(n)), kk))
			return klet("p", []kcx{kdiv(bin(kk), 2), kdiv(kcx{b.r, w16(Sub(C(0), b.i))}, 2)}, func(v []kcx) Stmt {
				return klet("e", []kcx{kadd(v[0], v[1]), ksub(v[0], v[1])}, func(e []kcx) Stmt {
					return klet("o", []kcx{kmul(e[1], twAt(supT, Sub(kk, C(1))))}, func(o []kcx) Stmt {
						if minus {
							d := ksub(e[0], o[0])
							return st(j, kcx{d.r, w16(Sub(C(0), d.i))})
						}
						return st(j, kadd(e[0], o[0]))
					})
				})
			})
		}
		points := Loop("j", n, func(j Expr) Stmt {
			return Let("src", CastTo(I32, At(permT, j)), func(s Expr) Stmt {
				b0, bn := bin(C(0)), bin(C(int64(n)))
				dc := klet("dc", []kcx{kdiv(kcx{w16(Add(b0.r, bn.r)), w16(Sub(b0.r, bn.r))}, 2)}, func(d []kcx) Stmt { return st(j, d[0]) })
				// Clamped so that every branch indexes inside the tables.
				lo := Max(s, C(1))
				hi := Max(Sub(C(int64(n)), s), C(1))
				return &IfThenElse{Cond: EQ(s, C(0)), Then: dc, Else: &IfThenElse{
					Cond: LT(Mul(s, C(2)), C(int64(n))),
					Then: split(j, Min(lo, C(int64(max(n/2, 1)))), false),
					Else: split(j, Min(hi, C(int64(max(n/2, 1)))), true),
				}}
			})
		})
		return Block(append([]Stmt{points}, kissStages(p, twT, ld, st, twAt)...)...)
	}), nil
}
