package interp

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An int8 nearest resize whose ONNX scale is not out/in maps coordinates by
// the scale, as ONNX defines it (review finding: the int8 kernel used in/out,
// picked other pixels than the C, and `test` failed). Worked by hand along W:
//   - 5 → 7 at scale 1.5, asymmetric, round_prefer_ceil: x/1.5 = 0, 0.67,
//     1.33, 2, 2.67, 3.33, 4 → 0, 1, 1, 2, 3, 3, 4 (in/out would take 4 for
//     output 5: 5·5/7 = 3.57);
//   - 6 → 3 at scale 0.5, half_pixel, floor: (x+0.5)/0.5 - 0.5 = 0.5, 2.5,
//     4.5 → 0, 2, 4;
//   - 5 → 2 at scale 0.5, half_pixel, round_prefer_floor: 0.5, 2.5 → 0, 2
//     (in/out, 2.5: (x+0.5)·2.5 - 0.5 = 0.75, 3.25 → 1, 3).
func TestIntResizeNearestONNXScale(t *testing.T) {
	for _, tc := range []struct {
		coord, nearest string
		scale          float32
		in, out        int
		want           []int64
	}{
		{"asymmetric", "round_prefer_ceil", 1.5, 5, 7, []int64{0, 1, 1, 2, 3, 3, 4}},
		{"half_pixel", "floor", 0.5, 6, 3, []int64{0, 2, 4}},
		{"half_pixel", "round_prefer_floor", 0.5, 5, 2, []int64{0, 2}},
		// A scale equal to out/in keeps the TFLite-exact mapping.
		{"asymmetric", "floor", 2, 3, 6, []int64{0, 0, 1, 1, 2, 2}},
	} {
		t.Run(fmt.Sprintf("%s_%s_%v", tc.coord, tc.nearest, tc.scale), func(t *testing.T) {
			g := graph.New("resize", "test")
			q := &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}
			g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 1, tc.in, 1}, Quant: q})
			g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 1, tc.out, 1}, Quant: q})
			attrs := &graph.ResizeAttrs{Mode: "nearest", Coord: tc.coord, Nearest: tc.nearest, Scale: [2]float32{1, tc.scale}}
			g.AddNode(&graph.Node{Name: "r", Op: graph.Resize, Attrs: attrs, Inputs: []string{"x"}, Outputs: []string{"y"}})
			g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
			x := graph.NewData(graph.Int8, []int{1, 1, tc.in, 1})
			for i := range x.I {
				x.I[i] = int64(i)
			}
			res, err := Run(g, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(res["y"].I) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", res["y"].I, tc.want)
			}
		})
	}
}
