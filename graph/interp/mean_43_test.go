package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A Mean whose output the file shapes [1, 1, 1, 2] where the reduction
// gives [1, 2, 1, 1]: the importers let a shape differing in axes of 1
// stand (the same elements in the same order), and the interpreter
// refused what the C computed (found by mutating test models). Hand-worked:
// x = 0..7 as [1, 2, 2, 2], the mean over axes 2 and 3 is 1.5 and 5.5.
func TestMeanOutputDiffersInOnes(t *testing.T) {
	g := graph.New("m", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2, 2, 2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 1, 1, 2}})
	g.AddNode(&graph.Node{Name: "mean", Op: graph.Mean, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.MeanAttrs{Axes: []int{2, 3}, KeepDims: true}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	x := graph.NewData(graph.Float32, []int{1, 2, 2, 2})
	for i := range x.F {
		x.F[i] = float32(i)
	}
	out, err := Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if y := out["y"].F; len(y) != 2 || y[0] != 1.5 || y[1] != 5.5 {
		t.Errorf("mean = %v, want [1.5 5.5]", y)
	}
}
