package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.MaxPoolIndices, computeMaxPoolIndices) }

// computeMaxPoolIndices: ONNX MaxPool's Indices (graph.MaxPoolIndices).
// The kernel walks NHWC as computePool does; per output element it keeps
// the best value and its flat index into the input read as NCHW: the
// plane's base (n·C + c)·H·W plus h·W + w (row major) or w·H + h (column
// major). The first in-image tap is taken, a later one only if strictly
// greater; a window wholly in the padding stores 0. Float32 only.
func computeMaxPoolIndices(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.MaxPoolIndicesAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.MaxPoolIndicesAttrs")
	}
	xt := k.g.In(k.n, 0)
	if xt == nil || len(xt.Shape) != 4 {
		return nil, k.errorf("needs a 4-D input")
	}
	if xt.DType != graph.Float32 {
		return nil, k.errorf("%s input: max pool indices are float32 only", xt.DType)
	}
	y, yt := k.output()
	if yt.DType != I64 || len(yt.Shape) != 4 {
		return nil, k.errorf("indices output %s%v, want 4-D int64", yt.DType, yt.Shape)
	}
	x := k.in(0)
	N, H, W, Cc := xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	OH, OW := yt.Shape[1], yt.Shape[2]
	KH, KW := a.Kernel[0], a.Kernel[1]
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	// Steps of the flat index along h and w.
	hStep, wStep := int64(W), int64(1)
	if a.ColumnMajor {
		hStep, wStep = 1, int64(H)
	}
	k.f.Op = "max_pool_indices"
	return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
		n, oh, ow, c := o[0], o[1], o[2], o[3]
		ih0 := Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top)))
		iw0 := Sub(Mul(ow, C(int64(sw))), C(int64(a.Pad.Left)))
		base := Mul(Add(Mul(n, C(int64(Cc))), c), C(int64(H*W)))
		return Scalar("best", F32, func(best *Buffer) Stmt {
			return Scalar("at", I32, func(at *Buffer) Stmt {
				scan := Loops([]string{"kh", "kw"}, []int{KH, KW}, func(r []Expr) Stmt {
					ih := Add(ih0, Mul(r[0], C(int64(dh))))
					iw := Add(iw0, Mul(r[1], C(int64(dw))))
					inside := AllOf(GE(ih, C(0)), LT(ih, C(int64(H))), GE(iw, C(0)), LT(iw, C(int64(W))))
					return If(inside, Let("v", ld(x, n, ih, iw, c), func(v Expr) Stmt {
						take := Or(LT(At(at), C(0)), GT(v, At(best)))
						flat := Add(base, Add(Mul(ih, C(hStep)), Mul(iw, C(wStep))))
						return If(take, Block(Put(best, v), Put(at, flat)))
					}))
				})
				return Block(
					Put(best, F(0)),
					Put(at, C(-1)),
					scan,
					Put(y, CastTo(I64, Max(At(at), C(0))), n, oh, ow, c),
				)
			})
		})
	}), nil
}
