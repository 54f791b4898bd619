package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.Softmax, IntClass, intSoftmax)
	Register(graph.Sigmoid, IntClass, intUnary(sigmoidParams))
	Register(graph.Tanh, IntClass, intUnary(tanhParams))
	Register(graph.HardSwish, IntClass, intUnary(hardSwishParams))
	Register(graph.LeakyRelu, IntClass, intUnary(leakyReluParams))
	Register(graph.Relu, IntClass, intUnary(reluParams))
	Register(graph.Clip, IntClass, intUnary(reluParams))
}

// intUnary runs an element-wise integer function built from the node's
// input and output quantization.
func intUnary(build func(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error)) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		if err := needInts(ins, 0); err != nil {
			return nil, err
		}
		y, yt, err := outData(g, n, 0)
		if err != nil {
			return nil, err
		}
		if y.Len() != ins[0].Len() {
			return nil, fmt.Errorf("output %v does not match input %v", y.Shape, ins[0].Shape)
		}
		f, err := build(n, g.In(n, 0), yt)
		if err != nil {
			return nil, err
		}
		lo, hi := dtypeRange(yt.DType)
		for i, v := range ins[0].I {
			y.I[i] = int64(clamp32(f(int32(v)), lo, hi))
		}
		return []*graph.Data{y}, nil
	}
}

// fixedPointInput derives TFLite's input multiplier, shift and range radius
// for LOGISTIC and TANH: the input is rescaled to a Q4.27 value.
func fixedPointInput(x *graph.Tensor) (mult int32, shift int, radius int32) {
	const inputIntegerBits = 4
	sx, _ := qparams(x)
	real := float64(sx) * float64(int64(1)<<(31-inputIntegerBits))
	q, sh := math.Frexp(real)
	mult = int32(int64(math.Round(q * float64(int64(1)<<31))))
	return mult, sh, qmath.CalculateInputRadius(inputIntegerBits, sh)
}

// sigmoidParams is TFLite's int8 LOGISTIC; the output scale is 1/256 with
// zero point -128 (for uint8 1/256 and 0) by TFLite's convention.
func sigmoidParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	mult, shift, radius := fixedPointInput(x)
	_, zx := qparams(x)
	lo, hi := dtypeRange(y.DType)
	_, zy := qparams(y)
	return func(v int32) int32 {
		in := v - zx
		switch {
		case in <= -radius:
			return lo
		case in >= radius:
			return hi
		}
		q4 := qmath.MultiplyByQuantizedMultiplier(in, mult, shift)
		q0 := qmath.Logistic(q4, 4)
		return qmath.RoundingDivideByPOT(q0, 31-8) + zy
	}, nil
}

// tanhParams is TFLite's int8 TANH; the output scale is 1/128 with the
// output zero point (0 for int8).
func tanhParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	mult, shift, radius := fixedPointInput(x)
	_, zx := qparams(x)
	lo, hi := dtypeRange(y.DType)
	_, zy := qparams(y)
	return func(v int32) int32 {
		in := v - zx
		switch {
		case in <= -radius:
			return lo
		case in >= radius:
			return hi
		}
		q4 := qmath.MultiplyByQuantizedMultiplier(in, mult, shift)
		q0 := qmath.Tanh(q4, 4)
		return qmath.RoundingDivideByPOT(q0, 31-7) + zy
	}, nil
}

// hardSwishParams is TFLite's int8 HARD_SWISH: 16-bit fixed-point with a
// "reluish" multiplier that maps [-3, 3] to [-1, 1], parameters derived in
// float32 as TFLite does.
func hardSwishParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	hiresInputScale := (1.0 / 128.0) * sx
	const reluishScale = float32(3.0 / 32768.0)
	outMult32, outExp := qmath.QuantizeMultiplier(float64(hiresInputScale / sy))
	outMult := qmath.DownScaleInt32ToInt16Multiplier(outMult32)
	if outExp > 0 {
		return nil, fmt.Errorf("output scale %g too small for the input scale %g", sy, sx)
	}
	reluMult32, reluExp := qmath.QuantizeMultiplier(float64(hiresInputScale / reluishScale))
	reluMult := qmath.DownScaleInt32ToInt16Multiplier(reluMult32)
	return func(v int32) int32 {
		in := int16(v - zx)
		hires := in * (1 << 7)
		preshift := qmath.SaturatingRoundingDoublingHighMul16(hires, outMult)
		reluish := hires
		if reluExp > 0 {
			reluish = qmath.SaturatingLeftShift16(reluish, reluExp-1)
		}
		reluish = qmath.SaturatingRoundingDoublingHighMul16(reluish, reluMult)
		if reluExp > 0 {
			reluish = qmath.SaturatingLeftShift16(reluish, 1)
		}
		if reluExp < 0 {
			reluish = qmath.RoundingDivideByPOT16(reluish, -reluExp)
		}
		reluish = int16((int32(reluish) + (1 << 15)) >> 1)
		out := qmath.SaturatingDoublingHighMul16(reluish, preshift)
		o := int32(qmath.RoundingDivideByPOT16(out, -outExp)) + zy
		return int32(int16(o))
	}, nil
}

// leakyReluParams is TFLite's int8 LEAKY_RELU: identity and alpha
// multipliers (in_scale/out_scale and in_scale*alpha/out_scale, in float32).
func leakyReluParams(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	a, ok := n.Attrs.(*graph.LeakyReluAttrs)
	if !ok {
		return nil, fmt.Errorf("needs LeakyReluAttrs")
	}
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	ma, sa := qmath.QuantizeMultiplier(float64(sx * a.Alpha / sy))
	mi, si := qmath.QuantizeMultiplier(float64(sx / sy))
	return func(v int32) int32 {
		in := v - zx
		if in >= 0 {
			return zy + qmath.MultiplyByQuantizedMultiplier(in, mi, si)
		}
		return zy + qmath.MultiplyByQuantizedMultiplier(in, ma, sa)
	}, nil
}

// reluParams is TFLite Micro's quantized ReluX (RELU, RELU6 as Clip{0,6},
// and any Clip): requantize by in_scale/out_scale, then clamp to the
// quantized bounds zy + roundf(bound/out_scale).
func reluParams(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	minV, maxV := float32(0), float32(math.Inf(1))
	if a, ok := n.Attrs.(*graph.ClipAttrs); ok && a != nil {
		minV, maxV = a.Min, a.Max
	} else if n.Op == graph.Clip {
		return nil, fmt.Errorf("needs ClipAttrs")
	}
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	m, s := qmath.QuantizeMultiplier(float64(sx) / float64(sy))
	lo, hi := dtypeRange(y.DType)
	bound := func(f float32, def int32) int32 {
		if math.IsInf(float64(f), 0) {
			return def
		}
		q := float64(zy) + float64(qmath.Roundf(f/sy))
		return int32(math.Max(float64(lo), math.Min(float64(hi), q)))
	}
	qlo, qhi := bound(minV, lo), bound(maxV, hi)
	return func(v int32) int32 {
		r := zy + qmath.MultiplyByQuantizedMultiplier(v-zx, m, s)
		return clamp32(r, qlo, qhi)
	}, nil
}

// intSoftmax is TFLite's int8 SOFTMAX: differences to the row maximum are
// rescaled to Q5.26 by beta*scale, exponentiated in fixed point, summed in
// Q12.19, and divided by the sum through a fixed-point reciprocal. The
// output has scale 1/256 and zero point -128 (int8) by convention.
func intSoftmax(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SoftmaxAttrs)
	if !ok {
		return nil, fmt.Errorf("needs SoftmaxAttrs")
	}
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	r := len(x.Shape)
	ax := a.Axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r || y.Len() != x.Len() {
		return nil, fmt.Errorf("axis %d out of range for %v", a.Axis, x.Shape)
	}
	beta := a.Beta
	if beta == 0 {
		beta = 1
	}
	const scaledDiffIntegerBits = 5
	const accumulationIntegerBits = 12
	sx, _ := qparams(g.In(n, 0))
	mult, leftShift := qmath.PreprocessSoftmaxScaling(float64(beta), float64(sx), scaledDiffIntegerBits)
	diffMin := int32(-1.0 * float64(qmath.CalculateInputRadius(scaledDiffIntegerBits, leftShift)))
	lo, hi := dtypeRange(yt.DType)
	outBits := 8 * yt.DType.Size()
	depth := x.Shape[ax]
	inner := 1
	for _, d := range x.Shape[ax+1:] {
		inner *= d
	}
	outer := x.Len() / max(depth*inner, 1)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at := func(c int) int { return (o*depth+c)*inner + in }
			maxV := int32(math.MinInt32)
			for c := 0; c < depth; c++ {
				maxV = max(maxV, int32(x.I[at(c)]))
			}
			var sum int32
			for c := 0; c < depth; c++ {
				diff := int32(x.I[at(c)]) - maxV
				if diff >= diffMin {
					scaled := qmath.MultiplyByQuantizedMultiplierGreaterThanOne(diff, mult, leftShift)
					sum += qmath.Rescale(qmath.ExpOnNegativeValues(scaled, scaledDiffIntegerBits), 0, accumulationIntegerBits)
				}
			}
			recip, bitsOverUnit := qmath.GetReciprocal(sum, accumulationIntegerBits)
			for c := 0; c < depth; c++ {
				diff := int32(x.I[at(c)]) - maxV
				v := lo
				if diff >= diffMin {
					scaled := qmath.MultiplyByQuantizedMultiplierGreaterThanOne(diff, mult, leftShift)
					e := qmath.ExpOnNegativeValues(scaled, scaledDiffIntegerBits)
					unsat := qmath.RoundingDivideByPOT(qmath.SaturatingRoundingDoublingHighMul(recip, e), bitsOverUnit+31-outBits)
					v = clamp32(unsat+lo, lo, hi)
				}
				y.I[at(c)] = int64(v)
			}
		}
	}
	return []*graph.Data{y}, nil
}
