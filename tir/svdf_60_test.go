package tir

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An SVDF step sums in int32 exactly where no partial sum can leave it:
// |bias| + Σ|w|·d <= 2^31 − 1, d the largest |x − zx| (int8 x with zero
// point −128: 255). Hand-worked: 66,000 weights of 127 give
// 127·66,000·255 = 2,137,410,000, and a bias of 10,073,647 reaches
// 2,147,483,647 exactly; one more is 2^31.
func TestSVDFSumsInt32WhereTheyFit60(t *testing.T) {
	row := slices.Repeat([]int64{127}, 66000)
	for _, c := range []struct {
		name string
		w    []int64
		zx   int64
		bias []int64
		want DType
	}{
		{"66,000 weights of 127, zx −128", row, -128, nil, I32},
		{"the same, bias 10,073,647", row, -128, []int64{10073647}, I32},
		{"the same, bias −10,073,648", row, -128, []int64{-10073648}, I64},
		{"66,400 weights of 127", slices.Repeat([]int64{127}, 66400), -128, nil, I64},
		// zx 0: d = 128 (x = −128), so twice the weights fit.
		{"132,000 weights of −127, zx 0", slices.Repeat([]int64{-127}, 132000), 0, nil, I32},
		{"132,200 weights of −127, zx 0", slices.Repeat([]int64{-127}, 132200), 0, nil, I64},
	} {
		if got := svdfAcc(c.w, 1, len(c.w), graph.Int8, c.zx, c.bias); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Every row counts: the second row alone is over.
	two := append(slices.Repeat([]int64{1}, 66400), slices.Repeat([]int64{127}, 66400)...)
	if got := svdfAcc(two, 2, 66400, graph.Int8, -128, nil); got != I64 {
		t.Errorf("two rows, the second over: %v, want int64", got)
	}
	// int16 state (zero point 0): d = 32,768, so 127·n·32,768 <= 2^31 − 1
	// holds for n <= 516.
	if got := svdfAcc(slices.Repeat([]int64{127}, 516), 1, 516, graph.Int16, 0, nil); got != I32 {
		t.Errorf("516 weights over int16: %v, want int32", got)
	}
	if got := svdfAcc(slices.Repeat([]int64{127}, 517), 1, 517, graph.Int16, 0, nil); got != I64 {
		t.Errorf("517 weights over int16: %v, want int64", got)
	}
}
