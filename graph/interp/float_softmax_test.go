package interp

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestSoftmax(t *testing.T) {
	e1, e2 := math.Exp(1), math.Exp(2)
	s := 1 + e1 + e2
	got := mustRun(t, graph.Softmax, nil, []int{1, 3}, fd([]int{1, 3}, 0, 1, 2))
	closeTo(t, got.F, []float32{float32(1 / s), float32(e1 / s), float32(e2 / s)})
	// Large inputs do not overflow: the max is subtracted first.
	got = mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: -1}, []int{3}, fd([]int{3}, 1000, 1001, 1002))
	closeTo(t, got.F, []float32{float32(1 / s), float32(e1 / s), float32(e2 / s)})
	// Beta scales the logits: beta 2 on [0, 0.5, 1] is softmax of [0, 1, 2].
	got = mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: 0, Beta: 2}, []int{3}, fd([]int{3}, 0, 0.5, 1))
	closeTo(t, got.F, []float32{float32(1 / s), float32(e1 / s), float32(e2 / s)})
	// Axis 0 of [2,2]: columns normalise.
	got = mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: 0}, []int{2, 2}, fd([]int{2, 2}, 0, 5, 0, 5))
	closeTo(t, got.F, []float32{0.5, 0.5, 0.5, 0.5})

	// Property: along any axis of a random [2,3,4] every row sums to 1 and
	// is positive.
	r := rand.New(rand.NewSource(5))
	x := randData(r, 2, 3, 4)
	for i := range x.F {
		x.F[i] *= 20
	}
	for axis := -3; axis < 3; axis++ {
		got := mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: axis}, []int{2, 3, 4}, x)
		ax := (axis + 3) % 3
		st := graph.Strides(x.Shape)
		forEachIndex(x.Shape, func(k int, idx []int) {
			if idx[ax] != 0 {
				return
			}
			sum := 0.0
			for j := 0; j < x.Shape[ax]; j++ {
				v := got.F[k+j*st[ax]]
				if v <= 0 {
					t.Fatalf("axis %d: non-positive %v", axis, v)
				}
				sum += float64(v)
			}
			if math.Abs(sum-1) > 1e-6 {
				t.Fatalf("axis %d: row at %v sums to %v", axis, idx, sum)
			}
		})
	}
	if _, err := runOp(graph.Softmax, &graph.SoftmaxAttrs{Axis: 3}, []int{2, 3, 4}, x); err == nil || !strings.Contains(err.Error(), "axis 3 out of range") {
		t.Fatalf("got %v", err)
	}
}

func TestConcat(t *testing.T) {
	g := graph.New("t", "test")
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Float32, Shape: []int{2, 1}})
	g.AddConst("b", fd([]int{2, 2}, 5, 6, -7, 8))
	g.AddConst("c", fd([]int{2, 1}, 9, 10))
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{2, 4}})
	g.AddTensor(&graph.Tensor{Name: "z", DType: graph.Float32, Shape: []int{6, 1}})
	g.AddNode(&graph.Node{Name: "cat", Op: graph.Concat, Attrs: &graph.ConcatAttrs{Axis: -1, Act: graph.ActRelu}, Inputs: []string{"a", "b", "c"}, Outputs: []string{"y"}})
	g.AddNode(&graph.Node{Name: "cat0", Op: graph.Concat, Attrs: &graph.ConcatAttrs{Axis: 0}, Inputs: []string{"a", "c", "a"}, Outputs: []string{"z"}})
	g.Inputs, g.Outputs = []string{"a"}, []string{"y", "z"}
	res, err := Run(g, map[string]*graph.Data{"a": fd([]int{2, 1}, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, res["y"].F, []float32{1, 5, 6, 9, 2, 0, 8, 10})
	closeTo(t, res["z"].F, []float32{1, 2, 9, 10, 1, 2})

	g.Tensors["y"].Shape = []int{2, 5}
	if _, err := Run(g, map[string]*graph.Data{"a": fd([]int{2, 1}, 1, 2)}); err == nil || !strings.Contains(err.Error(), "concat output shape") {
		t.Fatalf("got %v", err)
	}
	g.Tensors["c"] = &graph.Tensor{Name: "c", DType: graph.Float32, Shape: []int{1, 2}, Data: fd([]int{1, 2}, 9, 10)}
	if _, err := Run(g, map[string]*graph.Data{"a": fd([]int{2, 1}, 1, 2)}); err == nil || !strings.Contains(err.Error(), "differ off axis") {
		t.Fatalf("got %v", err)
	}
}
