package qmath

import "testing"

func TestKernelParams(t *testing.T) {
	// Scales 0.5 and 0.25 into 1: twice the max is 1, so the input
	// multipliers are 1/2 and 1/4 and the output one 2^-20.
	for _, p := range []AddSubParams{AddParams(0.5, 0.25, 1, 20), SubParams(0.5, 0.25, 1, 20)} {
		want := AddSubParams{LeftShift: 20, In1Mult: 1 << 30, In1Shift: 0, In2Mult: 1 << 30, In2Shift: -1, OutMult: 1 << 30, OutShift: -19}
		if p != want {
			t.Errorf("add/sub params %+v, want %+v", p, want)
		}
		// real 1.0 + 1.0 = 2 at output scale 1; 1.0 - 1.0 = 0.
		if got := p.Combine(2, 4, false); got != 2 {
			t.Errorf("2*0.5 + 4*0.25 = %d, want 2", got)
		}
		if got := p.Combine(2, 4, true); got != 0 {
			t.Errorf("2*0.5 - 4*0.25 = %d, want 0", got)
		}
	}
	// beta 1, scale float32(0.1) = 0.100000001490116: 0.8000000119 * 2^23 ->
	// round(0.8000000119 * 2^31) = 1717986944 (float64 0.1 would give
	// 1717986918); radius floor(31 * 2^26 / 2^23) = 248.
	if p := SoftmaxInt8Params(1, 0.1); p != (SoftmaxParams{1717986944, 23, -248}) {
		t.Errorf("softmax params %+v", p)
	}
	// float32(0.1) * 2^27 = 0.8000000119 * 2^24; radius floor(15 * 2^27 / 2^24) = 120.
	if p := SigmoidTanhInt8Params(0.1); p != (SigmoidTanhParams{1717986944, 24, 120}) {
		t.Errorf("logistic/tanh params %+v", p)
	}
	// 1/4 folded into a unit rescale: 2^30 * 2^2 / 4 with the shift lowered by 2.
	if m, s := MeanMultiplier(1, 1, 4); m != 1<<30 || s != -1 {
		t.Errorf("mean multiplier (%d, %d), want (2^30, -1)", m, s)
	}
	// hires scale s/128 over s: 2^-7 = 0.5 * 2^-6 -> int16 16384, exponent -6.
	// reluish: (s/128) / (3/32768) = 4.27 = 0.533 * 2^3 -> 0.533 * 2^15 = 17476.
	p, err := HardSwishInt8Params(0.05, 0, 0.05, 0)
	if err != nil || p.OutMult != 16384 || p.OutExp != -6 || p.ReluishExp != 3 || p.ReluishMult < 17475 || p.ReluishMult > 17477 {
		t.Errorf("hard swish params %+v, %v", p, err)
	}
	if _, err := HardSwishInt8Params(1, 0, 0.001, 0); err == nil {
		t.Error("hard swish with a much smaller output scale: no error")
	}
	if p.Apply(0) != 0 || p.Apply(-100) != 0 {
		t.Errorf("hard_swish(0) = %d, hard_swish(-5) = %d, want 0, 0", p.Apply(0), p.Apply(-100))
	}
	if m, s := ConvMultiplier(0.5, 0.25, 0.25); m != 1<<30 || s != 0 {
		t.Errorf("conv multiplier (%d, %d)", m, s)
	}
}

// A fully connected layer of per-tensor weights (and a batch matmul) takes
// the scales' product in float32, as TFLite's GetQuantizedConvolutionMultipler
// does; a convolution multiplies in double. Worked out with TFLite's rules
// outside mcugen (bit-exactness fuzzing): sx = 0.18490860, sw = 0.056153756,
// sy = 18.533613 give 1231985669 in float32 and 1231985630 in double, both
// with shift -10.
func TestProductMultiplier(t *testing.T) {
	sx, sw, sy := float32(0.18490859866142273), float32(0.05615375563502312), float32(18.533613204956055)
	if m, s := ProductMultiplier(sx, sw, sy); m != 1231985669 || s != -10 {
		t.Errorf("ProductMultiplier = %d, %d; want 1231985669, -10", m, s)
	}
	if m, s := ConvMultiplier(sx, sw, sy); m != 1231985630 || s != -10 {
		t.Errorf("ConvMultiplier = %d, %d; want 1231985630, -10", m, s)
	}
}
