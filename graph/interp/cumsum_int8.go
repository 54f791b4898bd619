package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// cumSumInt8 is TFLite Micro's int8 CUMSUM (reference/cumsum.h), step for
// step: each line's int32 sum starts at the rescaled input offset
// (qmath.SumInt8Params.Start, the stray −z_x), each value is rescaled
// before it is added, and each output is the sum (or, exclusive, the sum
// before its own value) rescaled to the output.
func cumSumInt8(g *graph.Graph, n *graph.Node, a graph.CumSumAttrs, x *graph.Data) ([]*graph.Data, error) {
	xt, yt := g.In(n, 0), g.Out(n, 0)
	if !a.TFLiteInt8 {
		return nil, fmt.Errorf("quantized CumSum is TFLite Micro's int8 kernel only (TFLiteInt8)")
	}
	if xt == nil || yt == nil || xt.DType != graph.Int8 || yt.DType != graph.Int8 || !sumInt8PerTensor(xt) || !sumInt8PerTensor(yt) {
		return nil, fmt.Errorf("int8 CumSum needs int8 input and output with one scale and zero point each")
	}
	sx, zx := qparams(xt)
	sy, zy := qparams(yt)
	p, err := qmath.SumInt8ParamsFor("CUMSUM", sx, zx, sy, zy)
	if err != nil {
		return nil, err
	}
	ax, err := normAxis(a.Axis, len(x.Shape))
	if err != nil {
		return nil, err
	}
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if y.Len() != x.Len() {
		return nil, fmt.Errorf("output %v differs from input %v", y.Shape, x.Shape)
	}
	cumLines(x.Shape, ax, a.Reverse, func(at []int) {
		acc := p.Start()
		for _, at := range at {
			out := acc
			acc += p.Scaled(int32(x.I[at])) // int32: wraps, as on TFLite Micro's targets
			if !a.Exclusive {
				out = acc
			}
			y.I[at] = int64(p.Out(out))
		}
	})
	return []*graph.Data{y}, nil
}

// sumInt8PerTensor reports whether t has exactly one scale and zero point.
func sumInt8PerTensor(t *graph.Tensor) bool {
	return t.Quant != nil && len(t.Quant.Scale) == 1 && len(t.Quant.ZeroPoint) <= 1
}
