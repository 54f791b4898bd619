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
	r := len(x.Shape)
	reduce := make([]bool, r)
	if len(a.Axes) == 0 {
		for i := range reduce {
			reduce[i] = true
		}
	}
	for _, ax := range a.Axes {
		ax, err := normAxis(ax, r)
		if err != nil {
			return nil, err
		}
		reduce[ax] = true
	}
	keep, drop := []int{}, []int{}
	for i, d := range x.Shape {
		if reduce[i] {
			keep = append(keep, 1)
		} else {
			keep = append(keep, d)
			drop = append(drop, d)
		}
	}
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(y.Shape, keep) && !sameShape(y.Shape, drop) {
		return nil, fmt.Errorf("output shape %v, reducing %v of %v gives %v or %v", y.Shape, a.Axes, x.Shape, keep, drop)
	}
	seen := make([]bool, y.Len())
	offs := broadcastOffsets(keep, x.Shape)
	for i, v := range x.I {
		o := offs[i]
		if !seen[o] || a.Kind == graph.ReduceMax && v > y.I[o] || a.Kind == graph.ReduceMin && v < y.I[o] {
			y.I[o], seen[o] = v, true
		}
	}
	return []*graph.Data{y}, nil
}
