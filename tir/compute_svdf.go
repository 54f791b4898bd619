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
	// which its new value then replaces): one memcpy for int8 state where
	// a loop per filter copied mem − 1 bytes element by element.
	run := int64(filters*mem - 1)
	var shiftOld Stmt = Block()
	if mem > 1 {
		shiftOld = Loop("b", batch, func(b Expr) Stmt {
			base := Mul(b, C(int64(filters*mem)))
			if y.DType == I8 && s.DType == I8 {
				return &Evaluate{X: Call("gen_"+KCopy8, I32, &Ptr{Buf: y, Index: SimplifyExpr(base)}, &Ptr{Buf: s, Index: SimplifyExpr(Add(base, C(1)))}, C(run))}
			}
			return Loop("j", int(run), func(j Expr) Stmt {
				return &Store{Buf: y, Indices: []Expr{SimplifyExpr(Add(base, j))},
					Value: &Load{Buf: s, Indices: []Expr{SimplifyExpr(Add(Add(base, j), C(1)))}, Flat: true}, Flat: true}
			})
		})
	}
	at := svdfAcc(wt.Data.I, filters, inSize, xt.DType, zp[0], nil)
	return Block(shiftOld, Loop("b", batch, func(b Expr) Stmt {
		return Loop("f", filters, func(f Expr) Stmt {
			return Scalar("acc", at, func(acc *Buffer) Stmt {
				return Block(
					Put(acc, Imm(at, 0)),
					Loop("i", inSize, func(i Expr) Stmt {
						return Put(acc, Add(At(acc), CastTo(at, Mul(ld(w, f, i), Add(ld(x, b, i), C(-zp[0]))))))
					}),
					Put(y, CastTo(yt.DType, Add(Clamp(Requant(CastTo(I32, At(acc)), C(int64(m)), C(int64(shift))), C(lo), C(hi)), C(zp[2]))),
						b, f, C(int64(mem-1))),
				)
			})
		})
	})), nil
}

// svdfAcc is the type an SVDF step sums w[r, i]·(x − zx) over i < n in,
// for each of the rows r of the constant weights w, from bias[r] (nil:
// 0): int32 where every partial sum of every row is within int32 for any
// x of type xt (what
// TFLite Micro's int32 sums then equal exactly), else int64, which the
// step wraps to 32 bits as TFLite Micro's sums would. The int64 sums cost
// a long multiply-accumulate and two loads' widening each: 6.6
// instructions a MAC on keyword_scrambled_8bit's first layer.
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
					Put(y, CastTo(graph.Int8, Clamp(Add(Requant(CastTo(I32, At(acc)), C(int64(m)), C(int64(shift))), C(zp[2])), C(-128), C(127))), b, u),
				)
			})
		})
	}), nil
}
