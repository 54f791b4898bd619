package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Conv2D, FloatClass, floatConv2D)
	Register(graph.FullyConnected, FloatClass, floatFullyConnected)
	Register(graph.BatchMatMul, FloatClass, floatBatchMatMul)
}

// convOutSize is the output length of a convolution or floor-mode pool along one axis.
func convOutSize(in, padBefore, padAfter, k, stride, dil int) int {
	eff := dil*(k-1) + 1
	span := in + padBefore + padAfter - eff
	if span < 0 {
		return 0
	}
	return span/stride + 1
}

// floatConv2D is ONNX Conv on NHWC: X [N,H,W,Cin], W [Cout,KH,KW,Cin/G],
// optional B [Cout]. Sums accumulate in float64 and are rounded once.
func floatConv2D(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.Conv2DAttrs](n)
	if err != nil {
		return nil, err
	}
	x, err := floatIn(ins, 0, "input")
	if err != nil {
		return nil, err
	}
	w, err := floatIn(ins, 1, "weights")
	if err != nil {
		return nil, err
	}
	b, err := optFloatIn(ins, 2, "bias")
	if err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("conv input %v is not 4-D NHWC", x.Shape)
	}
	if len(w.Shape) != 4 {
		return nil, fmt.Errorf("conv weights %v are not 4-D [Cout,KH,KW,Cin/group]", w.Shape)
	}
	N, H, W, Cin := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	Cout, KH, KW, Cg := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	if KH <= 0 || KW <= 0 {
		return nil, fmt.Errorf("conv weights %v have an empty kernel", w.Shape)
	}
	group := pos1(a.Group)
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	if group < 0 || sh < 0 || sw < 0 || dh < 0 || dw < 0 {
		return nil, fmt.Errorf("conv stride %v, dilation %v and group %d must be positive", a.Stride, a.Dilation, a.Group)
	}
	if Cin%group != 0 || Cout%group != 0 || Cg*group != Cin {
		return nil, fmt.Errorf("conv weights %v do not match %d input channels with group %d", w.Shape, Cin, group)
	}
	if b != nil && (len(b.Shape) != 1 || b.Shape[0] != Cout) {
		return nil, fmt.Errorf("conv bias %v does not match %d output channels", b.Shape, Cout)
	}
	p := a.Pad
	if p.Top < 0 || p.Left < 0 || p.Bottom < 0 || p.Right < 0 {
		return nil, fmt.Errorf("negative conv padding %+v", p)
	}
	act, err := actFunc(a.Act)
	if err != nil {
		return nil, err
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	OH := convOutSize(H, p.Top, p.Bottom, KH, sh, dh)
	OW := convOutSize(W, p.Left, p.Right, KW, sw, dw)
	if want := []int{N, OH, OW, Cout}; !sameShape(out.Shape, want) {
		return nil, fmt.Errorf("conv output shape %v, the attributes give %v", out.Shape, want)
	}
	coPerG := Cout / group
	for nb := 0; nb < N; nb++ {
		for oy := 0; oy < OH; oy++ {
			for ox := 0; ox < OW; ox++ {
				for co := 0; co < Cout; co++ {
					c0 := (co / coPerG) * Cg
					var sum float64
					if b != nil {
						sum = float64(b.F[co])
					}
					for ky := 0; ky < KH; ky++ {
						iy := oy*sh - p.Top + ky*dh
						if iy < 0 || iy >= H {
							continue
						}
						for kx := 0; kx < KW; kx++ {
							ix := ox*sw - p.Left + kx*dw
							if ix < 0 || ix >= W {
								continue
							}
							xo := ((nb*H+iy)*W+ix)*Cin + c0
							wo := ((co*KH+ky)*KW + kx) * Cg
							for c := 0; c < Cg; c++ {
								sum += float64(x.F[xo+c]) * float64(w.F[wo+c])
							}
						}
					}
					out.F[((nb*OH+oy)*OW+ox)*Cout+co] = float32(act(sum))
				}
			}
		}
	}
	return []*graph.Data{out}, nil
}

// floatFullyConnected is Y = X·Wᵀ + B with X flattened to [rows, K], W [N,K].
func floatFullyConnected(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.FullyConnectedAttrs](n)
	if err != nil {
		return nil, err
	}
	x, err := floatIn(ins, 0, "input")
	if err != nil {
		return nil, err
	}
	w, err := floatIn(ins, 1, "weights")
	if err != nil {
		return nil, err
	}
	b, err := optFloatIn(ins, 2, "bias")
	if err != nil {
		return nil, err
	}
	if len(w.Shape) != 2 {
		return nil, fmt.Errorf("fully connected weights %v are not 2-D [N,K]", w.Shape)
	}
	N, K := w.Shape[0], w.Shape[1]
	if K == 0 || len(x.F)%K != 0 {
		return nil, fmt.Errorf("fully connected input %v does not split into rows of K=%d (weights %v)", x.Shape, K, w.Shape)
	}
	if b != nil && len(b.F) != N {
		return nil, fmt.Errorf("fully connected bias %v does not match N=%d", b.Shape, N)
	}
	act, err := actFunc(a.Act)
	if err != nil {
		return nil, err
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	rows := len(x.F) / K
	if len(out.F) != rows*N {
		return nil, fmt.Errorf("fully connected output shape %v, want %d rows of %d", out.Shape, rows, N)
	}
	for r := 0; r < rows; r++ {
		xr := x.F[r*K : (r+1)*K]
		for j := 0; j < N; j++ {
			wr := w.F[j*K : (j+1)*K]
			var sum float64
			if b != nil {
				sum = float64(b.F[j])
			}
			for k := range xr {
				sum += float64(xr[k]) * float64(wr[k])
			}
			out.F[r*N+j] = float32(act(sum))
		}
	}
	return []*graph.Data{out}, nil
}

// floatBatchMatMul is numpy matmul: A [..., M, K] · B [..., K, N] with the
// batch dims broadcast; AdjX/AdjY transpose the last two dims of A/B. A 1-D
// A is a row vector and a 1-D B a column vector, as in numpy.
func floatBatchMatMul(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.BatchMatMulAttrs](n)
	if err != nil {
		return nil, err
	}
	x, err := floatIn(ins, 0, "A")
	if err != nil {
		return nil, err
	}
	y, err := floatIn(ins, 1, "B")
	if err != nil {
		return nil, err
	}
	xs, ys := x.Shape, y.Shape
	if len(xs) == 0 || len(ys) == 0 {
		return nil, fmt.Errorf("matmul of a scalar: A %v, B %v", xs, ys)
	}
	if len(xs) == 1 {
		xs = []int{1, xs[0]}
	}
	if len(ys) == 1 {
		ys = []int{ys[0], 1}
	}
	// Logical (after adjoint) M, K of A and K, N of B, and the strides that
	// address element (i, j) of each logical matrix.
	xr, xc := xs[len(xs)-2], xs[len(xs)-1]
	yr, yc := ys[len(ys)-2], ys[len(ys)-1]
	M, K, xsi, xsk := xr, xc, xc, 1
	if a.AdjX {
		M, K, xsi, xsk = xc, xr, 1, xc
	}
	K2, N, ysk, ysj := yr, yc, yc, 1
	if a.AdjY {
		K2, N, ysk, ysj = yc, yr, 1, yc
	}
	if K != K2 {
		return nil, fmt.Errorf("matmul inner dims differ: A %v (adj %v), B %v (adj %v)", x.Shape, a.AdjX, y.Shape, a.AdjY)
	}
	batch, err := broadcastShapes(xs[:len(xs)-2], ys[:len(ys)-2])
	if err != nil {
		return nil, fmt.Errorf("matmul batch dims: %w", err)
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	nb := graph.NumElements(batch)
	if len(out.F) != nb*M*N {
		return nil, fmt.Errorf("matmul output shape %v, want batch %v x [%d,%d]", out.Shape, batch, M, N)
	}
	xo := broadcastOffsets(xs[:len(xs)-2], batch)
	yo := broadcastOffsets(ys[:len(ys)-2], batch)
	for bi := 0; bi < nb; bi++ {
		xb := xo[bi] * xr * xc
		yb := yo[bi] * yr * yc
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				var sum float64
				for k := 0; k < K; k++ {
					sum += float64(x.F[xb+i*xsi+k*xsk]) * float64(y.F[yb+k*ysk+j*ysj])
				}
				out.F[(bi*M+i)*N+j] = float32(sum)
			}
		}
	}
	return []*graph.Data{out}, nil
}
