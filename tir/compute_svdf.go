package tir

import (
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// TFLite Micro's integer SVDF in its two steps (graph.SVDFFeature,
// graph.SVDFTime; graph/interp/svdf.go is the reference). Sums run in 64
// bits and wrap to 32 where TFLite Micro's int32 sums would, in 32 where
// no partial sum can leave int32 (svdfAcc).

func init() {
	register(graph.SVDFFeature, computeSVDFFeature)
	register(graph.SVDFTime, computeSVDFTime)
}

// svdfScales returns the per-tensor scales and zero points of ts.
func (k *kctx) svdfScales(ts ...*graph.Tensor) ([]float32, []int64, error) {
	var s []float32
	var z []int64
	for _, t := range ts {
		sc, zp, err := quantParams(t)
		if err != nil {
			return nil, nil, k.errorf("%s: %v", t.Name, err)
		}
		s, z = append(s, sc), append(z, int64(zp))
	}
	return s, z, nil
}

func computeSVDFFeature(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SVDFAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.SVDFAttrs")
	}
	xt, wt, st := k.g.In(k.n, 0), k.g.In(k.n, 1), k.g.In(k.n, 2)
	if xt == nil || wt == nil || st == nil || !wt.IsConst() {
		return nil, k.errorf("needs the input, constant weights_feature and the state")
	}
	sc, zp, err := k.svdfScales(xt, wt, st)
	if err != nil {
		return nil, err
	}
	batch, inSize, filters, mem := xt.Shape[0], xt.Shape[1], wt.Shape[0], a.Memory
	x, w, s := k.in(0), k.in(1), k.in(2)
	y, yt := k.output()
	viewAs(s, []int{batch, filters, mem})
	viewAs(y, []int{batch, filters, mem})
	m, shift := qmath.SVDFMultiplier(sc[0], sc[1], sc[2])
	lo, hi := yt.DType.Range()
	k.f.Op = "svdf_feature"
	// The state moves one step: y[b, f, t] = s[b, f, t+1] for t < mem−1
	// is one contiguous copy of filters·mem − 1 elements per batch (the
	// last element of each filter's row takes the next filter's first,
	// which its new value then replaces): one memcpy for an int8 or int16
	// state where a loop per filter copied mem − 1 elements one by one.
	run := int64(filters*mem - 1)
	var shiftOld Stmt = Block()
	if mem > 1 {
		shiftOld = Loop("b", batch, func(b Expr) Stmt {
			base := Mul(b, C(int64(filters*mem)))
			if copyK := map[DType]string{I8: KCopy8, I16: KCopy16}[y.DType]; copyK != "" && s.DType == y.DType {
				return &Evaluate{X: Call("gen_"+copyK, I32, &Ptr{Buf: y, Index: SimplifyExpr(base)}, &Ptr{Buf: s, Index: SimplifyExpr(Add(base, C(1)))}, C(run))}
			}
			return Loop("j", int(run), func(j Expr) Stmt {
				return &Store{Buf: y, Indices: []Expr{SimplifyExpr(Add(base, j))},
					Value: &Load{Buf: s, Indices: []Expr{SimplifyExpr(Add(Add(base, j), C(1)))}, Flat: true}, Flat: true}
			})
		})
	}
	at := svdfAcc(wt.Data.I, filters, inSize, xt.DType, zp[0], nil)
	newest := func(b, f Expr, acc Expr) Stmt {
		return Put(y, CastTo(yt.DType, Add(Clamp(Requant(acc, C(int64(m)), C(int64(shift))), C(lo), C(hi)), C(zp[2]))),
			b, f, C(int64(mem-1)))
	}
	if dot, ok := k.svdfFeatureDSP(at, x, xt, wt, batch, inSize, filters, zp[0], newest); ok {
		return Block(shiftOld, dot), nil
	}
	return Block(shiftOld, Loop("b", batch, func(b Expr) Stmt {
		return Loop("f", filters, func(f Expr) Stmt {
			return Scalar("acc", at, func(acc *Buffer) Stmt {
				return Block(
					Put(acc, Imm(at, 0)),
					Loop("i", inSize, func(i Expr) Stmt {
						return Put(acc, Add(At(acc), CastTo(at, Mul(ld(w, f, i), Add(ld(x, b, i), C(-zp[0]))))))
					}),
					newest(b, f, CastTo(I32, At(acc))),
				)
			})
		})
	})), nil
}

// svdfFeatureDSP is the feature step's sums on the dsp target (and the
// M55's, whose core has the same SIMD instructions): the input widened
// once per batch into pair words (IntrDSPWiden), the weights widened at
// compile time (DSPPackWeights), and each block of filters one
// multiply-accumulate kernel call (DSPMacName), as a fully connected
// layer's; newest stores a filter's sum. It reports false where the sums
// need int64 (at), the input is not int8, or its length is not a multiple
// of four: the element loops then. keyword_scrambled_8bit's first feature
// step on mps2-an386: 6.4 instructions a MAC in the element loops.
func (k *kctx) svdfFeatureDSP(at DType, x *Buffer, xt, wt *graph.Tensor, batch, inSize, filters int, zx int64, newest func(b, f, acc Expr) Stmt) (Stmt, bool) {
	if !k.svdfDSP(at, xt, inSize) || inSize < 8 {
		return nil, false
	}
	c := 1
	if filters%4 == 0 {
		c = 4
	} else if filters%2 == 0 {
		c = 2
	}
	kw := inSize / 2
	u := svdfUnroll(kw)
	// (Constants derived from the node are named after it, which lowering
	// renames after the kernel.)
	wp := constBuf(k.n.Name+"_weights_s16", I32, []int{filters * kw}, DSPPackWeights(wt.Data.I, filters, inSize, inSize, c))
	xw := NewBuffer("svdf_xw", I32, []int{kw}, ScopeLocal)
	acc := NewBuffer("svdf_acc", I32, []int{c}, ScopeLocal)
	return &Allocate{Buf: xw, Body: Loop("b", batch, func(b Expr) Stmt {
		return Block(
			dspWiden(xw, C(0), x, Mul(b, C(int64(inSize))), inSize, -zx),
			&Allocate{Buf: acc, Body: Loop("f_o", filters/c, func(fo Expr) Stmt {
				ss := make([]Stmt, 0, 2*c+1)
				for j := range c {
					ss = append(ss, flatStore(acc, C(int64(j)), C(0)))
				}
				ss = append(ss, &Evaluate{X: Call(DSPMacName(1, c, u), I32, ptr(acc, C(0)), ptr(xw, C(0)), C(int64(kw)),
					ptr(wp, Mul(fo, C(int64(c*kw)))), C(int64(kw)))})
				for j := range c {
					ss = append(ss, newest(b, Add(Mul(fo, C(int64(c))), C(int64(j))), &Load{Buf: acc, Indices: []Expr{C(int64(j))}, Flat: true}))
				}
				return Block(ss...)
			})},
		)
	})}, true
}

// svdfAcc is the type an SVDF step sums w[r, i]·(x − zx) over i < n in,
// for each of the rows r of the constant weights w, from bias[r] (nil:
// 0): int32 where every partial sum of every row is within int32 for any
// x of type xt (what TFLite Micro's int32 sums then equal exactly), else
// int64, which the step wraps to 32 bits as TFLite Micro's sums would.
// The int64 sums cost a long multiply-accumulate and two loads' widening
// each: 6.6 instructions a MAC on keyword_scrambled_8bit's first layer.
func svdfAcc(w []int64, rows, n int, xt graph.DType, zx int64, bias []int64) DType {
	lo, hi := xt.Range()
	d := max(hi-zx, zx-lo)
	for r := range rows {
		var s int64
		for _, v := range w[r*n : (r+1)*n] {
			s += max(v, -v)
		}
		s *= d
		if bias != nil {
			s += max(bias[r], -bias[r])
		}
		if s > math.MaxInt32 {
			return I64
		}
	}
	return I32
}

func computeSVDFTime(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SVDFAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.SVDFAttrs")
	}
	st, wt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if st == nil || wt == nil || !wt.IsConst() {
		return nil, k.errorf("needs the state and constant weights_time")
	}
	y, yt := k.output()
	sc, zp, err := k.svdfScales(st, wt, yt)
	if err != nil {
		return nil, err
	}
	batch, filters, mem := st.Shape[0], wt.Shape[0], a.Memory
	units := filters / a.Rank
	s, w := k.in(0), k.in(1)
	viewAs(s, []int{batch, filters, mem})
	var bias *Buffer
	if bt := k.g.In(k.n, 2); bt != nil {
		bias = k.in(2)
	}
	m, shift := qmath.SVDFMultiplier(sc[0], sc[1], sc[2])
	k.f.Op = "svdf_time"
	// A unit's sum runs over its rank·mem weights, from its bias.
	at := I64
	if bt := k.g.In(k.n, 2); bt == nil {
		at = svdfAcc(wt.Data.I, units, a.Rank*mem, st.DType, zp[0], nil)
	} else if bt.IsConst() && bt.Data != nil {
		at = svdfAcc(wt.Data.I, units, a.Rank*mem, st.DType, zp[0], bt.Data.I)
	}
	newest := func(b, u, acc Expr) Stmt {
		return Put(y, CastTo(graph.Int8, Clamp(Add(Requant(acc, C(int64(m)), C(int64(shift))), C(zp[2])), C(-128), C(127))), b, u)
	}
	if dot, ok := k.svdfTimeDSP(at, s, st, wt, bias, batch, units, a.Rank*mem, zp[0], newest); ok {
		return dot, nil
	}
	if per := a.Rank * mem; st.DType == graph.Int16 && wt.DType == graph.Int16 && zp[0] == 0 && per >= 4 {
		// TFLite's integer SVDF (an int16 state, whose zero point is 0,
		// and int16 time weights): each unit's run of rank·mem values is
		// one inner product from its bias (IntrDotS16S16: SMLAD on pairs
		// where the core has them), wrapped to 32 bits as TFLite Micro's
		// int32 sum is.
		return Loop("b", batch, func(b Expr) Stmt {
			return Loop("u", units, func(u Expr) Stmt {
				var init Expr = C(0)
				if bias != nil {
					init = ld(bias, u)
				}
				return newest(b, u, Call(IntrDotS16S16, I32, &Ptr{Buf: s, Index: Mul(Add(Mul(b, C(int64(units))), u), C(int64(per)))},
					&Ptr{Buf: w, Index: Mul(u, C(int64(per)))}, C(int64(per)), init))
			})
		}), nil
	}
	return Loop("b", batch, func(b Expr) Stmt {
		return Loop("u", units, func(u Expr) Stmt {
			return Scalar("acc", at, func(acc *Buffer) Stmt {
				var init Expr = Imm(at, 0)
				if bias != nil {
					init = CastTo(at, ld(bias, u))
				}
				return Block(
					Put(acc, init),
					Loop("r", a.Rank, func(r Expr) Stmt {
						f := Add(Mul(u, C(int64(a.Rank))), r)
						return Loop("t", mem, func(t Expr) Stmt {
							return Put(acc, Add(At(acc), Mul(CastTo(at, ld(w, f, t)), CastTo(at, Add(ld(s, b, f, t), C(-zp[0]))))))
						})
					}),
					newest(b, u, CastTo(I32, At(acc))),
				)
			})
		})
	}), nil
}

// svdfDSP reports whether an SVDF step's sums over n int8 values of type
// xt take the dsp kernels: on the dsp and mve targets, with int32 sums
// (at), n a multiple of four and its pair words (2n bytes) within
// svdfWidenedBytes and half the target's stack.
func (k *kctx) svdfDSP(at DType, xt *graph.Tensor, n int) bool {
	return (k.target == "dsp" || k.target == "mve") && at == I32 && xt.DType == graph.Int8 && n%4 == 0 &&
		2*n <= svdfWidenedBytes && (k.stack == 0 || 2*n <= k.stack/2)
}

// svdfWidenedBytes bounds the stack an SVDF step's widened input takes.
const svdfWidenedBytes = 4096

// svdfUnroll is the largest unroll of a DSPMacName kernel that covers a
// run of kw pair words in whole iterations (kw a multiple of 2).
func svdfUnroll(kw int) int {
	u := 1
	for _, v := range DSPMacUnrolls {
		if kw%(2*v) == 0 {
			u = v
		}
	}
	return u
}

// svdfTimeDSP is the time step's sums on the dsp and mve targets, for an
// int8 state: the batch's state widened once into pair words
// (IntrDSPWiden), each unit's rank·mem weights widened at compile time in
// the same order (DSPPackWeights, one channel a block), and each unit's
// sum one multiply-accumulate kernel call from its bias; newest stores a
// unit's sum. False where svdfDSP is, or rank·mem is not a multiple of
// four: the element loops then (keyword_scrambled_8bit's time steps on
// mps2-an386: 9.7 instructions a MAC).
func (k *kctx) svdfTimeDSP(at DType, s *Buffer, st, wt *graph.Tensor, bias *Buffer, batch, units, per int, zs int64, newest func(b, u, acc Expr) Stmt) (Stmt, bool) {
	if !k.svdfDSP(at, st, units*per) || per%4 != 0 {
		return nil, false
	}
	n := units * per // the state's elements a batch
	kw := per / 2
	u := svdfUnroll(kw)
	wp := constBuf(k.n.Name+"_weights_s16", I32, []int{units * kw}, DSPPackWeights(wt.Data.I, units, per, per, 1))
	xw := NewBuffer("svdf_xw", I32, []int{n / 2}, ScopeLocal)
	acc := NewBuffer("svdf_acc", I32, []int{1}, ScopeLocal)
	return &Allocate{Buf: xw, Body: Loop("b", batch, func(b Expr) Stmt {
		return Block(
			dspWiden(xw, C(0), s, Mul(b, C(int64(n))), n, -zs),
			&Allocate{Buf: acc, Body: Loop("u", units, func(uv Expr) Stmt {
				var init Expr = C(0)
				if bias != nil {
					init = ld(bias, uv)
				}
				return Block(
					flatStore(acc, C(0), init),
					&Evaluate{X: Call(DSPMacName(1, 1, u), I32, ptr(acc, C(0)), ptr(xw, Mul(uv, C(int64(kw)))), C(int64(kw)),
						ptr(wp, Mul(uv, C(int64(kw)))), C(int64(kw)))},
					newest(b, uv, &Load{Buf: acc, Indices: []Expr{C(0)}, Flat: true}),
				)
			})},
		)
	})}, true
}
