package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An int8 Clip whose min (1) is above its max (-1) gave min's code where
// ONNX (numpy's clip) and the float path give max (review finding). With
// scale 0.01 and zero point 0 both bounds are -1's code, -100, and every
// element becomes -100.
func TestClipMinAboveMax47(t *testing.T) {
	g := graph.New("clip", "test")
	q := &graph.Quant{Scale: []float32{0.01}, ZeroPoint: []int32{0}}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 4}, Quant: q})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 4}, Quant: q})
	n := &graph.Node{Name: "clip", Op: graph.Clip, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.ClipAttrs{Min: 1, Max: -1}}
	g.AddNode(n)
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	p, err := ReluQuant(n, g.Tensors["x"], g.Tensors["y"])
	if err != nil {
		t.Fatal(err)
	}
	if p.Lo != -100 || p.Hi != -100 {
		t.Errorf("bounds [%d, %d], want [-100, -100]", p.Lo, p.Hi)
	}
	x := &graph.Data{DType: graph.Int8, Shape: []int{1, 4}, I: []int64{-128, -5, 0, 127}}
	out, err := Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out["y"].I {
		if v != -100 {
			t.Errorf("y[%d] = %d, want -100", i, v)
		}
	}
}
