package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	bin := map[graph.Op]func(a, b float32) float32{
		graph.Add:     func(a, b float32) float32 { return a + b },
		graph.Sub:     func(a, b float32) float32 { return a - b },
		graph.Mul:     func(a, b float32) float32 { return a * b },
		graph.Div:     func(a, b float32) float32 { return a / b },
		graph.Maximum: nanMax,
		graph.Minimum: nanMin,
		graph.Pow:     func(a, b float32) float32 { return float32(math.Pow(float64(a), float64(b))) },
	}
	for op, f := range bin {
		Register(op, FloatClass, floatBinary(f))
	}
}

// broadcastShapes is numpy's broadcast of two shapes.
func broadcastShapes(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := 0; i < r; i++ {
		da, db := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// broadcastOffsets gives, for every flat index of shape out, the flat index
// of the element of shape s (right-aligned, size-1 dims repeated) it reads.
// s must broadcast to out.
func broadcastOffsets(s, out []int) []int {
	r := len(out)
	st := make([]int, r) // stride in s of each out axis, 0 where broadcast
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			st[i+r-len(s)] = acc
		}
		acc *= s[i]
	}
	n := graph.NumElements(out)
	offs := make([]int, n)
	idx := make([]int, r)
	off := 0
	for k := 0; k < n; k++ {
		offs[k] = off
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			off += st[d]
			if idx[d] < out[d] {
				break
			}
			off -= st[d] * idx[d]
			idx[d] = 0
		}
	}
	return offs
}

// floatBinary makes an element-wise kernel with numpy broadcasting and a
// fused activation (*graph.BinaryAttrs). f works in float32, as ONNX does.
func floatBinary(f func(a, b float32) float32) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		a, _, err := attrsOf[graph.BinaryAttrs](n)
		if err != nil {
			return nil, err
		}
		x, err := floatIn(ins, 0, "A")
		if err != nil {
			return nil, err
		}
		y, err := floatIn(ins, 1, "B")
		if err != nil {
			return nil, err
		}
		act, err := actFunc(a.Act)
		if err != nil {
			return nil, err
		}
		shape, err := broadcastShapes(x.Shape, y.Shape)
		if err != nil {
			return nil, err
		}
		out, err := newFloatOut(g, n, 0)
		if err != nil {
			return nil, err
		}
		if len(out.F) != graph.NumElements(shape) {
			return nil, fmt.Errorf("output shape %v, inputs %v and %v broadcast to %v", out.Shape, x.Shape, y.Shape, shape)
		}
		xo := broadcastOffsets(x.Shape, shape)
		yo := broadcastOffsets(y.Shape, shape)
		for i := range out.F {
			v := f(x.F[xo[i]], y.F[yo[i]])
			if a.Act != graph.ActNone {
				v = float32(act(float64(v)))
			}
			out.F[i] = v
		}
		return []*graph.Data{out}, nil
	}
}
