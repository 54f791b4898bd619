package qmath

import (
	"fmt"
	"math"
)

// TFLite's int16 LOGISTIC and TANH (reference_integer_ops::Logistic and
// Tanh on int16_t, the 16x8 scheme, which TFLite Micro's int8 LSTM also
// calls): the input is rescaled to Q?.? by (x·multiplier + round) >> shift
// and looked up, by its absolute value, in a 256-entry table of
// sigmoid(i/24) in Q0.16 with linear interpolation; the output is Q0.15.

// sigmoidTable16 is sigmoid(i/24) in Q0.16 for i in [0, 256), the knots
// TFLite's int16 LOGISTIC and TANH interpolate (its sigmoid_table_uint16).
// Its entries are not the plainly rounded values (44 of 256 differ): each
// knot i < 255 sits above the curve by half the linear interpolation's
// error at the middle of its interval, round(65536·(σ(a) + (σ(m) −
// (σ(a)+σ(b))/2)/2)) with a = i/24, b = (i+1)/24 and m = (a+b)/2, and the
// last is 65535. That rule gives each of TFLite's 256 values (no value is
// within 0.004 of a rounding tie, far beyond float64's error);
// TestSigmoidTable16Samples checks it against entries of TFLite's table.
var sigmoidTable16 = func() (t [256]uint16) {
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for i := range 255 {
		a, b := float64(i)/24, float64(i+1)/24
		lift := (sig((a+b)/2) - (sig(a)+sig(b))/2) / 2
		t[i] = uint16(math.Floor(65536*(sig(a)+lift) + 0.5))
	}
	t[255] = 65535
	return t
}()

// SigmoidTable16 is the table TFLite's int16 LOGISTIC and TANH interpolate
// (a copy: callers may keep it).
func SigmoidTable16() []uint16 { return append([]uint16(nil), sigmoidTable16[:]...) }

// Act16Params are the input rescale of TFLite's int16 LOGISTIC and TANH
// kernels: (x·Multiplier + round) >> LeftShift, after the kernels' own
// power-of-two case (a zero multiplier) is resolved.
type Act16Params struct {
	Multiplier int32
	LeftShift  int
}

// resolve is the kernels' power-of-two case: multiplier 0 means 3 <<
// shift, shift 0.
func resolve(multiplier int32, leftShift int) Act16Params {
	if multiplier == 0 {
		return Act16Params{Multiplier: 3 << uint(leftShift)}
	}
	return Act16Params{Multiplier: multiplier, LeftShift: leftShift}
}

// Act16ParamsFor derives the input rescale as TFLite Micro's
// LOGISTIC / TANH Prepare does for an int16 input of the given scale
// (logistic_common.cc, tanh.cc): a power-of-two case when log2(scale) + 12
// is 0 (TANH: 0 or 1), else multiplier = scale·4096·3 (double) doubled
// until above 32767/2 and truncated, the doublings the shift. TFLite
// Micro wants zero points 0 and an output scale of 2^-15; callers check
// those.
func Act16ParamsFor(scale float32, tanh bool) (Act16Params, error) {
	if !(scale > 0) {
		return Act16Params{}, fmt.Errorf("int16 input scale %g is not positive", scale)
	}
	rounded, pot := CheckedLog2(scale)
	shift := 12 + rounded
	if tanh {
		pot = pot && (shift == 0 || shift == 1)
	} else {
		pot = pot && shift == 0
	}
	if pot {
		return resolve(0, shift), nil
	}
	m := float64(scale) * 4096.0 * 3.0
	shift = 0
	for m <= 32767.0/2.0 && shift <= 30 {
		shift++
		m *= 2
	}
	// TFLite Micro truncates the multiplier to int32, then asserts it is
	// at most 32767: a double in (32767, 32768) runs as 32767.
	if math.Trunc(m) > 32767 {
		return Act16Params{}, fmt.Errorf("int16 input scale %g: the input multiplier %g exceeds 32767 (TFLite Micro asserts it does not)", scale, m)
	}
	return Act16Params{Multiplier: int32(m), LeftShift: shift}, nil
}

// CheckedLog2 is TFLite's CheckedLog2, in float32 as it is: log2(x)
// rounded, and whether x is within 1e-3 (in log2) of that power of two.
func CheckedLog2(x float32) (int, bool) {
	l2 := float32(float32(math.Log(float64(x))) * float32(1/float32(math.Log(2))))
	r := float32(math.Round(float64(l2)))
	return int(r), math.Abs(float64(float32(l2-r))) < 1e-3
}

// LSTMAct16Params is the input rescale of TFLite Micro's int8 LSTM's
// Sigmoid (Logistic(0, 0): a Q3.12 input) and of its Tanh with
// cell_state_scale_power p (input_left_shift = 15 + p - 3; a negative one
// becomes multiplier 3 with the opposite shift).
func LSTMAct16Params(p int) Act16Params {
	shift := 15 + p - 3
	if shift < 0 {
		return resolve(3, -shift)
	}
	return resolve(0, shift)
}

func (p Act16Params) scaled(x int16) int32 {
	round := int32(0)
	if p.LeftShift > 0 {
		round = 1 << uint(p.LeftShift-1)
	}
	return (int32(x)*p.Multiplier + round) >> uint(p.LeftShift)
}

// Sigmoid is reference_integer_ops::Logistic on one int16 value.
func (p Act16Params) Sigmoid(x int16) int16 {
	t := &sigmoidTable16
	in := p.scaled(x)
	abs := uint32(in)
	if in < 0 {
		abs = uint32(-in)
	}
	uh := abs >> 9
	var r uint32
	if uh >= 255 {
		r = 0x7FFF << 10
	} else {
		ua, ub := uint32(t[uh]), uint32(t[uh+1])
		ut := abs & 0x1ff
		r = (ua << 9) + ut*(ub-ua)
	}
	if in >= 0 {
		r += 1 << 9
	} else {
		r = (1 << (16 + 9)) - r + (1 << 9) - 1
	}
	return int16(r >> 10)
}

// Tanh is reference_integer_ops::Tanh on one int16 value.
func (p Act16Params) Tanh(x int16) int16 {
	t := &sigmoidTable16
	in := p.scaled(x)
	abs := uint32(in)
	if in < 0 {
		abs = uint32(-in)
	}
	uh := abs >> 8
	var r int32
	if uh >= 255 {
		r = 0xFFFF << 8
	} else {
		ua, ub := uint32(t[uh]), uint32(t[uh+1])
		ut := abs & 0xFF
		r = int32((ua << 8) + ut*(ub-ua))
	}
	if in >= 0 {
		r = r - (1 << (14 + 9)) + (1 << (9 - 2))
	} else {
		r = -r + (1 << (14 + 9)) + (1 << (9 - 2)) - 1
	}
	return int16(r >> (9 - 1))
}

// The cell scale powers mcugen takes for an int8 LSTM's cell state
// (2^-24 to 2^-1): TestLSTMAct16MatchesInt16Ops checks, for each, that the
// standard int16 TANH of input scale 2^p computes the LSTM's Tanh.
const (
	LSTMCellPowMin = -24
	LSTMCellPowMax = -1
)
