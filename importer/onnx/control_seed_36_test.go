package onnx

import "github.com/mcugen/mcugen/graph"

// controlSeeds are FuzzDecode seeds with control flow: a Loop of a
// constant trip count that carries a value and has a scan output, and an
// If of a run-time condition whose branches read the outer scope.
func controlSeeds() [][]byte {
	body := NewBuilder("body", 13, 1)
	body.Input("i", graph.Int64)
	body.Input("c", graph.Bool)
	body.Input("y", graph.Float32, 2)
	bg := body.Model().Graph
	bg.Nodes = append(bg.Nodes,
		&Node{Name: "keep", OpType: "Identity", Input: []string{"c"}, Output: []string{"c_out"}},
		&Node{Name: "cast", OpType: "Cast", Input: []string{"i"}, Output: []string{"i_f"}, Attribute: []*Attribute{IntAttr("to", TFloat)}},
		&Node{Name: "add", OpType: "Add", Input: []string{"y", "i_f"}, Output: []string{"y_out"}},
		&Node{Name: "scan", OpType: "Identity", Input: []string{"y_out"}, Output: []string{"y_scan"}})
	body.Output("c_out", graph.Bool)
	body.Output("y_out", graph.Float32, 2)
	body.Output("y_scan", graph.Float32, 2)
	loop := NewBuilder("loop", 13, 1)
	loop.Input("x", graph.Float32, 2)
	loop.Scalar("M", graph.Int64, 3)
	lg := loop.Model().Graph
	lg.Nodes = append(lg.Nodes, &Node{Name: "loop", OpType: "Loop", Input: []string{"M", "", "x"}, Output: []string{"y", "ys"},
		Attribute: []*Attribute{{Name: "body", Type: AttrGraph, G: bg}}})
	loop.Output("y", graph.Float32, 2)
	loop.Output("ys", graph.Float32, 3, 2)

	branch := func(op string) *Graph {
		b := NewBuilder(op, 13, 1)
		b.Floats("k_"+op, 1)
		g := b.Model().Graph
		g.Nodes = append(g.Nodes, &Node{Name: op, OpType: op, Input: []string{"x", "k_" + op}, Output: []string{op + "_out"}})
		b.Output(op+"_out", graph.Float32, 2)
		return g
	}
	cond := NewBuilder("if", 13, 1)
	cond.Input("x", graph.Float32, 2)
	cond.Input("cond", graph.Bool)
	ig := cond.Model().Graph
	ig.Nodes = append(ig.Nodes, &Node{Name: "if", OpType: "If", Input: []string{"cond"}, Output: []string{"y"},
		Attribute: []*Attribute{{Name: "then_branch", Type: AttrGraph, G: branch("Add")}, {Name: "else_branch", Type: AttrGraph, G: branch("Sub")}}})
	cond.Output("y", graph.Float32, 2)
	return [][]byte{loop.Model().Marshal(), cond.Model().Marshal()}
}
