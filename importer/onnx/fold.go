package onnx

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// Compile-time evaluation of constant subgraphs (shape arithmetic, constant
// weights in ONNX layout). Values are graph.Data in ONNX (row-major) layout.

func dataOf(dt graph.DType, shape []int) (*graph.Data, error) {
	if err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("constant: %w", err)
	}
	return graph.NewData(dt, shape), nil
}

// permuteShape returns shape[perm[i]] for every i.
func permuteShape(shape, perm []int) []int {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[i] = shape[p]
	}
	return out
}

func transposeData(d *graph.Data, perm []int) *graph.Data {
	out := graph.NewData(d.DType, permuteShape(d.Shape, perm))
	inStr := graph.Strides(d.Shape)
	rank := len(perm)
	idx := make([]int, rank)
	n := out.Len()
	for o := 0; o < n; o++ {
		src := 0
		for i := 0; i < rank; i++ {
			src += idx[i] * inStr[perm[i]]
		}
		if d.DType == graph.Float32 {
			out.F[o] = d.F[src]
		} else {
			out.I[o] = d.I[src]
		}
		for i := rank - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < out.Shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func reshapeData(d *graph.Data, shape []int) *graph.Data {
	c := *d
	c.Shape = append([]int(nil), shape...)
	return &c
}

func broadcastShapes(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
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

// bcastIndex maps a flat index of shape out to the flat index of shape in
// (right-aligned numpy broadcasting).
func bcastIndex(out, in []int, o int) int {
	idx, mul := 0, 1
	for i := len(out) - 1; i >= 0; i-- {
		c := o % out[i]
		o /= out[i]
		j := len(in) - len(out) + i
		if j < 0 {
			break
		}
		if in[j] != 1 {
			idx += c * mul
		}
		mul *= in[j]
	}
	return idx
}

func binaryData(op string, a, b *graph.Data) (*graph.Data, error) {
	if a.DType != b.DType {
		return nil, fmt.Errorf("%s of %s and %s", op, a.DType, b.DType)
	}
	shape, err := broadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	out, err := dataOf(a.DType, shape)
	if err != nil {
		return nil, err
	}
	for o := 0; o < out.Len(); o++ {
		i, j := bcastIndex(shape, a.Shape, o), bcastIndex(shape, b.Shape, o)
		if a.DType == graph.Float32 {
			x, y := a.F[i], b.F[j]
			var r float32
			switch op {
			case "Add", "Sum":
				r = x + y
			case "Sub":
				r = x - y
			case "Mul":
				r = x * y
			case "Div":
				r = x / y
			case "Max":
				r = float32(math.Max(float64(x), float64(y)))
			case "Min":
				r = float32(math.Min(float64(x), float64(y)))
			case "Pow":
				r = float32(math.Pow(float64(x), float64(y)))
			default:
				return nil, fmt.Errorf("cannot fold %s", op)
			}
			out.F[o] = r
			continue
		}
		x, y := a.I[i], b.I[j]
		var r int64
		switch op {
		case "Add", "Sum":
			r = x + y
		case "Sub":
			r = x - y
		case "Mul":
			r = x * y
		case "Div":
			if y == 0 {
				return nil, fmt.Errorf("integer division by zero")
			}
			r = x / y
		case "Max":
			r = max(x, y)
		case "Min":
			r = min(x, y)
		case "Equal":
			r = b2i(x == y)
		case "Less":
			r = b2i(x < y)
		case "Greater":
			r = b2i(x > y)
		default:
			return nil, fmt.Errorf("cannot fold %s", op)
		}
		out.I[o] = r
	}
	return out, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sliceData takes elements begin, begin+stride, ... on every axis; the
// output shape is given.
func sliceData(d *graph.Data, begin, stride, outShape []int) *graph.Data {
	out := graph.NewData(d.DType, outShape)
	str := graph.Strides(d.Shape)
	rank := len(outShape)
	idx := make([]int, rank)
	for o := 0; o < out.Len(); o++ {
		src := 0
		for i := 0; i < rank; i++ {
			src += (begin[i] + idx[i]*stride[i]) * str[i]
		}
		if d.DType == graph.Float32 {
			out.F[o] = d.F[src]
		} else {
			out.I[o] = d.I[src]
		}
		for i := rank - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < outShape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func concatData(ds []*graph.Data, axis int, shape []int) *graph.Data {
	out := graph.NewData(ds[0].DType, shape)
	outer := 1
	for i := 0; i < axis; i++ {
		outer *= shape[i]
	}
	o := 0
	for p := 0; p < outer; p++ {
		for _, d := range ds {
			inner := 1
			for i := axis; i < len(d.Shape); i++ {
				inner *= d.Shape[i]
			}
			for k := 0; k < inner; k++ {
				if d.DType == graph.Float32 {
					out.F[o] = d.F[p*inner+k]
				} else {
					out.I[o] = d.I[p*inner+k]
				}
				o++
			}
		}
	}
	return out
}

func gatherData(d, idx *graph.Data, axis int) (*graph.Data, error) {
	if axis < 0 || axis >= len(d.Shape) {
		return nil, fmt.Errorf("gather axis %d out of range for %v", axis, d.Shape)
	}
	shape := append(append(append([]int(nil), d.Shape[:axis]...), idx.Shape...), d.Shape[axis+1:]...)
	out, err := dataOf(d.DType, shape)
	if err != nil {
		return nil, err
	}
	outer, inner := 1, 1
	for i := 0; i < axis; i++ {
		outer *= d.Shape[i]
	}
	for i := axis + 1; i < len(d.Shape); i++ {
		inner *= d.Shape[i]
	}
	n := d.Shape[axis]
	o := 0
	for p := 0; p < outer; p++ {
		for _, iv := range idx.I {
			if iv < 0 {
				iv += int64(n)
			}
			if iv < 0 || iv >= int64(n) {
				return nil, fmt.Errorf("gather index %d out of range [0,%d)", iv, n)
			}
			for k := 0; k < inner; k++ {
				src := (p*n+int(iv))*inner + k
				if d.DType == graph.Float32 {
					out.F[o] = d.F[src]
				} else {
					out.I[o] = d.I[src]
				}
				o++
			}
		}
	}
	return out, nil
}

func expandData(d *graph.Data, shape []int) (*graph.Data, error) {
	s, err := broadcastShapes(d.Shape, shape)
	if err != nil {
		return nil, err
	}
	out, err := dataOf(d.DType, s)
	if err != nil {
		return nil, err
	}
	for o := 0; o < out.Len(); o++ {
		i := bcastIndex(s, d.Shape, o)
		if d.DType == graph.Float32 {
			out.F[o] = d.F[i]
		} else {
			out.I[o] = d.I[i]
		}
	}
	return out, nil
}

func intsData(v []int) *graph.Data {
	d := graph.NewData(graph.Int64, []int{len(v)})
	for i, x := range v {
		d.I[i] = int64(x)
	}
	return d
}

func scalarF(v float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Shape: []int{}, F: []float32{v}}
}
