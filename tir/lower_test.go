package tir_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// TestLowerErrors: malformed graphs give errors that name the node, never panics.
func TestLowerErrors(t *testing.T) {
	build := func(mut func(g *graph.Graph, n *graph.Node)) *graph.Graph {
		g := graph.New("bad", "onnx")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4, 4, 2}})
		w := graph.NewData(graph.Float32, []int{3, 1, 1, 2})
		g.AddConst("w", w)
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4, 4, 3}})
		n := g.AddNode(&graph.Node{Name: "conv/bad", Op: graph.Conv2D, Inputs: []string{"x", "w", ""}, Outputs: []string{"y"},
			Attrs: &graph.Conv2DAttrs{Group: 1}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		mut(g, n)
		return g
	}
	cases := []struct {
		name string
		mut  func(g *graph.Graph, n *graph.Node)
		want string
	}{
		{"missing attrs", func(g *graph.Graph, n *graph.Node) { n.Attrs = nil }, "Conv2DAttrs"},
		{"int weights with float input", func(g *graph.Graph, n *graph.Node) {
			d := graph.NewData(graph.Int8, []int{3, 1, 1, 2})
			g.AddConst("w", d)
		}, "conv/bad"},
		{"unknown op", func(g *graph.Graph, n *graph.Node) { n.Op = "Frobnicate" }, "no compute definition"},
		{"wrong group", func(g *graph.Graph, n *graph.Node) { n.Attrs = &graph.Conv2DAttrs{Group: 2} }, "groups"},
	}
	for _, c := range cases {
		g := build(c.mut)
		plan, err := memplan.Build(g, memplan.DefaultOptions())
		if err != nil {
			t.Fatalf("%s: plan: %v", c.name, err)
		}
		_, err = tir.Lower(g, plan, *tir.Generic)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "conv/bad") {
			t.Errorf("%s: error %v, want one naming the node and %q", c.name, err, c.want)
		}
	}
	if _, err := tir.Lower(build(func(*graph.Graph, *graph.Node) {}), nil, *tir.Generic); err == nil {
		t.Error("no plan accepted")
	}
	if _, err := tir.TargetByName("no-such-target"); err == nil {
		t.Error("unknown target accepted")
	}
}

// TestTableFusion: an int8 sigmoid after a conv (and a tanh after an add)
// becomes a table applied in the producer's stores: two kernels, not four.
func TestTableFusion(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name != "conv_then_table_s8" {
			continue
		}
		opt := memplan.DefaultOptions()
		opt.InPlaceOK = tir.InPlaceOK
		plan, err := memplan.Build(c.Graph, opt)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tir.Lower(c.Graph, plan, *tir.Generic)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Funcs) != 2 || !strings.Contains(m.Funcs[0].Node, "Sigmoid") || !strings.Contains(m.Funcs[1].Node, "Tanh") {
			for _, f := range m.Funcs {
				t.Logf("kernel %s: %s", f.Name, f.Node)
			}
			t.Fatalf("%d kernels, want conv+sigmoid and add+tanh", len(m.Funcs))
		}
	}
}

// TestDistinctFuncs: kernels that print the same up to their names are one
// function in the C; the same op over the same shapes with other constants
// baked into the body (Clip's bounds) is another.
func TestDistinctFuncs(t *testing.T) {
	build := func(bounds ...[2]float32) *tir.Module {
		g := graph.New("clips", "test")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, 8}})
		cur := "x"
		for i, b := range bounds {
			out := "c" + string(rune('0'+i))
			g.AddTensor(&graph.Tensor{Name: out, DType: graph.Float32, Shape: []int{2, 8}})
			g.AddNode(&graph.Node{Name: out, Op: graph.Clip, Inputs: []string{cur}, Outputs: []string{out}, Attrs: &graph.ClipAttrs{Min: b[0], Max: b[1]}})
			cur = out
		}
		g.Inputs, g.Outputs = []string{"x"}, []string{cur}
		plan, err := memplan.Build(g, memplan.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		m, err := tir.Lower(g, plan, *tir.Generic)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := build([2]float32{-1, 1}, [2]float32{-1, 1}, [2]float32{-1, 1}); len(m.Funcs) != 3 || m.DistinctFuncs() != 1 {
		t.Errorf("three equal clips: %d kernels, %d distinct, want 3 and 1", len(m.Funcs), m.DistinctFuncs())
	}
	if m := build([2]float32{-1, 1}, [2]float32{-2, 2}, [2]float32{-1, 1}); m.DistinctFuncs() != 2 {
		t.Errorf("clips with two different bounds: %d distinct kernels, want 2", m.DistinctFuncs())
	}
}
