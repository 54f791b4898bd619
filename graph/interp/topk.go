package interp

import (
	"fmt"
	"math"
	"sort"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.TopK, FloatClass, topK)
	Register(graph.TopK, IntClass, topK)
}

// topK is ONNX TopK and TFLite TOPK_V2: per slice along the axis, the
// positions of the K first elements in the order "larger first" (or
// "smaller first"), the earlier of equal elements first, NaN above every
// number; the node gives their values or their positions. Quantized values
// order as stored (a positive scale keeps the order).
func topK(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.TopKAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("topk has no attributes (*graph.TopKAttrs)")
	}
	if len(ins) < 1 || ins[0] == nil {
		return nil, fmt.Errorf("missing input")
	}
	x := ins[0]
	if a.Axis < 0 || a.Axis >= len(x.Shape) || a.K < 1 || a.K > x.Shape[a.Axis] {
		return nil, fmt.Errorf("axis %d, k %d out of range for %v", a.Axis, a.K, x.Shape)
	}
	yt := g.Out(n, 0)
	if yt == nil {
		return nil, fmt.Errorf("no output tensor")
	}
	y, err := outAny(g, n, yt.DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	if a.Indices && yt.DType != graph.Int32 && yt.DType != graph.Int64 {
		return nil, fmt.Errorf("indices output dtype %s, want int32 or int64", yt.DType)
	}
	if !a.Indices && yt.DType != x.DType {
		return nil, fmt.Errorf("values output dtype %s, input %s", yt.DType, x.DType)
	}
	if !a.Indices && x.DType != graph.Float32 {
		if err := sameQuantIO(g, n, 0); err != nil {
			return nil, err
		}
	}
	depth := x.Shape[a.Axis]
	inner := graph.NumElements(x.Shape[a.Axis+1:])
	outer := x.Len() / (depth * inner)
	order := make([]int, depth)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			at := func(c int) int { return (o*depth+c)*inner + i }
			for c := range order {
				order[c] = c
			}
			sort.SliceStable(order, func(p, q int) bool {
				u, v := x.Float(at(order[p])), x.Float(at(order[q]))
				nu, nv := math.IsNaN(u), math.IsNaN(v)
				if nu || nv {
					// NaN ranks above everything, equal to NaN.
					if a.Largest {
						return nu && !nv
					}
					return nv && !nu
				}
				if a.Largest {
					return u > v
				}
				return u < v
			})
			for j := 0; j < a.K; j++ {
				dst := (o*a.K+j)*inner + i
				src := at(order[j])
				switch {
				case a.Indices:
					y.I[dst] = int64(order[j])
				case y.DType == graph.Float32:
					y.F[dst] = x.F[src]
				default:
					y.I[dst] = x.I[src]
				}
			}
		}
	}
	return []*graph.Data{y}, nil
}
