package tir

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The 16x8 weights' layout and the intrinsic that reads it, by hand: rows
// of five weights 10..50 are stored 10, 30, 20, 40 (the group of four as
// 0, 2, 1, 3) and 50 (the tail); x = 1..5 gives 10 + 40 + 90 + 160 + 250 =
// 550 on row 0 and, with the second row's weights negated, -550.
func TestDotS16S8Layout(t *testing.T) {
	w := []int64{10, 20, 30, 40, 50, -10, -20, -30, -40, -50}
	b := DotS16S8Weights("w", w, []int{2, 5}, 5)
	if got := fmt.Sprint(b.Data.I); got != "[10 30 20 40 50 -10 -30 -20 -40 -50]" {
		t.Fatalf("layout %s", got)
	}
	x := &graph.Data{DType: graph.Int16, Shape: []int{5}, I: []int64{1, 2, 3, 4, 5}}
	dot := extIntrinsics[IntrDotS16S8]
	for row, want := range []int64{550, -550} {
		got := dot([]val{{i: 0, p: x}, {i: int64(5 * row), p: b.Data}, {i: 5}})
		if got.i != want {
			t.Errorf("row %d: %d, want %d", row, got.i, want)
		}
	}
}
