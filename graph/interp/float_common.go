package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// attrsOf returns n's attributes as a T. It accepts *T, T and nil (ok false:
// the caller applies its defaults) and rejects any other type.
func attrsOf[T any](n *graph.Node) (a T, ok bool, err error) {
	switch v := n.Attrs.(type) {
	case nil:
		return a, false, nil
	case *T:
		if v == nil {
			return a, false, nil
		}
		return *v, true, nil
	case T:
		return v, true, nil
	}
	return a, false, fmt.Errorf("attributes have type %T, want *%T", n.Attrs, a)
}

// outShape returns the shape of n's i-th output tensor.
func outShape(g *graph.Graph, n *graph.Node, i int) ([]int, error) {
	t := g.Out(n, i)
	if t == nil {
		if i < len(n.Outputs) {
			return nil, fmt.Errorf("output %q is not a tensor of the graph", n.Outputs[i])
		}
		return nil, fmt.Errorf("node has no output %d", i)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return nil, fmt.Errorf("output %q has unknown shape %v", t.Name, t.Shape)
		}
	}
	return t.Shape, nil
}

// newFloatOut allocates a float32 value with the shape of n's i-th output.
func newFloatOut(g *graph.Graph, n *graph.Node, i int) (*graph.Data, error) {
	s, err := outShape(g, n, i)
	if err != nil {
		return nil, err
	}
	return graph.NewData(graph.Float32, s), nil
}

// floatIn returns input i, checking that it is present and float32.
func floatIn(ins []*graph.Data, i int, what string) (*graph.Data, error) {
	if i >= len(ins) || ins[i] == nil {
		return nil, fmt.Errorf("missing input %d (%s)", i, what)
	}
	d := ins[i]
	if d.DType != graph.Float32 {
		return nil, fmt.Errorf("input %d (%s) is %s, want float32", i, what, d.DType)
	}
	if len(d.F) != graph.NumElements(d.Shape) {
		return nil, fmt.Errorf("input %d (%s) has %d values for shape %v", i, what, len(d.F), d.Shape)
	}
	return d, nil
}

// optFloatIn is floatIn for an optional input: nil when absent.
func optFloatIn(ins []*graph.Data, i int, what string) (*graph.Data, error) {
	if i >= len(ins) || ins[i] == nil {
		return nil, nil
	}
	return floatIn(ins, i, what)
}

// actFunc returns the clamp of a fused activation, applied to a float64
// result before it is rounded to float32.
func actFunc(a graph.Activation) (func(float64) float64, error) {
	if a > graph.ActReluN1To1 {
		return nil, fmt.Errorf("unknown fused activation %d", a)
	}
	lo, hi, ok := a.Bounds()
	if !ok {
		return func(x float64) float64 { return x }, nil
	}
	return func(x float64) float64 {
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}, nil
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis, rank int) (int, error) {
	if axis < -rank || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += rank
	}
	return axis, nil
}

// pos1 returns v, or 1 when v is 0 (an unset stride, dilation or group).
func pos1(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// nanMax and nanMin propagate NaN like numpy's maximum and minimum.
func nanMax(a, b float32) float32 {
	if a != a || a > b {
		return a
	}
	return b
}

// nanMax64 and nanMin64 carry a NaN through as numpy's max and min do,
// whatever its place: Go's math.Max gives +Inf over NaN, so a ReduceMax of
// [NaN, 1, -Inf, +Inf] was +Inf and of [-0, 3, NaN, -2] NaN (review finding).
func nanMax64(a, b float64) float64 {
	if a != a || a > b {
		return a
	}
	return b
}

func nanMin64(a, b float64) float64 {
	if a != a || a < b {
		return a
	}
	return b
}

func nanMin(a, b float32) float32 {
	if a != a || a < b {
		return a
	}
	return b
}

var negInf = float32(math.Inf(-1))
