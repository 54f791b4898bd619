package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A Softmax over an axis of length 1 counted top-1 agreement on rows of one
// value ("64/64", however the model did: quantizer review); it counts
// nothing now, and a Softmax over 8 classes counts a row per sample.
func TestTop1NeedsTwoClasses49(t *testing.T) {
	for _, c := range []struct{ axis, want int }{{0, 0}, {1, 4}} {
		g := graph.New("sm", "test")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 8}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 8}})
		g.AddNode(&graph.Node{Name: "sm", Op: graph.Softmax, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.SoftmaxAttrs{Axis: c.axis, Beta: 1}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		r, err := Evaluate(g, g, uniformSamples(4, 8, map[string][2]float64{"x": {-1, 1}}))
		if err != nil {
			t.Fatal(err)
		}
		if r.Top1Total != c.want {
			t.Errorf("softmax axis %d: top-1 over %d rows, want %d", c.axis, r.Top1Total, c.want)
		}
	}
}
