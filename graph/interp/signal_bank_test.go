package interp

import "testing"

// The wants come from TFLite Micro's signal/src kernels (Sqrt64 through
// FilterbankSqrt, Log32) run on the same inputs.

func TestSignalBankSqrt(t *testing.T) {
	for _, c := range []struct {
		x     uint64
		shift int32
		want  int64
	}{
		{0, 0, 0}, {1, 0, 1}, {2, 0, 1}, {3, 0, 2}, {4, 0, 2}, {15, 0, 4}, {16, 0, 4}, {17, 0, 4},
		{65535, 0, 256}, {4294967295, 0, 65535}, {4294967296, 0, 65536},
		{18446744073709551615, 0, 4294967295}, {18446744065119617025, 0, 4294967295}, {1000000000000, 0, 1000000},
		{18446744073709551615, 31, 1}, {4294967296, 31, 0}, {1, 31, 0},
	} {
		if got := SigFilterBankSqrt(int64(c.x), c.shift); got != c.want {
			t.Errorf("sqrt(%d) >> %d = %d, TFLite Micro's %d", c.x, c.shift, got, c.want)
		}
	}
}

// TestSignalBankLog32 runs Log32 at full scale (the product wraps as
// TFLite Micro's uint32 one does, keeping the Q16 log's low bits) on one
// input in each of the 128 segments of its correction table, and at the
// ends of its range.
func TestSignalBankLog32(t *testing.T) {
	var sum, n uint64
	for s := uint32(0); s < 128; s++ {
		v := SigLog32(65536+512*s+256+(s*37)%256, 65536)
		if s == 0 && v != 6097 || s == 4 && v != 8217 {
			t.Errorf("segment %d: %d", s, v)
		}
		n++
		sum += n * uint64(v)
	}
	if sum != 319804211 {
		t.Errorf("weighted sum of the 128 segments' logs %d, TFLite Micro's 319804211", sum)
	}
	for _, c := range []struct{ x, want uint32 }{{2, 45426}, {3, 6462}, {4294967295, 11936}, {2147483648, 31950}, {2147483647, 32046}, {1000000, 53455}} {
		if got := SigLog32(c.x, 65536); got != c.want {
			t.Errorf("Log32(%d, 65536) = %d, TFLite Micro's %d", c.x, got, c.want)
		}
	}
}
