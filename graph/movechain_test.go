package graph_test

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// FoldIdentityMoves: the 1-D convolution's Transpose [0 2 1], Reshape to
// [1 3 1 128] and Transpose [0 2 3 1] put every element back where it was
// and become one Reshape, and the graph computes the same values (checked
// element by element against the input); a chain that does move elements
// (a real transpose of a 2×3 matrix), a chain whose middle tensor is also
// an output, and a lone Reshape are left alone; a Transpose of unit axes
// alone becomes a Reshape.
func TestFoldIdentityMoves(t *testing.T) {
	build := func(steps [][]int, perms [][]int, midOut bool) *graph.Graph {
		g := graph.New("moves", "onnx")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: steps[0]})
		prev := "x"
		for i := 1; i < len(steps); i++ {
			name := string(rune('a' + i))
			g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: steps[i]})
			n := &graph.Node{Name: "n" + name, Op: graph.Reshape, Inputs: []string{prev}, Outputs: []string{name}}
			if perms[i-1] != nil {
				n.Op, n.Attrs = graph.Transpose, &graph.TransposeAttrs{Perm: perms[i-1]}
			}
			g.AddNode(n)
			prev = name
		}
		g.Inputs, g.Outputs = []string{"x"}, []string{prev}
		if midOut {
			g.Outputs = append(g.Outputs, "b")
		}
		return g
	}
	for _, c := range []struct {
		name   string
		steps  [][]int
		perms  [][]int
		midOut bool
		folded int
	}{
		{"conv1d", [][]int{{1, 8, 3}, {1, 3, 8}, {1, 3, 1, 8}, {1, 1, 8, 3}}, [][]int{{0, 2, 1}, nil, {0, 2, 3, 1}}, false, 1},
		{"real transpose", [][]int{{1, 2, 3}, {1, 3, 2}, {6}}, [][]int{{0, 2, 1}, nil}, false, 0},
		{"middle is an output", [][]int{{1, 8, 3}, {1, 3, 8}, {1, 3, 1, 8}, {1, 1, 8, 3}}, [][]int{{0, 2, 1}, nil, {0, 2, 3, 1}}, true, 0},
		{"lone reshape", [][]int{{2, 3}, {6}}, [][]int{nil}, false, 0},
		{"unit axes", [][]int{{1, 4, 1, 5}, {4, 1, 1, 5}}, [][]int{{1, 0, 2, 3}}, false, 1},
	} {
		g := build(c.steps, c.perms, c.midOut)
		in := graph.NewData(graph.Float32, c.steps[0])
		for i := range in.F {
			in.F[i] = float32(i)
		}
		before, err := interp.Run(g, map[string]*graph.Data{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		nodes := len(g.Nodes)
		if got := graph.FoldIdentityMoves(g); got != c.folded {
			t.Errorf("%s: folded %d, want %d", c.name, got, c.folded)
			continue
		}
		if err := graph.Validate(g); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out := g.Outputs[0]
		if c.folded > 0 {
			if len(g.Nodes) != 1 || g.Nodes[0].Op != graph.Reshape || g.Nodes[0].Inputs[0] != "x" {
				t.Fatalf("%s: %d nodes (%v), want one Reshape of x", c.name, len(g.Nodes), g.Nodes[0].Op)
			}
			// Identity in memory: the output's row-major elements are the input's.
			if !slices.Equal(before[out].F, in.F) {
				t.Fatalf("%s: the chain moved elements: %v", c.name, before[out].F)
			}
		} else if len(g.Nodes) != nodes {
			t.Fatalf("%s: %d nodes, want %d", c.name, len(g.Nodes), nodes)
		}
		after, err := interp.Run(g, map[string]*graph.Data{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(after[out].F, before[out].F) || !slices.Equal(after[out].Shape, before[out].Shape) {
			t.Errorf("%s: %v %v after, %v %v before", c.name, after[out].Shape, after[out].F, before[out].Shape, before[out].F)
		}
	}
}
