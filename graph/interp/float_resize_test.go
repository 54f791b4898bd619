package interp

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestResize(t *testing.T) {
	x22 := fd([]int{1, 2, 2, 1}, 1, 2, 3, 4)
	x24 := fd([]int{1, 2, 4, 1}, 1, 2, 3, 4, 5, 6, 7, 8)
	row := fd([]int{1, 1, 4, 1}, 1, 2, 3, 4)
	near := func(coord, mode string) *graph.ResizeAttrs {
		return &graph.ResizeAttrs{Mode: "nearest", Coord: coord, Nearest: mode}
	}
	tests := []struct {
		name  string
		attrs *graph.ResizeAttrs
		x     *graph.Data
		out   []int
		want  []float32
	}{
		// ONNX resize_upsample_scales_nearest (scales 2, 3; defaults).
		{"upsample nearest", &graph.ResizeAttrs{Mode: "nearest"}, x22, []int{1, 4, 6, 1},
			[]float32{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}},
		// ONNX resize_downsample_scales_nearest / _linear: scales 0.6 on 2x4.
		{"downsample nearest 0.6", &graph.ResizeAttrs{Mode: "nearest", Scale: [2]float32{0.6, 0.6}}, x24, []int{1, 1, 2, 1}, []float32{1, 3}},
		{"downsample linear 0.6", &graph.ResizeAttrs{Mode: "bilinear", Coord: "half_pixel", Scale: [2]float32{0.6, 0.6}}, x24, []int{1, 1, 2, 1}, []float32{2.6666665, 4.3333331}},
		// ONNX resize_upsample_scales_linear_align_corners.
		{"align corners", &graph.ResizeAttrs{Mode: "bilinear", Coord: "align_corners"}, x22, []int{1, 4, 4, 1},
			[]float32{1, 4.0 / 3, 5.0 / 3, 2, 5.0 / 3, 2, 7.0 / 3, 8.0 / 3, 7.0 / 3, 8.0 / 3, 3, 10.0 / 3, 3, 10.0 / 3, 11.0 / 3, 4}},
		// ONNX resize_upsample_scales_linear (half_pixel): edge rows repeat.
		{"upsample linear", &graph.ResizeAttrs{Mode: "bilinear"}, x22, []int{1, 4, 4, 1},
			[]float32{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}},
		// ONNX resize_downsample_scales_linear_half_pixel_symmetric.
		{"half_pixel_symmetric", &graph.ResizeAttrs{Mode: "linear", Coord: "half_pixel_symmetric", Scale: [2]float32{1, 0.6}}, row, []int{1, 1, 2, 1}, []float32{1.6666666, 3.3333333}},
		// Asymmetric, x/2 = 0, .5, 1, 1.5, ...: every rounding.
		{"asymmetric floor", near("asymmetric", "floor"), row, []int{1, 1, 8, 1}, []float32{1, 1, 2, 2, 3, 3, 4, 4}},
		{"asymmetric ceil", near("asymmetric", "ceil"), row, []int{1, 1, 8, 1}, []float32{1, 2, 2, 3, 3, 4, 4, 4}},
		{"asymmetric prefer floor", near("asymmetric", "round_prefer_floor"), row, []int{1, 1, 8, 1}, []float32{1, 1, 2, 2, 3, 3, 4, 4}},
		{"asymmetric prefer ceil", near("asymmetric", "round_prefer_ceil"), row, []int{1, 1, 8, 1}, []float32{1, 2, 2, 3, 3, 4, 4, 4}},
		// (x+.5)/2 = .25, .75, 1.25, ...
		{"tf_half_pixel_for_nn", near("tf_half_pixel_for_nn", "round_prefer_floor"), row, []int{1, 1, 8, 1}, []float32{1, 2, 2, 3, 3, 4, 4, 4}},
		// x*(3/7): 0, .43, .86, 1.29, 1.71, 2.14, 2.57, 3.
		{"align corners nearest", near("align_corners", "round_prefer_floor"), row, []int{1, 1, 8, 1}, []float32{1, 1, 2, 2, 3, 3, 4, 4}},
		// A single output: pytorch_half_pixel reads -0.5 (the first element),
		// half_pixel reads 1.5 (between the middle two).
		{"pytorch_half_pixel single", &graph.ResizeAttrs{Mode: "bilinear", Coord: "pytorch_half_pixel"}, row, []int{1, 1, 1, 1}, []float32{1}},
		{"half_pixel single", &graph.ResizeAttrs{Mode: "bilinear", Coord: "half_pixel"}, row, []int{1, 1, 1, 1}, []float32{2.5}},
		{"channels", &graph.ResizeAttrs{Mode: "nearest", Coord: "asymmetric", Nearest: "floor"}, fd([]int{1, 1, 2, 2}, 1, -1, 2, -2), []int{1, 1, 4, 2},
			[]float32{1, -1, 1, -1, 2, -2, 2, -2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRun(t, graph.Resize, tc.attrs, tc.out, tc.x)
			closeTo(t, got.F, tc.want)
		})
	}
	for _, bad := range []*graph.ResizeAttrs{
		{Mode: "cubic"},
		{Mode: "nearest", Coord: "tf_crop_and_resize"},
		{Mode: "nearest", Nearest: "round"},
	} {
		if _, err := runOp(graph.Resize, bad, []int{1, 2, 4, 1}, x22); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Fatalf("%+v: got %v", bad, err)
		}
	}
	if _, err := runOp(graph.Resize, &graph.ResizeAttrs{Mode: "nearest"}, []int{1, 2, 4, 2}, x22); err == nil || !strings.Contains(err.Error(), "keep N and C") {
		t.Fatalf("got %v", err)
	}
}
