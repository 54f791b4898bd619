package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// The data-movement kernels work on float32 (Data.F) and integer (Data.I)
// values alike: each computes, for every output element, which input element
// it copies (or -1 for a padding value), and gather does the copy.
func init() {
	for _, c := range []Class{FloatClass, IntClass} {
		Register(graph.Reshape, c, moveReshape)
		Register(graph.Transpose, c, moveTranspose)
		Register(graph.Slice, c, moveSlice)
		Register(graph.Pad, c, movePad)
	}
}

// anyIn returns input i, checking that it is present and holds as many
// values as its shape says.
func anyIn(ins []*graph.Data, i int) (*graph.Data, error) {
	if i >= len(ins) || ins[i] == nil {
		return nil, fmt.Errorf("missing input %d", i)
	}
	d := ins[i]
	if d.Len() != graph.NumElements(d.Shape) {
		return nil, fmt.Errorf("input %d has %d values for shape %v", i, d.Len(), d.Shape)
	}
	return d, nil
}

// gather builds a value of in's dtype and the given shape whose element k is
// in's element src[k], or the pad value where src[k] < 0.
func gather(in *graph.Data, shape []int, src []int, pad float64) *graph.Data {
	out := graph.NewData(in.DType, shape)
	if in.DType == graph.Float32 {
		pf := float32(pad)
		for k, s := range src {
			if s < 0 {
				out.F[k] = pf
			} else {
				out.F[k] = in.F[s]
			}
		}
		return out
	}
	pi := PadInt(pad, in.DType)
	for k, s := range src {
		if s < 0 {
			out.I[k] = pi
		} else {
			out.I[k] = in.I[s]
		}
	}
	return out
}

// PadInt is a constant Pad's value (graph.PadAttrs.Value, a float64) for
// an integer tensor of type dt, as the interpreter and the generated code
// both write it: truncated toward zero (the value is an integer but for
// an ONNX opset-2 float attribute, which NumPy's cast truncates) and
// saturated to dt's range, NaN as 0. Go's own conversion of a value
// beyond int64 (an int64 pad of INT64_MAX, 2^63 as a float64) is the
// platform's.
func PadInt(pad float64, dt graph.DType) int64 {
	lo, hi := dt.Range()
	return qmath.SatInt(pad, lo, hi)
}

// forEachIndex calls f with every multi-index of shape in row-major order.
func forEachIndex(shape []int, f func(k int, idx []int)) {
	n := graph.NumElements(shape)
	idx := make([]int, len(shape))
	for k := 0; k < n; k++ {
		f(k, idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// moveReshape copies the values into the output tensor's shape.
func moveReshape(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	x, err := anyIn(ins, 0)
	if err != nil {
		return nil, err
	}
	shape, err := outShape(g, n, 0)
	if err != nil {
		return nil, err
	}
	if graph.NumElements(shape) != x.Len() {
		return nil, fmt.Errorf("reshape of %v (%d elements) to %v (%d elements)", x.Shape, x.Len(), shape, graph.NumElements(shape))
	}
	out := x.Clone()
	out.Shape = append([]int(nil), shape...)
	return []*graph.Data{out}, nil
}

// moveTranspose permutes the axes: output axis i is input axis Perm[i]. An
// empty Perm reverses the axes (ONNX's default).
func moveTranspose(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.TransposeAttrs](n)
	if err != nil {
		return nil, err
	}
	x, err := anyIn(ins, 0)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	perm := a.Perm
	if len(perm) == 0 {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	if len(perm) != r {
		return nil, fmt.Errorf("transpose perm %v for rank-%d input %v", perm, r, x.Shape)
	}
	seen := make([]bool, r)
	shape := make([]int, r)
	for i, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return nil, fmt.Errorf("transpose perm %v is not a permutation of %d axes", perm, r)
		}
		seen[p] = true
		shape[i] = x.Shape[p]
	}
	want, err := outShape(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(want, shape) {
		return nil, fmt.Errorf("transpose output shape %v, perm %v of %v gives %v", want, perm, x.Shape, shape)
	}
	st := graph.Strides(x.Shape)
	src := make([]int, graph.NumElements(shape))
	forEachIndex(shape, func(k int, idx []int) {
		s := 0
		for i, p := range perm {
			s += idx[i] * st[p]
		}
		src[k] = s
	})
	return []*graph.Data{gather(x, shape, src, 0)}, nil
}

// moveSlice is a strided slice: along each axis, Begin, Begin+Stride, ...
// while below End (above End for a negative Stride). Axes past the end of
// Begin/End/Stride are taken whole; a zero Stride means 1.
func moveSlice(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.SliceAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("slice has no attributes (*graph.SliceAttrs)")
	}
	x, err := anyIn(ins, 0)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	if len(a.Begin) > r || len(a.End) != len(a.Begin) || (len(a.Stride) != 0 && len(a.Stride) != len(a.Begin)) {
		return nil, fmt.Errorf("slice begin %v, end %v, stride %v do not fit rank-%d input %v", a.Begin, a.End, a.Stride, r, x.Shape)
	}
	begin, step, shape := make([]int, r), make([]int, r), make([]int, r)
	for i, d := range x.Shape {
		if i >= len(a.Begin) {
			step[i], shape[i] = 1, d
			continue
		}
		b, e, s := a.Begin[i], a.End[i], 1
		if len(a.Stride) != 0 {
			s = pos1(a.Stride[i])
		}
		cnt := 0
		switch {
		case s > 0 && e > b:
			cnt = (e - b + s - 1) / s
		case s < 0 && e < b:
			cnt = (b - e - s - 1) / -s
		}
		if cnt > 0 && (b < 0 || b >= d || b+(cnt-1)*s < 0 || b+(cnt-1)*s >= d) {
			return nil, fmt.Errorf("slice axis %d: begin %d, end %d, stride %d leave the axis of size %d", i, b, e, s, d)
		}
		begin[i], step[i], shape[i] = b, s, cnt
	}
	want, err := outShape(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(want, shape) {
		return nil, fmt.Errorf("slice output shape %v, begin %v end %v stride %v of %v give %v", want, a.Begin, a.End, a.Stride, x.Shape, shape)
	}
	st := graph.Strides(x.Shape)
	src := make([]int, graph.NumElements(shape))
	forEachIndex(shape, func(k int, idx []int) {
		s := 0
		for i := range idx {
			s += (begin[i] + idx[i]*step[i]) * st[i]
		}
		src[k] = s
	})
	return []*graph.Data{gather(x, shape, src, 0)}, nil
}

// movePad pads (or, with negative counts, crops) every axis. Pads holds the
// before-counts then the after-counts. Modes: "constant" (Value; the default
// when Mode is empty), "reflect" (mirror without repeating the edge), "edge"
// (repeat the edge) and "wrap" (cyclic).
func movePad(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.PadAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("pad has no attributes (*graph.PadAttrs)")
	}
	x, err := anyIn(ins, 0)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	if len(a.Pads) != 2*r {
		return nil, fmt.Errorf("pads %v need %d values for rank-%d input %v", a.Pads, 2*r, r, x.Shape)
	}
	mode := a.Mode
	switch mode {
	case "":
		mode = "constant"
	case "constant", "reflect", "edge", "wrap":
	default:
		return nil, fmt.Errorf("pad mode %q not supported (constant, reflect, edge, wrap)", a.Mode)
	}
	shape := make([]int, r)
	for i, d := range x.Shape {
		shape[i] = d + a.Pads[i] + a.Pads[r+i]
		if shape[i] < 0 {
			return nil, fmt.Errorf("pads %v crop axis %d of %v below zero", a.Pads, i, x.Shape)
		}
		if mode != "constant" && shape[i] > 0 && d == 0 {
			return nil, fmt.Errorf("pad mode %s cannot pad empty axis %d of %v", mode, i, x.Shape)
		}
		if mode == "reflect" && d == 1 && (a.Pads[i] > 0 || a.Pads[r+i] > 0) {
			return nil, fmt.Errorf("pad mode reflect cannot pad axis %d of size 1 in %v", i, x.Shape)
		}
	}
	want, err := outShape(g, n, 0)
	if err != nil {
		return nil, err
	}
	if !sameShape(want, shape) {
		return nil, fmt.Errorf("pad output shape %v, pads %v of %v give %v", want, a.Pads, x.Shape, shape)
	}
	st := graph.Strides(x.Shape)
	src := make([]int, graph.NumElements(shape))
	forEachIndex(shape, func(k int, idx []int) {
		s := 0
		for i, o := range idx {
			d := x.Shape[i]
			j := o - a.Pads[i]
			if j < 0 || j >= d {
				switch mode {
				case "constant":
					s = -1
				case "edge":
					j = min(max(j, 0), d-1)
				case "wrap":
					j = ((j % d) + d) % d
				case "reflect":
					period := 2 * (d - 1)
					j = ((j % period) + period) % period
					if j >= d {
						j = period - j
					}
				}
			}
			if s < 0 {
				break
			}
			s += j * st[i]
		}
		src[k] = s
	})
	return []*graph.Data{gather(x, shape, src, a.Value)}, nil
}
