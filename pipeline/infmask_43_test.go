package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A -inf constant (PyTorch's causal mask, masked_fill(-inf)) was refused
// as "constants must be finite numbers" (a review finding): only a layer's
// weights and bias must be finite. Hand-worked: scores x = ((0.3, 5), (1,
// 1)) plus the mask ((0, -inf), (0, 0)), then Softmax over the last axis:
// row 0 keeps its first element alone, (1, 0); row 1 is (0.5, 0.5). The
// float build computes that on the host; the int8 build (random
// calibration) too, within a step of its output scale (1/256), and equal to
// the interpreter.
func TestInfMask(t *testing.T) {
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	needTools(t, "host")
	bl := onnx.NewBuilder("mask", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 2, 2)
	mask := bl.Init("mask", &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{0, float32(math.Inf(-1)), 0, 0}})
	bl.Output(bl.Node("Softmax", []string{bl.Node("Add", []string{x, mask})}, onnx.IntAttr("axis", -1)), graph.Float32, 1, 2, 2)
	feed := map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 2, 2}, F: []float32{0.3, 5, 1, 1}}}
	want := []float64{1, 0, 0.5, 0.5}
	for _, c := range []struct {
		name string
		opt  Options
		tol  float64
	}{
		{"float", Options{Board: b, Version: "test"}, 1e-6},
		{"int8", Options{Board: b, Version: "test", CalibRandom: 16}, 1.0 / 256},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := onnx.Import("m", bl.Model(), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := CompileGraph(g, "m", c.opt)
			if err != nil {
				t.Fatal(err)
			}
			in := feed
			xt := s.Graph.Tensors[s.Graph.Inputs[0]]
			if xt.DType == graph.Int8 { // int8 I/O: the feed quantized by hand
				sc, z := xt.Quant.At(0)
				q := graph.NewData(graph.Int8, xt.Shape)
				for i, v := range feed["x"].F {
					q.I[i] = int64(max(-128, min(127, math.Round(float64(v)/float64(sc))+float64(z))))
				}
				in = map[string]*graph.Data{s.Graph.Inputs[0]: q}
			}
			ex, err := s.Execute([]map[string]*graph.Data{in}, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !ex.AllMatch() {
				t.Errorf("the C differs from the interpreter")
			}
			got := ex.Outputs[0][0]
			yt := s.Graph.Tensors[s.Graph.Outputs[0]]
			for i, w := range want {
				v := got.Float(i)
				if yt.DType == graph.Int8 {
					sc, z := yt.Quant.At(0)
					v = float64(sc) * (v - float64(z))
				}
				if math.Abs(v-w) > c.tol {
					t.Fatalf("softmax(x + mask) element %d = %g (%v), want %v within %g", i, v, got, want, c.tol)
				}
			}
		})
	}
}
