package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Conv2D, IntClass, intConv2D)
	Register(graph.FullyConnected, IntClass, intFullyConnected)
	Register(graph.BatchMatMul, IntClass, intBatchMatMul)
}

// intConv2D is TFLite's per-channel integer convolution (also grouped and
// depthwise): acc = bias[c] + sum (x - zx) * (w - zw[c]), then requantized.
// Padded positions contribute nothing, as if they held the input zero point.
func intConv2D(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.Conv2DAttrs)
	if !ok {
		return nil, fmt.Errorf("needs Conv2DAttrs")
	}
	if err := needInts(ins, 0, 1); err != nil {
		return nil, err
	}
	x, w := ins[0], ins[1]
	var b *graph.Data
	if len(ins) > 2 {
		b = ins[2]
	}
	xt, wt := g.In(n, 0), g.In(n, 1)
	y, yt, err := outData(g, n, 0)
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
	if b != nil && b.Len() != CO {
		return nil, fmt.Errorf("bias has %d values for %d channels", b.Len(), CO)
	}
	sh, sw := max(a.Stride[0], 1), max(a.Stride[1], 1)
	dh, dw := max(a.Dilation[0], 1), max(a.Dilation[1], 1)
	if OH != windowOut(H, KH, sh, dh, a.Pad.Top, a.Pad.Bottom) || OW != windowOut(W, KW, sw, dw, a.Pad.Left, a.Pad.Right) {
		return nil, fmt.Errorf("output %v does not match the window over input %v", y.Shape, x.Shape)
	}
	if err := check16x8(xt, yt); err != nil {
		return nil, err
	}
	wide := Wide16x8(g, n)
	_, zx := qparams(xt)
	rq := newRequantizer(xt, wt, yt, CO, a.Act, a.Requant, false)
	if err := rq.check64(wide); err != nil {
		return nil, err
	}
	perG := CO / G
	for nb := 0; nb < N; nb++ {
		for oy := 0; oy < OH; oy++ {
			for ox := 0; ox < OW; ox++ {
				for oc := 0; oc < CO; oc++ {
					zw := int64(zeroPoint(wt, oc))
					c0 := (oc / perG) * CG
					var acc int64
					for ky := 0; ky < KH; ky++ {
						iy := oy*sh - a.Pad.Top + ky*dh
						if iy < 0 || iy >= H {
							continue
						}
						for kx := 0; kx < KW; kx++ {
							ix := ox*sw - a.Pad.Left + kx*dw
							if ix < 0 || ix >= W {
								continue
							}
							xo := ((nb*H+iy)*W+ix)*C + c0
							wo := ((oc*KH+ky)*KW + kx) * CG
							for ic := 0; ic < CG; ic++ {
								acc += (x.I[xo+ic] - int64(zx)) * (w.I[wo+ic] - zw)
							}
						}
					}
					if b != nil {
						acc += b.I[oc]
					}
					if wide {
						y.I[((nb*OH+oy)*OW+ox)*CO+oc] = rq.apply64(oc, acc)
					} else {
						y.I[((nb*OH+oy)*OW+ox)*CO+oc] = rq.apply(oc, int32(acc))
					}
				}
			}
		}
	}
	return []*graph.Data{y}, nil
}

// intFullyConnected is TFLite's integer fully connected layer:
// acc = bias[n] + sum_k (x - zx) * (w[n,k] - zw[n]), then requantized.
func intFullyConnected(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _ := n.Attrs.(*graph.FullyConnectedAttrs)
	if a == nil {
		a = &graph.FullyConnectedAttrs{}
	}
	if err := needInts(ins, 0, 1); err != nil {
		return nil, err
	}
	x, w := ins[0], ins[1]
	var b *graph.Data
	if len(ins) > 2 {
		b = ins[2]
	}
	xt, wt := g.In(n, 0), g.In(n, 1)
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if len(w.Shape) != 2 {
		return nil, fmt.Errorf("weights %v must be [N,K]", w.Shape)
	}
	N, K := w.Shape[0], w.Shape[1]
	if K == 0 || x.Len()%K != 0 || y.Len() != x.Len()/K*N {
		return nil, fmt.Errorf("input %v, weights %v and output %v do not agree", x.Shape, w.Shape, y.Shape)
	}
	if b != nil && b.Len() != N {
		return nil, fmt.Errorf("bias has %d values for %d outputs", b.Len(), N)
	}
	if err := check16x8(xt, yt); err != nil {
		return nil, err
	}
	wide := Wide16x8(g, n)
	_, zx := qparams(xt)
	rq := newRequantizer(xt, wt, yt, N, a.Act, a.Requant, true)
	if err := rq.check64(wide); err != nil {
		return nil, err
	}
	rows := x.Len() / K
	for r := 0; r < rows; r++ {
		for o := 0; o < N; o++ {
			zw := int64(zeroPoint(wt, o))
			var acc int64
			for k := 0; k < K; k++ {
				acc += (x.I[r*K+k] - int64(zx)) * (w.I[o*K+k] - zw)
			}
			if b != nil {
				acc += b.I[o]
			}
			if wide {
				y.I[r*N+o] = rq.apply64(o, acc)
			} else {
				y.I[r*N+o] = rq.apply(o, int32(acc))
			}
		}
	}
	return []*graph.Data{y}, nil
}

// intBatchMatMul is TFLite's integer batch matmul (and ONNX's QLinearMatMul /
// MatMulInteger): acc = sum_k (a - za) * (b - zb), broadcasting batch dims.
// B may be quantized per axis along its last (column) dimension.
func intBatchMatMul(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	at, _ := n.Attrs.(*graph.BatchMatMulAttrs)
	if at == nil {
		at = &graph.BatchMatMulAttrs{}
	}
	if err := needInts(ins, 0, 1); err != nil {
		return nil, err
	}
	A, B := ins[0], ins[1]
	xt, wt := g.In(n, 0), g.In(n, 1)
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	// int16 operands: TFLite Micro's 16x8 BATCH_MATMUL (EvalInt16), a
	// 64-bit accumulator requantized by the int64 overload (bmm16.go).
	wide, err := batchMatMul16(g, n, xt, wt, yt)
	if err != nil {
		return nil, err
	}
	ra, rb := len(A.Shape), len(B.Shape)
	if ra < 2 || rb < 2 || len(y.Shape) < 2 {
		return nil, fmt.Errorf("inputs %v, %v must have rank >= 2", A.Shape, B.Shape)
	}
	M, K := A.Shape[ra-2], A.Shape[ra-1]
	if at.AdjX {
		M, K = K, M
	}
	K2, N := B.Shape[rb-2], B.Shape[rb-1]
	if at.AdjY {
		K2, N = N, K2
	}
	if K != K2 || y.Shape[len(y.Shape)-2] != M || y.Shape[len(y.Shape)-1] != N {
		return nil, fmt.Errorf("shapes %v x %v -> %v do not agree", A.Shape, B.Shape, y.Shape)
	}
	batchShape := y.Shape[:len(y.Shape)-2]
	batches := graph.NumElements(batchShape)
	_, za := qparams(xt)
	// Per-column zero points and scales of B (its column axis).
	colAxis := rb - 1
	if at.AdjY {
		colAxis = rb - 2
	}
	perCol := wt != nil && wt.Quant.PerAxis() && wt.Quant.Axis == colAxis
	zb := func(col int) int64 {
		if perCol {
			return int64(zeroPoint(wt, col))
		}
		return int64(zeroPoint(wt, 0))
	}
	channels := 1
	if perCol {
		channels = N
	}
	rq := newRequantizer(xt, wt, yt, channels, graph.ActNone, at.Requant, true)
	if err := rq.check64(wide); err != nil {
		return nil, err
	}
	for bi := 0; bi < batches; bi++ {
		ab := broadcastIndex(bi, batchShape, A.Shape[:ra-2]) * M * K
		bb := broadcastIndex(bi, batchShape, B.Shape[:rb-2]) * K * N
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				var acc int64
				for k := 0; k < K; k++ {
					ai := ab + i*K + k
					if at.AdjX {
						ai = ab + k*M + i
					}
					bj := bb + k*N + j
					if at.AdjY {
						bj = bb + j*K + k
					}
					acc += (A.I[ai] - int64(za)) * (B.I[bj] - zb(j))
				}
				c := 0
				if perCol {
					c = j
				}
				if wide {
					y.I[(bi*M+i)*N+j] = rq.apply64(c, acc)
				} else {
					y.I[(bi*M+i)*N+j] = rq.apply(c, int32(acc))
				}
			}
		}
	}
	return []*graph.Data{y}, nil
}
