package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// IntrDetCenter(e, scale, size, centre) float32: a decoded box's centre,
// float(e / scale * size + centre) in double; IntrDetHalf(e, scale, size)
// float32: its half size, float(0.5 * exp(e / scale) * size) in double
// (interp.DecodeBox, TFLite's DecodeCenterSizeBoxes).
const (
	IntrDetCenter = "det_center"
	IntrDetHalf   = "det_half"
)

func init() {
	register(graph.DetectionPostProcess, computeDetection)
	extIntrinsics[IntrDetCenter] = func(a []val) val {
		return val{f: float64(interp.DetCenter(float32(a[0].f), float32(a[1].f), float32(a[2].f), float32(a[3].f)))}
	}
	extIntrinsics[IntrDetHalf] = func(a []val) val {
		return val{f: float64(interp.DetHalf(float32(a[0].f), float32(a[1].f), float32(a[2].f)))}
	}
}

// computeDetection lowers DetectionPostProcess (interp.detectionPostProcess
// is its reference): decode every anchor's box and best class into the
// output's work area, then up to MaxDetections passes that take the best
// remaining candidate and suppress the candidates it overlaps: O(D × N)
// and no buffer beyond the output.
func computeDetection(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.DetectionAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.DetectionAttrs")
	}
	et, st, at := k.g.In(k.n, 0), k.g.In(k.n, 1), k.g.In(k.n, 2)
	if et == nil || st == nil || at == nil || et.DType != F32 || st.DType != F32 || at.DType != F32 {
		return nil, k.errorf("needs float32 box encodings, scores and anchors")
	}
	num := et.Shape[1]
	l := a.Layout(num)
	enc, sc, anc := k.in(0), k.in(1), k.in(2)
	y, _ := k.output()
	k.f.Op = "detection"
	at4 := func(base int, i Expr, c int) Expr { return Add(Mul(i, C(4)), C(int64(base+c))) }
	off := func(base int, i Expr) Expr { return Add(i, C(int64(base))) }
	decode := Loop("i", num, func(i Expr) Stmt {
		yc := Call(IntrDetCenter, F32, At(enc, C(0), i, C(0)), F(a.Scale[0]), At(anc, i, C(2)), At(anc, i, C(0)))
		xc := Call(IntrDetCenter, F32, At(enc, C(0), i, C(1)), F(a.Scale[1]), At(anc, i, C(3)), At(anc, i, C(1)))
		hh := Call(IntrDetHalf, F32, At(enc, C(0), i, C(2)), F(a.Scale[2]), At(anc, i, C(2)))
		hw := Call(IntrDetHalf, F32, At(enc, C(0), i, C(3)), F(a.Scale[3]), At(anc, i, C(3)))
		score := func(c Expr) Expr { return At(sc, C(0), i, Add(c, C(int64(a.LabelOffset)))) }
		// Only a candidate's box is ever read, so only a candidate's is
		// decoded (an exponential in double: most of the work); the others
		// stay zero.
		box := Let("yc", yc, func(yc Expr) Stmt {
			return Let("xc", xc, func(xc Expr) Stmt {
				return Let("hh", hh, func(hh Expr) Stmt {
					return Let("hw", hw, func(hw Expr) Stmt {
						return Block(
							Put(y, Sub(yc, hh), at4(l.Decoded, i, 0)),
							Put(y, Sub(xc, hw), at4(l.Decoded, i, 1)),
							Put(y, Add(yc, hh), at4(l.Decoded, i, 2)),
							Put(y, Add(xc, hw), at4(l.Decoded, i, 3)),
						)
					})
				})
			})
		})
		return Scalar("best", F32, func(best *Buffer) Stmt {
			return Scalar("cls", I32, func(cls *Buffer) Stmt {
				return Block(
					Put(best, score(C(0))),
					Put(cls, C(0)),
					Loop("c", a.NumClasses-1, func(c Expr) Stmt {
						c1 := Add(c, C(1))
						return If(GT(score(c1), At(best)), Block(Put(best, score(c1)), Put(cls, c1)))
					}),
					Put(y, At(best), off(l.Best, i)),
					Put(y, CastTo(F32, At(cls)), off(l.Class, i)),
					Loop("k", 4, func(k Expr) Stmt { return Put(y, F(0), Add(Mul(i, C(4)), Add(k, C(int64(l.Decoded))))) }),
					If(GE(At(best), F(a.ScoreThreshold)), box),
				)
			})
		})
	})
	live := func(j Expr) Expr {
		return And(GE(At(y, off(l.Class, j)), F(0)), GE(At(y, off(l.Best, j)), F(a.ScoreThreshold)))
	}
	// overlaps(p, j): the IoU of boxes p and j is above the threshold (0
	// when either has no area).
	overlaps := func(p, j Expr) Expr {
		b := func(i Expr, c int) Expr { return At(y, at4(l.Decoded, i, c)) }
		areaP := Mul(Sub(b(p, 2), b(p, 0)), Sub(b(p, 3), b(p, 1)))
		areaJ := Mul(Sub(b(j, 2), b(j, 0)), Sub(b(j, 3), b(j, 1)))
		h := Sub(Min(b(p, 2), b(j, 2)), Max(b(p, 0), b(j, 0)))
		w := Sub(Min(b(p, 3), b(j, 3)), Max(b(p, 1), b(j, 1)))
		inter := Mul(Max(h, F(0)), Max(w, F(0)))
		return And(And(GT(areaP, F(0)), GT(areaJ, F(0))), GT(Div(inter, Sub(Add(areaP, areaJ), inter)), F(a.IoUThreshold)))
	}
	d := a.MaxDetections
	nms := Scalar("count", I32, func(count *Buffer) Stmt {
		return Block(
			Put(count, C(0)),
			Loop("z", 6*d, func(z Expr) Stmt { return Put(y, F(0), off(l.Boxes, z)) }),
			Loop("r", d, func(r Expr) Stmt {
				return If(EQ(At(count), r), Scalar("pick", I32, func(pick *Buffer) Stmt {
					p := At(pick)
					return Block(
						Put(pick, C(-1)),
						Loop("j", num, func(j Expr) Stmt {
							return If(And(live(j), Or(LT(p, C(0)), GT(At(y, off(l.Best, j)), At(y, off(l.Best, p))))), Put(pick, j))
						}),
						If(GE(p, C(0)), Block(
							Put(y, At(y, at4(l.Decoded, p, 0)), at4(l.Boxes, r, 0)),
							Put(y, At(y, at4(l.Decoded, p, 1)), at4(l.Boxes, r, 1)),
							Put(y, At(y, at4(l.Decoded, p, 2)), at4(l.Boxes, r, 2)),
							Put(y, At(y, at4(l.Decoded, p, 3)), at4(l.Boxes, r, 3)),
							Put(y, At(y, off(l.Class, p)), off(l.Classes, r)),
							Put(y, At(y, off(l.Best, p)), off(l.Scores, r)),
							Put(y, F(-1), off(l.Class, p)),
							Put(count, Add(At(count), C(1))),
							Loop("j", num, func(j Expr) Stmt {
								return If(And(live(j), overlaps(p, j)), Put(y, F(-1), off(l.Class, j)))
							}),
						)),
					)
				}))
			}),
			Put(y, CastTo(F32, At(count)), C(int64(l.Count))),
		)
	})
	return Block(decode, nms), nil
}
