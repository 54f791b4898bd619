package interp

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestReshape(t *testing.T) {
	got := mustRun(t, graph.Reshape, nil, []int{3, 2}, fd([]int{2, 3}, seq(6)...))
	closeTo(t, got.F, seq(6))
	gi := mustRun(t, graph.Reshape, nil, []int{6}, i8d([]int{1, 2, 3}, 1, -2, 3, -4, 5, -6))
	if gi.DType != graph.Int8 || !reflect.DeepEqual(gi.I, []int64{1, -2, 3, -4, 5, -6}) {
		t.Fatalf("got %+v", gi)
	}
	if _, err := runOp(graph.Reshape, nil, []int{4}, fd([]int{2, 3}, seq(6)...)); err == nil || !strings.Contains(err.Error(), "reshape of [2 3]") {
		t.Fatalf("got %v", err)
	}
}

func TestTranspose(t *testing.T) {
	got := mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: []int{1, 0}}, []int{3, 2}, fd([]int{2, 3}, seq(6)...))
	closeTo(t, got.F, []float32{1, 4, 2, 5, 3, 6})
	got = mustRun(t, graph.Transpose, nil, []int{3, 2}, fd([]int{2, 3}, seq(6)...))
	closeTo(t, got.F, []float32{1, 4, 2, 5, 3, 6})
	// NCHW [1,2,2,2] -> NHWC.
	got = mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: []int{0, 2, 3, 1}}, []int{1, 2, 2, 2}, fd([]int{1, 2, 2, 2}, seq(8)...))
	closeTo(t, got.F, []float32{1, 5, 2, 6, 3, 7, 4, 8})

	// Transposing by a permutation and then by its inverse is the identity,
	// for floats and integers.
	r := rand.New(rand.NewSource(4))
	perm := []int{2, 0, 3, 1}
	inv := make([]int, 4)
	for i, p := range perm {
		inv[p] = i
	}
	x := randData(r, 2, 3, 4, 5)
	mid := mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: perm}, []int{4, 2, 5, 3}, x)
	back := mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: inv}, []int{2, 3, 4, 5}, mid)
	closeTo(t, back.F, x.F)
	xi := graph.NewData(graph.Int8, []int{2, 3, 4, 5})
	for i := range xi.I {
		xi.I[i] = int64(r.Intn(256) - 128)
	}
	midi := mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: perm}, []int{4, 2, 5, 3}, xi)
	backi := mustRun(t, graph.Transpose, &graph.TransposeAttrs{Perm: inv}, []int{2, 3, 4, 5}, midi)
	if !reflect.DeepEqual(backi.I, xi.I) {
		t.Fatal("int transpose round trip changed the values")
	}
	if _, err := runOp(graph.Transpose, &graph.TransposeAttrs{Perm: []int{0, 0}}, []int{2, 2}, fd([]int{2, 3}, seq(6)...)); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Fatalf("got %v", err)
	}
}

func TestSlice(t *testing.T) {
	x10 := fd([]int{10}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	tests := []struct {
		name  string
		attrs graph.SliceAttrs
		x     *graph.Data
		out   []int
		want  []float32
	}{
		{"forward", graph.SliceAttrs{Begin: []int{1}, End: []int{8}, Stride: []int{3}}, x10, []int{3}, []float32{1, 4, 7}},
		{"negative stride", graph.SliceAttrs{Begin: []int{8}, End: []int{1}, Stride: []int{-3}}, x10, []int{3}, []float32{8, 5, 2}},
		{"reverse to start", graph.SliceAttrs{Begin: []int{2}, End: []int{-1}, Stride: []int{-1}}, x10, []int{3}, []float32{2, 1, 0}},
		{"whole reverse", graph.SliceAttrs{Begin: []int{9}, End: []int{-1}, Stride: []int{-1}}, x10, []int{10}, []float32{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{"empty", graph.SliceAttrs{Begin: []int{5}, End: []int{5}, Stride: []int{1}}, x10, []int{0}, nil},
		// [[1 2 3 4] [5 6 7 8] [9 10 11 12]]: rows 2,0 (stride -2), cols 1..3.
		{"2-D", graph.SliceAttrs{Begin: []int{2, 1}, End: []int{-1, 3}, Stride: []int{-2, 1}}, fd([]int{3, 4}, seq(12)...), []int{2, 2}, []float32{10, 11, 2, 3}},
		{"leading axes only", graph.SliceAttrs{Begin: []int{1}, End: []int{3}}, fd([]int{3, 2}, seq(6)...), []int{2, 2}, []float32{3, 4, 5, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, graph.Slice, &tc.attrs, tc.out, tc.x)
			closeTo(t, got.F, tc.want)
		})
	}
	gi := mustRun(t, graph.Slice, &graph.SliceAttrs{Begin: []int{3}, End: []int{0}, Stride: []int{-2}}, []int{2}, i8d([]int{4}, 1, 2, 3, 4))
	if !reflect.DeepEqual(gi.I, []int64{4, 2}) {
		t.Fatalf("int slice %v", gi.I)
	}
	if _, err := runOp(graph.Slice, &graph.SliceAttrs{Begin: []int{0}, End: []int{12}, Stride: []int{1}}, []int{12}, x10); err == nil || !strings.Contains(err.Error(), "leave the axis") {
		t.Fatalf("got %v", err)
	}
	if _, err := runOp(graph.Slice, &graph.SliceAttrs{Begin: []int{0}, End: []int{4}, Stride: []int{1}}, []int{3}, x10); err == nil || !strings.Contains(err.Error(), "slice output shape") {
		t.Fatalf("got %v", err)
	}
}

func TestPad(t *testing.T) {
	x3 := fd([]int{3}, 1, 2, 3)
	tests := []struct {
		name  string
		attrs graph.PadAttrs
		x     *graph.Data
		out   []int
		want  []float32
	}{
		{"constant", graph.PadAttrs{Pads: []int{2, 2}, Value: 9, Mode: "constant"}, x3, []int{7}, []float32{9, 9, 1, 2, 3, 9, 9}},
		{"default mode", graph.PadAttrs{Pads: []int{1, 0}}, x3, []int{4}, []float32{0, 1, 2, 3}},
		{"reflect", graph.PadAttrs{Pads: []int{2, 2}, Mode: "reflect"}, x3, []int{7}, []float32{3, 2, 1, 2, 3, 2, 1}},
		{"reflect wide", graph.PadAttrs{Pads: []int{5, 0}, Mode: "reflect"}, x3, []int{8}, []float32{2, 1, 2, 3, 2, 1, 2, 3}},
		{"edge", graph.PadAttrs{Pads: []int{2, 2}, Mode: "edge"}, x3, []int{7}, []float32{1, 1, 1, 2, 3, 3, 3}},
		{"wrap", graph.PadAttrs{Pads: []int{2, 2}, Mode: "wrap"}, x3, []int{7}, []float32{2, 3, 1, 2, 3, 1, 2}},
		{"crop", graph.PadAttrs{Pads: []int{-1, 1}, Mode: "constant"}, x3, []int{3}, []float32{2, 3, 0}},
		// ONNX pad reflect 2-D example: [[1 1.2] [2.3 3.4] [4.5 5.7]] pads [0 2 0 0].
		{"reflect 2-D", graph.PadAttrs{Pads: []int{0, 2, 0, 0}, Mode: "reflect"}, fd([]int{3, 2}, 1, 1.2, 2.3, 3.4, 4.5, 5.7), []int{3, 4},
			[]float32{1, 1.2, 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}},
		{"edge 2-D", graph.PadAttrs{Pads: []int{1, 0, 0, 1}, Mode: "edge"}, fd([]int{2, 2}, 1, 2, 3, 4), []int{3, 3},
			[]float32{1, 2, 2, 1, 2, 2, 3, 4, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, graph.Pad, &tc.attrs, tc.out, tc.x)
			closeTo(t, got.F, tc.want)
		})
	}
	gi := mustRun(t, graph.Pad, &graph.PadAttrs{Pads: []int{1, 1}, Value: -128, Mode: "constant"}, []int{4}, i8d([]int{2}, 5, 6))
	if gi.DType != graph.Int8 || !reflect.DeepEqual(gi.I, []int64{-128, 5, 6, -128}) {
		t.Fatalf("int pad %+v", gi)
	}
	gi = mustRun(t, graph.Pad, &graph.PadAttrs{Pads: []int{2, 0}, Mode: "reflect"}, []int{4}, i8d([]int{2}, 5, 6))
	if !reflect.DeepEqual(gi.I, []int64{5, 6, 5, 6}) {
		t.Fatalf("int reflect pad %v", gi.I)
	}
	for _, bad := range []graph.PadAttrs{
		{Pads: []int{1}, Mode: "constant"},
		{Pads: []int{1, 1}, Mode: "mirror"},
	} {
		if _, err := runOp(graph.Pad, &bad, []int{5}, x3); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
	if _, err := runOp(graph.Pad, &graph.PadAttrs{Pads: []int{1, 0}, Mode: "reflect"}, []int{2}, fd([]int{1}, 7)); err == nil {
		t.Fatal("reflect of a size-1 axis accepted")
	}
}
