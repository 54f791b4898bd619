package tir

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.DFT, computeDFT) }

// computeDFT lowers each transform in float32 with constant twiddle tables
// of N entries (cos and the sign-adjusted sin of 2 pi j / N), no libm and
// no division at run time. An N of 4 or more whose prime factors are all
// at most graph.FFTMaxRadix (400 = 2^4 5^2, 480 = 2^5 3 5) and whose buffer fits
// the stack runs as a mixed-radix decimation-in-time FFT: the samples
// copied in digit-reversed order into a local buffer of N complex values,
// then one stage per factor p, each a twiddle multiply and an unrolled
// p-point DFT with constant coefficients (radix 2 is the butterfly): about
// N (p1 + ... + pL) multiply-adds instead of N^2. Other transforms (a
// large prime factor, or no room on the stack) sum each bin directly, the
// twiddle index k*m mod N kept as a running index.
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
	scale := func(v Expr) Expr {
		if a.Inverse {
			return Mul(v, F(float32(1/float64(n))))
		}
		return v
	}
	// The FFT's local buffer (8 bytes a complex point) must fit the target's
	// stack (64 KiB where no limit is known); the direct sum needs none.
	limit := k.stack
	if limit == 0 {
		limit = 64 << 10
	}
	// A real forward transform of N >= 64 runs as a complex FFT of N/2
	// points over the sample pairs (x[2m] + i x[2m+1]), then one pass that
	// splits the even and odd halves: half the butterflies and half the
	// buffer. The split's roundings cost a little precision, which shorter
	// transforms keep (ONNX's 16-point STFT test, held to 1e-5 per bin,
	// missed by 1.1e-6 with it) for a small saving.
	half := n%2 == 0 && graph.FFTFactors(n/2) != nil && c == 1 && !a.Inverse && n >= 64
	fn := n // the complex FFT's size
	if half {
		fn = n / 2
	}
	factors := graph.FFTFactors(fn)
	fft := n >= 4 && factors != nil && 8*fn <= limit
	half = half && fft
	var rev *Buffer
	if fft {
		rev = constBuf(k.n.Name+"_rev", I32, []int{fn}, digitReversal(factors))
	}
	// transform is one transform of the count samples sample(m, part)
	// gives (part 1 only for a complex signal; samples count..N-1 are
	// zeros), its bins written through put(k, re, im).
	transform := func(count int, sample func(m Expr, part int64) Expr, put func(kk, re, im Expr) Stmt) Stmt {
		if !fft {
			return Loop("k", bins, func(kk Expr) Stmt { return directBin(kk, count, n, c, cosT, sinT, sample, scale, put) })
		}
		buf := NewBuffer(k.f.Name+"_fft", F32, []int{2 * fn}, ScopeLocal)
		// in reads sample m of part, zero past count.
		in := func(m Expr, part int64) Expr {
			if count == n {
				return sample(m, part)
			}
			return Sel(LT(m, C(int64(count))), sample(Min(m, C(int64(count-1))), part), F(0))
		}
		var ss []Stmt
		// The complex points in digit-reversed order.
		ss = append(ss, Loop("m", fn, func(m Expr) Stmt {
			at := Mul(At(rev, m), C(2))
			var re, im Expr
			switch {
			case half:
				re, im = in(Mul(m, C(2)), 0), in(Add(Mul(m, C(2)), C(1)), 0)
			case c == 2:
				re, im = in(m, 0), in(m, 1)
			default:
				re, im = in(m, 0), F(0)
			}
			return Block(Put(buf, re, at), Put(buf, im, Add(at, C(1))))
		}))
		// Stages from the last factor to the first: sub-transforms of size
		// sp become transforms of size sz = p*sp.
		sp := 1
		for st := len(factors) - 1; st >= 0; st-- {
			ss = append(ss, fftStage(buf, cosT, sinT, n, fn, factors[st], sp, a.Inverse))
			sp *= factors[st]
		}
		if !half {
			ss = append(ss, Loop("k", bins, func(kk Expr) Stmt {
				return put(kk, scale(At(buf, Mul(kk, C(2)))), scale(At(buf, Add(Mul(kk, C(2)), C(1)))))
			}))
			return &Allocate{Buf: buf, Body: Block(ss...)}
		}
		// Z = FFT(z) of M = N/2 points; bin k <= M of x is
		// E + W^k O with E = (Z[k] + conj Z[M-k]) / 2, O = (Z[k] - conj Z[M-k]) / 2i
		// (indices mod M) and W = e^(-2 pi i / N); bin N-k is bin k's conjugate.
		M := int64(fn)
		ss = append(ss, Loop("k", bins, func(kk Expr) Stmt {
			mirror := GT(kk, C(M))
			return Let("kh", Sel(mirror, Sub(C(int64(n)), kk), kk), func(kh Expr) Stmt {
				zk := Mul(Sel(EQ(kh, C(M)), C(0), kh), C(2))
				zc := Mul(Sel(EQ(kh, C(0)), C(0), Sub(C(M), kh)), C(2))
				return Let("zr", At(buf, zk), func(zr Expr) Stmt {
					return Let("zi", At(buf, Add(zk, C(1))), func(zi Expr) Stmt {
						return Let("cr", At(buf, zc), func(cr Expr) Stmt {
							return Let("ci", At(buf, Add(zc, C(1))), func(ci Expr) Stmt {
								er, ei := Mul(F(0.5), Add(zr, cr)), Mul(F(0.5), Sub(zi, ci))
								or, oi := Mul(F(0.5), Add(zi, ci)), Mul(F(0.5), Sub(cr, zr))
								wr, wi := At(cosT, kh), Sub(F(0), At(sinT, kh))
								xr := Add(er, Sub(Mul(wr, or), Mul(wi, oi)))
								xi := Add(ei, Add(Mul(wr, oi), Mul(wi, or)))
								return put(kk, xr, Sel(mirror, Sub(F(0), xi), xi))
							})
						})
					})
				})
			})
		}))
		return &Allocate{Buf: buf, Body: Block(ss...)}
	}
	// bin stores one bin at idx (the bin's index without the re/im axis):
	// re and im, or with Power re² + im².
	bin := func(y *Buffer, re, im Expr, idx ...Expr) Stmt {
		if a.Power {
			return Let("bre", re, func(re Expr) Stmt {
				return Let("bim", im, func(im Expr) Stmt { return Put(y, Add(Mul(re, re), Mul(im, im)), idx...) })
			})
		}
		return Block(Put(y, re, append(idx, C(0))...), Put(y, im, append(slices.Clone(idx), C(1))...))
	}
	if a.Frames > 0 {
		var win *Buffer
		if wt != nil {
			win = k.in(1)
		}
		batch, length := xt.Shape[0], xt.Shape[1]
		viewAs(x, []int{batch, length, c})
		if a.Power {
			viewAs(y, []int{batch, a.Frames, bins})
		} else {
			viewAs(y, []int{batch, a.Frames, bins, 2})
		}
		return Loops([]string{"b", "f"}, []int{batch, a.Frames}, func(iv []Expr) Stmt {
			b, f := iv[0], iv[1]
			sample := func(m Expr, part int64) Expr {
				v := At(x, b, Add(Mul(f, C(int64(a.Step))), m), C(part))
				if win != nil {
					v = Mul(v, At(win, m))
				}
				return v
			}
			return transform(n, sample, func(kk, re, im Expr) Stmt { return bin(y, re, im, b, f, kk) })
		}), nil
	}
	outer := graph.NumElements(xt.Shape[:a.Axis])
	length := xt.Shape[a.Axis]
	inner := graph.NumElements(xt.Shape[a.Axis+1 : r-1])
	viewAs(x, []int{outer, length, inner, c})
	if a.Power {
		viewAs(y, []int{outer, bins, inner})
	} else {
		viewAs(y, []int{outer, bins, inner, 2})
	}
	return Loops([]string{"o", "i"}, []int{outer, inner}, func(iv []Expr) Stmt {
		o, i := iv[0], iv[1]
		sample := func(m Expr, part int64) Expr { return At(x, o, m, i, C(part)) }
		return transform(min(length, n), sample, func(kk, re, im Expr) Stmt { return bin(y, re, im, o, kk, i) })
	}), nil
}

// directBin sums bin kk of an N-point transform directly over count
// samples, the twiddle index k*m mod N kept as a running index.
func directBin(kk Expr, count, n, c int, cosT, sinT *Buffer, sample func(m Expr, part int64) Expr, scale func(Expr) Expr, put func(kk, re, im Expr) Stmt) Stmt {
	return Scalar("re", F32, func(sr *Buffer) Stmt {
		return Scalar("im", F32, func(si *Buffer) Stmt {
			return Scalar("j", I32, func(j *Buffer) Stmt {
				body := Loop("m", count, func(m Expr) Stmt {
					cs, sn := At(cosT, At(j)), At(sinT, At(j))
					xr := sample(m, 0)
					var nr, ni Expr
					if c == 1 {
						nr, ni = Add(At(sr), Mul(xr, cs)), Sub(At(si), Mul(xr, sn))
					} else {
						xi := sample(m, 1)
						// (xr + i xi)(cos - i sin)
						nr = Add(At(sr), Add(Mul(xr, cs), Mul(xi, sn)))
						ni = Add(At(si), Sub(Mul(xi, cs), Mul(xr, sn)))
					}
					next := Add(At(j), kk)
					return Block(Put(sr, nr), Put(si, ni),
						Put(j, Sel(GE(next, C(int64(n))), Sub(next, C(int64(n))), next)))
				})
				return Block(Put(sr, F(0)), Put(si, F(0)), Put(j, C(0)), body, put(kk, scale(At(sr)), scale(At(si))))
			})
		})
	})
}

// digitReversal gives each sample m its place in the decimation-in-time
// buffer: with m = q1 + p1 (q2 + p2 (q3 + ...)), q_i < p_i, the place is
// q1 N/p1 + q2 N/(p1 p2) + ... + qL, so each stage's sub-transforms read
// adjacent points (for radix 2 throughout, the bit reversal).
func digitReversal(factors []int) []int64 {
	n := 1
	for _, p := range factors {
		n *= p
	}
	out := make([]int64, n)
	for m := range n {
		rest, span, at := m, n, 0
		for _, p := range factors {
			span /= p
			at += (rest % p) * span
			rest /= p
		}
		out[m] = int64(at)
	}
	return out
}

// fftStage is one decimation-in-time stage of radix p over the buffer of
// fn complex points (re, im interleaved): in every block of sz = p*sp
// points, for each k < sp, the p points a_q at k + q sp, scaled by the
// twiddles W_sz^(qk) (entry qk N/sz of the N-entry tables), become
// y_t = sum_q b_q W_p^(qt) at k + t sp. W is e^(-2 pi i/.) forward and
// its conjugate for the inverse, as the tables hold.
func fftStage(buf, cosT, sinT *Buffer, n, fn, p, sp int, inverse bool) Stmt {
	sz := p * sp
	stride := n / sz
	return Loop(fmt.Sprintf("g%d", sz), fn/sz, func(g Expr) Stmt {
		return Loop("j", sp, func(j Expr) Stmt {
			base := Mul(Add(Mul(g, C(int64(sz))), j), C(2))
			return Let("p", base, func(base Expr) Stmt {
				at := func(q int) Expr { return Add(base, C(int64(2*q*sp))) }
				if p == 2 {
					// The butterfly: b = a1 W, then a0 +- b.
					tw := Mul(j, C(int64(stride)))
					q := at(1)
					wr, wi := At(cosT, tw), Sub(F(0), At(sinT, tw))
					br, bi := At(buf, q), At(buf, Add(q, C(1)))
					return Let("tr", Sub(Mul(br, wr), Mul(bi, wi)), func(tr Expr) Stmt {
						return Let("ti", Add(Mul(br, wi), Mul(bi, wr)), func(ti Expr) Stmt {
							return Let("ar", At(buf, base), func(ar Expr) Stmt {
								return Let("ai", At(buf, Add(base, C(1))), func(ai Expr) Stmt {
									return Block(Put(buf, Add(ar, tr), base), Put(buf, Add(ai, ti), Add(base, C(1))),
										Put(buf, Sub(ar, tr), q), Put(buf, Sub(ai, ti), Add(q, C(1))))
								})
							})
						})
					})
				}
				// Load the p twiddled points into b, then write the p outputs.
				br, bi := make([]Expr, p), make([]Expr, p)
				var load func(q int) Stmt
				load = func(q int) Stmt {
					if q == p {
						var ss []Stmt
						for t := range p {
							re, im := smallDFT(br, bi, p, t, inverse)
							ss = append(ss, Put(buf, re, at(t)), Put(buf, im, Add(at(t), C(1))))
						}
						return Block(ss...)
					}
					xr, xi := At(buf, at(q)), At(buf, Add(at(q), C(1)))
					if q == 0 {
						return Let("b0r", xr, func(r Expr) Stmt {
							return Let("b0i", xi, func(i Expr) Stmt { br[0], bi[0] = r, i; return load(1) })
						})
					}
					tw := Mul(j, C(int64(q*stride)))
					wr, wi := At(cosT, tw), Sub(F(0), At(sinT, tw))
					return Let(fmt.Sprintf("b%dr", q), Sub(Mul(xr, wr), Mul(xi, wi)), func(r Expr) Stmt {
						return Let(fmt.Sprintf("b%di", q), Add(Mul(xr, wi), Mul(xi, wr)), func(i Expr) Stmt {
							br[q], bi[q] = r, i
							return load(q + 1)
						})
					})
				}
				return load(0)
			})
		})
	})
}

// smallDFT is output t of the p-point DFT of (br, bi): sum over q of
// b_q (cos - i s sin)(2 pi qt/p), s = 1 forward and -1 inverse, with the
// coefficients that are 0 or +-1 folded away.
func smallDFT(br, bi []Expr, p, t int, inverse bool) (Expr, Expr) {
	var re, im Expr
	add := func(acc, v Expr, neg bool) Expr {
		switch {
		case acc == nil && neg:
			return Sub(F(0), v)
		case acc == nil:
			return v
		case neg:
			return Sub(acc, v)
		}
		return Add(acc, v)
	}
	// term adds coef*v to acc, coef exactly 0, 1 or -1 folded.
	term := func(acc Expr, coef float64, v Expr) Expr {
		switch {
		case coef == 0:
			return acc
		case coef == 1:
			return add(acc, v, false)
		case coef == -1:
			return add(acc, v, true)
		case coef < 0:
			return add(acc, Mul(F(float32(-coef)), v), true)
		}
		return add(acc, Mul(F(float32(coef)), v), false)
	}
	for q := range p {
		e := q * t % p
		// w = wr + i wi = e^(-+2 pi i e/p), exact where it is a quarter turn.
		var wr, wi float64
		switch {
		case e == 0:
			wr, wi = 1, 0
		case 4*e == p:
			wr, wi = 0, -1
		case 2*e == p:
			wr, wi = -1, 0
		case 4*e == 3*p:
			wr, wi = 0, 1
		default:
			th := 2 * math.Pi * float64(e) / float64(p)
			wr, wi = math.Cos(th), -math.Sin(th)
		}
		if inverse {
			wi = -wi
		}
		// (br + i bi)(wr + i wi) = (br wr - bi wi) + i (br wi + bi wr)
		re = term(re, wr, br[q])
		re = term(re, -wi, bi[q])
		im = term(im, wi, br[q])
		im = term(im, wr, bi[q])
	}
	if re == nil {
		re = F(0)
	}
	if im == nil {
		im = F(0)
	}
	return re, im
}
