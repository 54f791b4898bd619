package qmath

import (
	"math"
	"testing"
)

// TestLSTMAct16MatchesInt16Ops: TFLite Micro's int8 LSTM calls the int16
// Logistic with (0, 0) on its Q3.12 gates and the int16 Tanh with
// cell_state_scale_power p; mcugen lowers both to the standard int16
// LOGISTIC / TANH whose input scale is 2^p (2^-12 for the gates). This
// checks, on every int16 input, that the standard Prepare's parameters
// give the LSTM's values for every power mcugen accepts.
func TestLSTMAct16MatchesInt16Ops(t *testing.T) {
	for p := LSTMCellPowMin; p <= LSTMCellPowMax; p++ {
		lstm := LSTMAct16Params(p)
		for _, tanh := range []bool{false, true} {
			if !tanh && p != -12 {
				continue // the LSTM's sigmoid only sees Q3.12
			}
			std, err := Act16ParamsFor(float32(math.Ldexp(1, p)), tanh)
			if err != nil {
				t.Fatalf("p %d: %v", p, err)
			}
			for v := math.MinInt16; v <= math.MaxInt16; v++ {
				x := int16(v)
				a, b := lstm.Sigmoid(x), std.Sigmoid(x)
				if tanh {
					a, b = lstm.Tanh(x), std.Tanh(x)
				}
				if a != b {
					t.Fatalf("p %d tanh %v x %d: LSTM %d (%+v), int16 op %d (%+v)", p, tanh, x, a, lstm, b, std)
				}
			}
		}
	}
}

// TestAct16HandWorked: a few values of TFLite's int16 kernels worked by
// hand from sigmoid_table_uint16 (Q3.12 input: x·3).
func TestAct16HandWorked(t *testing.T) {
	p := LSTMAct16Params(-12) // multiplier 3, shift 0
	// x = 0: sigmoid (32768·512 + 512) >> 10 = 16384; tanh 0.
	if got := p.Sigmoid(0); got != 16384 {
		t.Errorf("sigmoid(0) = %d, want 16384", got)
	}
	if got := p.Tanh(0); got != 0 {
		t.Errorf("tanh(0) = %d, want 0", got)
	}
	// x = 4096 (1.0): input 12288, uh = 24, ut = 0: (table[24] = 47911,
	// sigmoid(1)·65536 ≈ 47911.3) · 512 + 512, >> 10: 23956.
	if got := p.Sigmoid(4096); got != 23956 {
		t.Errorf("sigmoid(4096) = %d, want 23956", got)
	}
	// tanh saturates: |x·3| >> 8 = 384 >= 255 gives (-(0xFFFF << 8) + 2^23 +
	// 127) >> 8 = -32767.
	if got := p.Tanh(-32768); got != -32767 {
		t.Errorf("tanh(min) = %d, want -32767", got)
	}
}

// TestAct16MatchesTFLM: TFLite's int16 LOGISTIC and TANH with the
// parameters their TFLite Micro Prepare derives, for power-of-two and
// other input scales. The values come from a C++ program that ran
// logistic_common.cc's and tanh.cc's int16 Prepare code and TFLite's
// reference_integer_ops::Logistic / Tanh (tflite-micro sources).
func TestAct16MatchesTFLM(t *testing.T) {
	xs := []int16{-32768, -20000, -4097, -1000, -1, 0, 1, 777, 4096, 12345, 30000, 32767}
	for _, c := range []struct {
		scale float32
		tanh  bool
		want  []int16
	}{
		{0.000244140625, false, []int16{11, 247, 8811, 14394, 16382, 16384, 16386, 17933, 23956, 31234, 32746, 32757}},
		{0.000244140625, true, []int16{-32767, -32764, -24959, -7845, -8, 0, 8, 6142, 24956, 32611, 32767, 32767}},
		{0.00048828125, false, []int16{1, 2, 3904, 12462, 16380, 16384, 16388, 19455, 28862, 32689, 32767, 32767}},
		{0.00048828125, true, []int16{-32767, -32767, -31590, -14838, -16, 0, 16, 11868, 31589, 32767, 32767, 32767}},
		{0.0009765625, false, []int16{1, 1, 589, 8965, 16376, 16384, 16392, 22318, 32179, 32767, 32767, 32767}},
		{0.0009765625, true, []int16{-32767, -32767, -32746, -24628, -32, 0, 32, 20983, 32746, 32767, 32767, 32767}},
		{3.05175781e-05, false, []int16{8812, 11534, 15361, 16134, 16384, 16384, 16384, 16578, 17407, 19434, 23401, 23956}},
		{3.05175781e-05, true, []int16{-24956, -17838, -4075, -1000, 0, 0, 0, 776, 4075, 11791, 23717, 24956}},
		{0.000300000014, false, []int16{2, 81, 7417, 13945, 16381, 16384, 16387, 18285, 25349, 31980, 32764, 32766}},
		{0.000300000014, true, []int16{-32767, -32767, -27601, -9545, -11, 0, 11, 7502, 27598, 32729, 32767, 32767}},
		{0.00100000005, false, []int16{1, 1, 536, 8812, 16376, 16384, 16392, 22447, 32232, 32767, 32767, 32767}},
		{0.00100000005, true, []int16{-32767, -32767, -32750, -24956, -32, 0, 32, 21330, 32750, 32767, 32767, 32767}},
		{0.000123000005, false, []int16{572, 2579, 12341, 15378, 16383, 16384, 16385, 17166, 20426, 26879, 31970, 32196}},
		{0.000123000005, true, []int16{-32747, -32293, -15243, -4009, -5, 0, 5, 3121, 15241, 29767, 32727, 32747}},
		{0.5, false, []int16{1, 1, 1, 1, 12371, 16384, 20397, 32767, 32767, 32767, 32767, 32767}},
		{0.5, true, []int16{-32767, -32767, -32767, -32767, -15143, 0, 15143, 32767, 32767, 32767, 32767, 32767}},
	} {
		p, err := Act16ParamsFor(c.scale, c.tanh)
		if err != nil {
			t.Fatalf("scale %g: %v", c.scale, err)
		}
		for i, x := range xs {
			got := p.Sigmoid(x)
			if c.tanh {
				got = p.Tanh(x)
			}
			if got != c.want[i] {
				t.Errorf("scale %g tanh %v x %d: %d (%+v), TFLite %d", c.scale, c.tanh, x, got, p, c.want[i])
			}
		}
	}
}

// TestSigmoidTable16Samples checks the generated knots against entries of
// TFLite's sigmoid_table_uint16 (tensorflow/lite/kernels/internal/common.h),
// among them 4 and 8, where the plainly rounded sigmoid is one lower, and the
// last two, which the interpolation of the largest inputs reads.
func TestSigmoidTable16Samples(t *testing.T) {
	tab := SigmoidTable16()
	for _, c := range []struct {
		i    int
		want uint16
	}{{0, 32768}, {4, 35493}, {8, 38180}, {31, 51409}, {100, 64536}, {200, 65520}, {254, 65534}, {255, 65535}} {
		if tab[c.i] != c.want {
			t.Errorf("knot %d = %d, TFLite's table has %d", c.i, tab[c.i], c.want)
		}
	}
	for i := 1; i < len(tab); i++ {
		if tab[i] < tab[i-1] {
			t.Errorf("knots %d, %d fall: %d, %d", i-1, i, tab[i-1], tab[i])
		}
	}
}
