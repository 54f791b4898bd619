package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

func init() { register(graph.SignalIrfft, computeSignalIrfft) }

// computeSignalIrfft lowers SignalIrfft (interp.RfftPlan's RunInverse,
// TFLite Micro's kiss_fftri in 16- or 32-bit fixed point or float:
// kissOps; the float samples then divided by the length) with no
// buffer of its own: kiss_fftri's split of the N + 1 bins is computed
// point by point, each of its N complex points written where kissfft's
// decimation in time reads it (the plan's order) in the frame's output,
// then the inverse butterflies run there in place (kissStages). Point 0
// comes from bins 0 and N; point k < N/2 from bins k and N − k, as point
// N − k (its imaginary part negated) for k ≥ N/2.
func computeSignalIrfft(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalRfftAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || kissOpsFor(xt.DType) == nil || len(xt.Shape) < 1 {
		return nil, k.errorf("needs SignalRfftAttrs and an int16, int32 or float32 input")
	}
	o := kissOpsFor(xt.DType)
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
	permT, twT, supT := fftTables(k.n.Name, p, max(n/2, 1), o.st)
	twAt := func(t *Buffer, j Expr) kcx {
		return kcx{o.ldv(At(t, j, C(0))), o.ldv(At(t, j, C(1)))}
	}
	return Loop("f", frames, func(f Expr) Stmt {
		bin := func(b Expr) kcx {
			return kcx{o.ldv(At(x, f, Mul(b, C(2)))), o.ldv(At(x, f, Add(Mul(b, C(2)), C(1))))}
		}
		ld := func(j Expr) kcx {
			return kcx{o.ldv(At(y, f, Mul(j, C(2)))), o.ldv(At(y, f, Add(Mul(j, C(2)), C(1))))}
		}
		st := func(j Expr, v kcx) Stmt {
			r, i := CastTo(o.st, v.r), CastTo(o.st, v.i)
			if o.st != I16 {
				r, i = o.narrow(v.r), o.narrow(v.i)
			}
			return Block(Put(y, r, f, Mul(j, C(2))), Put(y, i, f, Add(Mul(j, C(2)), C(1))))
		}
		// split puts kiss_fftri's point for bins kk and N − kk (1 ≤ kk ≤
		// N/2) at j: the sum, or with minus the difference conjugated.
		split := func(j, kk Expr, minus bool) Stmt {
			b := bin(Sub(C(int64(n)), kk))
			return klet("p", []kcx{o.div(bin(kk), 2), o.div(kcx{b.r, o.wrap(o.neg(b.i))}, 2)}, func(v []kcx) Stmt {
				return klet("e", []kcx{o.add(v[0], v[1]), o.sub(v[0], v[1])}, func(e []kcx) Stmt {
					return klet("o", []kcx{o.mul(e[1], twAt(supT, Sub(kk, C(1))))}, func(ov []kcx) Stmt {
						if minus {
							d := o.sub(e[0], ov[0])
							return st(j, kcx{d.r, o.wrap(o.neg(d.i))})
						}
						return st(j, o.add(e[0], ov[0]))
					})
				})
			})
		}
		points := Loop("j", n, func(j Expr) Stmt {
			return Let("src", CastTo(I32, At(permT, j)), func(s Expr) Stmt {
				b0, bn := bin(C(0)), bin(C(int64(n)))
				dc := klet("dc", []kcx{o.div(kcx{o.wrap(Add(b0.r, bn.r)), o.wrap(Sub(b0.r, bn.r))}, 2)}, func(d []kcx) Stmt { return st(j, d[0]) })
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
		ss := append([]Stmt{points}, kissStages(o, p, twT, ld, st, twAt)...)
		if o.fl() {
			// TFLite Micro's float SignalIrfft divides each sample by
			// the length.
			ss = append(ss, Loop("i", 2*n, func(i Expr) Stmt {
				return Put(y, Div(At(y, f, i), F(float32(2*n))), f, i)
			}))
		}
		return Block(ss...)
	}), nil
}
