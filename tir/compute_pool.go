package tir

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	register(graph.MaxPool2D, computePool)
	register(graph.AvgPool2D, computePool)
	register(graph.Softmax, computeSoftmax)
	register(graph.L2Normalize, computeL2Normalize)
	register(graph.Mean, computeMean)
	register(graph.Reduce, computeReduce)
}

// computePool: max or average over an HxW window of NHWC, padded taps skipped
// (with CountIncludePad counted, as real zeros: in int8 the zero point).
// int8 average is TFLite's: raw sum, divided by the count of in-image taps
// rounding half away from zero; int8 max compares raw values.
func computePool(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.PoolAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.PoolAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || len(xt.Shape) != 4 {
		return nil, k.errorf("needs a 4-D input")
	}
	x := k.in(0)
	y, yt := k.output()
	N, H, W, Cc := xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	OH, OW := yt.Shape[1], yt.Shape[2]
	KH, KW := a.Kernel[0], a.Kernel[1]
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	isMax := k.n.Op == graph.MaxPool2D
	intMode := isInt(xt)
	k.f.Op = opName(k.n.Op)
	var lo, hi int64
	if intMode {
		var err error
		if lo, hi, err = actRange(a.Act, yt); err != nil {
			return nil, k.errorf("%v", err)
		}
		if s1, z1, err := quantParams(xt); err == nil {
			// TFLite Micro's PoolingPrepare: the scales within 1e-6, the
			// zero points equal (an exact comparison refused scales one
			// float32 step apart, which TFLite runs).
			if s2, z2, err := quantParams(yt); err == nil && (math.Abs(float64(s1)-float64(s2)) > 1e-6 || z1 != z2) {
				return nil, k.errorf("int pool needs an output scale within 1e-6 of the input's and equal zero points, as TFLite's pooling kernels do (input scale %g zero point %d, output %g and %d)", s1, z1, s2, z2)
			}
		}
	}
	accT := F32
	if intMode {
		accT = I32
	}
	return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
		n, oh, ow, c := o[0], o[1], o[2], o[3]
		ih0 := Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top)))
		iw0 := Sub(Mul(ow, C(int64(sw))), C(int64(a.Pad.Left)))
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			var init Expr
			switch {
			case isMax && intMode:
				lo, _ := xt.DType.Range()
				init = C(lo)
			case isMax:
				init = F(float32(math.Inf(-1)))
			default:
				init = Imm(accT, 0)
			}
			// A float average sums compensated (Kahan), as the float
			// reductions do (floatSumNest) and graph/interp does the
			// same: a plain float32 sum of a global pool's 64 terms put
			// the reference and the C apart once the reference summed
			// in float32 too (it summed in float64, and a pool quantized
			// again after a QDQ model's float island then rounded apart
			// at ties).
			kahan := !isMax && !intMode
			var comp *Buffer
			red := func() Stmt {
				return Loops([]string{"kh", "kw"}, []int{KH, KW}, func(r []Expr) Stmt {
					ih := Add(ih0, Mul(r[0], C(int64(dh))))
					iw := Add(iw0, Mul(r[1], C(int64(dw))))
					v := ld(x, n, ih, iw, c)
					inside := AllOf(GE(ih, C(0)), LT(ih, C(int64(H))), GE(iw, C(0)), LT(iw, C(int64(W))))
					switch {
					case isMax:
						return If(inside, Put(acc, Max(At(acc), v)))
					case kahan:
						return If(inside, Let("y", Sub(v, At(comp)), func(y Expr) Stmt {
							return Let("t", Add(At(acc), y), func(t Expr) Stmt {
								return kahanStep(acc, comp, y, t)
							})
						}))
					default:
						return If(inside, Put(acc, Add(At(acc), v)))
					}
				})
			}
			var res Expr
			switch {
			case isMax && intMode:
				res = CastTo(yt.DType, Clamp(At(acc), C(lo), C(hi)))
			case isMax:
				res = floatAct(a.Act, At(acc))
			default:
				// Number of taps: inside the image, or inside the padded image.
				var cnt Expr
				inImage := Mul(windowCount(ih0, KH, dh, 0, H), windowCount(iw0, KW, dw, 0, W))
				if a.CountIncludePad {
					cnt = Mul(windowCount(ih0, KH, dh, -a.Pad.Top, H+a.Pad.Bottom), windowCount(iw0, KW, dw, -a.Pad.Left, W+a.Pad.Right))
				} else {
					cnt = inImage
				}
				if intMode {
					s := At(acc)
					if _, z, err := quantParams(xt); a.CountIncludePad && err == nil && z != 0 {
						// Each padded tap is a real 0: the raw zero point.
						s = Add(s, Mul(C(int64(z)), Sub(cnt, inImage)))
					}
					half := Div(cnt, C(2))
					q := Sel(GT(s, C(0)), Div(Add(s, half), cnt), Div(Sub(s, half), cnt))
					res = CastTo(yt.DType, Clamp(q, C(lo), C(hi)))
				} else {
					res = floatAct(a.Act, Div(At(acc), CastTo(F32, cnt)))
				}
			}
			if kahan {
				return Scalar("comp", F32, func(cb *Buffer) Stmt {
					comp = cb
					return Block(Put(acc, init), Put(comp, F(0)), red(), Put(y, res, n, oh, ow, c))
				})
			}
			return Block(Put(acc, init), red(), Put(y, res, n, oh, ow, c))
		})
	}), nil
}

// windowCount is the number of taps start + t·dil (t < k) inside [lo, hi).
// For dil == 1 it is a closed form; otherwise a sum of indicator terms.
func windowCount(start Expr, k, dil, lo, hi int) Expr {
	if dil == 1 {
		b := Max(start, C(int64(lo)))
		e := Min(Add(start, C(int64(k))), C(int64(hi)))
		return Max(Sub(e, b), C(0))
	}
	var sum Expr = C(0)
	for t := 0; t < k; t++ {
		p := Add(start, C(int64(t*dil)))
		sum = Add(sum, Sel(And(GE(p, C(int64(lo))), LT(p, C(int64(hi)))), C(1), C(0)))
	}
	return sum
}

// computeSoftmax over the last axis. Float: exp(x − max)/Σ. int8: TFLite's
// fixed-point softmax, with exp of every possible difference tabulated at
// compile time (differences below diff_min tabulate as 0, which gives
// TFLite's −128 output for them exactly) and the reciprocal of the sum
// computed at run time with gemmlowp's Newton-Raphson.
// softmaxAxis is the float softmax (or its logarithm, or Hardmax) over any
// axis: x viewed as [outer, depth, inner], one max, sum and pass of stores
// per (outer, inner).
func softmaxAxis(k *kctx, x, y *Buffer, shape []int, axis int, beta float32, mode graph.SoftmaxMode) Stmt {
	outer, depth, inner, _ := axisView(shape, axis) // axis already normalized
	viewAs(x, []int{outer, depth, inner})
	viewAs(y, []int{outer, depth, inner})
	k.f.Op = map[graph.SoftmaxMode]string{graph.SoftmaxPlain: "softmax", graph.SoftmaxLog: "log_softmax", graph.SoftmaxHard: "hardmax"}[mode]
	scaled := func(v Expr) Expr {
		if beta != 1 {
			return Mul(v, F(beta))
		}
		return v
	}
	return Loop("r", outer, func(r Expr) Stmt {
		return Loop("i", inner, func(i Expr) Stmt {
			return Scalar("mx", F32, func(mx *Buffer) Stmt {
				findMax := Block(
					Put(mx, At(x, r, C(0), i)),
					Loop("c", depth, func(c Expr) Stmt { return Put(mx, Max(At(mx), At(x, r, c, i))) }),
				)
				if mode == graph.SoftmaxHard {
					// 1 at the first maximum: a flag clears once it is stored.
					return Scalar("first", I32, func(first *Buffer) Stmt {
						return Block(findMax, Put(first, C(1)), Loop("c", depth, func(c Expr) Stmt {
							return Let("hit", Sel(EQ(At(x, r, c, i), At(mx)), At(first), C(0)), func(hit Expr) Stmt {
								return Block(Put(y, Sel(NE(hit, C(0)), F(1), F(0)), r, c, i), Put(first, Sub(At(first), hit)))
							})
						}))
					})
				}
				return Scalar("sum", F32, func(sum *Buffer) Stmt {
					if mode == graph.SoftmaxLog {
						return Block(findMax, Put(sum, F(0)),
							Loop("c", depth, func(c Expr) Stmt {
								return Put(sum, Add(At(sum), Call(IntrExp, F32, scaled(Sub(At(x, r, c, i), At(mx))))))
							}),
							Let("lse", Libm("log", At(sum)), func(lse Expr) Stmt {
								return Loop("c", depth, func(c Expr) Stmt {
									return Put(y, Sub(scaled(Sub(At(x, r, c, i), At(mx))), lse), r, c, i)
								})
							}),
						)
					}
					return Block(
						findMax,
						Put(sum, F(0)),
						Loop("c", depth, func(c Expr) Stmt {
							return Let("e", Call(IntrExp, F32, scaled(Sub(At(x, r, c, i), At(mx)))), func(e Expr) Stmt {
								return Block(Put(y, e, r, c, i), Put(sum, Add(At(sum), e)))
							})
						}),
						Loop("c", depth, func(c Expr) Stmt { return Put(y, Div(At(y, r, c, i), At(sum)), r, c, i) }),
					)
				})
			})
		})
	})
}

func computeSoftmax(k *kctx) (Stmt, error) {
	a, _ := k.n.Attrs.(*graph.SoftmaxAttrs)
	beta := float32(1)
	axis := -1
	if a != nil {
		if a.Beta != 0 {
			beta = a.Beta
		}
		axis = a.Axis
	}
	xt := k.g.In(k.n, 0)
	rank := len(xt.Shape)
	if axis < 0 {
		axis += rank
	}
	x := k.in(0)
	y, yt := k.output()
	mode := graph.SoftmaxPlain
	if a != nil {
		mode = a.Mode
	}
	if isInt(xt) && mode == graph.SoftmaxLog {
		return intLogSoftmax(k, x, y, xt, yt, a)
	}
	if axis != rank-1 || mode != graph.SoftmaxPlain {
		if isInt(xt) {
			return nil, k.errorf("integer softmax (mode %q) over axis %d of rank %d: only the plain softmax over the last axis is supported", mode, axis, rank)
		}
		return softmaxAxis(k, x, y, xt.Shape, axis, beta, mode), nil
	}
	depth := xt.Shape[rank-1]
	outer := xt.NumElements() / depth
	viewAs(x, []int{outer, depth})
	viewAs(y, []int{outer, depth})
	k.f.Op = "softmax"
	if !isInt(xt) {
		return Loop("r", outer, func(r Expr) Stmt {
			return Scalar("mx", F32, func(mx *Buffer) Stmt {
				return Scalar("sum", F32, func(sum *Buffer) Stmt {
					return Block(
						Put(mx, At(x, r, C(0))),
						Loop("c", depth, func(c Expr) Stmt { return Put(mx, Max(At(mx), At(x, r, c))) }),
						Put(sum, F(0)),
						Loop("c", depth, func(c Expr) Stmt {
							d := Sub(At(x, r, c), At(mx))
							if beta != 1 {
								d = Mul(d, F(beta))
							}
							return Let("e", Call(IntrExp, F32, d), func(e Expr) Stmt {
								return Block(Put(y, e, r, c), Put(sum, Add(At(sum), e)))
							})
						}),
						Loop("c", depth, func(c Expr) Stmt { return Put(y, Div(At(y, r, c), At(sum)), r, c) }),
					)
				})
			})
		}), nil
	}
	// int8 -> int16 is the int8 kernel with a 16-bit output (TFLite Micro's
	// templated reference Softmax): scale 1/65536, zero point -32768.
	to16 := xt.DType == graph.Int8 && yt.DType == graph.Int16
	if (xt.DType == graph.Int16 || yt.DType == graph.Int16) && !to16 {
		return softmaxInt16(k, x, y, xt, yt, beta, outer, depth)
	}
	// uint8 -> uint8 (TF1's quantized classifiers) is the int8 kernel at
	// output zero point 0 (scale 1/256): the differences to the row's
	// largest value are the same (TFLite's fixed-point reference kernel;
	// interp.SoftmaxUint8OK).
	u8 := xt.DType == graph.UInt8 && yt.DType == graph.UInt8
	if !u8 && (xt.DType != graph.Int8 || (yt.DType != graph.Int8 && !to16)) {
		return nil, k.errorf("integer softmax is supported for int8 -> int8, int8 -> int16, uint8 -> uint8 and int16 -> int16 only")
	}
	outT, outMin, outMax := I8, int64(-128), int64(127)
	if u8 {
		if err := interp.SoftmaxUint8OK(xt, yt, beta); err != nil {
			return nil, k.errorf("%v", err)
		}
		outT, outMin, outMax = U8, 0, 255
	} else if to16 {
		if err := interp.SoftmaxInt8ToInt16OK(xt, yt, beta); err != nil {
			return nil, k.errorf("%v", err)
		}
		outT, outMin, outMax = I16, -32768, 32767
	} else if err := interp.FixedOutputOK(graph.Softmax, xt, yt, beta); err != nil {
		return nil, k.errorf("%v", err)
	}
	// TFLite's RoundingDivideByPOT exponent: bits over unit + 31 - output bits.
	outShift := int64(31 - 8*yt.DType.Size())
	sIn, _, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	const scaledDiffIntBits = 5
	mult, ls := qmath.PreprocessSoftmaxScaling(float64(beta), float64(sIn), scaledDiffIntBits)
	leftShift := int32(ls)
	diffMin := -int64(qmath.CalculateInputRadius(scaledDiffIntBits, ls))
	exps := make([]int64, 256)
	sums := make([]int64, 256)
	for d := 0; d < 256; d++ {
		diff := int32(-d)
		if int64(diff) < diffMin {
			continue
		}
		rescaled := SRDHM(diff*(int32(1)<<uint(leftShift)), mult)
		e := ExpNeg(rescaled)
		exps[d] = int64(e)
		sums[d] = int64(RDivPOT(e, 12))
	}
	expT := constBuf(k.n.Name+"_exp", I32, []int{256}, exps)
	sumT := constBuf(k.n.Name+"_exp_acc", I32, []int{256}, sums)
	return Loop("r", outer, func(r Expr) Stmt {
		return Scalar("mx", I32, func(mx *Buffer) Stmt {
			return Scalar("sum", I32, func(sum *Buffer) Stmt {
				diff := func(c Expr) Expr { return Sub(At(mx), ld(x, r, c)) }
				return Block(
					Put(mx, C(-128)),
					Loop("c", depth, func(c Expr) Stmt { return Put(mx, Max(At(mx), ld(x, r, c))) }),
					Put(sum, C(0)),
					Loop("c", depth, func(c Expr) Stmt { return Put(sum, Add(At(sum), At(sumT, diff(c)))) }),
					Let("scale", Call(IntrRecip, I32, At(sum), C(12)), func(scale Expr) Stmt {
						return Let("shift", Add(Call(IntrRecipShift, I32, At(sum), C(12)), C(outShift)), func(shift Expr) Stmt {
							return &IfThenElse{
								Cond: GT(shift, C(31)),
								// Past 31 (the exponentials sum past 2^9:
								// about 500 equal logits) TFLite's
								// RoundingDivideByPOT is undefined in C++;
								// on an Arm core its mask, taken in 64
								// bits, is −1 as an int32 and its shift
								// leaves 0: 1 for every value it divides,
								// which is every one within diffMin (the
								// others are the minimum). A branch a row,
								// so the elements' helper keeps shifts
								// below 32 (it shifted by 32 or more:
								// undefined in C; review finding).
								Then: Loop("c", depth, func(c Expr) Stmt {
									in := &Select{Cond: LE(diff(c), C(-diffMin)), A: C(outMin + 1), B: C(outMin)}
									return Put(y, CastTo(outT, in), r, c)
								}),
								Else: Loop("c", depth, func(c Expr) Stmt {
									// scale > 0 (a reciprocal) and the table's exponentials >= 0.
									v := Add(Call(IntrMulRoundPos, I32, scale, At(expT, diff(c)), shift), C(outMin))
									return Put(y, CastTo(outT, Clamp(v, C(outMin), C(outMax))), r, c)
								}),
							}
						})
					}),
				)
			})
		})
	}), nil
}

// IntrSoftmaxS16(x *int16, y *int16, depth, multiplier, shift, exp *int16,
// recip *int16): TFLite's SoftmaxInt16 on one row of depth values
// (qmath.SoftmaxInt16Row), with its two 513-entry tables.
const IntrSoftmaxS16 = "softmax_s16"

func init() {
	extIntrinsics[IntrSoftmaxS16] = func(a []val) val {
		x, y, depth, m, sh, e, r := a[0], a[1], a[2].i, int32(a[3].i), int(a[4].i), a[5], a[6]
		lut := func(p val) []int16 {
			t := make([]int16, qmath.Int16LUTSize)
			for i := range t {
				t[i] = int16(p.p.I[p.i+int64(i)])
			}
			return t
		}
		in := append([]int64(nil), x.p.I[x.i:x.i+depth]...)
		qmath.SoftmaxInt16Row(in, y.p.I[y.i:y.i+depth], m, sh, lut(e), lut(r))
		return val{}
	}
}

// softmaxInt16 is TFLite Micro's int16 SOFTMAX over the last axis: a call
// of the softmax_s16 helper a row, with the exp and 1/(1+x) tables TFLite
// Micro fills at Prepare computed here (qmath.SoftmaxInt16Tables).
func softmaxInt16(k *kctx, x, y *Buffer, xt, yt *graph.Tensor, beta float32, outer, depth int) (Stmt, error) {
	if err := interp.SoftmaxInt16OK(xt, yt, len(xt.Shape)-1); err != nil {
		return nil, k.errorf("%v", err)
	}
	if err := interp.SoftmaxInt16InputOK(xt, beta); err != nil {
		return nil, k.errorf("%v", err)
	}
	sx, _, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	m, sh := qmath.SoftmaxInt16Params(sx, beta)
	exp, recip := qmath.SoftmaxInt16Tables()
	widen := func(t []int16) []int64 {
		v := make([]int64, len(t))
		for i, e := range t {
			v[i] = int64(e)
		}
		return v
	}
	expT := constBuf(k.n.Name+"_exp_lut", I16, []int{qmath.Int16LUTSize}, widen(exp))
	recT := constBuf(k.n.Name+"_recip_lut", I16, []int{qmath.Int16LUTSize}, widen(recip))
	k.f.Op = "softmax"
	return Loop("r", outer, func(r Expr) Stmt {
		row := Mul(r, C(int64(depth)))
		return &Evaluate{X: Call(IntrSoftmaxS16, I32, &Ptr{Buf: x, Index: row}, &Ptr{Buf: y, Index: row},
			C(int64(depth)), C(int64(m)), C(int64(sh)), &Ptr{Buf: expT, Index: C(0)}, &Ptr{Buf: recT, Index: C(0)})}
	}), nil
}

// computeMean: float mean over Axes.
func computeMean(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.MeanAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.MeanAttrs")
	}
	xt := k.g.In(k.n, 0)
	_, yt := k.output()
	k.f.Op = "mean"
	if !isInt(xt) {
		return floatSumNest(k, a.Axes, func(v Expr) Expr { return v }, func(acc Expr, cnt int) Expr { return Div(acc, F(float32(cnt))) })
	}
	// int: TFLite's MeanOrSum: (Σx − zx·count) requantized by s_x/s_y/count,
	// the division folded into the multiplier.
	q, err := k.meanOrSum(xt, yt, a.Axes)
	if err != nil {
		return nil, err
	}
	cnt, zx, zy := q.cnt, q.zx, q.zy
	mm, ss := qmath.QuantizeMultiplier(float64(q.sx) / float64(q.sy))
	shift := 63 - qmath.CountLeadingZeros64(uint64(cnt))
	shift = max(min(shift, 32, 31+ss), 0)
	m := int32((int64(mm) << uint(shift)) / int64(cnt))
	s := int32(ss - shift)
	lo, hi := yt.DType.Range()
	return reduceNest(k, a.Axes, I32, C(0), func(acc, v Expr) Expr { return Add(acc, v) }, func(acc Expr, cnt int) Expr {
		v := Add(Requant(Sub(acc, C(int64(zx)*int64(cnt))), C(int64(m)), C(int64(s))), C(int64(zy)))
		return CastTo(yt.DType, Clamp(v, C(lo), C(hi)))
	})
}

// computeReduce: the float ReduceX, accumulated in float32 in input order.
func computeReduce(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.ReduceAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.ReduceAttrs")
	}
	k.f.Op = "reduce_" + strings.ToLower(string(a.Kind))
	same := func(acc Expr, _ int) Expr { return acc }
	if xt := k.g.In(k.n, 0); isInt(xt) {
		// Stored extremes (graph/interp's intReduce), widened to int32.
		lo, hi := xt.DType.Range()
		_, yt := k.output()
		narrow := func(acc Expr, _ int) Expr { return CastTo(yt.DType, acc) }
		switch {
		case xt.DType == I64 || xt.DType == I32:
			return nil, k.errorf("integer Reduce%s on %s is not supported", a.Kind, xt.DType)
		case a.Kind == graph.ReduceSum:
			return intSum(k, xt, yt, a.Axes)
		case a.Kind == graph.ReduceMax:
			return reduceNest(k, a.Axes, I32, C(lo), func(acc, v Expr) Expr { return Max(acc, v) }, narrow)
		case a.Kind == graph.ReduceMin:
			return reduceNest(k, a.Axes, I32, C(hi), func(acc, v Expr) Expr { return Min(acc, v) }, narrow)
		}
		return nil, k.errorf("integer Reduce%s is not supported", a.Kind)
	}
	id := func(v Expr) Expr { return v }
	sq := func(v Expr) Expr { return Mul(v, v) }
	switch a.Kind {
	case graph.ReduceSum:
		return floatSumNest(k, a.Axes, id, same)
	case graph.ReduceProd:
		return reduceNest(k, a.Axes, F32, F(1), func(acc, v Expr) Expr { return Mul(acc, v) }, same)
	case graph.ReduceMax:
		return reduceNest(k, a.Axes, F32, F(float32(math.Inf(-1))), func(acc, v Expr) Expr { return Max(acc, v) }, same)
	case graph.ReduceMin:
		return reduceNest(k, a.Axes, F32, F(float32(math.Inf(1))), func(acc, v Expr) Expr { return Min(acc, v) }, same)
	case graph.ReduceL1:
		return floatSumNest(k, a.Axes, func(v Expr) Expr { return Libm("fabs", v) }, same)
	case graph.ReduceL2:
		return floatSumNest(k, a.Axes, sq, func(acc Expr, _ int) Expr { return Libm("sqrt", acc) })
	case graph.ReduceSumSquare:
		return floatSumNest(k, a.Axes, sq, same)
	case graph.ReduceLogSum:
		return floatSumNest(k, a.Axes, id, func(acc Expr, _ int) Expr { return Libm("log", acc) })
	case graph.ReduceLogSumExp:
		// max + log Σ exp(x − max): no overflow where Σ exp(x) would leave float32.
		return reduceLoops(k, a.Axes, func(each func(func(v Expr) Stmt) Stmt, store func(Expr) Stmt, _ int) Stmt {
			return Scalar("mx", F32, func(mx *Buffer) Stmt {
				return Scalar("acc", F32, func(acc *Buffer) Stmt {
					return Block(
						Put(mx, F(float32(math.Inf(-1)))),
						each(func(v Expr) Stmt { return Put(mx, Max(At(mx), v)) }),
						Put(acc, F(0)),
						each(func(v Expr) Stmt { return Put(acc, Add(At(acc), Call(IntrExp, F32, Sub(v, At(mx))))) }),
						store(Add(Libm("log", At(acc)), At(mx))),
					)
				})
			})
		})
	}
	return nil, k.errorf("unknown reduction %q", a.Kind)
}

// reducedCount is how many input elements fold into each output.
func reducedCount(shape, axes []int) (int, error) {
	red, err := reducedAxesOf(len(shape), axes)
	if err != nil {
		return 0, err
	}
	cnt := 1
	for i, d := range shape {
		if red[i] {
			cnt *= d
		}
	}
	return cnt, nil
}

func reducedAxesOf(rank int, axes []int) ([]bool, error) {
	red := make([]bool, rank)
	if len(axes) == 0 { // no axes: all of them, as graph.InferShapes reads it
		for i := range red {
			red[i] = true
		}
	}
	for _, ax := range axes {
		if ax < 0 {
			ax += rank
		}
		if ax < 0 || ax >= rank {
			return nil, fmt.Errorf("axis %d out of range", ax)
		}
		red[ax] = true
	}
	return red, nil
}

// reduceNest loops over the kept axes of the input; for each output element
// an accumulator of type accT starts at init, takes step(acc, x) for every
// element of the reduced axes in order, and fin(acc, count) is stored.
func reduceNest(k *kctx, axes []int, accT DType, init Expr, step func(acc, v Expr) Expr, fin func(acc Expr, cnt int) Expr) (Stmt, error) {
	return reduceLoops(k, axes, func(each func(func(v Expr) Stmt) Stmt, store func(Expr) Stmt, cnt int) Stmt {
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			return Block(Put(acc, init), each(func(v Expr) Stmt { return Put(acc, step(At(acc), v)) }), store(fin(At(acc), cnt)))
		})
	})
}

// floatSumNest is reduceNest for a float sum of term(x): compensated
// (Kahan) summation, the rounding error of each addition carried into the
// next, so a sum of n float32 terms is off by about one rounding rather
// than n (a 6,480-term ONNX loss's mean was 1e-5 off in C, against
// graph/interp's float64 sum). Four float operations a term where one
// was: the reductions are rarely where a model spends its time. gcc keeps
// the compensation without -ffast-math (and the generated C asks for none).
func floatSumNest(k *kctx, axes []int, term func(v Expr) Expr, fin func(acc Expr, cnt int) Expr) (Stmt, error) {
	return reduceLoops(k, axes, func(each func(func(v Expr) Stmt) Stmt, store func(Expr) Stmt, cnt int) Stmt {
		return Scalar("acc", F32, func(acc *Buffer) Stmt {
			return Scalar("comp", F32, func(comp *Buffer) Stmt {
				add := each(func(v Expr) Stmt {
					// The term is a statement of its own: C contracts only
					// within an expression, and clang made x*x - comp one
					// fused multiply-subtract, which graph/interp (and gcc
					// in ISO C mode) round as two (review finding).
					return Let("term", term(v), func(tv Expr) Stmt {
						return Let("y", Sub(tv, At(comp)), func(y Expr) Stmt {
							return Let("t", Add(At(acc), y), func(t Expr) Stmt {
								return kahanStep(acc, comp, y, t)
							})
						})
					})
				})
				return Block(Put(acc, F(0)), Put(comp, F(0)), add, store(fin(At(acc), cnt)))
			})
		})
	})
}

// kahanStep stores a compensated sum's new total t (= acc + y) and the
// rounding error it left, (t - acc) - y. An infinite term makes that NaN
// (Inf - Inf), and a total that overflows from finite terms makes it
// infinite; either, kept, the next terms would carry into the sum as NaN:
// sums of [Inf, 1] and of [3e38, 3e38, 0] came out NaN, where float's are
// Inf. An error that is not finite (e - e is then NaN, not 0) is dropped;
// a NaN sum stays NaN.
func kahanStep(acc, comp *Buffer, y, t Expr) Stmt {
	return Let("e", Sub(Sub(t, At(acc)), y), func(e Expr) Stmt {
		return Block(Put(comp, Sel(NE(Sub(e, e), F(0)), F(0), e)), Put(acc, t))
	})
}

// reduceLoops loops over the kept axes of the input and builds each output
// element's code with body: each(f) is a loop over the element's reduced
// inputs (f of the loaded value, widened as ld does), store(v) writes it.
func reduceLoops(k *kctx, axes []int, body func(each func(func(v Expr) Stmt) Stmt, store func(Expr) Stmt, cnt int) Stmt) (Stmt, error) {
	xt := k.g.In(k.n, 0)
	x := k.in(0)
	y, _ := k.output()
	rank := len(xt.Shape)
	red, err := reducedAxesOf(rank, axes)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	var keep, rdims []int
	for i, d := range xt.Shape {
		if red[i] {
			rdims = append(rdims, d)
		} else {
			keep = append(keep, d)
		}
	}
	cnt := graph.NumElements(rdims)
	viewAs(y, append([]int{1}, keep...))
	kn := make([]string, len(keep))
	rn := make([]string, len(rdims))
	for i := range kn {
		kn[i] = "i" + string(rune('0'+i))
	}
	for i := range rn {
		rn[i] = "r" + string(rune('0'+i))
	}
	return Loops(kn, keep, func(o []Expr) Stmt {
		oo := append([]Expr{}, o...)
		each := func(f func(v Expr) Stmt) Stmt {
			return Loops(rn, rdims, func(r []Expr) Stmt {
				idx := make([]Expr, rank)
				ki, ri := 0, 0
				for i := range idx {
					if red[i] {
						idx[i] = r[ri]
						ri++
					} else {
						idx[i] = oo[ki]
						ki++
					}
				}
				return f(ld(x, idx...))
			})
		}
		store := func(v Expr) Stmt { return Put(y, v, append([]Expr{C(0)}, oo...)...) }
		return body(each, store, cnt)
	}), nil
}

// intSum is TFLite Micro's int8 and int16 SUM (graph/interp's intSum): the stored
// values summed, less zx·count, wrapped to int32 (TFLite Micro sums in
// int32), requantized by s_x/s_y.
func intSum(k *kctx, xt, yt *graph.Tensor, axes []int) (Stmt, error) {
	q, err := k.meanOrSum(xt, yt, axes)
	if err != nil {
		return nil, err
	}
	cnt, zx, zy := q.cnt, q.zx, q.zy
	m, s := qmath.RescaleMultiplier(q.sx, q.sy)
	return reduceNest(k, axes, I64, Imm(I64, 0), func(acc, v Expr) Expr { return Add(acc, CastTo(I64, v)) }, func(acc Expr, _ int) Expr {
		shifted := CastTo(I32, Sub(acc, Imm(I64, int64(zx)*int64(cnt))))
		v := Add(Requant(shifted, C(int64(m)), C(int64(s))), C(int64(zy)))
		lo, hi := yt.DType.Range()
		return CastTo(yt.DType, Clamp(v, C(lo), C(hi)))
	})
}

// intLogSoftmax is TFLite Micro's int8 LOG_SOFTMAX over the last axis
// (qmath.LogSoftmaxParams): the rescaled differences and their exponentials
// are tables over the 256 possible differences to the row maximum, the
// logarithm of their sum a fixed-point helper (IntrLogQ).
func intLogSoftmax(k *kctx, x, y *Buffer, xt, yt *graph.Tensor, a *graph.SoftmaxAttrs) (Stmt, error) {
	if err := interp.LogSoftmaxInt8OK(xt, yt, a); err != nil {
		return nil, k.errorf("%v", err)
	}
	sIn, _, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	p := qmath.NewLogSoftmaxParams(sIn)
	scaled, terms := make([]int64, 256), make([]int64, 256)
	for d := range 256 {
		diff := int32(-d)
		scaled[d] = int64(qmath.MultiplyByQuantizedMultiplier(diff, p.InMult, p.InLeftShift))
		if diff >= p.DiffMin {
			terms[d] = int64(qmath.RoundingDivideByPOT(qmath.ExpOnNegativeValues(int32(scaled[d]), 5), 12))
		}
	}
	scaledT := constBuf(k.n.Name+"_scaled", I32, []int{256}, scaled)
	termT := constBuf(k.n.Name+"_exp_acc", I32, []int{256}, terms)
	depth := xt.Shape[len(xt.Shape)-1]
	outer := xt.NumElements() / depth
	viewAs(x, []int{outer, depth})
	viewAs(y, []int{outer, depth})
	k.f.Op = "log_softmax"
	return Loop("r", outer, func(r Expr) Stmt {
		return Scalar("mx", I32, func(mx *Buffer) Stmt {
			return Scalar("sum", I32, func(sum *Buffer) Stmt {
				diff := func(c Expr) Expr { return Sub(At(mx), ld(x, r, c)) } // >= 0: the table index
				return Block(
					Put(mx, C(-128)),
					Loop("c", depth, func(c Expr) Stmt { return Put(mx, Max(At(mx), ld(x, r, c))) }),
					Put(sum, C(0)),
					Loop("c", depth, func(c Expr) Stmt { return Put(sum, Add(At(sum), At(termT, diff(c)))) }),
					Let("lg", Call(IntrLogQ, I32, At(sum)), func(lg Expr) Stmt {
						// L − 2^31 does not wrap: L >= 0 (the sum is at least 1).
						adj := Max(C(int64(p.DiffMin)-1), Requant(Add(lg, C(math.MinInt32)), C(int64(p.ReverseMult)), C(int64(p.ReverseShift))))
						return Let("adj", adj, func(adj Expr) Stmt {
							return Loop("c", depth, func(c Expr) Stmt {
								d := Sub(ld(x, r, c), At(mx))
								v := Add(Call(IntrRDivPOT, I32, CastTo(I32, Sub(CastTo(I64, At(scaledT, diff(c))), CastTo(I64, lg))), C(22)), C(127))
								return Put(y, CastTo(I8, Sel(GT(d, adj), Clamp(v, C(-128), C(127)), C(-128))), r, c)
							})
						})
					}),
				)
			})
		})
	}), nil
}

// computeL2Normalize is TFLite's int8 L2_NORMALIZATION over the last axis
// (qmath.L2NormalizeInt8): per row the sum of squares of x less its zero
// point, its inverse square root as a multiplier and shift (two helpers),
// then each value requantized by them with 7 more bits.
func computeL2Normalize(k *kctx) (Stmt, error) {
	xt := k.g.In(k.n, 0)
	y, yt := k.output()
	if err := interp.L2NormalizeInt8OK(xt, yt); err != nil {
		return nil, k.errorf("%v", err)
	}
	_, zx, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	x := k.in(0)
	depth := xt.Shape[len(xt.Shape)-1]
	outer := xt.NumElements() / depth
	viewAs(x, []int{outer, depth})
	viewAs(y, []int{outer, depth})
	k.f.Op = "l2_normalize"
	v := func(r, c Expr) Expr { return Add(ld(x, r, c), C(-int64(zx))) }
	return Loop("r", outer, func(r Expr) Stmt {
		return Scalar("acc", I32, func(acc *Buffer) Stmt {
			return Block(
				Put(acc, C(0)),
				Loop("c", depth, func(c Expr) Stmt {
					return Let("d", v(r, c), func(d Expr) Stmt { return Put(acc, Add(At(acc), Mul(d, d))) })
				}),
				Let("m", Call(IntrInvSqrtMult, I32, At(acc)), func(m Expr) Stmt {
					return Let("sh", Add(Call(IntrInvSqrtShift, I32, At(acc)), C(7)), func(sh Expr) Stmt {
						return Loop("c", depth, func(c Expr) Stmt {
							return Put(y, CastTo(I8, Clamp(Requant(v(r, c), m, sh), C(-128), C(127))), r, c)
						})
					})
				}),
			)
		})
	}), nil
}

// meanOrSumParams are what TFLite's QuantizedMeanOrSum reads: the count
// folded into each output and both tensors' scales and zero points.
type meanOrSumParams struct {
	cnt    int
	sx, sy float32
	zx, zy int32
}

func (k *kctx) meanOrSum(xt, yt *graph.Tensor, axes []int) (meanOrSumParams, error) {
	var q meanOrSumParams
	var err error
	if q.cnt, err = reducedCount(xt.Shape, axes); err != nil {
		return q, k.errorf("%v", err)
	}
	if q.sx, q.zx, err = quantParams(xt); err != nil {
		return q, k.errorf("%v", err)
	}
	if q.sy, q.zy, err = quantParams(yt); err != nil {
		return q, k.errorf("%v", err)
	}
	return q, nil
}
