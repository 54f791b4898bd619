package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.ConvTranspose2D, FloatClass, convTranspose)
	Register(graph.ConvTranspose2D, IntClass, convTranspose)
}

// convTranspose is the transposed convolution as a scatter: every input
// pixel times every tap adds into output (ih·s + kh·d − pad, ...), the
// way TFLite's reference TRANSPOSE_CONV and ONNX's definition describe it.
// Float sums are kept in float64; integer ones in int64 (x − zx)·(w − zw),
// then bias and TFLite's per-channel requantization.
func convTranspose(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.ConvTransposeAttrs)
	if !ok || a == nil {
		return nil, fmt.Errorf("needs ConvTransposeAttrs")
	}
	if len(ins) < 2 || ins[0] == nil || ins[1] == nil {
		return nil, fmt.Errorf("needs an input and weights")
	}
	x, w := ins[0], ins[1]
	var b *graph.Data
	if len(ins) > 2 {
		b = ins[2]
	}
	xt, wt, yt := g.In(n, 0), g.In(n, 1), g.Out(n, 0)
	isF := x.DType == graph.Float32
	if isF != (w.DType == graph.Float32) {
		return nil, fmt.Errorf("input %s and weights %s", x.DType, w.DType)
	}
	y, err := outAny(g, n, isF)
	if err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 || len(w.Shape) != 4 || len(y.Shape) != 4 {
		return nil, fmt.Errorf("input %v, weights %v and output %v must be 4-D", x.Shape, w.Shape, y.Shape)
	}
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	CO, KH, KW, CG := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	OH, OW := y.Shape[1], y.Shape[2]
	G := max(a.Group, 1)
	if C != CG*G || CO%G != 0 || y.Shape[3] != CO || y.Shape[0] != N {
		return nil, fmt.Errorf("shapes do not agree: input %v, weights %v, group %d, output %v", x.Shape, w.Shape, G, y.Shape)
	}
	sh, sw := max(a.Stride[0], 1), max(a.Stride[1], 1)
	dh, dw := max(a.Dilation[0], 1), max(a.Dilation[1], 1)
	if OH != graph.ConvTransposeOut(H, KH, sh, dh, a.Pad.Top, a.Pad.Bottom, a.OutPad[0]) ||
		OW != graph.ConvTransposeOut(W, KW, sw, dw, a.Pad.Left, a.Pad.Right, a.OutPad[1]) {
		return nil, fmt.Errorf("output %v does not match input %v", y.Shape, x.Shape)
	}
	if b != nil && b.Len() != CO {
		return nil, fmt.Errorf("bias has %d values for %d channels", b.Len(), CO)
	}
	perG := CO / G
	facc := make([]float64, y.Len())
	iacc := make([]int64, y.Len())
	var zx int32
	if !isF {
		_, zx = qparams(xt)
	}
	for nb := 0; nb < N; nb++ {
		for iy := 0; iy < H; iy++ {
			for ix := 0; ix < W; ix++ {
				for ci := 0; ci < C; ci++ {
					xi := ((nb*H+iy)*W+ix)*C + ci
					gi := ci / CG
					for ky := 0; ky < KH; ky++ {
						oy := iy*sh + ky*dh - a.Pad.Top
						if oy < 0 || oy >= OH {
							continue
						}
						for kx := 0; kx < KW; kx++ {
							ox := ix*sw + kx*dw - a.Pad.Left
							if ox < 0 || ox >= OW {
								continue
							}
							for o := 0; o < perG; o++ {
								oc := gi*perG + o
								yi := ((nb*OH+oy)*OW+ox)*CO + oc
								wi := ((oc*KH+ky)*KW+kx)*CG + ci%CG
								if isF {
									facc[yi] += float64(x.F[xi]) * float64(w.F[wi])
								} else {
									iacc[yi] += (x.I[xi] - int64(zx)) * (w.I[wi] - int64(zeroPoint(wt, oc)))
								}
							}
						}
					}
				}
			}
		}
	}
	if isF {
		act, err := actFunc(a.Act)
		if err != nil {
			return nil, err
		}
		for i := range y.F {
			v := facc[i]
			if b != nil {
				v += float64(b.F[i%CO])
			}
			y.F[i] = float32(act(v))
		}
		return []*graph.Data{y}, nil
	}
	rq := newRequantizer(xt, wt, yt, CO, a.Act, graph.RequantFixedPoint, false)
	if err := check16x8(xt, yt); err != nil {
		return nil, err
	}
	wide := Wide16x8(g, n)
	if err := rq.check64(wide); err != nil {
		return nil, err
	}
	for i := range y.I {
		acc := iacc[i]
		if b != nil {
			acc += b.I[i%CO]
		}
		if wide {
			y.I[i] = rq.apply64(i%CO, acc)
		} else {
			y.I[i] = rq.apply(i%CO, int32(acc))
		}
	}
	return []*graph.Data{y}, nil
}
