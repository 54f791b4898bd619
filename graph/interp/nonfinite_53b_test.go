package interp

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An ONNX QLinear layer's float requantization with an infinite scale
// (graph validation refuses it; the requantizer must not convert NaN
// anyway): a zero accumulator times +Inf is NaN, which gives the zero point;
// a positive one +Inf, the top of the range; a negative one the bottom. A
// finite scale rounds half to even: 5 × 0.5 = 2.5 → 2, plus zero point 3.
func TestRequantFloatNonFinite53b(t *testing.T) {
	inf := float32(math.Inf(1))
	r := &requantizer{float: true, fscale: []float32{inf, 0.5}, zy: 3, lo: -128, hi: 127}
	for _, c := range []struct {
		ch   int
		acc  int32
		want int64
	}{
		{0, 0, 3}, {0, 7, 127}, {0, -7, -128}, {1, 5, 5}, {1, 7, 7}, {1, -1000, -128},
	} {
		if got := r.apply(c.ch, c.acc); got != c.want {
			t.Errorf("channel %d (scale %g), accumulator %d: %d, want %d", c.ch, r.fscale[c.ch], c.acc, got, c.want)
		}
	}
}

// int8 Concat into an output of subnormal scale 1e-39: 1/sy is +Inf in
// float32 (TFLite's step made 0 × Inf = NaN, converted as the machine
// does). The input, scale 2e-39 and zero point 1, is requantized as
// round((q − 1) · 2): q = 4 → 6, q = 1 → 0, q = −20 → −42, plus the output
// zero point −5.
func TestConcatSubnormalScale53b(t *testing.T) {
	y := runInt(t, graph.Concat, &graph.ConcatAttrs{Axis: 0}, graph.Int8, []int{4}, pq(1e-39, -5),
		qt{d: qd(graph.Int8, []int{3}, 4, 1, -20), q: pq(2e-39, 1), input: true},
		qt{d: qd(graph.Int8, []int{1}, 7), q: pq(1e-39, -5)})
	wantInts(t, y, 1, -5, -47, 7)
}

// A constant Pad's value saturates to the tensor's type: INT64_MAX is
// 2^63 as a float64 (Go's conversion: INT64_MIN on amd64, INT64_MAX on
// arm64), 1e30 into int8 is 127, −1e30 is −128, NaN is 0; an integer
// value is itself, and a fraction truncates toward zero.
func TestPadIntSaturates53b(t *testing.T) {
	for _, c := range []struct {
		v    float64
		dt   graph.DType
		want int64
	}{
		{float64(math.MaxInt64), graph.Int64, math.MaxInt64},
		{float64(math.MinInt64), graph.Int64, math.MinInt64},
		{1e30, graph.Int8, 127},
		{-1e30, graph.Int8, -128},
		{1e10, graph.Int32, math.MaxInt32},
		{-1, graph.UInt8, 0},
		{math.NaN(), graph.Int16, 0},
		{-7, graph.Int8, -7},
		{2.75, graph.Int32, 2},
		{-2.75, graph.Int32, -2},
	} {
		if got := PadInt(c.v, c.dt); got != c.want {
			t.Errorf("PadInt(%g, %s) = %d, want %d", c.v, c.dt, got, c.want)
		}
	}
	x := &graph.Data{DType: graph.Int64, Shape: []int{2}, I: []int64{1, -1}}
	y, err := runOpDT(graph.Pad, &graph.PadAttrs{Pads: []int{1, 1}, Value: float64(math.MaxInt64), Mode: "constant"}, graph.Int64, []int{4}, x)
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, y, math.MaxInt64, 1, -1, math.MaxInt64)
}

// An integer LEAKY_RELU whose alpha multiplier, sx · alpha / sy in
// float32, overflows (1e10 · 1e30) or needs a left shift of 31 bits or
// more (2^31) is refused, for int8 as for int16; alpha 0.1 is taken.
func TestLeakyReluAlphaMultiplier53b(t *testing.T) {
	x := &graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{4}, Quant: pq(1e10, 0)}
	y := &graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{4}, Quant: pq(1, 0)}
	err := LeakyReluIntOK(x, y, 1e30)
	if err == nil || !strings.Contains(err.Error(), "alpha multiplier +Inf") || !strings.Contains(err.Error(), "left shift of 31 bits or more") {
		t.Errorf("alpha 1e30: %v", err)
	}
	x.Quant = pq(1, 0)
	if err := LeakyReluIntOK(x, y, 1<<31); err == nil {
		t.Error("alpha 2^31: no error")
	}
	if err := LeakyReluIntOK(x, y, 0.1); err != nil {
		t.Errorf("alpha 0.1: %v", err)
	}
	if err := LeakyReluIntOK(x, y, -3); err != nil {
		t.Errorf("alpha -3: %v", err)
	}
}

// int8 LOG_SOFTMAX refuses an input scale where TFLite's scale × 2^26 is
// at most 1 (1e-9: 0.067; 1e-30: its multiplier flushes to zero and the
// reverse one is infinite), and takes 0.1.
func TestLogSoftmaxInputScale53b(t *testing.T) {
	a := &graph.SoftmaxAttrs{Axis: -1, Beta: 1}
	y := &graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 4}, Quant: pq(16.0/256, 127)}
	for _, c := range []struct {
		s  float32
		ok bool
	}{{0.1, true}, {1e-9, false}, {1e-30, false}} {
		x := &graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 4}, Quant: pq(c.s, 0)}
		err := LogSoftmaxInt8OK(x, y, a)
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "where TFLite needs more than 1") {
			t.Errorf("input scale %g: %v", c.s, err)
		}
	}
}

// int8 DIV whose s2 · sy underflows float32 (1e-30 · 1e-30) has an
// infinite multiplier: refused (amd64 made it multiplier 0, shift 0).
func TestDivInfiniteMultiplier53b(t *testing.T) {
	mk := func(name string, s float32) *graph.Tensor {
		return &graph.Tensor{Name: name, DType: graph.Int8, Shape: []int{2}, Quant: pq(s, 0)}
	}
	if err := DivInt8OK(mk("a", 1), mk("b", 1e-30), mk("y", 1e-30)); err == nil {
		t.Error("scales 1 / (1e-30 · 1e-30): no error")
	}
	if err := DivInt8OK(mk("a", 0.5), mk("b", 0.25), mk("y", 0.125)); err != nil {
		t.Errorf("scales 0.5 / (0.25 · 0.125): %v", err)
	}
}
