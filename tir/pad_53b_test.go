package tir_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// A constant Pad of an int64 tensor with INT64_MAX, 2^63 as PadAttrs'
// float64 (the generated code's fill was int64(math.Round(2^63)): INT64_MIN
// on amd64, INT64_MAX on arm64), fills with INT64_MAX; of an int8 tensor
// with 1e30, 127 (the tensor's range); with 2.5, 2 (truncated, as the
// interpreter always did and the code generator now does too).
func TestPadSaturates53b(t *testing.T) {
	for _, c := range []struct {
		dt   graph.DType
		v    float64
		want int64
	}{
		{graph.Int64, float64(math.MaxInt64), math.MaxInt64},
		{graph.Int64, -1e300, math.MinInt64},
		{graph.Int8, 1e30, 127},
		{graph.Int32, 2.5, 2},
	} {
		g := graph.New("pad", "test")
		g.AddTensor(&graph.Tensor{Name: "x", DType: c.dt, Shape: []int{2}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: c.dt, Shape: []int{4}})
		g.AddNode(&graph.Node{Name: "p", Op: graph.Pad, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.PadAttrs{Pads: []int{1, 1}, Value: c.v, Mode: "constant"}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		x := graph.NewData(c.dt, []int{2})
		copy(x.I, []int64{1, -1})
		got, err := tir.RunModule(lowerRequant(t, g, *tir.Generic), map[string]*graph.Data{"x": x})
		if err != nil {
			t.Fatalf("%s, value %g: %v", c.dt, c.v, err)
		}
		if want := fmt.Sprint([]int64{c.want, 1, -1, c.want}); fmt.Sprint(got["y"].I) != want {
			t.Errorf("%s, value %g: %v, want %v", c.dt, c.v, got["y"].I, want)
		}
	}
}
