package graph

import (
	"strings"
	"testing"
)

// Review findings on what Validate and InferNode let through:
//   - a graph whose only outputs are its states (an LSTM's) compiled into
//     a model with no output, which the runner then refused;
//   - a scalar's element-wise result took whatever shape the file gave its
//     output ([] read as "no shape": NEG of a scalar into [2] wrote one of
//     two elements);
//   - a Slice reading past its axis (begin 8 of 8) sized its output anyway.
func TestReviewedShapes(t *testing.T) {
	g := New("s", "test")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 4}})
	g.AddTensor(&Tensor{Name: "h", DType: Float32, Shape: []int{1, 4}})
	g.AddTensor(&Tensor{Name: "h2", DType: Float32, Shape: []int{1, 4}})
	g.AddNode(&Node{Name: "add", Op: Add, Inputs: []string{"x", "h"}, Outputs: []string{"h2"}, Attrs: &BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x", "h"}, []string{"h2"}
	g.States = []State{{In: "h", Out: "h2"}}
	if err := Validate(g); err == nil || !strings.Contains(err.Error(), `graph "s" has no outputs but its 1 state(s)`) {
		t.Errorf("state-only outputs: %v", err)
	}

	g = New("n", "test")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{}})
	g.AddTensor(&Tensor{Name: "y", DType: Float32, Shape: []int{2}})
	n := &Node{Name: "neg", Op: Math, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &MathAttrs{Fn: MathNeg}}
	g.AddNode(n)
	if err := InferNode(g, n); err != nil || g.Tensors["y"].Shape == nil || len(g.Tensors["y"].Shape) != 0 {
		t.Errorf("Neg of a scalar: %v, output shape %v; want []", err, g.Tensors["y"].Shape)
	}

	g = New("sl", "test")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 8}})
	n = &Node{Name: "slice", Op: Slice, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &SliceAttrs{Begin: []int{0, 8}, End: []int{1, 9}, Stride: []int{1, 1}}}
	g.AddNode(n)
	if err := InferNode(g, n); err == nil || !strings.Contains(err.Error(), "slice axis 1: begin 8, end 9, stride 1 read outside the axis of size 8") {
		t.Errorf("a slice past the axis: %v", err)
	}
	n.Attrs = &SliceAttrs{Begin: []int{0, 7}, End: []int{1, -1}, Stride: []int{1, -2}}
	if err := InferNode(g, n); err != nil || len(g.Tensors["y"].Shape) != 2 || g.Tensors["y"].Shape[1] != 4 {
		t.Errorf("a reversed slice 7, 5, 3, 1: %v, shape %v; want [1 4]", err, g.Tensors["y"].Shape)
	}
}
