package qmath

import (
	"slices"
	"testing"
)

// TFLite Micro's log_softmax_test.cc: QuantizedActivationsOpTestLogSoftmaxInt8
// (input scale 20/255, the literal expected output) and
// ExtraTestLogSoftmaxInt8 (rows of one value, scale 2/255), with the
// Prepare parameters TFLite Micro derives for them.
func TestLogSoftmaxTFLiteMicro(t *testing.T) {
	p := NewLogSoftmaxParams(20.0 / 255)
	if p != (LogSoftmaxParams{InMult: 1347440768, InLeftShift: 23, ReverseMult: 1711275971, ReverseShift: -22, DiffMin: -248}) {
		t.Errorf("parameters %+v", p)
	}
	in := []int64{-1, -78, 25, 50, 37, -27, 126, 12}
	out := make([]int64, 8)
	p.LogSoftmaxRow(in[:4], out[:4])
	p.LogSoftmaxRow(in[4:], out[4:])
	if want := []int64{61, -36, 93, 125, 15, -65, 127, -16}; !slices.Equal(out, want) {
		t.Errorf("%v, TFLite Micro's %v", out, want)
	}
	p = NewLogSoftmaxParams(2.0 / 255)
	if p != (LogSoftmaxParams{InMult: 1077952640, InLeftShift: 20, ReverseMult: 2139094913, ReverseShift: -19, DiffMin: -1984}) {
		t.Errorf("parameters %+v", p)
	}
	for _, v := range []int64{0, -128, 127} {
		one := []int64{0}
		p.LogSoftmaxRow([]int64{v}, one)
		if one[0] != 127 {
			t.Errorf("a row of one value %d: %d, want 127 (log 1 = 0)", v, one[0])
		}
	}
}

// ln z for z = 1, 2, e, 100 in Q12.19, against the real logarithm to the
// Q5.26 resolution the approximation reaches.
func TestLogQ12ToQ5(t *testing.T) {
	for _, c := range []struct {
		z    float64
		want float64
	}{{1, 0}, {2, 0.69314718}, {2.718281828, 1}, {100, 4.605170186}, {4000, 8.29404964}} {
		got := float64(LogQ12ToQ5(int32(c.z*(1<<19)))) / (1 << 26)
		if d := got - c.want; d > 1e-5 || d < -1e-5 {
			t.Errorf("ln %g = %g, want %g", c.z, got, c.want)
		}
	}
}
