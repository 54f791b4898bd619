package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// TFLite Micro's integer SVDF in its two steps (graph.SVDFFeature,
// graph.SVDFTime; graph/interp/svdf.go is the reference). Sums run in 64
// bits and wrap to 32 where TFLite Micro's int32 sums would.

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
	return Loop("b", batch, func(b Expr) Stmt {
		return Loop("f", filters, func(f Expr) Stmt {
			var shiftOld Stmt = Block()
			if mem > 1 {
				shiftOld = Loop("t", mem-1, func(t Expr) Stmt {
					return Put(y, At(s, b, f, Add(t, C(1))), b, f, t)
				})
			}
			return Block(shiftOld, Scalar("acc", I64, func(acc *Buffer) Stmt {
				return Block(
					Put(acc, Imm(I64, 0)),
					Loop("i", inSize, func(i Expr) Stmt {
						return Put(acc, Add(At(acc), CastTo(I64, Mul(ld(w, f, i), Add(ld(x, b, i), C(-zp[0]))))))
					}),
					Put(y, CastTo(yt.DType, Add(Clamp(Requant(CastTo(I32, At(acc)), C(int64(m)), C(int64(shift))), C(lo), C(hi)), C(zp[2]))),
						b, f, C(int64(mem-1))),
				)
			}))
		})
	}), nil
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
	return Loop("b", batch, func(b Expr) Stmt {
		return Loop("u", units, func(u Expr) Stmt {
			return Scalar("acc", I64, func(acc *Buffer) Stmt {
				var init Expr = Imm(I64, 0)
				if bias != nil {
					init = CastTo(I64, ld(bias, u))
				}
				return Block(
					Put(acc, init),
					Loop("r", a.Rank, func(r Expr) Stmt {
						f := Add(Mul(u, C(int64(a.Rank))), r)
						return Loop("t", mem, func(t Expr) Stmt {
							return Put(acc, Add(At(acc), Mul(CastTo(I64, ld(w, f, t)), CastTo(I64, Add(ld(s, b, f, t), C(-zp[0]))))))
						})
					}),
					Put(y, CastTo(graph.Int8, Clamp(Add(Requant(CastTo(I32, At(acc)), C(int64(m)), C(int64(shift))), C(zp[2])), C(-128), C(127))), b, u),
				)
			})
		})
	}), nil
}
