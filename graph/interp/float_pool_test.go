package interp

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestPools(t *testing.T) {
	x33 := fd([]int{1, 3, 3, 1}, seq(9)...)
	x44 := fd([]int{1, 4, 4, 1}, seq(16)...)
	x22 := fd([]int{1, 2, 2, 1}, 1, 2, 3, 4)
	k := func(kh, kw, sh, sw int) graph.PoolAttrs {
		return graph.PoolAttrs{Kernel: [2]int{kh, kw}, Stride: [2]int{sh, sw}}
	}
	withPad := func(a graph.PoolAttrs, p graph.Padding, incl bool) *graph.PoolAttrs {
		a.Pad, a.CountIncludePad = p, incl
		return &a
	}
	dil := k(2, 2, 1, 1)
	dil.Dilation = [2]int{2, 2}
	act := k(2, 2, 2, 2)
	act.Act = graph.ActRelu6
	tests := []struct {
		name  string
		op    graph.Op
		attrs *graph.PoolAttrs
		x     *graph.Data
		out   []int
		want  []float32
	}{
		{"max 2x2/2", graph.MaxPool2D, withPad(k(2, 2, 2, 2), graph.Padding{}, false), x44, []int{1, 2, 2, 1}, []float32{6, 8, 14, 16}},
		// ceil mode: the last window holds only the elements inside the input.
		{"max ceil", graph.MaxPool2D, withPad(k(2, 2, 2, 2), graph.Padding{}, false), x33, []int{1, 2, 2, 1}, []float32{5, 6, 8, 9}},
		{"avg ceil", graph.AvgPool2D, withPad(k(2, 2, 2, 2), graph.Padding{}, false), x33, []int{1, 2, 2, 1}, []float32{3, 4.5, 7.5, 9}},
		{"avg ceil include pad", graph.AvgPool2D, withPad(k(2, 2, 2, 2), graph.Padding{}, true), x33, []int{1, 2, 2, 1}, []float32{3, 4.5, 7.5, 9}},
		// ONNX averagepool_2d_ceil.
		{"avg 3x3/2 ceil", graph.AvgPool2D, withPad(k(3, 3, 2, 2), graph.Padding{}, false), x44, []int{1, 2, 2, 1}, []float32{6, 7.5, 12, 13.5}},
		{"avg pad exclude", graph.AvgPool2D, withPad(k(3, 3, 1, 1), padding(1, 1, 1, 1), false), x22, []int{1, 2, 2, 1}, []float32{2.5, 2.5, 2.5, 2.5}},
		{"avg pad include", graph.AvgPool2D, withPad(k(3, 3, 1, 1), padding(1, 1, 1, 1), true), x22, []int{1, 2, 2, 1}, []float32{10.0 / 9, 10.0 / 9, 10.0 / 9, 10.0 / 9}},
		// Asymmetric: pad bottom/right only; windows [1 2;3 4] [2 0;4 0] [3 4;0 0] [4 0;0 0].
		{"avg asym include", graph.AvgPool2D, withPad(k(2, 2, 1, 1), padding(0, 0, 1, 1), true), x22, []int{1, 2, 2, 1}, []float32{2.5, 1.5, 1.75, 1}},
		{"avg asym exclude", graph.AvgPool2D, withPad(k(2, 2, 1, 1), padding(0, 0, 1, 1), false), x22, []int{1, 2, 2, 1}, []float32{2.5, 3, 3.5, 4}},
		// Max ignores padding even when every value is negative.
		{"max pad negative", graph.MaxPool2D, withPad(k(2, 2, 2, 2), padding(1, 1, 1, 1), false), fd([]int{1, 2, 2, 1}, -1, -2, -3, -4), []int{1, 2, 2, 1}, []float32{-1, -2, -3, -4}},
		{"max dilation", graph.MaxPool2D, &dil, x44, []int{1, 2, 2, 1}, []float32{11, 12, 15, 16}},
		{"avg relu6", graph.AvgPool2D, &act, x44, []int{1, 2, 2, 1}, []float32{3.5, 5.5, 6, 6}},
		{"channels", graph.MaxPool2D, withPad(k(1, 2, 1, 1), graph.Padding{}, false), fd([]int{1, 1, 2, 2}, 1, 9, 5, 2), []int{1, 1, 1, 2}, []float32{5, 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, tc.op, tc.attrs, tc.out, tc.x)
			closeTo(t, got.F, tc.want)
		})
	}
	if _, err := runOp(graph.MaxPool2D, withPad(k(2, 2, 2, 2), graph.Padding{}, false), []int{1, 3, 2, 1}, x44); err == nil || !strings.Contains(err.Error(), "pool output shape") {
		t.Fatalf("got %v", err)
	}
	if _, err := runOp(graph.AvgPool2D, nil, []int{1, 2, 2, 1}, x44); err == nil {
		t.Fatal("pool without attributes accepted")
	}
}

func TestMean(t *testing.T) {
	x := fd([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	tests := []struct {
		attrs *graph.MeanAttrs
		out   []int
		want  []float32
	}{
		{&graph.MeanAttrs{Axes: []int{1}, KeepDims: true}, []int{2, 1}, []float32{2, 5}},
		{&graph.MeanAttrs{Axes: []int{-1}}, []int{2}, []float32{2, 5}},
		{&graph.MeanAttrs{Axes: []int{0}}, []int{3}, []float32{2.5, 3.5, 4.5}},
		{&graph.MeanAttrs{Axes: []int{0, 1}}, []int{}, []float32{3.5}},
		{nil, []int{1, 1}, []float32{3.5}},
	}
	for _, tc := range tests {
		got := mustRun(t, graph.Mean, tc.attrs, tc.out, x)
		closeTo(t, got.F, tc.want)
	}
	// Global average pool on NHWC.
	got := mustRun(t, graph.Mean, &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}, []int{1, 1, 1, 2}, fd([]int{1, 2, 2, 2}, 1, 10, 2, 20, 3, 30, 4, 40))
	closeTo(t, got.F, []float32{2.5, 25})
	if _, err := runOp(graph.Mean, &graph.MeanAttrs{Axes: []int{2}}, []int{2}, x); err == nil || !strings.Contains(err.Error(), "axis 2 out of range") {
		t.Fatalf("got %v", err)
	}
	if _, err := runOp(graph.Mean, &graph.MeanAttrs{Axes: []int{1}}, []int{3}, x); err == nil {
		t.Fatal("wrong output shape accepted")
	}
}
