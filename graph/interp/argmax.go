package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.ArgMax, FloatClass, argMax)
	Register(graph.ArgMax, IntClass, argMax)
}

// argMax is ONNX ArgMax/ArgMin (and TFLite ARG_MAX/ARG_MIN): per slice
// along the axis, the index of the extreme value, the first of equal ones
// unless SelectLast. Quantized inputs compare as stored (a positive scale
// keeps the order). A NaN never compares greater or smaller, so it is
// picked only at index 0 (as TFLite's comparator does; numpy would pick
// the first NaN).
func argMax(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ArgAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("argmax has no axis (*graph.ArgAttrs)")
	}
	if len(ins) < 1 || ins[0] == nil {
		return nil, fmt.Errorf("missing input")
	}
	x := ins[0]
	ax, err := normAxis(a.Axis, len(x.Shape))
	if err != nil {
		return nil, err
	}
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if yt.DType != graph.Int32 && yt.DType != graph.Int64 {
		return nil, fmt.Errorf("output dtype %s, want int32 or int64", yt.DType)
	}
	depth := x.Shape[ax]
	inner := graph.NumElements(x.Shape[ax+1:])
	outer := x.Len() / (depth * inner)
	if y.Len() != outer*inner {
		return nil, fmt.Errorf("output has %d elements, want %d", y.Len(), outer*inner)
	}
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			best, bi := x.Float(o*depth*inner+i), 0
			for c := 1; c < depth; c++ {
				v := x.Float((o*depth+c)*inner + i)
				better := v > best || a.SelectLast && v == best
				if a.Min {
					better = v < best || a.SelectLast && v == best
				}
				if better {
					best, bi = v, c
				}
			}
			y.I[o*inner+i] = int64(bi)
		}
	}
	return []*graph.Data{y}, nil
}
