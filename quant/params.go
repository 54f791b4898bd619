package quant

import (
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// ChooseParams returns TFLite's int8 asymmetric parameters for the float
// range [lo, hi]: the range is widened to include 0, scale = (hi-lo)/255 and
// the zero point is -128 - lo/scale rounded and clamped to [-128, 127]
// (float32 arithmetic, as the TFLite converter computes them). An empty
// range gets scale 1/255 so no multiplier divides by zero.
func ChooseParams(lo, hi float64) (scale float32, zeroPoint int32) {
	// A bound beyond float32's range is its largest value, and a span
	// beyond it is divided in float64 (review finding: ±2e38 made
	// (mx - mn) infinite, and the tensor fell back to [0, 1]).
	mn := float32(math.Max(math.Min(lo, 0), -math.MaxFloat32))
	mx := float32(math.Min(math.Max(hi, 0), math.MaxFloat32))
	scale = (mx - mn) / 255
	if math.IsInf(float64(scale), 0) {
		scale = float32(float64(mx)/255 - float64(mn)/255)
	}
	if scale == 0 || math.IsInf(float64(scale), 0) || math.IsNaN(float64(scale)) {
		return 1.0 / 255, -128
	}
	zf := -128 - mn/scale
	switch {
	case zf < -128:
		zeroPoint = -128
	case zf > 127:
		zeroPoint = 127
	default:
		zeroPoint = int32(math.Round(float64(zf)))
	}
	return scale, zeroPoint
}

// QuantizeValue maps a real value to int8 with TFLite's rounding (half away
// from zero) and saturation.
func QuantizeValue(x float64, scale float32, zp int32) int64 {
	q := math.Round(x/float64(scale)) + float64(zp)
	return int64(math.Max(-128, math.Min(127, q)))
}

// SymmetricWeights quantizes a float constant to int8 symmetric in
// [-127, 127]: per slice along axis 0 (per output channel) unless perTensor.
// A slice that is all zero gets scale 1.
func SymmetricWeights(d *graph.Data, perTensor bool) (*graph.Data, *graph.Quant) {
	ch := 1
	if !perTensor && len(d.Shape) > 0 {
		ch = d.Shape[0]
	}
	per := 0
	if ch > 0 {
		per = d.Len() / ch
	}
	q := &graph.Quant{Scale: make([]float32, ch), ZeroPoint: make([]int32, ch), Axis: 0}
	out := graph.NewData(graph.Int8, d.Shape)
	for c := 0; c < ch; c++ {
		m := 0.0
		for _, v := range d.F[c*per : (c+1)*per] {
			m = math.Max(m, math.Abs(float64(v)))
		}
		s := float32(m / 127)
		if s == 0 {
			s = 1
		}
		q.Scale[c] = s
		for i := c * per; i < (c+1)*per; i++ {
			v := math.Round(float64(d.F[i]) / float64(s))
			out.I[i] = int64(math.Max(-127, math.Min(127, v)))
		}
	}
	return out, q
}

// biasLimit bounds a quantized bias, leaving int32 headroom for the
// accumulation.
const biasLimit = 1 << 30

// AdjustForBias widens weight scales whose bias would not fit int32 (as the
// TFLite converter's AdjustWeightsForBiasScale does): channels with almost
// zero weights (dead after BatchNorm folding) and a non-zero bias otherwise
// give a bias scale s_in*s_w so small that the bias saturates. The weights
// of an adjusted channel are requantized with its new scale. It reports
// whether anything changed.
func AdjustForBias(w *graph.Data, wd *graph.Data, wq *graph.Quant, bias *graph.Data, inScale float32) bool {
	const limit = biasLimit
	changed := false
	if len(wq.Scale) == 0 {
		return false
	}
	per := w.Len() / len(wq.Scale)
	for i := 0; i < bias.Len(); i++ {
		c := min(i, len(wq.Scale)-1)
		b := math.Abs(float64(bias.F[i]))
		if b/(float64(inScale)*float64(wq.Scale[c])) <= limit {
			continue
		}
		wq.Scale[c] = float32(b / (float64(inScale) * limit))
		changed = true
		for j := c * per; j < (c+1)*per; j++ {
			v := math.Round(float64(w.F[j]) / float64(wq.Scale[c]))
			wd.I[j] = int64(math.Max(-127, math.Min(127, v)))
		}
	}
	return changed
}

// Bias quantizes a float bias to int32 with scale inScale*wScale[c] (as a
// float32 product, as TFLite computes it) and zero point 0.
func Bias(d *graph.Data, inScale float32, w *graph.Quant) (*graph.Data, *graph.Quant) {
	n := d.Len()
	q := &graph.Quant{Scale: make([]float32, len(w.Scale)), ZeroPoint: make([]int32, len(w.Scale)), Axis: 0}
	out := graph.NewData(graph.Int32, d.Shape)
	for c := range q.Scale {
		q.Scale[c] = inScale * w.Scale[c]
	}
	for i := 0; i < n; i++ {
		s := q.Scale[min(i, len(q.Scale)-1)]
		v := math.Round(float64(d.F[i]) / float64(s))
		out.I[i] = int64(math.Max(math.MinInt32, math.Min(math.MaxInt32, v)))
	}
	return out, q
}

// AsymmetricConst quantizes a float constant per tensor over its own
// min/max (for constant operands of element-wise ops).
func AsymmetricConst(d *graph.Data) (*graph.Data, *graph.Quant) {
	lo, hi := 0.0, 0.0
	for _, v := range d.F {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	s, z := ChooseParams(lo, hi)
	return QuantizeData(d, s, z), &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}}
}

// QuantizeData quantizes float values with one scale and zero point.
func QuantizeData(d *graph.Data, s float32, z int32) *graph.Data {
	out := graph.NewData(graph.Int8, d.Shape)
	for i, v := range d.F {
		out.I[i] = QuantizeValue(float64(v), s, z)
	}
	return out
}

// QuantizeInput quantizes a float value for an int8 input of a model mcugen
// quantized, as the Quantize at its input would (rounding() in
// quantize.go): the quotient in float32, as the kernels divide, rounded
// half to even, clamped to int8.
func QuantizeInput(d *graph.Data, s float32, z int32) *graph.Data {
	out := graph.NewData(graph.Int8, d.Shape)
	for i, v := range d.F {
		out.I[i] = qmath.QuantizeFloat(v, s, z, -128, 127, true)
	}
	return out
}

// DequantizeData maps int values back to float32 with per-tensor parameters.
func DequantizeData(d *graph.Data, q *graph.Quant) *graph.Data {
	out := graph.NewData(graph.Float32, d.Shape)
	s, z := q.At(0)
	for i, v := range d.I {
		out.F[i] = s * float32(v-int64(z))
	}
	return out
}
