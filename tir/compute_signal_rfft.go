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

// kissOps is kissfft's arithmetic in one scalar type on tir expressions:
// int16 (values held as int32, each store to short wrapped), int32
// (held as int64, products in int64 as FIXED_POINT 32 computes them,
// each store wrapped to int32: C's int32 sums would overflow where
// TFLite Micro's compiled code wraps) or float32 (every operation in
// float, in kissfft's order: the C must be compiled without contraction).
type kissOps struct {
	st   DType // the tensors' type
	wrap func(Expr) Expr
	mul  func(a, b kcx) kcx
	div  func(a kcx, k int64) kcx
	smul func(a, b Expr) Expr
	half func(Expr) Expr // HALF_OF of a stored value
	neg  func(Expr) Expr
	zero Expr
}

func (o *kissOps) add(a, b kcx) kcx { return kcx{o.wrap(Add(a.r, b.r)), o.wrap(Add(a.i, b.i))} }
func (o *kissOps) sub(a, b kcx) kcx { return kcx{o.wrap(Sub(a.r, b.r)), o.wrap(Sub(a.i, b.i))} }
func (o *kissOps) fl() bool         { return o.st == F32 }

// halfOf is HALF_OF(a op b) as kiss_fftr writes a bin: int16 operands
// promoted (no wrap before the shift), int32 ones wrapped first.
func (o *kissOps) halfOf(e Expr) Expr {
	switch o.st {
	case I16:
		return Shr(e, C(1))
	case I32:
		return Shr(o.wrap(e), Imm(I64, 1))
	}
	return Mul(e, F(0.5))
}

// ldv widens a loaded scalar to the expression type.
func (o *kissOps) ldv(e Expr) Expr {
	switch o.st {
	case I16:
		return CastTo(I32, e)
	case I32:
		return CastTo(I64, e)
	}
	return e
}

// narrow is v in the tensors' type (a value wrapped already is stored as
// is).
func (o *kissOps) narrow(v Expr) Expr {
	if c, ok := v.(*Cast); ok && c.X.Type() == o.st {
		return c.X
	}
	return CastTo(o.st, v)
}

var kissOps16 = &kissOps{st: I16, wrap: w16, mul: kmul, div: kdiv, smul: func(a, b Expr) Expr { return kround(Mul(a, b)) },
	half: func(e Expr) Expr { return Shr(e, C(1)) }, neg: func(e Expr) Expr { return Sub(C(0), e) }, zero: C(0)}

// w32 wraps an int64 value to int32.
func w32(e Expr) Expr { return CastTo(I64, CastTo(I32, e)) }

// kround32 is FIXED_POINT 32's sround: (x + 2^30) >> 31 stored as int32.
func kround32(e Expr) Expr { return w32(Shr(Add(e, Imm(I64, 1<<30)), Imm(I64, 31))) }

var kissOps32 = &kissOps{st: I32, wrap: w32,
	mul: func(a, b kcx) kcx {
		return kcx{kround32(Sub(Mul(a.r, b.r), Mul(a.i, b.i))), kround32(Add(Mul(a.r, b.i), Mul(a.i, b.r)))}
	},
	div: func(a kcx, k int64) kcx {
		return kcx{kround32(Mul(a.r, Imm(I64, 2147483647/k))), kround32(Mul(a.i, Imm(I64, 2147483647/k)))}
	},
	smul: func(a, b Expr) Expr { return kround32(Mul(a, b)) },
	half: func(e Expr) Expr { return Shr(e, Imm(I64, 1)) }, neg: func(e Expr) Expr { return Sub(Imm(I64, 0), e) }, zero: Imm(I64, 0)}

func fid(e Expr) Expr { return e }

// kissOpsF is float: no division (C_FIXDIV is nothing), products by
// themselves; negation is a product by -1 (the same as C's unary minus
// but for a NaN's sign).
var kissOpsF = &kissOps{st: F32, wrap: fid,
	mul: func(a, b kcx) kcx {
		return kcx{Sub(Mul(a.r, b.r), Mul(a.i, b.i)), Add(Mul(a.r, b.i), Mul(a.i, b.r))}
	},
	div:  func(a kcx, k int64) kcx { return a },
	smul: func(a, b Expr) Expr { return Mul(a, b) },
	half: func(e Expr) Expr { return Mul(e, F(0.5)) }, neg: func(e Expr) Expr { return Mul(e, F(-1)) }, zero: F(0)}

// kissOpsFor are the operations of SignalRfft and SignalIrfft in dt.
func kissOpsFor(dt DType) *kissOps {
	switch dt {
	case I16:
		return kissOps16
	case I32:
		return kissOps32
	case F32:
		return kissOpsF
	}
	return nil
}

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

// computeSignalRfft lowers SignalRfft (interp.RfftPlan, TFLite Micro's
// kiss_fftr in 16- or 32-bit fixed point or float: kissOps) with no
// buffer of its own: each
// frame's N complex points (sample pairs, zero past the frame) go in
// kissfft's digit-reversed order into the frame's output, the radix-2 to 5
// butterflies run there stage by stage from kissfft's last factor to its
// first (the order of its recursion's results does not change them), and
// kiss_fftr's split turns the N points into the N + 1 bins in place (bins
// k and N − k are read before either is written). Twiddles are constants.
func computeSignalRfft(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalRfftAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || kissOpsFor(xt.DType) == nil || len(xt.Shape) < 1 {
		return nil, k.errorf("needs SignalRfftAttrs and an int16, int32 or float32 input")
	}
	o := kissOpsFor(xt.DType)
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
	permT, twT, supT := fftTables(k.n.Name, p, n/2, o.st)
	return Loop("f", frames, func(f Expr) Stmt {
		ld := func(j Expr) kcx {
			return kcx{o.ldv(At(y, f, Mul(j, C(2)))), o.ldv(At(y, f, Add(Mul(j, C(2)), C(1))))}
		}
		st := func(j Expr, v kcx) Stmt {
			return Block(Put(y, o.narrow(v.r), f, Mul(j, C(2))), Put(y, o.narrow(v.i), f, Add(Mul(j, C(2)), C(1))))
		}
		twAt := func(t *Buffer, j Expr) kcx {
			return kcx{o.ldv(At(t, j, C(0))), o.ldv(At(t, j, C(1)))}
		}
		sample := func(i Expr) Expr {
			if l == a.FFTLength {
				return At(x, f, i)
			}
			return Sel(LT(i, C(int64(l))), At(x, f, Min(i, C(int64(l-1)))), Imm(o.st, 0))
		}
		ss := []Stmt{Loop("j", n, func(j Expr) Stmt {
			return Let("src", Mul(CastTo(I32, At(permT, j)), C(2)), func(s Expr) Stmt {
				return Block(Put(y, sample(s), f, Mul(j, C(2))), Put(y, sample(Add(s, C(1))), f, Add(Mul(j, C(2)), C(1))))
			})
		})}
		ss = append(ss, kissStages(o, p, twT, ld, st, twAt)...)
		// kiss_fftr's split: the DC and Nyquist bins, then bins k and N − k.
		ss = append(ss, klet("dc", []kcx{o.div(ld(C(0)), 2)}, func(d []kcx) Stmt {
			return Block(
				st(C(int64(n)), kcx{o.wrap(Sub(d[0].r, d[0].i)), o.zero}),
				st(C(0), kcx{o.wrap(Add(d[0].r, d[0].i)), o.zero}),
			)
		}))
		ss = append(ss, Loop("k", n/2, func(k0 Expr) Stmt {
			kk := Add(k0, C(1))
			nk := Sub(C(int64(n)), kk)
			b := ld(nk)
			return klet("p", []kcx{o.div(ld(kk), 2), o.div(kcx{b.r, o.wrap(o.neg(b.i))}, 2)}, func(v []kcx) Stmt {
				return klet("f", []kcx{o.add(v[0], v[1]), o.sub(v[0], v[1])}, func(f12 []kcx) Stmt {
					return klet("t", []kcx{o.mul(f12[1], twAt(supT, k0))}, func(t []kcx) Stmt {
						f1 := f12[0]
						return Block(
							st(kk, kcx{o.halfOf(Add(f1.r, t[0].r)), o.halfOf(Add(f1.i, t[0].i))}),
							st(nk, kcx{o.halfOf(Sub(f1.r, t[0].r)), o.halfOf(Sub(t[0].i, f1.i))}),
						)
					})
				})
			})
		}))
		return Block(ss...)
	}), nil
}

// fftTables are an FFT plan's tables as constants (N is at most 2^14: the
// order fits int16): the input order, the twiddles and the supRows super
// twiddles of the real transform's split, in dt (int16, int32 or
// float32).
func fftTables(name string, p *interp.RfftPlan, supRows int, dt DType) (perm, tw, sup *Buffer) {
	n := p.N
	order := make([]int64, n)
	for j, v := range p.Perm {
		order[j] = int64(v)
	}
	perm = constBuf(name+"_perm", I16, []int{n}, order)
	switch dt {
	case F32:
		var ws, ss []float32
		for _, t := range p.TwF {
			ws = append(ws, t[0], t[1])
		}
		for _, t := range p.SuperF {
			ss = append(ss, t[0], t[1])
		}
		for len(ss) < 2*supRows {
			ss = append(ss, 0)
		}
		return perm, constF32(name+"_twiddles", []int{n, 2}, ws), constF32(name+"_super_twiddles", []int{supRows, 2}, ss)
	case I32:
		var ws, ss []int64
		for _, t := range p.Tw32 {
			ws = append(ws, int64(t[0]), int64(t[1]))
		}
		for _, t := range p.Super32 {
			ss = append(ss, int64(t[0]), int64(t[1]))
		}
		for len(ss) < 2*supRows {
			ss = append(ss, 0)
		}
		return perm, constBuf(name+"_twiddles", I32, []int{n, 2}, ws), constBuf(name+"_super_twiddles", I32, []int{supRows, 2}, ss)
	}
	ws := make([]int64, 0, 2*n)
	for _, t := range p.Tw {
		ws = append(ws, int64(t[0]), int64(t[1]))
	}
	ss := make([]int64, 0, n)
	for _, t := range p.Super {
		ss = append(ss, int64(t[0]), int64(t[1]))
	}
	return perm, constBuf(name+"_twiddles", I16, []int{n, 2}, ws),
		constBuf(name+"_super_twiddles", I16, []int{supRows, 2}, ss)
}

// kissStages are kissfft's butterfly stages of plan p in o's arithmetic
// on the N complex points that ld loads and st stores (in kissfft's
// reading order, in place), from its last factor to its first; twT holds
// the plan's twiddles. An inverse plan takes the radix-4 butterfly's
// inverse form.
func kissStages(o *kissOps, p *interp.RfftPlan, twT *Buffer, ld func(Expr) kcx, st func(Expr, kcx) Stmt, twAt func(*Buffer, Expr) kcx) []Stmt {
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
					d = append(d, o.div(ld(at(q)), int64(rad)))
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
					return klet("t", []kcx{o.mul(v[1], tw(1))}, func(t []kcx) Stmt {
						return Block(st(at(1), o.sub(v[0], t[0])), st(at(0), o.add(v[0], t[0])))
					})
				})
			case 3:
				e := twAt(twT, C(int64(stride*m)))
				return products(func(d []kcx) []kcx { return []kcx{d[0], o.mul(d[1], tw(1)), o.mul(d[2], tw(2))} }, func(v []kcx) Stmt {
					return klet("s", []kcx{o.add(v[1], v[2]), o.sub(v[1], v[2])}, func(s3 []kcx) Stmt {
						om := kcx{o.wrap(Sub(v[0].r, o.half(s3[0].r))), o.wrap(Sub(v[0].i, o.half(s3[0].i)))}
						s0 := kcx{o.smul(s3[1].r, e.i), o.smul(s3[1].i, e.i)}
						return klet("o", []kcx{om, s0}, func(ov []kcx) Stmt {
							return Block(
								st(at(0), o.add(v[0], s3[0])),
								st(at(2), kcx{o.wrap(Add(ov[0].r, ov[1].i)), o.wrap(Sub(ov[0].i, ov[1].r))}),
								st(at(1), kcx{o.wrap(Sub(ov[0].r, ov[1].i)), o.wrap(Add(ov[0].i, ov[1].r))}),
							)
						})
					})
				})
			case 4:
				return products(func(d []kcx) []kcx { return []kcx{d[0], o.mul(d[1], tw(1)), o.mul(d[2], tw(2)), o.mul(d[3], tw(3))} }, func(v []kcx) Stmt {
					return klet("s", []kcx{o.sub(v[0], v[2]), o.add(v[0], v[2]), o.add(v[1], v[3]), o.sub(v[1], v[3])}, func(s []kcx) Stmt {
						s5, a0, s3, s4 := s[0], s[1], s[2], s[3]
						m1 := kcx{o.wrap(Add(s5.r, s4.i)), o.wrap(Sub(s5.i, s4.r))}
						m3 := kcx{o.wrap(Sub(s5.r, s4.i)), o.wrap(Add(s5.i, s4.r))}
						if p.Inverse {
							m1, m3 = m3, m1
						}
						return Block(
							st(at(2), o.sub(a0, s3)),
							st(at(0), o.add(a0, s3)),
							st(at(1), m1),
							st(at(3), m3),
						)
					})
				})
			case 5:
				ya, yb := twAt(twT, C(int64(stride*m))), twAt(twT, C(int64(2*stride*m)))
				sm := o.smul
				w := o.wrap
				return products(func(d []kcx) []kcx {
					return []kcx{d[0], o.mul(d[1], tw(1)), o.mul(d[2], tw(2)), o.mul(d[3], tw(3)), o.mul(d[4], tw(4))}
				}, func(v []kcx) Stmt {
					return klet("s", []kcx{o.add(v[1], v[4]), o.sub(v[1], v[4]), o.add(v[2], v[3]), o.sub(v[2], v[3])}, func(s []kcx) Stmt {
						s0, s7, s10, s8, s9 := v[0], s[0], s[1], s[2], s[3]
						s5 := kcx{w(Add(Add(s0.r, sm(s7.r, ya.r)), sm(s8.r, yb.r))), w(Add(Add(s0.i, sm(s7.i, ya.r)), sm(s8.i, yb.r)))}
						s6 := kcx{w(Add(sm(s10.i, ya.i), sm(s9.i, yb.i))), w(Sub(o.neg(sm(s10.r, ya.i)), sm(s9.r, yb.i)))}
						s11 := kcx{w(Add(Add(s0.r, sm(s7.r, yb.r)), sm(s8.r, ya.r))), w(Add(Add(s0.i, sm(s7.i, yb.r)), sm(s8.i, ya.r)))}
						s12 := kcx{w(Add(o.neg(sm(s10.i, yb.i)), sm(s9.i, ya.i))), w(Sub(sm(s10.r, yb.i), sm(s9.r, ya.i)))}
						// Fout0 += s7 + s8: the float sum in kissfft's order.
						sum0 := kcx{w(Add(Add(s0.r, s7.r), s8.r)), w(Add(Add(s0.i, s7.i), s8.i))}
						if o.fl() {
							sum0 = kcx{Add(s0.r, Add(s7.r, s8.r)), Add(s0.i, Add(s7.i, s8.i))}
						}
						return klet("u", []kcx{s5, s6, s11, s12}, func(u []kcx) Stmt {
							return Block(
								st(at(0), sum0),
								st(at(1), o.sub(u[0], u[1])),
								st(at(4), o.add(u[0], u[1])),
								st(at(2), o.add(u[2], u[3])),
								st(at(3), o.sub(u[2], u[3])),
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
