package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func i64d(shape []int, v ...int64) *graph.Data {
	return &graph.Data{DType: graph.Int64, Shape: shape, I: v}
}

// Scatter worked by hand: ONNX's ScatterElements and ScatterND examples,
// a duplicate index with add (both updates land), the later of two
// replacing updates winning, negative indices from the end, out-of-range
// indices skipped, and plain int8 wrapping.
func TestScatterHandWorked(t *testing.T) {
	el := func(axis int, red string) *graph.ScatterAttrs {
		return &graph.ScatterAttrs{Axis: axis, Reduction: red}
	}
	nd := func(red string) *graph.ScatterAttrs { return &graph.ScatterAttrs{ND: true, Reduction: red} }
	for _, c := range []struct {
		name               string
		a                  *graph.ScatterAttrs
		data, idx, updates *graph.Data
		want               []float32
	}{
		// ONNX ScatterElements, axis 0: row indices per column.
		{"elements_axis0", el(0, ""), fd([]int{3, 3}, 0, 0, 0, 0, 0, 0, 0, 0, 0),
			i64d([]int{2, 3}, 1, 0, 2, 0, 2, 1), fd([]int{2, 3}, 1, 1.1, 1.2, 2, 2.1, 2.2),
			[]float32{2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2}},
		{"elements_axis1", el(1, ""), fd([]int{1, 5}, 1, 2, 3, 4, 5),
			i64d([]int{1, 2}, 1, 3), fd([]int{1, 2}, 1.1, 2.1), []float32{1, 1.1, 3, 2.1, 5}},
		{"elements_negative", el(1, ""), fd([]int{1, 5}, 1, 2, 3, 4, 5),
			i64d([]int{1, 2}, 1, -3), fd([]int{1, 2}, 1.1, 2.1), []float32{1, 1.1, 2.1, 4, 5}},
		{"elements_duplicate_add", el(1, "add"), fd([]int{1, 5}, 1, 2, 3, 4, 5),
			i64d([]int{1, 2}, 1, 1), fd([]int{1, 2}, 1.1, 2.1), []float32{1, 5.2, 3, 4, 5}},
		{"elements_duplicate_last_wins", el(1, ""), fd([]int{1, 5}, 1, 2, 3, 4, 5),
			i64d([]int{1, 2}, 2, 2), fd([]int{1, 2}, 7, 8), []float32{1, 2, 8, 4, 5}},
		{"elements_out_of_range_skipped", el(1, "mul"), fd([]int{1, 5}, 1, 2, 3, 4, 5),
			i64d([]int{1, 3}, 5, -6, 4), fd([]int{1, 3}, 9, 9, 3), []float32{1, 2, 3, 4, 15}},
		// A block of indices smaller than the data: only its own positions.
		{"elements_partial", el(0, "max"), fd([]int{2, 3}, 1, 5, 1, 1, 5, 1),
			i64d([]int{1, 2}, 1, 0), fd([]int{1, 2}, 4, 4), []float32{1, 5, 1, 4, 5, 1}},
		// ONNX ScatterND: elements of a vector.
		{"nd_elements", nd(""), fd([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8),
			i64d([]int{4, 1}, 4, 3, 1, 7), fd([]int{4}, 9, 10, 11, 12), []float32{1, 11, 3, 10, 9, 6, 7, 12}},
		// Rows of a [3, 2]: row 2 and (from the end) row 0, the second row added.
		{"nd_rows_add", nd("add"), fd([]int{3, 2}, 1, 2, 3, 4, 5, 6),
			i64d([]int{2, 1}, 2, -3), fd([]int{2, 2}, 10, 20, 30, 40), []float32{31, 42, 3, 4, 15, 26}},
		// Two indices deep into [2, 2, 2], one row out of range (skipped).
		{"nd_depth2_min", nd("min"), fd([]int{2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8),
			i64d([]int{2, 2}, 1, 0, 2, 0), fd([]int{2, 2}, 0, 9, -1, -1), []float32{1, 2, 3, 4, 0, 6, 7, 8}},
	} {
		y, err := runOpDT(graph.Scatter, c.a, graph.Float32, c.data.Shape, c.data, c.idx, c.updates)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		closeTo(t, y.F, c.want)
	}
	// int8 add wraps: 120 + 10 is -126.
	y, err := runOpDT(graph.Scatter, el(0, "add"), graph.Int8, []int{3}, i8d([]int{3}, 120, 0, -5),
		i64d([]int{2}, 0, 2), i8d([]int{2}, 10, 5))
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, y, -126, 0, 0)
	// Shapes that do not fit are errors, not panics.
	for _, bad := range []struct {
		a           *graph.ScatterAttrs
		idx, update []int
	}{
		{el(0, ""), []int{2}, []int{3}},
		{el(2, ""), []int{2}, []int{2}},
		{el(0, "sum"), []int{2}, []int{2}},
		{nd(""), []int{2, 3}, []int{2}},
		{nd(""), []int{2, 1}, []int{3}},
	} {
		idx := graph.NewData(graph.Int64, bad.idx)
		upd := graph.NewData(graph.Float32, bad.update)
		if _, err := runOpDT(graph.Scatter, bad.a, graph.Float32, []int{3}, fd([]int{3}, 1, 2, 3), idx, upd); err == nil {
			t.Errorf("%+v indices %v updates %v: no error", *bad.a, bad.idx, bad.update)
		}
	}
}
