package graph

import (
	"strings"
	"testing"
)

func convGraph() *Graph {
	g := New("t", "test")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 10, 7, 4}})
	g.AddConst("w", NewData(Float32, []int{8, 3, 3, 2}))
	g.AddConst("b", NewData(Float32, []int{8}))
	g.Inputs = []string{"x"}
	g.AddNode(&Node{Name: "conv", Op: Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &Conv2DAttrs{Stride: [2]int{2, 1}, Dilation: [2]int{1, 2}, Pad: Padding{Top: 1, Left: 0, Bottom: 2, Right: 1}, Group: 2}})
	g.AddNode(&Node{Name: "pool", Op: MaxPool2D, Inputs: []string{"y"}, Outputs: []string{"z"},
		Attrs: &PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}})
	g.Outputs = []string{"z"}
	return g
}

func TestInferShapesConv(t *testing.T) {
	g := convGraph()
	if err := InferShapes(g); err != nil {
		t.Fatal(err)
	}
	// H: (10+1+2-3)/2+1 = 6; W: effective kernel 2*(3-1)+1 = 5, (7+0+1-5)/1+1 = 4.
	if got := g.Tensors["y"].Shape; shapeString(got) != "[1,6,4,8]" {
		t.Errorf("conv output %v, want [1,6,4,8]", got)
	}
	if got := g.Tensors["z"].Shape; shapeString(got) != "[1,3,2,8]" {
		t.Errorf("pool output %v, want [1,3,2,8]", got)
	}
	// 1*6*4*8 outputs, each 3*3*2 products.
	if m := TotalMACs(g); m != 192*18 {
		t.Errorf("MACs %d, want %d", m, 192*18)
	}
	if err := Validate(g); err != nil {
		t.Fatal(err)
	}
	if p := Print(g); !strings.Contains(p, "Conv2D(%x, %w<float32[8,3,3,2]>") || !strings.Contains(p, "group=2") {
		t.Errorf("printer output lacks the conv line:\n%s", p)
	}
}

func TestInferShapesRejects(t *testing.T) {
	g := convGraph()
	g.Tensors["w"] = &Tensor{Name: "w", DType: Float32, Shape: []int{8, 3, 3, 3}, Data: NewData(Float32, []int{8, 3, 3, 3})}
	err := InferShapes(g)
	if err == nil || !strings.Contains(err.Error(), `node "conv" (Conv2D)`) {
		t.Fatalf("want an error naming the conv node, got %v", err)
	}
}

func TestBroadcast(t *testing.T) {
	cases := []struct {
		a, b []int
		want string
	}{
		{[]int{1, 4, 1, 3}, []int{5, 1}, "[1,4,5,3]"},
		{[]int{3}, []int{2, 3}, "[2,3]"},
		{nil, []int{2}, "[2]"},
		{[]int{2, 3}, []int{3, 2}, "error"},
	}
	for _, c := range cases {
		s, err := Broadcast(c.a, c.b)
		got := shapeString(s)
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("Broadcast(%v,%v) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

func TestValidateCatches(t *testing.T) {
	cases := map[string]func(g *Graph){
		"names no tensor":       func(g *Graph) { g.Nodes[1].Inputs[0] = "nope" },
		"already written":       func(g *Graph) { g.Nodes[1].Outputs[0] = "y" },
		"not a positive finite": func(g *Graph) { g.Tensors["y"].Quant = &Quant{Scale: []float32{0}} },
		"outside int8 range": func(g *Graph) {
			g.Tensors["y"].DType = Int8
			g.Tensors["y"].Quant = &Quant{Scale: []float32{1}, ZeroPoint: []int32{200}}
		},
		"never computed": func(g *Graph) {
			g.Outputs = []string{"q"}
			g.AddTensor(&Tensor{Name: "q", DType: Float32, Shape: []int{1}})
		},
		"not computed before":         func(g *Graph) { g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0] },
		"constant holds":              func(g *Graph) { g.Tensors["b"].Data.F = g.Tensors["b"].Data.F[:3] },
		"axis 1 is 0":                 func(g *Graph) {},
		"more than 16777216 elements": func(g *Graph) { g.Tensors["x"].Shape = []int{1 << 20, 1 << 20, 1 << 20, 1 << 20} },
		// A fuzzed Resize's output, 65 B past what a 32-bit offset reaches,
		// is past the element bound first (2^24 since session 23).
		"shape [1 4 134217732 1]: more than 16777216 elements": func(g *Graph) { g.Tensors["x"].Shape = []int{1, 4, 134217732, 1} },
		"shape [1 4 4194305 1]: more than 16777216 elements":   func(g *Graph) { g.Tensors["x"].Shape = []int{1, 4, 1<<22 + 1, 1} },
	}
	for want, mutate := range cases {
		g := convGraph()
		if err := InferShapes(g); err != nil {
			t.Fatal(err)
		}
		if want == "axis 1 is 0" {
			g.Tensors["x"].Shape = []int{1, 0, 7, 4}
			want = "shape [1 0 7 4]: axis 1 is 0, not positive"
		}
		mutate(g)
		err := Validate(g)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

func TestTopoSort(t *testing.T) {
	g := convGraph()
	g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0]
	if err := TopoSort(g); err != nil {
		t.Fatal(err)
	}
	if g.Nodes[0].Name != "conv" {
		t.Errorf("conv should come first, got %s", g.Nodes[0].Name)
	}
	g.Nodes[0].Inputs[0] = "z" // conv reads the pool's output: a cycle
	if err := TopoSort(g); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("want a cycle error, got %v", err)
	}
}
