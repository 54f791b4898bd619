package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Softmax, FloatClass, floatSoftmax)
	Register(graph.Concat, FloatClass, floatConcat)
}

// floatSoftmax is exp(Beta·x) normalised along Axis, computed stably: the
// largest Beta·x of each row is subtracted before exp, in float64. A zero
// Beta (unset, as ONNX has none) means 1.
func floatSoftmax(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.SoftmaxAttrs](n)
	if err != nil {
		return nil, err
	}
	if n.Attrs == nil {
		a.Axis = -1
	}
	x, err := floatIn(ins, 0, "input")
	if err != nil {
		return nil, err
	}
	if len(x.Shape) == 0 {
		return nil, fmt.Errorf("softmax of a scalar")
	}
	axis, err := normAxis(a.Axis, len(x.Shape))
	if err != nil {
		return nil, fmt.Errorf("softmax: %w", err)
	}
	beta := float64(a.Beta)
	if beta == 0 {
		beta = 1
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(out.Shape, x.Shape) {
		return nil, fmt.Errorf("softmax output shape %v differs from input %v", out.Shape, x.Shape)
	}
	// View the input as [outer, d, inner] with d the softmax axis.
	d := x.Shape[axis]
	inner := graph.NumElements(x.Shape[axis+1:])
	outer := graph.NumElements(x.Shape[:axis])
	z := make([]float64, d)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*d*inner + i
			m := math.Inf(-1)
			for k := 0; k < d; k++ {
				z[k] = beta * float64(x.F[base+k*inner])
				m = math.Max(m, z[k])
			}
			if a.Mode == graph.SoftmaxHard {
				first := true
				for k := range z {
					v := float32(0)
					if first && z[k] == m {
						v, first = 1, false
					}
					out.F[base+k*inner] = v
				}
				continue
			}
			var sum float64
			for k := range z {
				sum += math.Exp(z[k] - m)
			}
			for k := range z {
				if a.Mode == graph.SoftmaxLog {
					out.F[base+k*inner] = float32(z[k] - m - math.Log(sum))
				} else {
					out.F[base+k*inner] = float32(math.Exp(z[k]-m) / sum)
				}
			}
		}
	}
	return []*graph.Data{out}, nil
}

// floatConcat joins its inputs along Axis and applies the fused activation.
func floatConcat(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.ConcatAttrs](n)
	if err != nil {
		return nil, err
	}
	act, err := actFunc(a.Act)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("concat has no inputs")
	}
	xs := make([]*graph.Data, len(ins))
	for i := range ins {
		if xs[i], err = floatIn(ins, i, "input"); err != nil {
			return nil, err
		}
	}
	r := len(xs[0].Shape)
	axis, err := normAxis(a.Axis, r)
	if err != nil {
		return nil, fmt.Errorf("concat: %w", err)
	}
	shape := append([]int(nil), xs[0].Shape...)
	shape[axis] = 0
	for i, x := range xs {
		if len(x.Shape) != r {
			return nil, fmt.Errorf("concat input %d has shape %v, input 0 has %v", i, x.Shape, xs[0].Shape)
		}
		for j := range x.Shape {
			if j != axis && x.Shape[j] != shape[j] {
				return nil, fmt.Errorf("concat input %d has shape %v, input 0 has %v: they differ off axis %d", i, x.Shape, xs[0].Shape, axis)
			}
		}
		shape[axis] += x.Shape[axis]
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(out.Shape, shape) {
		return nil, fmt.Errorf("concat output shape %v, inputs give %v", out.Shape, shape)
	}
	outer := graph.NumElements(shape[:axis])
	k := 0
	for o := 0; o < outer; o++ {
		for _, x := range xs {
			chunk := len(x.F) / max(outer, 1)
			for _, v := range x.F[o*chunk : (o+1)*chunk] {
				out.F[k] = float32(act(float64(v)))
				k++
			}
		}
	}
	return []*graph.Data{out}, nil
}
