package tir

import (
	"fmt"
	"slices"
	"testing"
)

// col33Order lists each of the 27 taps once, in IntrDSPCol33C3's
// physical layout as IntrDSPWiden's order reads it: word 2g holds logical
// entries 4g and 4g+2, word 2g+1 entries 4g+1 and 4g+3. Worked by hand
// from the layout: word 12 is (row 0's ninth byte, row 1's), word 13 (row
// 2's, none).
func TestCol33Order55(t *testing.T) {
	o := col33Order()
	seen := slices.Clone(o)
	slices.Sort(seen)
	want := []int{-1}
	for k := 0; k < 27; k++ {
		want = append(want, k)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("col33Order %v: not the 27 taps once and one zero", o)
	}
	phys := func(word, half int) int { return o[4*(word/2)+word%2+2*half] }
	for r := 0; r < 3; r++ {
		for j, b := range [][2]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}} {
			if phys(4*r+j, 0) != 9*r+b[0] || phys(4*r+j, 1) != 9*r+b[1] {
				t.Errorf("row %d word %d: taps %d, %d; want %d, %d", r, j, phys(4*r+j, 0), phys(4*r+j, 1), 9*r+b[0], 9*r+b[1])
			}
		}
	}
	if phys(12, 0) != 8 || phys(12, 1) != 17 || phys(13, 0) != 26 || phys(13, 1) != -1 {
		t.Errorf("words 12, 13: %d %d, %d %d; want 8 17, 26 -1", phys(12, 0), phys(12, 1), phys(13, 0), phys(13, 1))
	}
}

// A 3×3 three-channel layer takes the 14-word gather by default, and
// gives the reference's outputs with padding on every side, on none, at
// strides 1 and 2, at the input extremes (-255 and 255 after the offset
// in every lane, the 28th included) and with full-range weights; int8
// weights (knob weights 8) keep the rows form.
func TestDSPCol33Exact55(t *testing.T) {
	for _, c := range []struct {
		h, w, cout, stride, pad int
		xzp                     int32
		x, wv                   func(i int) int64
	}{
		{6, 9, 4, 1, 1, 127, func(int) int64 { return -128 }, func(int) int64 { return -128 }},
		{7, 8, 6, 2, 1, -128, func(int) int64 { return 127 }, func(i int) int64 { return 127 - 255*int64(i%2) }},
		{5, 5, 2, 1, 0, -128, func(i int) int64 { return 127 - 255*int64(i%2) }, func(int) int64 { return 127 }},
		{9, 6, 8, 2, 0, 0, func(i int) int64 { return int64(i*37%255 - 127) }, func(i int) int64 { return int64(i*11%255 - 127) }},
		{3, 3, 4, 1, 1, 5, func(i int) int64 { return int64(i*53%255 - 127) }, func(i int) int64 { return int64(i*7%255 - 127) }},
	} {
		what := fmt.Sprintf("%dx%d→%d stride %d pad %d zp %d", c.h, c.w, c.cout, c.stride, c.pad, c.xzp)
		g, n := winoConv(c.h, c.w, 3, c.cout, c.stride, c.pad, c.xzp, c.wv)
		s := dspSchedule(t, computeFunc(t, g, n), nil)
		if !usesIntrinsic(s, IntrDSPCol33C3) {
			t.Fatalf("%s: no %s in\n%s", what, IntrDSPCol33C3, s)
		}
		runBoth(t, what, Finalize(computeFunc(t, g, n)), s, c.x)
		w8 := dspSchedule(t, computeFunc(t, g, n), map[string]int{"weights": 8})
		if usesIntrinsic(w8, IntrDSPCol33C3) {
			t.Errorf("%s: int8 weights took the gather", what)
		}
		runBoth(t, what+" w8", Finalize(computeFunc(t, g, n)), w8, c.x)
	}
}
