package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.Reduce, IntClass, intReduce) }

// intReduce is the largest or smallest stored value over the axes (TFLite's
// int8 REDUCE_MAX and REDUCE_MIN, whose input and output share their
// quantization, so the stored extreme is the answer). Other integer
// reductions are not supported.
func intReduce(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ReduceAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok || a.Kind != graph.ReduceMax && a.Kind != graph.ReduceMin {
		return nil, fmt.Errorf("integer reductions are max and min only")
	}
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	if err := sameQuantIO(g, n, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	offs, _, err := reduceOffsets(n, x.Shape, a.Axes, y.Shape)
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
