package tir

import (
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.DFT, computeDFT) }

// computeDFT: each bin summed directly over its samples in float32, the
// twiddles from two constant tables of N entries (cos and the sign-adjusted
// sin of 2 pi j / N) indexed by k*m mod N, kept as a running index (no
// division, no libm at run time).
func computeDFT(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.DFTAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.DFTAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || xt.DType != F32 {
		return nil, k.errorf("needs a float32 signal")
	}
	wt := k.g.In(k.n, 1)
	var wshape []int
	if wt != nil {
		if wt.DType != F32 {
			return nil, k.errorf("the window must be float32")
		}
		wshape = wt.Shape
	}
	if _, err := graph.DFTShape(a, xt.Shape, wshape); err != nil {
		return nil, k.errorf("%v", err)
	}
	x := k.in(0)
	y, _ := k.output()
	k.f.Op = "dft"
	n, bins := a.N, a.DFTBins()
	cv, sv := make([]float32, n), make([]float32, n)
	for j := range n {
		th := 2 * math.Pi * float64(j) / float64(n)
		cv[j], sv[j] = float32(math.Cos(th)), float32(math.Sin(th))
		if a.Inverse {
			sv[j] = -sv[j]
		}
	}
	cosT := constF32(k.n.Name+"_cos", []int{n}, cv)
	sinT := constF32(k.n.Name+"_sin", []int{n}, sv)
	r := len(xt.Shape)
	c := xt.Shape[r-1]
	// bin sums bin kk over m < count, sample m's parts at re(m), im(m)
	// (im nil for a real signal), and stores it through put.
	bin := func(kk Expr, count int, re, im func(m Expr) Expr, put func(v Expr, part int64) Stmt) Stmt {
		return Scalar("re", F32, func(sr *Buffer) Stmt {
			return Scalar("im", F32, func(si *Buffer) Stmt {
				return Scalar("j", I32, func(j *Buffer) Stmt {
					body := Loop("m", count, func(m Expr) Stmt {
						cs, sn := At(cosT, At(j)), At(sinT, At(j))
						xr := re(m)
						var nr, ni Expr
						if im == nil {
							nr, ni = Add(At(sr), Mul(xr, cs)), Sub(At(si), Mul(xr, sn))
						} else {
							xi := im(m)
							nr = Add(At(sr), Add(Mul(xr, cs), Mul(xi, sn)))
							ni = Add(At(si), Sub(Mul(xi, cs), Mul(xr, sn)))
						}
						next := Add(At(j), kk)
						return Block(Put(sr, nr), Put(si, ni),
							Put(j, Sel(GE(next, C(int64(n))), Sub(next, C(int64(n))), next)))
					})
					out := func(v Expr) Expr {
						if a.Inverse {
							return Mul(v, F(float32(1/float64(n))))
						}
						return v
					}
					return Block(Put(sr, F(0)), Put(si, F(0)), Put(j, C(0)), body,
						put(out(At(sr)), 0), put(out(At(si)), 1))
				})
			})
		})
	}
	if a.Frames > 0 {
		var win *Buffer
		if wt != nil {
			win = k.in(1)
		}
		batch, length := xt.Shape[0], xt.Shape[1]
		viewAs(x, []int{batch, length, c})
		viewAs(y, []int{batch, a.Frames, bins, 2})
		return Loops([]string{"b", "f", "k"}, []int{batch, a.Frames, bins}, func(iv []Expr) Stmt {
			b, f, kk := iv[0], iv[1], iv[2]
			sample := func(part int64) func(m Expr) Expr {
				return func(m Expr) Expr {
					v := At(x, b, Add(Mul(f, C(int64(a.Step))), m), C(part))
					if win != nil {
						v = Mul(v, At(win, m))
					}
					return v
				}
			}
			var im func(Expr) Expr
			if c == 2 {
				im = sample(1)
			}
			return bin(kk, n, sample(0), im, func(v Expr, part int64) Stmt { return Put(y, v, b, f, kk, C(part)) })
		}), nil
	}
	outer := graph.NumElements(xt.Shape[:a.Axis])
	length := xt.Shape[a.Axis]
	inner := graph.NumElements(xt.Shape[a.Axis+1 : r-1])
	viewAs(x, []int{outer, length, inner, c})
	viewAs(y, []int{outer, bins, inner, 2})
	return Loops([]string{"o", "i", "k"}, []int{outer, inner, bins}, func(iv []Expr) Stmt {
		o, i, kk := iv[0], iv[1], iv[2]
		sample := func(part int64) func(m Expr) Expr {
			return func(m Expr) Expr { return At(x, o, m, i, C(part)) }
		}
		var im func(Expr) Expr
		if c == 2 {
			im = sample(1)
		}
		// Samples past the signal's end are zeros: the sum stops there.
		return bin(kk, min(length, n), sample(0), im, func(v Expr, part int64) Stmt { return Put(y, v, o, kk, i, C(part)) })
	}), nil
}
