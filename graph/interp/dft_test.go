package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// DFT worked by hand: [1 2 3 4] has the spectrum 10, -2+2i, -2, -2-2i;
// one-sided, the first three; the inverse of the spectrum is the signal;
// [1 2] zero-padded to 4 gives 3, 1-2i, -1, 1+2i; a transform along the
// middle axis of [2, 4, 1] reads each column. A short-time transform of
// 1..6 in frames of 4, 2 apart, under the window [0 1 1 0]: frame 0 is
// [0 2 3 0] (bins 5, -3-2i, 1), frame 1 [0 4 5 0] (9, -5-4i, 1).
func TestDFTHandWorked(t *testing.T) {
	re := func(v ...float32) *graph.Data { return fd([]int{1, len(v), 1}, v...) }
	for _, c := range []struct {
		name string
		a    graph.DFTAttrs
		x    *graph.Data
		win  *graph.Data
		want []float32
	}{
		{"full", graph.DFTAttrs{Axis: 1, N: 4}, re(1, 2, 3, 4), nil, []float32{10, 0, -2, 2, -2, 0, -2, -2}},
		{"onesided", graph.DFTAttrs{Axis: 1, N: 4, Onesided: true}, re(1, 2, 3, 4), nil, []float32{10, 0, -2, 2, -2, 0}},
		{"inverse", graph.DFTAttrs{Axis: 1, N: 4, Inverse: true}, fd([]int{1, 4, 2}, 10, 0, -2, 2, -2, 0, -2, -2), nil,
			[]float32{1, 0, 2, 0, 3, 0, 4, 0}},
		{"padded", graph.DFTAttrs{Axis: 1, N: 4}, re(1, 2), nil, []float32{3, 0, 1, -2, -1, 0, 1, 2}},
		{"truncated", graph.DFTAttrs{Axis: 1, N: 2}, re(1, 2, 3), nil, []float32{3, 0, -1, 0}},
		{"columns", graph.DFTAttrs{Axis: 0, N: 2}, fd([]int{2, 4, 1}, 1, 2, 3, 4, 5, 7, 9, 11), nil,
			[]float32{6, 0, 9, 0, 12, 0, 15, 0, -4, 0, -5, 0, -6, 0, -7, 0}},
		{"stft", graph.DFTAttrs{N: 4, Onesided: true, Frames: 2, Step: 2}, re(1, 2, 3, 4, 5, 6), fd([]int{4}, 0, 1, 1, 0),
			[]float32{5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0}},
	} {
		var shape []int
		if c.win != nil {
			shape = c.win.Shape
		}
		out, err := graph.DFTShape(&c.a, c.x.Shape, shape)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ins := []*graph.Data{c.x}
		if c.win != nil {
			ins = append(ins, c.win)
		}
		y, err := runOpDT(graph.DFT, &c.a, graph.Float32, out, ins...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range y.F {
			if d := y.F[i] - c.want[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s: got %v, want %v", c.name, y.F, c.want)
			}
		}
	}
}
