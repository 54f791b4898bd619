package onnx_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// TestWindows: Hann, Hamming and Blackman windows of a constant size,
// periodic and symmetric, against hand-worked values (cosines of multiples
// of pi/2 and 2pi/3).
func TestWindows(t *testing.T) {
	a, b := 25.0/46, 21.0/46
	cases := []struct {
		op       string
		size     int
		periodic bool
		want     []float64
	}{
		{"HannWindow", 4, true, []float64{0, 0.5, 1, 0.5}},
		{"HannWindow", 5, false, []float64{0, 0.5, 1, 0.5, 0}},
		{"HammingWindow", 4, true, []float64{a - b, a, a + b, a}},
		{"HammingWindow", 3, false, []float64{a - b, a + b, a - b}},
		// 0.42 - 0.5 cos(2 pi n/3) + 0.08 cos(4 pi n/3): n = 1, 2 give 0.42 + 0.25 - 0.04.
		{"BlackmanWindow", 3, true, []float64{0, 0.63, 0.63}},
		{"BlackmanWindow", 3, false, []float64{0, 1, 0}},
	}
	for _, c := range cases {
		bl := onnx.NewBuilder("win", 17, 1)
		x := bl.Input("x", graph.Float32, 1)
		periodic := int64(0)
		if c.periodic {
			periodic = 1
		}
		w := bl.Node(c.op, []string{bl.Ints("n", c.size)}, onnx.IntAttr("periodic", periodic))
		y := bl.Node("Add", []string{x, w})
		bl.Output(y, graph.Float32)
		g, err := onnx.Import("win", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatalf("%s(%d): %v", c.op, c.size, err)
		}
		out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1}, F: []float32{0}}})
		if err != nil {
			t.Fatal(err)
		}
		got := out[g.Outputs[0]].F
		for i, v := range c.want {
			if math.Abs(float64(got[i])-v) > 1e-6 {
				t.Errorf("%s(%d, periodic %v) = %v, want %v", c.op, c.size, c.periodic, got, c.want)
				break
			}
		}
	}
}
