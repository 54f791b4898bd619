package quant

import (
	"reflect"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A classifier output of several rows (a batch, or a class per position)
// has an arg-max per row along the Softmax's axis: one arg-max over the
// whole output hid a disagreement in a batch of four (user-journey
// finding: "16/16" where 63 of 64 images agreed).
func TestTop1PerRow(t *testing.T) {
	// x (times k, when k is given) -> Softmax -> Reshape to one row.
	net := func(shape []int, axis int, k []float32) *graph.Graph {
		g := graph.New("s", "onnx")
		n := 1
		for _, d := range shape {
			n *= d
		}
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: shape})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: shape})
		g.AddTensor(&graph.Tensor{Name: "z", DType: graph.Float32, Shape: []int{n}})
		in := "x"
		if k != nil {
			g.AddConst("k", f32(shape, k...))
			g.AddTensor(&graph.Tensor{Name: "m", DType: graph.Float32, Shape: shape})
			g.AddNode(&graph.Node{Name: "mul", Op: graph.Mul, Inputs: []string{"x", "k"}, Outputs: []string{"m"}})
			in = "m"
		}
		g.AddNode(&graph.Node{Name: "softmax", Op: graph.Softmax, Inputs: []string{in}, Outputs: []string{"y"},
			Attrs: &graph.SoftmaxAttrs{Axis: axis, Beta: 1}})
		g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{"y"}, Outputs: []string{"z"}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"z"}
		return g
	}
	// [2,3], axis -1: rows (0.1 0.7 0.2) and (0.5 0.1 0.4).
	softmaxNet := func(shape []int, axis int) *graph.Graph { return net(shape, axis, nil) }
	c := classifierOf(softmaxNet([]int{2, 3}, -1))
	if !c.ok || c.n != 3 || c.inner != 1 {
		t.Fatalf("[2,3] axis -1: %+v, want n 3, inner 1", c)
	}
	if got := c.argmaxes([]float64{0.1, 0.7, 0.2, 0.5, 0.1, 0.4}); !reflect.DeepEqual(got, []int{1, 0}) {
		t.Errorf("[2,3] axis -1: arg-maxes %v, want [1 0]", got)
	}
	// [1,3,2], axis 1: columns (0.1 0.7 0.2) and (0.9 0.05 0.05), interleaved.
	c = classifierOf(softmaxNet([]int{1, 3, 2}, 1))
	if !c.ok || c.n != 3 || c.inner != 2 {
		t.Fatalf("[1,3,2] axis 1: %+v, want n 3, inner 2", c)
	}
	if got := c.argmaxes([]float64{0.1, 0.9, 0.7, 0.05, 0.2, 0.05}); !reflect.DeepEqual(got, []int{1, 0}) {
		t.Errorf("[1,3,2] axis 1: arg-maxes %v, want [1 0]", got)
	}

	// Evaluate counts rows: the int8 graph is the float one here, so every
	// row agrees, and two samples of two rows make 4/4.
	g := softmaxNet([]int{2, 3}, -1)
	s := func(v ...float32) map[string]*graph.Data {
		return map[string]*graph.Data{"x": f32([]int{2, 3}, v...)}
	}
	r, err := Evaluate(g, g, []map[string]*graph.Data{s(1, 3, 2, 0, -1, 2), s(5, 1, 0, 0, 4, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Top1Agree != 4 || r.Top1Total != 4 {
		t.Errorf("Evaluate: top-1 %d/%d, want 4/4 (two samples of two rows)", r.Top1Agree, r.Top1Total)
	}
	// The second graph negates each sample's second row, which moves that
	// row's arg-max in both samples here: 2 of 4 rows agree.
	q := net([]int{2, 3}, -1, []float32{1, 1, 1, -1, -1, -1})
	r, err = Evaluate(g, q, []map[string]*graph.Data{s(1, 3, 2, 0, -1, 2), s(5, 1, 0, 0, 4, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Top1Agree != 2 || r.Top1Total != 4 {
		t.Errorf("Evaluate, second rows negated: top-1 %d/%d, want 2/4", r.Top1Agree, r.Top1Total)
	}
	if got, want := (classifier{ok: true, n: 3, inner: 1}).argmaxes([]float64{1, 2}), []int{1}; !reflect.DeepEqual(got, want) {
		t.Errorf("size mismatch: arg-maxes %v, want the whole output as one row %v", got, want)
	}
}
