package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.MaxPool2D, IntClass, intPool(false))
	Register(graph.AvgPool2D, IntClass, intPool(true))
	Register(graph.Mean, IntClass, intMean)
}

// intPool is TFLite's integer pooling on raw values (input and output share
// their quantization). Average pooling divides the sum by the number of
// in-bounds elements, rounding half away from zero; both clamp to the fused
// activation's range. With CountIncludePad (ONNX's count_include_pad, which
// TFLite lacks) the divisor is the whole window and each padded tap adds
// the input's zero point, the raw value of a real 0: ONNX's float average
// over the zero-padded input, on the raw scale.
func intPool(avg bool) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		a, ok := n.Attrs.(*graph.PoolAttrs)
		if !ok {
			return nil, fmt.Errorf("needs PoolAttrs")
		}
		if err := needInts(ins, 0); err != nil {
			return nil, err
		}
		x := ins[0]
		y, yt, err := outData(g, n, 0)
		if err != nil {
			return nil, err
		}
		if len(x.Shape) != 4 || len(y.Shape) != 4 || x.Shape[3] != y.Shape[3] {
			return nil, fmt.Errorf("input %v and output %v must be 4-D NHWC with equal channels", x.Shape, y.Shape)
		}
		N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
		OH, OW := y.Shape[1], y.Shape[2]
		sh, sw := max(a.Stride[0], 1), max(a.Stride[1], 1)
		dh, dw := max(a.Dilation[0], 1), max(a.Dilation[1], 1)
		if a.Kernel[0] <= 0 || a.Kernel[1] <= 0 || OH != windowOut(H, a.Kernel[0], sh, dh, a.Pad.Top, a.Pad.Bottom) || OW != windowOut(W, a.Kernel[1], sw, dw, a.Pad.Left, a.Pad.Right) {
			return nil, fmt.Errorf("output %v does not match the window over input %v", y.Shape, x.Shape)
		}
		lo, hi := actRange(a.Act, yt)
		var zp int64
		if xt := g.In(n, 0); xt != nil && xt.Quant != nil && len(xt.Quant.ZeroPoint) > 0 {
			zp = int64(xt.Quant.ZeroPoint[0])
		}
		for nb := 0; nb < N; nb++ {
			for oy := 0; oy < OH; oy++ {
				for ox := 0; ox < OW; ox++ {
					for c := 0; c < C; c++ {
						var acc int64
						first := true
						count := 0
						for ky := 0; ky < a.Kernel[0]; ky++ {
							iy := oy*sh - a.Pad.Top + ky*dh
							if iy < 0 || iy >= H {
								continue
							}
							for kx := 0; kx < a.Kernel[1]; kx++ {
								ix := ox*sw - a.Pad.Left + kx*dw
								if ix < 0 || ix >= W {
									continue
								}
								v := x.I[((nb*H+iy)*W+ix)*C+c]
								count++
								switch {
								case avg:
									acc += v
								case first || v > acc:
									acc = v
								}
								first = false
							}
						}
						if avg {
							if a.CountIncludePad {
								all := a.Kernel[0] * a.Kernel[1]
								acc += zp * int64(all-count)
								count = all
							}
							if count == 0 {
								return nil, fmt.Errorf("an output window covers no input")
							}
							cnt := int64(count)
							if acc > 0 {
								acc = (acc + cnt/2) / cnt
							} else {
								acc = (acc - cnt/2) / cnt
							}
						} else if first {
							return nil, fmt.Errorf("an output window covers no input")
						}
						y.I[((nb*OH+oy)*OW+ox)*C+c] = int64(clamp32(int32(acc), lo, hi))
					}
				}
			}
		}
		return []*graph.Data{y}, nil
	}
}

// intMean is TFLite Micro's integer MEAN (QuantizedMeanOrSum): the int32 sum
// over the axes, less zx times the count, rescaled by a multiplier that
// folds in_scale/out_scale and 1/count.
func intMean(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.MeanAttrs)
	if !ok {
		return nil, fmt.Errorf("needs MeanAttrs")
	}
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	xt := g.In(n, 0)
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	reduce := make([]bool, r)
	count := int64(1)
	for _, ax := range a.Axes {
		if ax < 0 {
			ax += r
		}
		if ax < 0 || ax >= r {
			return nil, fmt.Errorf("axis %d out of range for %v", ax, x.Shape)
		}
		if !reduce[ax] {
			reduce[ax] = true
			count *= int64(x.Shape[ax])
		}
	}
	// Output index of every input element: the kept axes, row-major.
	var keptShape []int
	for i, d := range x.Shape {
		if !reduce[i] {
			keptShape = append(keptShape, d)
		}
	}
	if graph.NumElements(keptShape) != y.Len() {
		return nil, fmt.Errorf("output %v does not hold the reduction of %v over %v", y.Shape, x.Shape, a.Axes)
	}
	sums := make([]int64, y.Len())
	strides := graph.Strides(x.Shape)
	for i, v := range x.I {
		o, rem := 0, i
		for d := 0; d < r; d++ {
			c := rem / strides[d]
			rem %= strides[d]
			if !reduce[d] {
				o = o*x.Shape[d] + c
			}
		}
		sums[o] += v
	}
	sx, zx := qparams(xt)
	sy, zy := qparams(yt)
	m, s := qmath.MeanMultiplier(sx, sy, count)
	lo, hi := dtypeRange(yt.DType)
	for i, sum := range sums {
		v := qmath.MultiplyByQuantizedMultiplier(int32(sum-int64(zx)*count), m, s) + zy
		y.I[i] = int64(clamp32(v, lo, hi))
	}
	return []*graph.Data{y}, nil
}
