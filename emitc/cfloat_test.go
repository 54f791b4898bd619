package emitc

import "testing"

// cFloat prints valid C floating constants that read back as the same
// float32: with a point or an exponent, shortest digits.
func TestCFloat(t *testing.T) {
	for v, want := range map[float32]string{1: "1.0", 0.5847029: "0.5847029", 0.00390625: "0.00390625", 1e-10: "1e-10", 256: "256.0", 3.0517578e-05: "3.0517578e-05"} {
		if got := cFloat(v); got != want {
			t.Errorf("cFloat(%v) = %q, want %q", v, got, want)
		}
	}
}
