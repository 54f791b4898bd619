package onnx

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

func TestOnlyUnitMoves(t *testing.T) {
	cases := []struct {
		shape, perm []int
		want        bool
	}{
		{[]int{1, 1, 1, 8}, fromNHWC, true},  // NHWC [N,1,1,C] -> NCHW [N,C,1,1]
		{[]int{1, 4, 4, 8}, fromNHWC, false}, // a real transpose
		{[]int{2, 1, 3, 1}, []int{0, 3, 1, 2}, true},
		{[]int{2, 3}, []int{1, 0}, false},
		{[]int{1, 5}, []int{1, 0}, true},
	}
	for _, c := range cases {
		if got := onlyUnitMoves(c.shape, c.perm); got != c.want {
			t.Errorf("onlyUnitMoves(%v, %v) = %v, want %v", c.shape, c.perm, got, c.want)
		}
	}
}

func TestNHWCAxis(t *testing.T) {
	// NCHW axis -> NHWC position: N 0->0, C 1->3, H 2->1, W 3->2.
	for a, want := range []int{0, 3, 1, 2} {
		if got := nhwcAxis(a); got != want {
			t.Errorf("nhwcAxis(%d) = %d, want %d", a, got, want)
		}
	}
}

// TestLayoutOfElementwise: an Add of an NHWC conv output and a rank-1
// constant permutes the constant (right-aligned to [1,1,1,W], then NHWC
// [1,1,W,1]) and adds no Transpose between the conv and the Add.
func TestLayoutOfElementwise(t *testing.T) {
	b := NewBuilder("ew", 13, 1)
	x := b.Input("x", graph.Float32, 1, 2, 3, 4)
	c := b.Node("Conv", []string{x, b.Rand("w", 1, 2, 2, 1, 1)})
	y := b.Node("Add", []string{c, b.Floats("k", 1, 2, 3, 4)})
	y = b.Node("Relu", []string{y})
	b.Output(y, graph.Float32)
	g, err := Import("ew", b.Model(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ops []graph.Op
	for _, n := range g.Nodes {
		ops = append(ops, n.Op)
	}
	want := []graph.Op{graph.Transpose, graph.Conv2D, graph.Add, graph.Relu, graph.Transpose}
	if len(ops) != len(want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Fatalf("ops %v, want %v", ops, want)
		}
	}
	k := g.In(g.Nodes[2], 1)
	if k.Data == nil || len(k.Shape) != 4 || k.Shape[2] != 4 || k.Shape[3] != 1 {
		t.Errorf("constant operand %v, want shape [1 1 4 1]", k.Shape)
	}
	if s := g.Tensors[g.Outputs[0]].Shape; len(s) != 4 || s[1] != 2 || s[3] != 4 {
		t.Errorf("output shape %v, want the ONNX shape [1 2 3 4]", s)
	}
}

// TestPadFoldsIntoConv: a zero Pad of H and W before a Conv becomes the
// conv's padding (asymmetric pads kept) and gives the same values as the
// unfolded graph.
func TestPadFoldsIntoConv(t *testing.T) {
	build := func(expose bool) *graph.Graph {
		b := NewBuilder("padconv", 13, 5)
		x := b.Input("x", graph.Float32, 1, 2, 5, 5)
		c := b.Node("Conv", []string{x, b.Rand("w0", 1, 3, 2, 1, 1)}) // makes the Pad's input NHWC
		p := b.Node("Pad", []string{c, b.Ints("pads", 0, 0, 1, 0, 0, 0, 2, 1)})
		y := b.Node("Conv", []string{p, b.Rand("w", 1, 4, 3, 3, 3)}, IntsAttr("kernel_shape", 3, 3), IntsAttr("pads", 1, 1, 0, 0))
		b.Output(y, graph.Float32)
		if expose {
			b.Output(p, graph.Float32)
		}
		g, err := Import("padconv", b.Model(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	folded, plain := build(false), build(true)
	if n := graph.OpCounts(folded)["Pad"]; n != 0 {
		t.Errorf("folded graph has %d Pad nodes", n)
	}
	conv := folded.Nodes[len(folded.Nodes)-2].Attrs.(*graph.Conv2DAttrs)
	if want := (graph.Padding{Top: 2, Left: 1, Bottom: 2, Right: 1}); conv.Pad != want {
		t.Errorf("conv padding %+v, want %+v", conv.Pad, want)
	}
	x := graph.NewData(graph.Float32, []int{1, 2, 5, 5})
	for i := range x.F {
		x.F[i] = float32(i%7) - 3
	}
	a, err := interp.Run(folded, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	b, err := interp.Run(plain, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	y := folded.Outputs[0]
	for i, v := range a[y].F {
		if w := b[y].F[i]; v != w {
			t.Fatalf("y[%d]: folded %v, with Pad %v", i, v, w)
		}
	}
}
