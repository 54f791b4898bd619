package tir_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestInt16EqualScaleAdd: an int16 ADD or SUB of three equal scales and
// zero points 0 (TFLite Micro's LSTM gate sums) lowers to the saturated sum
// or difference. It must equal graph/interp's general TFLite arithmetic
// (shift by 15, two requantizations) on every pair of int16's extremes and
// on random pairs, on the generic, dsp and mve targets, and in sanitized C.
// The general form stays for other parameters (the "other" cases).
func TestInt16EqualScaleAdd(t *testing.T) {
	ends := []int64{-32768, -32767, -16385, -16384, -1, 0, 1, 16383, 16384, 32766, 32767}
	n := len(ends) * len(ends)
	a, b := graph.NewData(graph.Int16, []int{n}), graph.NewData(graph.Int16, []int{n})
	for i, x := range ends {
		for j, y := range ends {
			a.I[i*len(ends)+j], b.I[i*len(ends)+j] = x, y
		}
	}
	r := rand.New(rand.NewSource(16))
	ra, rb := graph.NewData(graph.Int16, []int{n}), graph.NewData(graph.Int16, []int{n})
	for i := range ra.I {
		ra.I[i], rb.I[i] = int64(r.Intn(65536)-32768), int64(r.Intn(65536)-32768)
	}
	for _, c := range []struct {
		name       string
		op         graph.Op
		sa, sb, sy float32
		zy         int32
	}{
		{"gate_add", graph.Add, 1.0 / 4096, 1.0 / 4096, 1.0 / 4096, 0},
		{"cell_add", graph.Add, 0.00048828125, 0.00048828125, 0.00048828125, 0},
		{"odd_scale_sub", graph.Sub, 0.0017488234, 0.0017488234, 0.0017488234, 0},
		{"other_scales", graph.Add, 0.001, 0.002, 0.0015, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New("add16_"+c.name, "tflite")
			q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
			g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int16, Shape: []int{n}, Quant: q(c.sa, 0)})
			g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int16, Shape: []int{n}, Quant: q(c.sb, 0)})
			g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int16, Shape: []int{n}, Quant: q(c.sy, c.zy)})
			g.AddNode(&graph.Node{Name: "y", Op: c.op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
			g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
			vecs := []map[string]*graph.Data{{"a": a, "b": b}, {"a": ra, "b": rb}}
			feedsMatchInterpOnTargets(t, g, vecs)
			sanitizedHostMatches(t, g, fmt.Sprintf("add16_%s", c.name), vecs)
		})
	}
}
