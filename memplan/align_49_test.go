package memplan

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Memory-planner review: with Align 1 a float32 tensor after a 33-byte int8
// one took offset 33, and Validate passed it. The plan's alignment is now
// at least every planned element's size (the int8 input [1, 33], a float32
// [1, 1] mean of it, their product).
func TestAlignAtLeastElementSize49(t *testing.T) {
	g := graph.New("align", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 33}})
	g.AddTensor(&graph.Tensor{Name: "xf", DType: graph.Float32, Shape: []int{1, 33}})
	g.AddTensor(&graph.Tensor{Name: "f", DType: graph.Float32, Shape: []int{1, 1}})
	g.AddTensor(&graph.Tensor{Name: "out", DType: graph.Float32, Shape: []int{1, 33}})
	g.AddNode(&graph.Node{Name: "cast", Op: graph.Cast, Inputs: []string{"x"}, Outputs: []string{"xf"}, Attrs: &graph.CastAttrs{To: graph.Float32}})
	g.AddNode(&graph.Node{Name: "mean", Op: graph.Reduce, Inputs: []string{"xf"}, Outputs: []string{"f"}, Attrs: &graph.ReduceAttrs{Kind: graph.ReduceMax, Axes: []int{1}, KeepDims: true}})
	g.AddNode(&graph.Node{Name: "mul", Op: graph.Mul, Inputs: []string{"xf", "f"}, Outputs: []string{"out"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"out"}
	for _, align := range []int{1, 2, 3} {
		opt := DefaultOptions()
		opt.Align = align
		p, err := Build(g, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Buffers {
			if e := g.Tensors[b.Tensor].DType.Size(); b.Offset%e != 0 {
				t.Errorf("align %d: %s (%s) at offset %d", align, b.Tensor, g.Tensors[b.Tensor].DType, b.Offset)
			}
		}
		if p.Align%4 != 0 {
			t.Errorf("align %d: the plan says %d", align, p.Align)
		}
		if err := p.Validate(g); err != nil {
			t.Error(err)
		}
	}
}
