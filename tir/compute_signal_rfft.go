package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

func init() { register(graph.SignalRfft, computeSignalRfft) }

// kcx is a kissfft complex value as two int32 expressions holding int16
// values.
type kcx struct{ r, i Expr }

// w16 wraps an int32 value to int16, as kissfft's stores to short do.
func w16(e Expr) Expr { return CastTo(I32, CastTo(I16, e)) }

// kround is kissfft's sround: (x + 2^14) >> 15 stored as int16.
func kround(e Expr) Expr { return w16(Shr(Add(e, C(1<<14)), C(15))) }

func kmul(a, b kcx) kcx {
	return kcx{kround(Sub(Mul(a.r, b.r), Mul(a.i, b.i))), kround(Add(Mul(a.r, b.i), Mul(a.i, b.r)))}
}
func kdiv(a kcx, k int64) kcx {
	return kcx{kround(Mul(a.r, C(32767/k))), kround(Mul(a.i, C(32767/k)))}
}
func kadd(a, b kcx) kcx { return kcx{w16(Add(a.r, b.r)), w16(Add(a.i, b.i))} }
func ksub(a, b kcx) kcx { return kcx{w16(Sub(a.r, b.r)), w16(Sub(a.i, b.i))} }

// klet binds the complex values vs to locals named name0, name1, ...
func klet(name string, vs []kcx, body func([]kcx) Stmt) Stmt {
	out := make([]kcx, len(vs))
	var bind func(j int, part int) Stmt
	bind = func(j, part int) Stmt {
		if j == len(vs) {
			return body(out)
		}
		v := vs[j].r
		if part == 1 {
			v = vs[j].i
		}
		return Let(fmt.Sprintf("%s%d%c", name, j, "ri"[part]), v, func(x Expr) Stmt {
			if part == 0 {
				out[j].r = x
				return bind(j, 1)
			}
			out[j].i = x
			return bind(j+1, 0)
		})
	}
	return bind(0, 0)
}

// computeSignalRfft lowers the int16 SignalRfft (interp.RfftPlan, TFLite
// Micro's kiss_fftr in 16-bit fixed point) with no buffer of its own: each
// frame's N complex points (sample pairs, zero past the frame) go in
// kissfft's digit-reversed order into the frame's output, the radix-2 to 5
// butterflies run there stage by stage from kissfft's last factor to its
// first (the order of its recursion's results does not change them), and
// kiss_fftr's split turns the N points into the N + 1 bins in place (bins
// k and N − k are read before either is written). Twiddles are constants.
func computeSignalRfft(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalRfftAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || xt.DType != I16 || len(xt.Shape) < 1 {
		return nil, k.errorf("needs SignalRfftAttrs and an int16 input")
	}
	p, err := interp.NewRfftPlan(a.FFTLength)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	r := len(xt.Shape)
	l := xt.Shape[r-1]
	if l > a.FFTLength {
		return nil, k.errorf("frames of %d samples are longer than the FFT length %d", l, a.FFTLength)
	}
	frames := graph.NumElements(xt.Shape) / l
	n := p.N
	x := k.in(0)
	y, _ := k.output()
	viewAs(x, []int{frames, l})
	viewAs(y, []int{frames, 2 * (n + 1)})
	k.f.Op = "signal_rfft"
	permT, twT, supT := fftTables(k.n.Name, p, n/2)
	return Loop("f", frames, func(f Expr) Stmt {
		ld := func(j Expr) kcx {
			return kcx{CastTo(I32, At(y, f, Mul(j, C(2)))), CastTo(I32, At(y, f, Add(Mul(j, C(2)), C(1))))}
		}
		// narrow is v as int16 (a value w16 wrapped already is stored as is).
		narrow := func(v Expr) Expr {
			if c, ok := v.(*Cast); ok && c.T == I32 && c.X.Type() == I16 {
				return c.X
			}
			return CastTo(I16, v)
		}
		st := func(j Expr, v kcx) Stmt {
			return Block(Put(y, narrow(v.r), f, Mul(j, C(2))), Put(y, narrow(v.i), f, Add(Mul(j, C(2)), C(1))))
		}
		twAt := func(t *Buffer, j Expr) kcx {
			return kcx{CastTo(I32, At(t, j, C(0))), CastTo(I32, At(t, j, C(1)))}
		}
		sample := func(i Expr) Expr {
			if l == a.FFTLength {
				return At(x, f, i)
			}
			return Sel(LT(i, C(int64(l))), At(x, f, Min(i, C(int64(l-1)))), Imm(I16, 0))
		}
		ss := []Stmt{Loop("j", n, func(j Expr) Stmt {
			return Let("src", Mul(CastTo(I32, At(permT, j)), C(2)), func(s Expr) Stmt {
				return Block(Put(y, sample(s), f, Mul(j, C(2))), Put(y, sample(Add(s, C(1))), f, Add(Mul(j, C(2)), C(1))))
			})
		})}
		ss = append(ss, kissStages(p, twT, ld, st, twAt)...)
		// kiss_fftr's split: the DC and Nyquist bins, then bins k and N − k.
		ss = append(ss, klet("dc", []kcx{kdiv(ld(C(0)), 2)}, func(d []kcx) Stmt {
			return Block(
				st(C(int64(n)), kcx{w16(Sub(d[0].r, d[0].i)), C(0)}),
				st(C(0), kcx{w16(Add(d[0].r, d[0].i)), C(0)}),
			)
		}))
		ss = append(ss, Loop("k", n/2, func(k0 Expr) Stmt {
			kk := Add(k0, C(1))
			nk := Sub(C(int64(n)), kk)
			b := ld(nk)
			return klet("p", []kcx{kdiv(ld(kk), 2), kdiv(kcx{b.r, w16(Sub(C(0), b.i))}, 2)}, func(v []kcx) Stmt {
				return klet("f", []kcx{kadd(v[0], v[1]), ksub(v[0], v[1])}, func(f12 []kcx) Stmt {
					return klet("t", []kcx{kmul(f12[1], twAt(supT, k0))}, func(t []kcx) Stmt {
						f1 := f12[0]
						return Block(
							st(kk, kcx{Shr(Add(f1.r, t[0].r), C(1)), Shr(Add(f1.i, t[0].i), C(1))}),
							st(nk, kcx{Shr(Sub(f1.r, t[0].r), C(1)), Shr(Sub(t[0].i, f1.i), C(1))}),
						)
					})
				})
			})
		}))
		return Block(ss...)
	}), nil
}

// kissStages are kissfft's butterfly stages of plan p on the N complex
// points that ld loads and st stores (in kissfft's reading order, in
// place), from its last factor to its first; twT holds the plan's
// twiddles. An inverse plan takes the radix-4 butterfly's inverse form.
// fftTables are an FFT plan's tables as int16 constants (N is at most
// 2^14: the order fits int16): the input order, the twiddles and the
// supRows super twiddles of the real transform's split.
func fftTables(name string, p *interp.RfftPlan, supRows int) (perm, tw, sup *Buffer) {
	n := p.N
	order := make([]int64, n)
	for j, v := range p.Perm {
		order[j] = int64(v)
	}
	ws := make([]int64, 0, 2*n)
	for _, t := range p.Tw {
		ws = append(ws, int64(t[0]), int64(t[1]))
	}
	ss := make([]int64, 0, n)
	for _, t := range p.Super {
		ss = append(ss, int64(t[0]), int64(t[1]))
	}
	return constBuf(name+"_perm", I16, []int{n}, order), constBuf(name+"_twiddles", I16, []int{n, 2}, ws),
		constBuf(name+"_super_twiddles", I16, []int{supRows, 2}, ss)
}

func kissStages(p *interp.RfftPlan, twT *Buffer, ld func(Expr) kcx, st func(Expr, kcx) Stmt, twAt func(*Buffer, Expr) kcx) []Stmt {
	n := p.N
	var ss []Stmt
	stride := n
	for s := len(p.Factors) - 1; s >= 0; s-- {
		rad := p.Factors[s]
		stride /= rad
		m := n / (stride * rad)
		ss = append(ss, Loops([]string{"b", "k"}, []int{stride, m}, func(iv []Expr) Stmt {
			kk := iv[1]
			at := func(q int) Expr { return Add(Add(Mul(iv[0], C(int64(rad*m))), kk), C(int64(q*m))) }
			tw := func(q int) kcx { return twAt(twT, Mul(kk, C(int64(q*stride)))) }
			// The rad inputs, each divided by rad, bound first.
			divided := func(body func(d []kcx) Stmt) Stmt {
				var d []kcx
				for q := range rad {
					d = append(d, kdiv(ld(at(q)), int64(rad)))
				}
				return klet("d", d, body)
			}
			// products binds the divided inputs, then mk's values of them.
			products := func(mk func(d []kcx) []kcx, body func(v []kcx) Stmt) Stmt {
				return divided(func(d []kcx) Stmt { return klet("a", mk(d), body) })
			}
			switch rad {
			case 2:
				return divided(func(v []kcx) Stmt {
					return klet("t", []kcx{kmul(v[1], tw(1))}, func(t []kcx) Stmt {
						return Block(st(at(1), ksub(v[0], t[0])), st(at(0), kadd(v[0], t[0])))
					})
				})
			case 3:
				e := twAt(twT, C(int64(stride*m)))
				return products(func(d []kcx) []kcx { return []kcx{d[0], kmul(d[1], tw(1)), kmul(d[2], tw(2))} }, func(v []kcx) Stmt {
					return klet("s", []kcx{kadd(v[1], v[2]), ksub(v[1], v[2])}, func(s3 []kcx) Stmt {
						om := kcx{w16(Sub(v[0].r, Shr(s3[0].r, C(1)))), w16(Sub(v[0].i, Shr(s3[0].i, C(1))))}
						s0 := kcx{kround(Mul(s3[1].r, e.i)), kround(Mul(s3[1].i, e.i))}
						return klet("o", []kcx{om, s0}, func(o []kcx) Stmt {
							return Block(
								st(at(0), kadd(v[0], s3[0])),
								st(at(2), kcx{w16(Add(o[0].r, o[1].i)), w16(Sub(o[0].i, o[1].r))}),
								st(at(1), kcx{w16(Sub(o[0].r, o[1].i)), w16(Add(o[0].i, o[1].r))}),
							)
						})
					})
				})
			case 4:
				return products(func(d []kcx) []kcx { return []kcx{d[0], kmul(d[1], tw(1)), kmul(d[2], tw(2)), kmul(d[3], tw(3))} }, func(v []kcx) Stmt {
					return klet("s", []kcx{ksub(v[0], v[2]), kadd(v[0], v[2]), kadd(v[1], v[3]), ksub(v[1], v[3])}, func(s []kcx) Stmt {
						s5, a0, s3, s4 := s[0], s[1], s[2], s[3]
						m1 := kcx{w16(Add(s5.r, s4.i)), w16(Sub(s5.i, s4.r))}
						m3 := kcx{w16(Sub(s5.r, s4.i)), w16(Add(s5.i, s4.r))}
						if p.Inverse {
							m1, m3 = m3, m1
						}
						return Block(
							st(at(2), ksub(a0, s3)),
							st(at(0), kadd(a0, s3)),
							st(at(1), m1),
							st(at(3), m3),
						)
					})
				})
			case 5:
				ya, yb := twAt(twT, C(int64(stride*m))), twAt(twT, C(int64(2*stride*m)))
				sm := func(a, b Expr) Expr { return kround(Mul(a, b)) }
				return products(func(d []kcx) []kcx {
					return []kcx{d[0], kmul(d[1], tw(1)), kmul(d[2], tw(2)), kmul(d[3], tw(3)), kmul(d[4], tw(4))}
				}, func(v []kcx) Stmt {
					return klet("s", []kcx{kadd(v[1], v[4]), ksub(v[1], v[4]), kadd(v[2], v[3]), ksub(v[2], v[3])}, func(s []kcx) Stmt {
						s0, s7, s10, s8, s9 := v[0], s[0], s[1], s[2], s[3]
						s5 := kcx{w16(Add(Add(s0.r, sm(s7.r, ya.r)), sm(s8.r, yb.r))), w16(Add(Add(s0.i, sm(s7.i, ya.r)), sm(s8.i, yb.r)))}
						s6 := kcx{w16(Add(sm(s10.i, ya.i), sm(s9.i, yb.i))), w16(Sub(Sub(C(0), sm(s10.r, ya.i)), sm(s9.r, yb.i)))}
						s11 := kcx{w16(Add(Add(s0.r, sm(s7.r, yb.r)), sm(s8.r, ya.r))), w16(Add(Add(s0.i, sm(s7.i, yb.r)), sm(s8.i, ya.r)))}
						s12 := kcx{w16(Add(Sub(C(0), sm(s10.i, yb.i)), sm(s9.i, ya.i))), w16(Sub(sm(s10.r, yb.i), sm(s9.r, ya.i)))}
						return klet("u", []kcx{s5, s6, s11, s12}, func(u []kcx) Stmt {
							return Block(
								st(at(0), kcx{w16(Add(Add(s0.r, s7.r), s8.r)), w16(Add(Add(s0.i, s7.i), s8.i))}),
								st(at(1), ksub(u[0], u[1])),
								st(at(4), kadd(u[0], u[1])),
								st(at(2), kadd(u[2], u[3])),
								st(at(3), ksub(u[2], u[3])),
							)
						})
					})
				})
			}
			panic("tir: radix out of range")
		}))
	}
	return ss
}
