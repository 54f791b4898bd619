package qmath

import "testing"

// TestDivInt8 checks int8 DIV against TFLite Micro's div_test.cc: every
// tensor on the range [-1, 1] (scale 2/255 as float32, zero point -1),
// the multiplier the kernel derives (127.49999237 -> 2139094912, shift 7)
// and the outputs TFLite Micro's kernel computes for the test's inputs
// (the test itself compares floats with a tolerance).
func TestDivInt8(t *testing.T) {
	s := float32(0.00784313772)
	m, sh := DivMultiplier(s, s, s)
	if m != 2139094912 || sh != 7 {
		t.Fatalf("DivMultiplier = (%d, %d), want (2139094912, 7)", m, sh)
	}
	cases := []struct {
		name   string
		a, b   []int32
		want   []int32
		lo, hi int32
	}{
		{"act_none", []int32{-103, -26, 37, 88}, []int32{-103, 50, 101, 126}, []int32{126, -63, 46, 88}, -128, 127},
		// RELU_N1_TO_1 on this scale clamps to [-128, 126].
		{"relu_n1_to_1", []int32{-103, 24, 114, 88}, []int32{76, 50, 114, -103}, []int32{-128, 61, 126, -112}, -128, 126},
	}
	for _, c := range cases {
		for i := range c.a {
			got := min(max(DivInt8(c.a[i]+1, c.b[i]+1, m, sh)-1, c.lo), c.hi)
			if got != c.want[i] {
				t.Errorf("%s[%d]: %d / %d = %d, want %d", c.name, i, c.a[i], c.b[i], got, c.want[i])
			}
		}
	}
}

// TestDivInt8Properties: division by zero saturates by the dividend's sign,
// and the quotient of equal values is their scale ratio whatever their sign.
func TestDivInt8Properties(t *testing.T) {
	m, sh := DivMultiplier(1, 1, 1.0/64) // one real unit is 64
	for _, c := range []struct{ a, b, want int32 }{
		{5, 0, 1 << 30}, {-5, 0, -1 << 30}, {0, 0, 0},
		{7, 7, 64}, {-7, -7, 64}, {7, -7, -64}, {-7, 7, -64},
		{1, 2, 32}, {1, 3, 21}, {2, 3, 43}, {-2, 3, -43}, // 21.33 and 42.67 rounded
		{0, 5, 0},
	} {
		if got := DivInt8(c.a, c.b, m, sh); got != c.want {
			t.Errorf("DivInt8(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		x    int32
		want int
	}{{0, 31}, {-1, 31}, {1, 30}, {-2, 30}, {255, 23}, {-255, 23}, {-256, 23}, {256, 22}, {-1 << 31, 0}, {1<<31 - 1, 0}} {
		if got := CountLeadingSignBits32(c.x); got != c.want {
			t.Errorf("CountLeadingSignBits32(%d) = %d, want %d", c.x, got, c.want)
		}
	}
}
