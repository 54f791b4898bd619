package interp

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestIntResizeBilinearHandWorked checks TFLite's integer bilinear resize on
// cases worked by hand from its definition (10-bit weights, rounding half
// away from zero), one row each.
func TestIntResizeBilinearHandWorked(t *testing.T) {
	for _, tc := range []struct {
		coord string
		in    []int64
		out   int
		want  []int64
	}{
		// Scale (2048+1)/3 = 683: output 1 is at 683/1024, weights 341 and
		// 683; 10·341 - 20·683 = -10250, /1024 = -10.01 -> -10. Output 2 at
		// 1366: input 1 (clamped) with weights 682 + 342.
		{"asymmetric", []int64{10, -20}, 3, []int64{10, -10, -20}},
		// Scale 512, positions 512v - 256: -256 (input 0, weights 1280 and
		// -256), 256, 768, 1280 (input 1). 1·768 + 4·256 = 1792 -> 1.75 -> 2;
		// 1·256 + 4·768 = 3328 -> 3.25 -> 3.
		{"half_pixel", []int64{1, 4}, 4, []int64{1, 2, 3, 4}},
		{"half_pixel", []int64{-1, -4}, 4, []int64{-1, -2, -3, -4}},
		// Scale (2048+2)/4 = 512: halfway points 1.5 -> 2 and -1 exactly.
		{"align_corners", []int64{0, 3, -5}, 5, []int64{0, 2, 3, -1, -5}},
	} {
		t.Run(fmt.Sprintf("%s_%v", tc.coord, tc.in), func(t *testing.T) {
			g := graph.New("resize", "test")
			q := &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}
			g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 1, len(tc.in), 1}, Quant: q})
			g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 1, tc.out, 1}, Quant: q})
			g.AddNode(&graph.Node{Name: "r", Op: graph.Resize, Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: tc.coord}, Inputs: []string{"x"}, Outputs: []string{"y"}})
			g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
			x := graph.NewData(graph.Int8, []int{1, 1, len(tc.in), 1})
			copy(x.I, tc.in)
			res, err := Run(g, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(res["y"].I) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", res["y"].I, tc.want)
			}
		})
	}
	if _, err := graph.IntResizeTaps("pytorch_half_pixel", 2, 4); err == nil {
		t.Error("pytorch_half_pixel accepted")
	}
}
