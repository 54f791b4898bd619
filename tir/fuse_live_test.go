package tir

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
)

// writesEarlyOverLive: a Dequantize fused into the Quantize three steps
// before it would write its output at the Quantize's step, over a tensor
// the plan keeps live in between (the uint8 QDQ journey's wrong outputs).
// Order: q = Quantize(x), a = Relu(x) -> u, b = Relu(u) -> v,
// dq = Dequantize(q's output) -> d, add = Add(v, d). The plan gives d the
// bytes u had (u dies at step 2, d is born at 3).
func TestWritesEarlyOverLive(t *testing.T) {
	g := graph.New("early", "onnx")
	f := func(name string) { g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: []int{4}}) }
	f("x")
	g.AddTensor(&graph.Tensor{Name: "xq", DType: graph.Int8, Shape: []int{4}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{0}}})
	for _, n := range []string{"u", "v", "d", "y"} {
		f(n)
	}
	q := &graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"xq"}}
	dq := &graph.Node{Name: "dq", Op: graph.Dequantize, Inputs: []string{"xq"}, Outputs: []string{"d"}}
	for _, n := range []*graph.Node{q,
		{Name: "a", Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{"u"}},
		{Name: "b", Op: graph.Relu, Inputs: []string{"u"}, Outputs: []string{"v"}},
		dq,
		{Name: "add", Op: graph.Add, Inputs: []string{"v", "d"}, Outputs: []string{"y"}}} {
		g.AddNode(n)
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	plan := func(dOffset int) *memplan.Plan {
		return &memplan.Plan{Order: []int{0, 1, 2, 3, 4}, Buffers: []memplan.Buffer{
			{Tensor: "x", Offset: -1, Size: 16, First: 0, Last: 1},
			{Tensor: "xq", Offset: 0, Size: 4, First: 0, Last: 3},
			{Tensor: "u", Offset: 32, Size: 16, First: 1, Last: 2},
			{Tensor: "v", Offset: 64, Size: 16, First: 2, Last: 4},
			{Tensor: "d", Offset: dOffset, Size: 16, First: 3, Last: 4},
			{Tensor: "y", Offset: -1, Size: 16, First: 4, Last: 4},
		}}
	}
	l := &lowerer{g: g, plan: plan(32)}
	if !l.writesEarlyOverLive(l.plan.Order, q, dq) {
		t.Error("d over u (live at steps 1 and 2): want true")
	}
	l.plan = plan(96)
	if l.writesEarlyOverLive(l.plan.Order, q, dq) {
		t.Error("d apart from every tensor: want false")
	}
}
