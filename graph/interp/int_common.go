package interp

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// Shared helpers of the integer kernels. Integer kernels follow TFLite
// Micro's reference kernels bit for bit: every parameter TFLite derives from
// float scales is derived here the same way, in the same order of float
// operations.

// qparams returns the per-tensor scale and zero point of t (scale 1 and zero
// point 0 when t has no quantization, as for a raw integer tensor).
func qparams(t *graph.Tensor) (float32, int32) {
	if t == nil || t.Quant == nil || len(t.Quant.Scale) == 0 {
		return 1, 0
	}
	return t.Quant.At(0)
}

// zeroPoint returns the zero point of t for slice i along its quant axis.
func zeroPoint(t *graph.Tensor, i int) int32 {
	if t == nil || t.Quant == nil || len(t.Quant.ZeroPoint) == 0 {
		return 0
	}
	if len(t.Quant.ZeroPoint) == 1 {
		return t.Quant.ZeroPoint[0]
	}
	return t.Quant.ZeroPoint[i]
}

// scaleAt returns the scale of t for slice i along its quant axis.
func scaleAt(t *graph.Tensor, i int) float32 {
	if t == nil || t.Quant == nil || len(t.Quant.Scale) == 0 {
		return 1
	}
	if len(t.Quant.Scale) == 1 {
		return t.Quant.Scale[0]
	}
	return t.Quant.Scale[i]
}

// dtypeRange is the representable range of an integer dtype as int32.
func dtypeRange(dt graph.DType) (int32, int32) {
	lo, hi := dt.Range()
	return int32(max(lo, math.MinInt32)), int32(min(hi, math.MaxInt32))
}

// actRange is TFLite's CalculateActivationRangeQuantized for out.
func actRange(act graph.Activation, out *graph.Tensor) (int32, int32) {
	lo, hi := dtypeRange(out.DType)
	s, z := qparams(out)
	return qmath.ActivationRange(act.String(), s, z, lo, hi)
}

func clamp32(v, lo, hi int32) int32 { return max(lo, min(hi, v)) }

// outData allocates the value of n's output i with the output tensor's shape.
func outData(g *graph.Graph, n *graph.Node, i int) (*graph.Data, *graph.Tensor, error) {
	t := g.Out(n, i)
	if t == nil {
		return nil, nil, fmt.Errorf("output %d has no tensor", i)
	}
	if t.DType == graph.Float32 || t.DType == graph.Invalid {
		return nil, nil, fmt.Errorf("output %q: an integer kernel cannot write %s", t.Name, t.DType)
	}
	return graph.NewData(t.DType, t.Shape), t, nil
}

// needInts checks that the listed inputs are present integer values.
func needInts(ins []*graph.Data, idx ...int) error {
	for _, i := range idx {
		if i >= len(ins) || ins[i] == nil {
			return fmt.Errorf("input %d is missing", i)
		}
		if ins[i].DType == graph.Float32 {
			return fmt.Errorf("input %d is float32, the integer kernel wants integers", i)
		}
	}
	return nil
}

// broadcastIndex maps a flat index of out (shape os) to the flat index of an
// input of shape is (numpy broadcasting, shapes right-aligned).
func broadcastIndex(flat int, os, is []int) int {
	idx := 0
	stride := 1
	for d := len(os) - 1; d >= 0; d-- {
		c := flat % os[d]
		flat /= os[d]
		j := d - (len(os) - len(is))
		if j < 0 {
			continue
		}
		if is[j] != 1 {
			idx += c * stride
		}
		stride *= is[j]
	}
	return idx
}

// requantizer maps an int32 accumulator of output channel c to the output.
// It implements the three output modes of Conv2D, FullyConnected and
// BatchMatMul: TFLite's fixed-point requantization, ONNX's float
// requantization (graph.RequantFloat), and a raw int32 accumulator when the
// output is int32 without quantization (ConvInteger, MatMulInteger).
type requantizer struct {
	raw        bool
	float      bool
	mult       []int32
	shift      []int
	fscale     []float32
	zy, lo, hi int32
}

// newRequantizer derives the per-channel parameters from x, w and y.
// channels is the number of output channels (w's per-axis slices). With
// product (fully connected layers and batch matmuls), weights of one scale
// take qmath.ProductMultiplier, as TFLite's kernels do.
func newRequantizer(x, w, y *graph.Tensor, channels int, act graph.Activation, mode graph.RequantMode, product bool) *requantizer {
	r := &requantizer{}
	if y.DType == graph.Int32 && y.Quant == nil {
		r.raw = true
		return r
	}
	sx, _ := qparams(x)
	sy, zy := qparams(y)
	r.zy = zy
	r.lo, r.hi = actRange(act, y)
	r.float = mode == graph.RequantFloat
	nScales := 1
	if w != nil && w.Quant != nil {
		nScales = max(len(w.Quant.Scale), 1)
	}
	for c := 0; c < channels; c++ {
		sw := scaleAt(w, min(c, nScales-1))
		if r.float {
			// onnxruntime's order: x_scale * w_scale / y_scale in float32.
			r.fscale = append(r.fscale, sx*sw/sy)
			continue
		}
		m, s := qmath.ConvMultiplier(sx, sw, sy)
		if product && nScales == 1 {
			m, s = qmath.ProductMultiplier(sx, sw, sy)
		}
		r.mult = append(r.mult, m)
		r.shift = append(r.shift, s)
	}
	return r
}

func (r *requantizer) apply(c int, acc int32) int64 {
	switch {
	case r.raw:
		return int64(acc)
	case r.float:
		// graph.CheckMultiplier refuses an infinite scale; were one here,
		// a zero accumulator times it is NaN, which gives the zero point
		// (qmath.SatInt), and ±Inf the range's end, on every machine.
		v := math.RoundToEven(float64(float32(acc) * r.fscale[min(c, len(r.fscale)-1)]))
		if math.IsNaN(v) {
			v = 0
		}
		return qmath.SatInt(v+float64(r.zy), int64(r.lo), int64(r.hi))
	}
	c = min(c, len(r.mult)-1)
	v := qmath.MultiplyByQuantizedMultiplier(acc, r.mult[c], r.shift[c]) + r.zy
	return int64(clamp32(v, r.lo, r.hi))
}

// apply64 is apply for a 16x8 layer's 64-bit accumulator: TFLite's
// MultiplyByQuantizedMultiplier overload for int64 (a 16-bit multiplier).
func (r *requantizer) apply64(c int, acc int64) int64 {
	if r.raw || r.float {
		return r.apply(c, int32(acc))
	}
	c = min(c, len(r.mult)-1)
	v := qmath.MultiplyByQuantizedMultiplier64(acc, r.mult[c], r.shift[c]) + r.zy
	return int64(clamp32(v, r.lo, r.hi))
}

// check64 refuses a 16x8 layer's 64-bit requantization with a shift of 8
// or more: TFLite's MultiplyByQuantizedMultiplier(int64) assumes shift < 8
// (a scale ratio below 128), and past 15 its rounding shift is negative
// (review finding).
func (r *requantizer) check64(wide bool) error {
	if !wide || r.raw || r.float {
		return nil
	}
	for _, s := range r.shift {
		if err := CheckShift64(int64(s)); err != nil {
			return err
		}
	}
	return nil
}

// CheckShift64 refuses a shift that TFLite's 64-bit requantization does
// not take (8 or more), for the interpreter and the code generator alike.
func CheckShift64(shift int64) error {
	if shift >= 8 {
		return fmt.Errorf("a 16x8 layer whose scales give a multiplier of 2^%d or more: TFLite's 64-bit requantization takes less than 2^7", shift-1)
	}
	return nil
}

// Wide16x8 reports whether a convolution or fully connected node is one of
// TFLite's 16x8 layers that accumulate in 64 bits: int16 input and an int64
// bias, or none (TFLite Micro's kernels take the accumulator's width from
// the bias; with an int32 bias they add and requantize in 32 bits as the
// int8 kernels do).
func Wide16x8(g *graph.Graph, n *graph.Node) bool {
	x := g.In(n, 0)
	if x == nil || x.DType != graph.Int16 {
		return false
	}
	if n.Op == graph.ConvTranspose2D {
		// TFLite Micro's 16x8 TRANSPOSE_CONV is 64-bit whatever the bias
		// (review finding: the interpreter took the 32-bit path).
		return true
	}
	b := g.In(n, 2)
	return b == nil || b.DType == graph.Int64
}

// check16x8 refuses int16 activations with a zero point: TFLite's 16x8
// scheme is symmetric, and its int16 convolutions ignore the zero points.
func check16x8(ts ...*graph.Tensor) error {
	for _, t := range ts {
		if t != nil && t.DType == graph.Int16 {
			if t.Quant != nil && len(t.Quant.ZeroPoint) > 1 {
				return fmt.Errorf("int16 tensor %q is quantized per channel: TFLite's 16x8 activations are per tensor", t.Name)
			}
			if _, z := qparams(t); z != 0 {
				return fmt.Errorf("int16 tensor %q has zero point %d: TFLite's 16x8 scheme wants 0", t.Name, z)
			}
		}
	}
	return nil
}

// windowOut is the output size of a sliding window (conv, pool).
func windowOut(in, k, stride, dil, padA, padB int) int {
	return (in+padA+padB-(dil*(k-1)+1))/stride + 1
}

// no16x8 refuses int16 activations for ops whose TFLite int16 ("16x8")
// kernels use different arithmetic (lookup tables, other shifts).
func no16x8(ts ...*graph.Tensor) error {
	for _, t := range ts {
		if t != nil && t.DType == graph.Int16 {
			return fmt.Errorf("int16 tensor %q: TFLite's 16x8 kernels are not implemented", t.Name)
		}
	}
	return nil
}

// outAny allocates output 0 as float32 (float) or as the tensor's integer
// type, for kernels registered for both classes.
func outAny(g *graph.Graph, n *graph.Node, float bool) (*graph.Data, error) {
	if float {
		return newFloatOut(g, n, 0)
	}
	y, _, err := outData(g, n, 0)
	return y, err
}

// sameQuantIO checks that input i and output 0 of n carry one quantization:
// the kernels that move stored values (TFLite's require it) would otherwise
// change what the values mean.
func sameQuantIO(g *graph.Graph, n *graph.Node, i int) error {
	x, y := g.In(n, i), g.Out(n, 0)
	if x == nil || y == nil || x.Quant == nil && y.Quant == nil {
		return nil
	}
	if x.Quant == nil || y.Quant == nil || !slices.Equal(x.Quant.Scale, y.Quant.Scale) || !slices.Equal(x.Quant.ZeroPoint, y.Quant.ZeroPoint) {
		return fmt.Errorf("input %q and output %q are quantized differently; this kernel copies stored values", x.Name, y.Name)
	}
	return nil
}
