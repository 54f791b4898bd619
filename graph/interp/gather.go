package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Gather, FloatClass, gatherOp)
	Register(graph.Gather, IntClass, gatherOp)
}

// GatherIndex normalizes a gather index for an axis of size dim: negative
// counts from the end, and the result is clamped into [0, dim).
func GatherIndex(k int64, dim int) int {
	if k < 0 {
		k += int64(dim)
	}
	return int(min(max(k, 0), int64(dim-1)))
}

// gatherOp is ONNX Gather (output [data[:axis], indices, data[axis+1:]]) and
// GatherElements (output shaped as the indices, each index replacing its
// own position along the axis).
func gatherOp(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.GatherAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("gather needs *graph.GatherAttrs (%v)", err)
	}
	if len(ins) < 2 || ins[0] == nil || ins[1] == nil || !ins[1].DType.IsInt() {
		return nil, fmt.Errorf("gather needs data and integer indices")
	}
	x, idx := ins[0], ins[1]
	if a.Axis < 0 || a.Axis >= len(x.Shape) {
		return nil, fmt.Errorf("axis %d out of range for %v", a.Axis, x.Shape)
	}
	y, err := outAny(g, n, x.DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	dim := x.Shape[a.Axis]
	xs := graph.Strides(x.Shape)
	ys := graph.Strides(y.Shape)
	r := len(idx.Shape)
	for o := 0; o < y.Len(); o++ {
		// The output index, digit by digit.
		oi := make([]int, len(y.Shape))
		rem := o
		for d := range oi {
			oi[d], rem = rem/ys[d], rem%ys[d]
		}
		src := 0
		if a.Elements {
			if len(oi) != len(x.Shape) {
				return nil, fmt.Errorf("indices and data differ in rank")
			}
			for d, v := range oi {
				if d == a.Axis {
					v = GatherIndex(idx.I[o], dim)
				} else if v >= x.Shape[d] {
					return nil, fmt.Errorf("indices %v exceed data %v on axis %d", idx.Shape, x.Shape, d)
				}
				src += v * xs[d]
			}
		} else {
			ii := 0
			is := graph.Strides(idx.Shape)
			for d := 0; d < r; d++ {
				ii += oi[a.Axis+d] * is[d]
			}
			for d := 0; d < len(x.Shape); d++ {
				var v int
				switch {
				case d < a.Axis:
					v = oi[d]
				case d == a.Axis:
					v = GatherIndex(idx.I[ii], dim)
				default:
					v = oi[d-1+r]
				}
				src += v * xs[d]
			}
		}
		if y.DType == graph.Float32 {
			y.F[o] = x.F[src]
		} else {
			y.I[o] = x.I[src]
		}
	}
	return []*graph.Data{y}, nil
}
