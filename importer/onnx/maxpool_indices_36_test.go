package onnx_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// ONNX MaxPool's second output, Indices: the flat index of each window's
// maximum into the whole input in ONNX's layout, [N, C, H, W] (row major,
// storage_order 0: n·C·H·W + c·H·W + h·W + w; column major, storage_order
// 1: n·C·H·W + c·H·W + w·H + h). The window is scanned row by row and the
// first of equal maxima is kept; padding is never chosen. The importer
// maps it to graph.MaxPoolIndices, which walks NHWC; these values are
// worked by hand.

// maxPoolModel is one MaxPool node of input x [shape] with outputs y and
// i (Indices), shapes yShape.
func maxPoolModel(shape, yShape []int, attrs ...*onnx.Attribute) *onnx.Builder {
	bl := onnx.NewBuilder("maxpool_indices", 13, 1)
	bl.Input("x", graph.Float32, shape...)
	nodeN(bl, "pool", "MaxPool", []string{"x"}, []string{"y", "i"}, attrs...)
	bl.Output("y", graph.Float32, yShape...)
	bl.Output("i", graph.Int64, yShape...)
	return bl
}

// poolX is the input of the padded case, x [2, 2, 3, 3] in NCHW, one
// plane p = n·2 + c per row (base index p·9):
//
//	p0 (n0 c0) 1 5 5 / 2 3 0 / 7 -1 3
//	p1 (n0 c1) -5 -4 -6 / -3 -2 -1 / -9 -8 -7   (all below the padding's 0)
//	p2 (n1 c0) 0 0 0 / 0 0 1 / 0 1 0
//	p3 (n1 c1) 2 1 9 / 8 7 6 / 5 4 3
func poolX() *graph.Data {
	return f32([]int{2, 2, 3, 3},
		1, 5, 5, 2, 3, 0, 7, -1, 3,
		-5, -4, -6, -3, -2, -1, -9, -8, -7,
		0, 0, 0, 0, 0, 1, 0, 1, 0,
		2, 1, 9, 8, 7, 6, 5, 4, 3)
}

// poolAttrs: kernel 2×2, strides 2, pads 1 on every side. The output is
// 2×2 ((3 + 2 − 2)/2 + 1) and the windows' taps inside the input are
// (0,0): (0,0); (0,1): (0,1) (0,2); (1,0): (1,0) (2,0);
// (1,1): (1,1) (1,2) (2,1) (2,2).
func poolAttrs(order int64) []*onnx.Attribute {
	return []*onnx.Attribute{onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2),
		onnx.IntsAttr("pads", 1, 1, 1, 1), onnx.IntAttr("storage_order", order)}
}

// The padded case's maxima, plane by plane:
//
//	p0: 1 at (0,0); 5 = 5 at (0,1) (0,2): the first, (0,1); 7 at (2,0);
//	    3 = 3 at (1,1) (2,2): the first, (1,1).
//	p1: -5 at (0,0); -4 at (0,1); -3 at (1,0); -1 at (1,2).
//	p2: 0 at (0,0); 0 = 0: (0,1); 0 = 0: (1,0); 1 = 1 at (1,2) (2,1):
//	    row by row (1,2) comes first (a column scan would take (2,1)).
//	p3: 2 at (0,0); 9 at (0,2); 8 at (1,0); 7 at (1,1).
var (
	poolY = []float64{1, 5, 7, 3, -5, -4, -3, -1, 0, 0, 0, 1, 2, 9, 8, 7}
	// Row major, base + h·3 + w:
	// p0: 0, 1, 6, 4; p1: 9+0, 9+1, 9+3, 9+5; p2: 18+0, 18+1, 18+3, 18+5;
	// p3: 27+0, 27+2, 27+3, 27+4.
	poolRow = []float64{0, 1, 6, 4, 9, 10, 12, 14, 18, 19, 21, 23, 27, 29, 30, 31}
	// Column major, base + w·3 + h:
	// p0: (0,0) 0, (0,1) 3, (2,0) 2, (1,1) 4; p1: 9, 9+3, 9+1, (1,2) 9+7;
	// p2: 18, 18+3, 18+1, (1,2) 18+7; p3: 27, (0,2) 27+6, (1,0) 27+1, (1,1) 27+4.
	poolCol = []float64{0, 3, 2, 4, 9, 12, 10, 16, 18, 21, 19, 25, 27, 33, 28, 31}
)

func TestMaxPoolIndicesPadsTiesBatch(t *testing.T) {
	for _, c := range []struct {
		order int64
		want  []float64
	}{{0, poolRow}, {1, poolCol}} {
		got := runOne(t, maxPoolModel([]int{2, 2, 3, 3}, []int{2, 2, 2, 2}, poolAttrs(c.order)...), map[string]*graph.Data{"x": poolX()})
		checkData(t, "values", got[0], graph.Float32, []int{2, 2, 2, 2}, poolY)
		checkData(t, "indices", got[1], graph.Int64, []int{2, 2, 2, 2}, c.want)
	}
}

// TestMaxPoolIndicesDilation: x [1, 2, 4, 4], kernel 2×2, dilations 2, so
// the taps of output (oy, ox) are (oy + {0,2}, ox + {0,2}) and the output
// is 2×2.
//
//	c0  3 1 4 1 / 5 9 2 6 / 5 3 5 8 / 9 7 9 3
//	(0,0): 3 4 5 5 at (0,0) (0,2) (2,0) (2,2): 5, first at (2,0) → 8
//	(0,1): 1 1 3 8 at (0,1) (0,3) (2,1) (2,3): 8 at (2,3) → 11
//	(1,0): 5 2 9 9 at (1,0) (1,2) (3,0) (3,2): 9, first at (3,0) → 12
//	(1,1): 9 6 7 3 at (1,1) (1,3) (3,1) (3,3): 9 at (1,1) → 5
//
// c1 is −c0 (base 16):
//
//	(0,0): −3 −4 −5 −5: −3 at (0,0) → 16
//	(0,1): −1 −1 −3 −8: −1, first at (0,1) → 17
//	(1,0): −5 −2 −9 −9: −2 at (1,2) → 22
//	(1,1): −9 −6 −7 −3: −3 at (3,3) → 31
func TestMaxPoolIndicesDilation(t *testing.T) {
	c0 := []float32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}
	x := f32([]int{1, 2, 4, 4}, c0...)
	for _, v := range c0 {
		x.F = append(x.F, -v)
	}
	bl := maxPoolModel([]int{1, 2, 4, 4}, []int{1, 2, 2, 2}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("dilations", 2, 2))
	got := runOne(t, bl, map[string]*graph.Data{"x": x})
	checkData(t, "values", got[0], graph.Float32, []int{1, 2, 2, 2}, []float64{5, 8, 9, 9, -3, -1, -2, -3})
	checkData(t, "indices", got[1], graph.Int64, []int{1, 2, 2, 2}, []float64{8, 11, 12, 5, 16, 17, 22, 31})
}

// TestMaxPoolIndicesCeilColumnMajor: x [1, 1, 3, 4] (H ≠ W, so the two
// orders differ in their steps), kernel 2×2, strides 2, ceil_mode: the
// output is 2×2 (ceil((3−2)/2) + 1), its bottom windows only row 2.
//
//	1 2 3 4 / 8 7 6 5 / 9 0 0 10
//	(0,0): 1 2 8 7: 8 at (1,0) → row 1·4 + 0 = 4, column 0·3 + 1 = 1
//	(0,1): 3 4 6 5: 6 at (1,2) → row 6, column 2·3 + 1 = 7
//	(1,0): 9 0: 9 at (2,0) → row 8, column 2
//	(1,1): 0 10: 10 at (2,3) → row 11, column 3·3 + 2 = 11
func TestMaxPoolIndicesCeilColumnMajor(t *testing.T) {
	x := f32([]int{1, 1, 3, 4}, 1, 2, 3, 4, 8, 7, 6, 5, 9, 0, 0, 10)
	for _, c := range []struct {
		order int64
		want  []float64
	}{{0, []float64{4, 6, 8, 11}}, {1, []float64{1, 7, 2, 11}}} {
		bl := maxPoolModel([]int{1, 1, 3, 4}, []int{1, 1, 2, 2}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2),
			onnx.IntAttr("ceil_mode", 1), onnx.IntAttr("storage_order", c.order))
		got := runOne(t, bl, map[string]*graph.Data{"x": x})
		checkData(t, "values", got[0], graph.Float32, []int{1, 1, 2, 2}, []float64{8, 6, 9, 10})
		checkData(t, "indices", got[1], graph.Int64, []int{1, 1, 2, 2}, c.want)
	}
}

// TestMaxPoolIndicesSameUpper: auto_pad SAME_UPPER on x [1, 1, 3, 3] with
// kernel 2×2, strides 1: the output is 3×3, the padding one row below and
// one column right (never chosen).
//
//	-1 -2 -3 / -4 -5 -6 / -7 -8 -9
//	(0,0): -1 -2 -4 -5 → (0,0) 0   (0,1): -2 -3 -5 -6 → (0,1) 1   (0,2): -3 -6 → (0,2) 2
//	(1,0): -4 -5 -7 -8 → (1,0) 3   (1,1): → (1,1) 4               (1,2): -6 -9 → (1,2) 5
//	(2,0): -7 -8 → (2,0) 6         (2,1): -8 -9 → (2,1) 7         (2,2): -9 → (2,2) 8
func TestMaxPoolIndicesSameUpper(t *testing.T) {
	x := f32([]int{1, 1, 3, 3}, -1, -2, -3, -4, -5, -6, -7, -8, -9)
	bl := maxPoolModel([]int{1, 1, 3, 3}, []int{1, 1, 3, 3}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.StringAttr("auto_pad", "SAME_UPPER"))
	got := runOne(t, bl, map[string]*graph.Data{"x": x})
	checkData(t, "values", got[0], graph.Float32, []int{1, 1, 3, 3}, []float64{-1, -2, -3, -4, -5, -6, -7, -8, -9})
	checkData(t, "indices", got[1], graph.Int64, []int{1, 1, 3, 3}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8})
}

// TestMaxPoolIndices1D: a 1-D MaxPool (x [1, 2, 5], kernel 2, strides 2,
// pads 0 1) is lifted to 2-D with H = 1, which leaves the indices the 1-D
// ones (n·C·W + c·W + w) in either order. The output has 3 elements.
//
//	c0  1 3 2 5 4:  {1 3} → 1, {2 5} → 3, {4} → 4
//	c1  0 -1 -2 7 7 (base 5):  {0 -1} → 5, {-2 7} → 8, {7} → 9
func TestMaxPoolIndices1D(t *testing.T) {
	x := f32([]int{1, 2, 5}, 1, 3, 2, 5, 4, 0, -1, -2, 7, 7)
	for _, order := range []int64{0, 1} {
		bl := maxPoolModel([]int{1, 2, 5}, []int{1, 2, 3}, onnx.IntsAttr("kernel_shape", 2), onnx.IntsAttr("strides", 2),
			onnx.IntsAttr("pads", 0, 1), onnx.IntAttr("storage_order", order))
		got := runOne(t, bl, map[string]*graph.Data{"x": x})
		checkData(t, "values", got[0], graph.Float32, []int{1, 2, 3}, []float64{3, 5, 4, 0, 7, 7})
		checkData(t, "indices", got[1], graph.Int64, []int{1, 2, 3}, []float64{1, 3, 4, 5, 8, 9})
	}
}

// TestMaxPoolIndicesOnlyIndices: a model that reads only the indices
// (the values output unnamed) imports one node.
func TestMaxPoolIndicesOnlyIndices(t *testing.T) {
	bl := onnx.NewBuilder("only_indices", 13, 1)
	bl.Input("x", graph.Float32, 2, 2, 3, 3)
	nodeN(bl, "pool", "MaxPool", []string{"x"}, []string{"", "i"}, poolAttrs(1)...)
	bl.Output("i", graph.Int64, 2, 2, 2, 2)
	got := runOne(t, bl, map[string]*graph.Data{"x": poolX()})
	checkData(t, "indices", got[0], graph.Int64, []int{2, 2, 2, 2}, poolCol)
}

// TestMaxPoolIndicesRefusesInt: the indices are float32 only; an 8-bit
// MaxPool with Indices is refused with the reason.
func TestMaxPoolIndicesRefusesInt(t *testing.T) {
	bl := onnx.NewBuilder("u8", 13, 1)
	bl.Input("x", graph.UInt8, 1, 1, 3, 3)
	nodeN(bl, "pool", "MaxPool", []string{"x"}, []string{"y", "i"}, onnx.IntsAttr("kernel_shape", 2, 2))
	bl.Output("y", graph.UInt8, 1, 1, 2, 2)
	bl.Output("i", graph.Int64, 1, 1, 2, 2)
	_, err := onnx.Import("m", bl.Model(), onnx.Options{})
	if err == nil || !strings.Contains(err.Error(), "MaxPool Indices output on uint8") {
		t.Fatalf("import: %v, want the Indices on uint8 refused", err)
	}
}

// TestMaxPoolIndicesHostC compiles the padded case, in both orders in one
// model, to C for the host (AddressSanitizer and UndefinedBehaviorSanitizer,
// -pedantic -Werror), runs it and checks its outputs against the
// hand-worked values (and graph/interp's).
func TestMaxPoolIndicesHostC(t *testing.T) {
	bl := onnx.NewBuilder("maxpool_indices_c", 13, 1)
	bl.Input("x", graph.Float32, 2, 2, 3, 3)
	nodeN(bl, "row", "MaxPool", []string{"x"}, []string{"y", "i_row"}, poolAttrs(0)...)
	nodeN(bl, "col", "MaxPool", []string{"x"}, []string{"", "i_col"}, poolAttrs(1)...)
	bl.Output("y", graph.Float32, 2, 2, 2, 2)
	bl.Output("i_row", graph.Int64, 2, 2, 2, 2)
	bl.Output("i_col", graph.Int64, 2, 2, 2, 2)
	x := sanitizedHostRun(t, bl.Model(), "maxpool_indices", []map[string]*graph.Data{{"x": poolX()}}, 2*time.Minute)
	out := x.Outputs[0]
	if len(out) != 3 {
		t.Fatalf("%d outputs, want 3", len(out))
	}
	checkData(t, "C values", out[0], graph.Float32, []int{2, 2, 2, 2}, poolY)
	checkData(t, "C row-major indices", out[1], graph.Int64, []int{2, 2, 2, 2}, poolRow)
	checkData(t, "C column-major indices", out[2], graph.Int64, []int{2, 2, 2, 2}, poolCol)
}
