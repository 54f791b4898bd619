package quant

import (
	"slices"
	"sort"
	"testing"
)

// Calibration files are taken in natural order: a sequence numbered
// without zero padding keeps its order (user-journey finding).
func TestNaturalOrder(t *testing.T) {
	in := []string{"x_10.npy", "x_2.npy", "x_1.npy", "y.npy", "x_02.npy", "x_100.npy", "a9b", "a10b", "a9c"}
	sort.SliceStable(in, func(i, j int) bool { return naturalLess(in[i], in[j]) })
	want := []string{"a9b", "a9c", "a10b", "x_1.npy", "x_02.npy", "x_2.npy", "x_10.npy", "x_100.npy", "y.npy"}
	if !slices.Equal(in, want) {
		t.Errorf("order %v, want %v", in, want)
	}
}
