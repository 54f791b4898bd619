package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.Quantize, FloatClass, quantizeFloat)
	Register(graph.Quantize, IntClass, requantize)
	Register(graph.Dequantize, IntClass, dequantize)
}

// axisIndex returns, for each flat element of shape, its index along axis.
func axisIndex(shape []int, axis, flat int) int {
	inner := graph.NumElements(shape[axis+1:])
	return (flat / inner) % shape[axis]
}

func quantAxis(t *graph.Tensor, shape []int) (int, error) {
	if !t.Quant.PerAxis() {
		return -1, nil
	}
	ax := t.Quant.Axis
	if ax < 0 || ax >= len(shape) || shape[ax] != len(t.Quant.Scale) {
		return 0, fmt.Errorf("tensor %q: %d scales do not match axis %d of %v", t.Name, len(t.Quant.Scale), ax, shape)
	}
	return ax, nil
}

// quantizeFloat is TFLite's AffineQuantize: q = round(x / scale) + zp with
// x / scale in float32 (val / static_cast<float>(scale)) and round half away
// from zero, or ONNX's QuantizeLinear (round half to even) with
// QuantizeAttrs.RoundHalfEven. Per-axis scales are supported.
func quantizeFloat(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if len(ins) == 0 || ins[0] == nil || ins[0].DType != graph.Float32 {
		return nil, fmt.Errorf("input must be float32")
	}
	x := ins[0]
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if yt.Quant == nil {
		return nil, fmt.Errorf("output %q has no quantization parameters", yt.Name)
	}
	if y.Len() != x.Len() {
		return nil, fmt.Errorf("output %v does not match input %v", y.Shape, x.Shape)
	}
	ax, err := quantAxis(yt, y.Shape)
	if err != nil {
		return nil, err
	}
	even := false
	if a, ok := n.Attrs.(*graph.QuantizeAttrs); ok && a != nil {
		even = a.RoundHalfEven
	}
	lo, hi := yt.DType.Range()
	for i, v := range x.F {
		c := 0
		if ax >= 0 {
			c = axisIndex(y.Shape, ax, i)
		}
		s, z := yt.Quant.At(c)
		y.I[i] = qmath.QuantizeFloat(v, s, z, lo, hi, even)
	}
	return []*graph.Data{y}, nil
}

// requantize is TFLite's int -> int QUANTIZE: (q - zx) rescaled by the
// Q31 multiplier of s_in / s_out, plus zy, saturated.
func requantize(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	xt := g.In(n, 0)
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if yt.Quant == nil || y.Len() != ins[0].Len() {
		return nil, fmt.Errorf("output %q needs quantization and the input's shape", yt.Name)
	}
	sx, zx := qparams(xt)
	sy, zy := qparams(yt)
	m, s := qmath.RescaleMultiplier(sx, sy)
	lo, hi := dtypeRange(yt.DType)
	for i, v := range ins[0].I {
		r := qmath.MultiplyByQuantizedMultiplier(int32(v)-zx, m, s) + zy
		y.I[i] = int64(clamp32(r, lo, hi))
	}
	return []*graph.Data{y}, nil
}

// dequantize is TFLite's DEQUANTIZE: float32(double(scale) * (q - zp)),
// per tensor or per axis.
func dequantize(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	xt := g.In(n, 0)
	if xt.Quant == nil {
		return nil, fmt.Errorf("input %q has no quantization parameters", xt.Name)
	}
	ax, err := quantAxis(xt, x.Shape)
	if err != nil {
		return nil, err
	}
	y := graph.NewData(graph.Float32, x.Shape)
	if t := g.Out(n, 0); t != nil {
		y.Shape = append([]int(nil), t.Shape...)
	}
	for i, v := range x.I {
		c := 0
		if ax >= 0 {
			c = axisIndex(x.Shape, ax, i)
		}
		s, z := xt.Quant.At(c)
		y.F[i] = float32(float64(s) * float64(v-int64(z)))
	}
	return []*graph.Data{y}, nil
}
