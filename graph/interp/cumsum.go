package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.CumSum, FloatClass, cumSum)
	Register(graph.CumSum, IntClass, cumSum)
}

// cumSum is ONNX CumSum: along the axis, each output is the sum of the
// elements up to it (from the end when Reverse; without itself when
// Exclusive). Floats sum in float64; plain integers wrap to their type.
func cumSum(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.CumSumAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("cumsum needs *graph.CumSumAttrs (%v)", err)
	}
	if len(ins) < 1 || ins[0] == nil {
		return nil, fmt.Errorf("missing input")
	}
	x := ins[0]
	if !Plain(g, n) {
		return cumSumInt8(g, n, a, x)
	}
	ax, err := normAxis(a.Axis, len(x.Shape))
	if err != nil {
		return nil, err
	}
	yt := g.Out(n, 0)
	y, err := outAny(g, n, x.DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	if y.Len() != x.Len() {
		return nil, fmt.Errorf("output %v differs from input %v", y.Shape, x.Shape)
	}
	cumLines(x.Shape, ax, a.Reverse, func(at []int) {
		var fs float64
		var is int64
		for _, at := range at {
			if x.DType == graph.Float32 {
				if a.Exclusive {
					y.F[at] = float32(fs)
				}
				fs += float64(x.F[at])
				if !a.Exclusive {
					y.F[at] = float32(fs)
				}
				continue
			}
			if a.Exclusive {
				y.I[at] = yt.DType.Wrap(is)
			}
			is += x.I[at]
			if !a.Exclusive {
				y.I[at] = yt.DType.Wrap(is)
			}
		}
	})
	return []*graph.Data{y}, nil
}

// cumLines calls line with the flat positions of each line of a tensor of
// the given shape along axis, in summing order (from the end when reverse).
func cumLines(shape []int, axis int, reverse bool, line func(at []int)) {
	depth := shape[axis]
	inner := graph.NumElements(shape[axis+1:])
	outer := graph.NumElements(shape) / max(1, depth*inner)
	at := make([]int, depth)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			for k := range at {
				c := k
				if reverse {
					c = depth - 1 - k
				}
				at[k] = (o*depth+c)*inner + i
			}
			line(at)
		}
	}
}
