package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestTopKHandWorked: values and indices of hand-sorted slices, ties to the
// earlier element, NaN above every number.
func TestTopKHandWorked(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name    string
		shape   []int
		axis, k int
		largest bool
		x       []float32
		vals    []float32
		idx     []int64
	}{
		// Rows [3 1 3 2] and [0 -1 5 5]: largest 3 -> (3 3 2 at 0 2 3), (5 5 0 at 2 3 0).
		{"rows_largest", []int{2, 4}, 1, 3, true, []float32{3, 1, 3, 2, 0, -1, 5, 5}, []float32{3, 3, 2, 5, 5, 0}, []int64{0, 2, 3, 2, 3, 0}},
		// Smallest 2 along axis 0 of [[4 1] [2 1] [4 0]]: column 0: 2 (1), 4 (0); column 1: 0 (2), 1 (0).
		{"cols_smallest", []int{3, 2}, 0, 2, false, []float32{4, 1, 2, 1, 4, 0}, []float32{2, 0, 4, 1}, []int64{1, 2, 0, 0}},
		// NaN ranks first when largest, last when smallest.
		{"nan_largest", []int{4}, 0, 2, true, []float32{1, nan, 7, -2}, []float32{nan, 7}, []int64{1, 2}},
		{"nan_smallest", []int{4}, 0, 4, false, []float32{1, nan, 7, -2}, []float32{-2, 1, 7, nan}, []int64{3, 0, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(indices bool) *graph.Data {
				g := graph.New("topk", "test")
				g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: tc.shape})
				oshape := append([]int(nil), tc.shape...)
				oshape[tc.axis] = tc.k
				dt := graph.Float32
				if indices {
					dt = graph.Int64
				}
				g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: oshape})
				g.AddNode(&graph.Node{Name: "k", Op: graph.TopK, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: &graph.TopKAttrs{Axis: tc.axis, K: tc.k, Largest: tc.largest, Indices: indices}})
				g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
				x := graph.NewData(graph.Float32, tc.shape)
				copy(x.F, tc.x)
				res, err := Run(g, map[string]*graph.Data{"x": x})
				if err != nil {
					t.Fatal(err)
				}
				return res["y"]
			}
			if v := run(false); fmt.Sprint(v.F) != fmt.Sprint(tc.vals) {
				t.Errorf("values %v, want %v", v.F, tc.vals)
			}
			if i := run(true); fmt.Sprint(i.I) != fmt.Sprint(tc.idx) {
				t.Errorf("indices %v, want %v", i.I, tc.idx)
			}
		})
	}
}
