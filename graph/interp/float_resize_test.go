package interp

import (
	"math"
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
	// Cubic, worked by hand from the kernel with a = -0.75:
	// k(d) = 1.25 d^3 - 2.25 d^2 + 1 for d <= 1, -0.75 d^3 + 3.75 d^2 - 6 d + 3
	// for 1 < d < 2. Row 1 2 3 4 to 8, half_pixel: output 0 sits at -0.25,
	// taps -2 -1 0 1 (edge: 1 1 1 2) weigh k(1.75) k(0.75) k(0.25) k(1.25) =
	// -0.03515625 0.26171875 0.87890625 -0.10546875: 0.89453125. Excluding
	// the outside taps leaves (0.87890625 - 2 x 0.10546875) / 0.7734375 =
	// 171/198. Row to 7 by align_corners: output 1 at 0.5 reads 1 1 2 3
	// with k(1.5) k(0.5) k(0.5) k(1.5) = -0.09375 0.59375 0.59375 -0.09375:
	// 1.40625; output 2 at exactly 1 is the input, 2.
	cubic := func(coord string, exclude bool, width int) []float32 {
		a := &graph.ResizeAttrs{Mode: "cubic", Coord: coord, ExcludeOutside: exclude, CubicA: -0.75}
		return mustRun(t, graph.Resize, a, []int{1, 1, width, 1}, row).F
	}
	for _, c := range []struct {
		name string
		got  float32
		want float64
	}{
		{"cubic edge", cubic("half_pixel", false, 8)[0], 0.89453125},
		{"cubic exclude outside", cubic("half_pixel", true, 8)[0], 171.0 / 198},
		{"cubic align corners", cubic("align_corners", false, 7)[1], 1.40625},
		{"cubic whole coordinate", cubic("align_corners", false, 7)[2], 2},
		{"cubic last", cubic("align_corners", false, 7)[6], 4},
	} {
		if math.Abs(float64(c.got)-c.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, bad := range []*graph.ResizeAttrs{
		{Mode: "lanczos"},
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

// cubic_coeff_a = 0 is a kernel of its own, not the default (review
// finding: it was read as -0.75). With a = 0, k(d) = 2|d|^3 - 3|d|^2 + 1
// for |d| <= 1 and 0 beyond: the row 1 2 3 4 to 8 by half_pixel, output 1
// at 0.25, taps 0..3 at distances 1.25 0.25 0.75 1.75 weigh 0, 0.84375,
// 0.15625, 0: 1 x 0.84375 + 2 x 0.15625 = 1.15625.
func TestCubicCoefficientZero(t *testing.T) {
	row := fd([]int{1, 1, 4, 1}, 1, 2, 3, 4)
	got := mustRun(t, graph.Resize, &graph.ResizeAttrs{Mode: "cubic", Coord: "half_pixel"}, []int{1, 1, 8, 1}, row).F
	if math.Abs(float64(got[1])-1.15625) > 1e-6 {
		t.Errorf("a = 0: output 1 is %v, want 1.15625", got[1])
	}
}
