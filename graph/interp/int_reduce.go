package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() { Register(graph.Reduce, IntClass, intReduce) }

// intReduce is the largest or smallest stored value over the axes (TFLite's
// int8 REDUCE_MAX and REDUCE_MIN, whose input and output share their
// quantization, so the stored extreme is the answer), or TFLite Micro's
// int8 and int16 SUM (intSum). Other integer reductions are not supported.
func intReduce(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ReduceAttrs](n)
	if err != nil {
		return nil, err
	}
	if ok && a.Kind == graph.ReduceSum {
		return intSum(g, n, &a, ins)
	}
	if !ok || a.Kind != graph.ReduceMax && a.Kind != graph.ReduceMin {
		return nil, fmt.Errorf("integer reductions are sum, max and min only")
	}
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	if err := sameQuantIO(g, n, 0); err != nil {
		return nil, err
	}
	x, y, offs, err := reduceIO(g, n, &a, ins)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, y.Len())
	for i, v := range x.I {
		o := offs[i]
		if !seen[o] || a.Kind == graph.ReduceMax && v > y.I[o] || a.Kind == graph.ReduceMin && v < y.I[o] {
			y.I[o], seen[o] = v, true
		}
	}
	return []*graph.Data{y}, nil
}

// intSum is TFLite Micro's int8 and int16 SUM (QuantizedMeanOrSum with compute_sum):
// the stored values summed in int32, less the input zero point times the
// count, requantized by s_x/s_y (double rounding) onto the output's zero
// point and clamped.
func intSum(g *graph.Graph, n *graph.Node, a *graph.ReduceAttrs, ins []*graph.Data) ([]*graph.Data, error) {
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	xt, yt := g.In(n, 0), g.Out(n, 0)
	if xt.Quant == nil || yt.Quant == nil || len(xt.Quant.Scale) != 1 || len(yt.Quant.Scale) != 1 || yt.DType != xt.DType || (yt.DType != graph.Int8 && yt.DType != graph.Int16) {
		return nil, fmt.Errorf("integer sum needs per-tensor quantized input and output, both int8 or both int16")
	}
	lo, hi := dtypeRange(yt.DType)
	sx, zx := xt.Quant.At(0)
	sy, zy := yt.Quant.At(0)
	x, y, offs, err := reduceIO(g, n, a, ins)
	if err != nil {
		return nil, err
	}
	acc := make([]int32, y.Len())
	for i, v := range x.I {
		acc[offs[i]] += int32(v) // wraps as TFLite Micro's int32 sum
	}
	count := int64(x.Len() / max(y.Len(), 1))
	m, shift := qmath.RescaleMultiplier(sx, sy)
	for o := range acc {
		v := int64(qmath.MultiplyByQuantizedMultiplier(int32(int64(acc[o])-int64(zx)*count), m, shift)) + int64(zy)
		y.I[o] = min(max(v, int64(lo)), int64(hi))
	}
	return []*graph.Data{y}, nil
}

// reduceIO is an integer reduction's input, its output (allocated) and the
// output offset of every input element.
func reduceIO(g *graph.Graph, n *graph.Node, a *graph.ReduceAttrs, ins []*graph.Data) (x, y *graph.Data, offs []int, err error) {
	x = ins[0]
	if y, _, err = outData(g, n, 0); err != nil {
		return nil, nil, nil, err
	}
	if offs, _, err = reduceOffsets(n, x.Shape, a.Axes, y.Shape); err != nil {
		return nil, nil, nil, err
	}
	return x, y, offs, nil
}
