package graph

import "fmt"

// ResizeTaps10 is TFLite's integer bilinear resize along one axis
// (ResizeBilinearInteger): output index v reads inputs I0[v] and I1[v] with
// weights W0[v] and W1[v], which sum to 1024. The scale is in 1/1024ths,
// rounded: (1024·in + out/2) / out, or (1024·(in-1) + (out-1)/2) / (out-1)
// with aligned corners; the source position is v·scale (plus scale/2 - 512
// with half-pixel centres), its lower index that position / 1024 (truncated,
// at least 0) and its upper index rounded up (at most in-1). A position left
// of the first input gives a negative W1 and a W0 above 1024 on the same
// input, so the sum is still that input.
type ResizeTaps10 struct {
	I0, I1, W0, W1 []int
}

// IntResizeCoord reports whether the integer bilinear resize supports the
// coordinate transformation (TFLite's three).
func IntResizeCoord(coord string) bool {
	return coord == "asymmetric" || coord == "half_pixel" || coord == "align_corners"
}

// IntResizeTaps computes the taps of one axis for coordinate transformation
// coord ("asymmetric", "half_pixel" or "align_corners").
func IntResizeTaps(coord string, in, out int) (ResizeTaps10, error) {
	var t ResizeTaps10
	if !IntResizeCoord(coord) {
		return t, fmt.Errorf("integer bilinear resize supports the asymmetric, half_pixel and align_corners coordinates, not %q", coord)
	}
	if in < 1 || out < 1 || in > 1<<20 || out > 1<<20 {
		return t, fmt.Errorf("integer bilinear resize from %d to %d", in, out)
	}
	scale := (1024*in + out/2) / out
	if coord == "align_corners" && out > 1 {
		scale = (1024*(in-1) + (out-1)/2) / (out - 1)
	}
	for v := range out {
		pos := v * scale
		if coord == "half_pixel" {
			pos += scale/2 - 512
		}
		lo := max(pos/1024, 0) // Go's / truncates, as C's does
		hi := min((pos+1023)/1024, in-1)
		if lo > in-1 {
			return t, fmt.Errorf("integer bilinear resize from %d to %d: output %d reads input %d", in, out, v, lo)
		}
		d := pos - 1024*lo
		t.I0 = append(t.I0, lo)
		t.I1 = append(t.I1, hi)
		t.W0 = append(t.W0, 1024-d)
		t.W1 = append(t.W1, d)
	}
	return t, nil
}

// IntResizeRound divides TFLite's 2^20-scaled bilinear sum back, rounding
// half away from zero.
func IntResizeRound(acc int64) int64 {
	if acc > 0 {
		return (acc + 1<<19) / (1 << 20)
	}
	return (acc - 1<<19) / (1 << 20)
}
