package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.MaxPoolIndices, FloatClass, maxPoolIndices)
}

// maxPoolIndices is ONNX MaxPool's Indices output (graph.MaxPoolIndices).
// It works in ONNX's layout, independently of tir's NHWC walk: the input
// is copied to NCHW, each window is scanned there with its flat NCHW
// index, and the chosen index is then rewritten column major if asked
// (split into n·c, h and w, and put back together as n·c·H·W + w·H + h).
func maxPoolIndices(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.MaxPoolIndicesAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("max pool indices have no attributes (*graph.MaxPoolIndicesAttrs)")
	}
	x, err := floatIn(ins, 0, "input")
	if err != nil {
		return nil, err
	}
	pw, err := poolWindowOf(a.Window(), x.Shape)
	if err != nil {
		return nil, err
	}
	N, H, W, C, KH, KW, sh, sw, dh, dw, p := pw.n, pw.h, pw.w, pw.c, pw.kh, pw.kw, pw.sh, pw.sw, pw.dh, pw.dw, pw.pad
	yt := g.Out(n, 0)
	if yt == nil {
		return nil, fmt.Errorf("no output tensor")
	}
	if yt.DType != graph.Int64 {
		return nil, fmt.Errorf("indices output dtype %s, want int64", yt.DType)
	}
	ys := yt.Shape
	if len(ys) != 4 || ys[0] != N || ys[3] != C ||
		!poolOutOK(ys[1], H, p.Top, p.Bottom, KH, sh, dh) || !poolOutOK(ys[2], W, p.Left, p.Right, KW, sw, dw) {
		return nil, fmt.Errorf("indices shape %v does not follow from input %v, kernel %v, stride %v, dilation %v, padding %+v",
			ys, x.Shape, a.Kernel, a.Stride, a.Dilation, p)
	}
	OH, OW := ys[1], ys[2]
	// The input in ONNX's layout: nchw[((b·C + c)·H + h)·W + w].
	nchw := make([]float32, len(x.F))
	for b := 0; b < N; b++ {
		for h := 0; h < H; h++ {
			for w := 0; w < W; w++ {
				for c := 0; c < C; c++ {
					nchw[((b*C+c)*H+h)*W+w] = x.F[((b*H+h)*W+w)*C+c]
				}
			}
		}
	}
	y := graph.NewData(graph.Int64, ys)
	for plane := 0; plane < N*C; plane++ {
		base := plane * H * W
		b, c := plane/C, plane%C
		for oy := 0; oy < OH; oy++ {
			for ox := 0; ox < OW; ox++ {
				at := -1
				for ky := 0; ky < KH; ky++ {
					h := oy*sh - p.Top + ky*dh
					if h < 0 || h >= H {
						continue
					}
					for kx := 0; kx < KW; kx++ {
						w := ox*sw - p.Left + kx*dw
						if w < 0 || w >= W {
							continue
						}
						if i := base + h*W + w; at < 0 || nchw[i] > nchw[at] {
							at = i
						}
					}
				}
				idx := int64(0) // a window wholly in the padding (ONNX's reference leaves 0)
				if at >= 0 {
					idx = int64(at)
					if a.ColumnMajor {
						h, w := (at-base)/W, (at-base)%W
						idx = int64(base + w*H + h)
					}
				}
				y.I[((b*OH+oy)*OW+ox)*C+c] = idx
			}
		}
	}
	return []*graph.Data{y}, nil
}
