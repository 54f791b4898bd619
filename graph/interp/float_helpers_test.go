package interp

import (
	"math"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// fd makes a float32 value.
func fd(shape []int, v ...float32) *graph.Data {
	if len(v) != graph.NumElements(shape) {
		panic("fd: wrong number of values")
	}
	return &graph.Data{DType: graph.Float32, Shape: shape, F: v}
}

// i8d makes an int8 value.
func i8d(shape []int, v ...int64) *graph.Data {
	if len(v) != graph.NumElements(shape) {
		panic("i8d: wrong number of values")
	}
	return &graph.Data{DType: graph.Int8, Shape: shape, I: v}
}

// seq is 1, 2, ..., n as float32.
func seq(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i + 1)
	}
	return v
}

// randData is a float32 value of uniform values in [-1, 1).
func randData(r *rand.Rand, shape ...int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32(r.Float64()*2 - 1)
	}
	return d
}

// runOp builds a one-node graph with the given inputs (nil for an absent
// optional input; input 0 is a graph input, the others constants) and an
// output of the given shape, runs it, and returns the output.
func runOp(op graph.Op, attrs any, outShape []int, ins ...*graph.Data) (*graph.Data, error) {
	g := graph.New("t", "test")
	n := &graph.Node{Name: "n", Op: op, Attrs: attrs, Outputs: []string{"out"}}
	feed := map[string]*graph.Data{}
	for i, d := range ins {
		if d == nil {
			n.Inputs = append(n.Inputs, "")
			continue
		}
		name := "in" + string(rune('0'+i))
		n.Inputs = append(n.Inputs, name)
		if i == 0 {
			g.AddTensor(&graph.Tensor{Name: name, DType: d.DType, Shape: d.Shape})
			g.Inputs = append(g.Inputs, name)
			feed[name] = d
		} else {
			g.AddConst(name, d)
		}
	}
	g.AddTensor(&graph.Tensor{Name: "out", DType: ins[0].DType, Shape: outShape})
	g.Outputs = []string{"out"}
	g.AddNode(n)
	res, err := Run(g, feed)
	if err != nil {
		return nil, err
	}
	return res["out"], nil
}

// mustRun is runOp that fails the test on an error.
func mustRun(t *testing.T, op graph.Op, attrs any, outShape []int, ins ...*graph.Data) *graph.Data {
	t.Helper()
	d, err := runOp(op, attrs, outShape, ins...)
	if err != nil {
		t.Fatal(err)
	}
	if !sameShape(d.Shape, outShape) {
		t.Fatalf("output shape %v, want %v", d.Shape, outShape)
	}
	return d
}

// closeTo checks got against want within atol 1e-5 + rtol 1e-4 (the ONNX
// backend test tolerance), NaN matching NaN.
func closeTo(t *testing.T, got []float32, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if math.IsInf(w, 0) && g == w {
			continue
		}
		if math.Abs(g-w) > 1e-5+1e-4*math.Abs(w) {
			t.Fatalf("element %d: got %v, want %v\ngot  %v\nwant %v", i, g, w, got, want)
		}
	}
}

// padding is graph.Padding{Top, Left, Bottom, Right}.
func padding(top, left, bottom, right int) graph.Padding {
	return graph.Padding{Top: top, Left: left, Bottom: bottom, Right: right}
}
