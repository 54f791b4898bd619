package tflite_test

import (
	"testing"

	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Session 37: TRANSPOSE_CONV takes the phase form (tir/convtranspose_phase.go):
// each output pixel gathers only its stride phase's taps, with the rows
// outside the input dropped from the inner product when a tap's channels
// come in whole groups of four. The cases below cover both layouts, a row
// that no tap reaches (stride above the kernel), one input row under a
// three-row kernel (seanet's decoders), SAME padding, int8 zero points and
// int16 with int64 biases. Scales are 1 (multiplier 1: the requantization
// keeps the sum), so each expected output is the scatter sum worked here
// directly, Σ (x − z_x)·w + bias + z_y, independent of mcugen's gather.

// tcRand is a small deterministic generator for the cases' values.
type tcRand uint32

func (r *tcRand) in(lo, hi int) int64 {
	*r = *r*1664525 + 1013904223
	return int64(lo + int(uint32(*r)>>8)%(hi-lo+1))
}

// tcCase is one TRANSPOSE_CONV: input [1, H, W, Cin], weights [Cout, KH,
// KW, Cin], strides, output height and width, and the explicit padding
// top/left the expected sums use (VALID: 0; SAME: TFLite's).
type tcCase struct {
	name                            string
	int16                           bool
	H, W, Cin, Cout, KH, KW, sh, sw int
	OH, OW, padT, padL              int
	same                            bool
	zx, zy                          int64
	wlo, whi, xlo, xhi              int
	bias                            bool
}

func (c tcCase) opCase(seed tcRand) opCase {
	r := seed
	x := make([]float64, c.H*c.W*c.Cin)
	for i := range x {
		x[i] = float64(r.in(c.xlo, c.xhi) + c.zx)
	}
	w := make([]int64, c.Cout*c.KH*c.KW*c.Cin)
	for i := range w {
		w[i] = r.in(c.wlo, c.whi)
	}
	b := make([]int64, c.Cout)
	if c.bias {
		for i := range b {
			b[i] = r.in(-40, 40)
		}
	}
	// The scatter: input (iy, ix) and tap (ky, kx) add into output
	// (iy·sh + ky − padT, ix·sw + kx − padL).
	sum := make([]int64, c.OH*c.OW*c.Cout)
	for iy := 0; iy < c.H; iy++ {
		for ix := 0; ix < c.W; ix++ {
			for ky := 0; ky < c.KH; ky++ {
				for kx := 0; kx < c.KW; kx++ {
					oy, ox := iy*c.sh+ky-c.padT, ix*c.sw+kx-c.padL
					if oy < 0 || oy >= c.OH || ox < 0 || ox >= c.OW {
						continue
					}
					for oc := 0; oc < c.Cout; oc++ {
						for ic := 0; ic < c.Cin; ic++ {
							xv := int64(x[(iy*c.W+ix)*c.Cin+ic]) - c.zx
							sum[(oy*c.OW+ox)*c.Cout+oc] += xv * w[((oc*c.KH+ky)*c.KW+kx)*c.Cin+ic]
						}
					}
				}
			}
		}
	}
	want := make([]float64, len(sum))
	for i, s := range sum {
		want[i] = float64(s + b[i%c.Cout] + c.zy)
	}
	typ, btyp := int8(tg.Int8), int8(tg.Int32)
	if c.int16 {
		typ, btyp = tg.Int16, tg.Int64
	}
	pad := tg.Valid
	if c.same {
		pad = tg.Same
	}
	var bias spec = none
	if c.bias {
		bias = qc(btyp, []int32{int32(c.Cout)}, []float32{1}, []int64{0}, 0, b...)
	}
	return opCase{name: c.name, code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, pad), tg.I32(1, c.sw), tg.I32(2, c.sh), tg.I8(3, tg.ActNone)}},
		ins: []spec{i32c([]int32{4}, 1, int64(c.OH), int64(c.OW), int64(c.Cout)),
			qc(tg.Int8, []int32{int32(c.Cout), int32(c.KH), int32(c.KW), int32(c.Cin)}, []float32{1}, []int64{0}, 0, w...),
			{typ: typ, shape: []int32{1, int32(c.H), int32(c.W), int32(c.Cin)}, scale: []float32{1}, zp: []int64{c.zx}},
			bias},
		out:  spec{typ: typ, shape: []int32{1, int32(c.OH), int32(c.OW), int32(c.Cout)}, scale: []float32{1}, zp: []int64{c.zy}},
		feed: [][]float64{x}, want: want}
}

func TestTransposeConvPhases37(t *testing.T) {
	cases := []tcCase{
		// seanet's decoder shape: one input row under a 3-row kernel,
		// stride (1, 2), Cin 8 (the compacted patch).
		{name: "tc16_one_row", int16: true, H: 1, W: 5, Cin: 8, Cout: 4, KH: 3, KW: 4, sh: 1, sw: 2, OH: 3, OW: 12,
			wlo: -9, whi: 9, xlo: -500, xhi: 500, bias: true},
		// Cin 3 (whole patch, zeros outside), SAME, strides (2, 3):
		// TFLite pads max((in−1)·s + K − out, 0) in all, half before.
		{name: "tc16_same_odd_channels", int16: true, H: 3, W: 4, Cin: 3, Cout: 2, KH: 2, KW: 3, sh: 2, sw: 3, OH: 6, OW: 12, same: true,
			padT: 0, padL: 0, wlo: -127, whi: 127, xlo: -150, xhi: 150, bias: true},
		// stride 3 over a 2-tap kernel: every third row and column takes
		// no tap at all (bias only).
		{name: "tc16_empty_phase", int16: true, H: 2, W: 2, Cin: 4, Cout: 2, KH: 2, KW: 2, sh: 3, sw: 3, OH: 5, OW: 5,
			wlo: -50, whi: 50, xlo: -200, xhi: 200, bias: true},
		// int8 with zero points: the patch holds x − z_x, zeros outside.
		{name: "tc8_zero_points", H: 2, W: 3, Cin: 4, Cout: 3, KH: 3, KW: 3, sh: 2, sw: 2, OH: 5, OW: 7, zx: 5, zy: -3,
			wlo: -1, whi: 1, xlo: -3, xhi: 3, bias: true},
		// int8, Cin 5 (the whole-patch layout), stride 1, no bias.
		{name: "tc8_stride1", H: 3, W: 3, Cin: 5, Cout: 2, KH: 2, KW: 2, sh: 1, sw: 1, OH: 4, OW: 4, zx: -7, zy: 2,
			wlo: -2, whi: 2, xlo: -2, xhi: 2},
	}
	var ops []opCase
	for i, c := range cases {
		oc := c.opCase(tcRand(37 + i))
		for _, v := range oc.want {
			lo, hi := -128.0, 127.0
			if c.int16 {
				lo, hi = -32768, 32767
			}
			if v < lo || v > hi {
				t.Fatalf("%s: expected value %v outside the output type: the case needs smaller values", c.name, v)
			}
		}
		ops = append(ops, oc)
	}
	// mps3-an547 (Cortex-M55) runs Helium's 64-bit inner products.
	opCasesOnBoards(t, "tc37_", ops, "mps3-an547", "mps2-an385")
}

// TestInt16FCQuadEdge37: a 16x8 layer takes four output channels a call
// with 32-bit sums only where every channel's Σ|w|·32768 stays within
// 2^31 − 1. K = 516 weights of ±127 are the largest such run (65,532·32,768
// = 2,147,352,576): at x = −32,768 the sums are ∓2,147,352,576 and
// −126·516·32,768, scaled by 2^−17 (input and weight scale 1, output
// 2^17): −16383, 16383, −16254, 0. K = 517 is past it and keeps the 64-bit
// sums: at x = 32,767 the first channel is 517·127·32,767 = 2,151,448,453,
// past 2^31 (a 32-bit sum would wrap negative), 16414.1 → 16414.
func TestInt16FCQuadEdge37(t *testing.T) {
	rows := func(k int, v ...int64) []int64 {
		var w []int64
		for _, x := range v {
			for i := 0; i < k; i++ {
				w = append(w, x)
			}
		}
		return w
	}
	fill := func(k int, v float64) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = v
		}
		return x
	}
	fcCase := func(name string, k int, x float64, want []float64) opCase {
		return opCase{name: name, code: tg.OpFullyConnected, opts: tg.FullyConnectedOptions(tg.ActNone, false),
			ins:  []spec{qin16(1, 1, int32(k)), qc(tg.Int8, []int32{4, int32(k)}, []float32{1}, []int64{0}, 0, rows(k, 127, -127, 126, 0)...), none},
			out:  qin16(131072, 1, 4),
			feed: [][]float64{fill(k, x)}, want: want}
	}
	opCasesOnBoards(t, "quad37_", []opCase{
		fcCase("k516", 516, -32768, f64(-16383, 16383, -16254, 0)),
		fcCase("k517", 517, 32767, f64(16414, -16414, 16285, 0)),
	}, "mps3-an547", "mps2-an385")
}

// TestConvAllPaddingStrict37: a convolution whose every tap lies in the
// padding never reads its input; the kernel's C names the input void
// (-Wextra warned "unused parameter", which -Werror made an error: review
// finding). A 2x2 kernel at dilation 2 over a 1x1 input, SAME (one pixel
// of padding each side): taps at −1 and +1 only, so the output is the
// bias, 7 (scales 1), and for int8 the bias plus the output zero point.
func TestConvAllPaddingStrict37(t *testing.T) {
	conv := tg.Conv2DOptions(tg.Same, 1, 1, tg.ActNone, 2, 2)
	opCasesOnBoards(t, "pad37_", []opCase{
		{name: "s16", code: tg.OpConv2D, opts: conv,
			ins: []spec{qin16(1, 1, 1, 1, 4), qc(tg.Int8, []int32{2, 2, 2, 4}, []float32{1}, []int64{0}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16),
				qc(tg.Int64, []int32{2}, []float32{1}, []int64{0}, 0, 7, -3)},
			out: qin16(1, 1, 1, 1, 2), feed: [][]float64{{100, -200, 300, -400}}, want: f64(7, -3)},
		{name: "s8", code: tg.OpConv2D, opts: conv,
			ins: []spec{qin(1, 4, 1, 1, 1, 4), qc(tg.Int8, []int32{2, 2, 2, 4}, []float32{1}, []int64{0}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16),
				qc(tg.Int32, []int32{2}, []float32{1}, []int64{0}, 0, 7, -3)},
			out: qin(1, -5, 1, 1, 1, 2), feed: [][]float64{{10, -20, 30, -40}}, want: f64(2, -8)},
	})
}

// TestConv1x1Direct37: a 16x8 1x1 convolution with every tap inside the
// input reads each pixel's channels in place (no patch). Batch 2, stride 2
// over 3x3, 8 channels in and 5 out (a block of four and one more), scales
// 1: each output is Σ_c x[n, 2y, 2x, c]·w[o, c] + bias[o], worked here.
func TestConv1x1Direct37(t *testing.T) {
	r := tcRand(1)
	x := make([]float64, 2*3*3*8)
	for i := range x {
		x[i] = float64(r.in(-30, 30))
	}
	w := make([]int64, 5*8)
	for i := range w {
		w[i] = r.in(-127, 127)
	}
	b := []int64{5, -6, 7, -8, 9}
	var want []float64
	for n := 0; n < 2; n++ {
		for y := 0; y < 2; y++ {
			for xx := 0; xx < 2; xx++ {
				for o := 0; o < 5; o++ {
					s := b[o]
					for c := 0; c < 8; c++ {
						s += int64(x[((n*3+2*y)*3+2*xx)*8+c]) * w[o*8+c]
					}
					want = append(want, float64(s))
				}
			}
		}
	}
	opCasesOnBoards(t, "pw37_", []opCase{{name: "s16", code: tg.OpConv2D, opts: tg.Conv2DOptions(tg.Valid, 2, 2, tg.ActNone, 1, 1),
		ins: []spec{qin16(1, 2, 3, 3, 8), qc(tg.Int8, []int32{5, 1, 1, 8}, []float32{1}, []int64{0}, 0, w...), qc(tg.Int64, []int32{5}, []float32{1}, []int64{0}, 0, b...)},
		out: qin16(1, 2, 2, 2, 5), feed: [][]float64{x}, want: want}}, "mps3-an547", "mps2-an385")
}
