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
	Register(graph.L2Normalize, IntClass, intL2Normalize)
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
		if n.Op == graph.LeakyRelu {
			a, ok := n.Attrs.(*graph.LeakyReluAttrs)
			if !ok {
				return nil, fmt.Errorf("needs LeakyReluAttrs")
			}
			if err := LeakyReluIntOK(g.In(n, 0), yt, a.Alpha); err != nil {
				return nil, err
			}
		} else if n.Op != graph.Relu && n.Op != graph.Clip && !act16(n.Op, g.In(n, 0), yt) && !Abs16(n, g.In(n, 0), yt) {
			if err := no16x8(g.In(n, 0), yt); err != nil {
				return nil, err
			}
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

// sigmoidParams is TFLite's int8 LOGISTIC; the output scale is 1/256 with
// zero point -128 by TFLite's convention.
func sigmoidParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	if act16(graph.Sigmoid, x, y) {
		p, err := Act16Params(graph.Sigmoid, x, y)
		if err != nil {
			return nil, err
		}
		return func(v int32) int32 { return int32(p.Sigmoid(int16(v))) }, nil
	}
	if err := FixedOutputOK(graph.Sigmoid, x, y, 1); err != nil {
		return nil, err
	}
	sx, zx := qparams(x)
	_, zy := qparams(y)
	lo, hi := dtypeRange(y.DType)
	p := qmath.SigmoidTanhInt8Params(sx)
	return func(v int32) int32 { return p.Sigmoid(v-zx, lo, hi, zy) }, nil
}

// tanhParams is TFLite's int8 TANH; the output scale is 1/128 with zero
// point 0 by TFLite's convention.
func tanhParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	if act16(graph.Tanh, x, y) {
		p, err := Act16Params(graph.Tanh, x, y)
		if err != nil {
			return nil, err
		}
		return func(v int32) int32 { return int32(p.Tanh(int16(v))) }, nil
	}
	if err := FixedOutputOK(graph.Tanh, x, y, 1); err != nil {
		return nil, err
	}
	sx, zx := qparams(x)
	_, zy := qparams(y)
	lo, hi := dtypeRange(y.DType)
	p := qmath.SigmoidTanhInt8Params(sx)
	return func(v int32) int32 { return p.Tanh(v-zx, lo, hi, zy) }, nil
}

// act16 reports whether a Sigmoid or Tanh node is TFLite's int16 form
// (int16 in and out), which Act16Params checks and derives.
func act16(op graph.Op, x, y *graph.Tensor) bool {
	return (op == graph.Sigmoid || op == graph.Tanh) && x != nil && y != nil && x.DType == graph.Int16 && y.DType == graph.Int16
}

// outputScale15 is TFLite Micro's check on an int16 LOGISTIC's or TANH's
// output scale: CheckedLog2 finds a power of two, and it is 2^-15.
func outputScale15(s float32) bool {
	l2, pot := qmath.CheckedLog2(s)
	return pot && l2 == -15
}

// Act16Params checks an int16 LOGISTIC or TANH as TFLite Micro's Prepare
// does (per-tensor quantization, zero points 0, an output scale of 2^-15
// as CheckedLog2 finds it) and derives its input rescale
// (qmath.Act16ParamsFor), for the interpreter and the code generator
// alike.
func Act16Params(op graph.Op, x, y *graph.Tensor) (qmath.Act16Params, error) {
	for _, t := range []*graph.Tensor{x, y} {
		if t.Quant == nil || len(t.Quant.Scale) != 1 {
			return qmath.Act16Params{}, fmt.Errorf("int16 %s tensor %q is not quantized per tensor", op, t.Name)
		}
		if _, z := qparams(t); z != 0 {
			return qmath.Act16Params{}, fmt.Errorf("int16 %s tensor %q has zero point %d: TFLite's int16 kernel wants 0", op, t.Name, z)
		}
	}
	// TFLite Micro's Prepare takes an output scale whose CheckedLog2 is a
	// power of two (within 1e-3 in log2) rounding to -15; the values are
	// Q0.15 whatever it is.
	if sy, _ := qparams(y); !outputScale15(sy) {
		return qmath.Act16Params{}, fmt.Errorf("int16 %s output %q has scale %g: TFLite's int16 kernel gives 2^-15", op, y.Name, sy)
	}
	sx, _ := qparams(x)
	return qmath.Act16ParamsFor(sx, op == graph.Tanh)
}

// hardSwishParams is TFLite's int8 HARD_SWISH (16-bit fixed point).
func hardSwishParams(_ *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	p, err := qmath.HardSwishInt8Params(sx, zx, sy, zy)
	if err != nil {
		return nil, err
	}
	return p.Apply, nil
}

// leakyReluParams is TFLite Micro's int8 and int16 LEAKY_RELU: identity
// and alpha multipliers derived in float32 (qmath.LeakyReluQuantParams),
// applied to x - zx (a negative alpha multiplier by its magnitude, the
// result negated: qmath.LeakyReluParams.Apply), plus zy; intUnary clamps
// to the output type.
func leakyReluParams(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	a, ok := n.Attrs.(*graph.LeakyReluAttrs)
	if !ok {
		return nil, fmt.Errorf("needs LeakyReluAttrs")
	}
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	p := qmath.LeakyReluQuantParams(sx, a.Alpha, sy)
	return func(v int32) int32 { return zy + p.Apply(v-zx) }, nil
}

// LeakyReluIntOK checks an integer LEAKY_RELU's int16 form as TFLite
// Micro takes it (its 16x8 kernel): int16 in and out, per-tensor
// quantized, zero points in int16's range (TFLite Micro subtracts and adds
// them, whatever they are). mcugen also refuses multipliers of 2^15 or
// more (a shift above 15, an output scale over 32768 times finer than the
// input's): there x - zx, shifted left, and its sum with zy leave 32 bits,
// which C does not define. Every integer form needs an alpha multiplier
// (sx·alpha/sy in float32, as TFLite Micro computes it) whose shift is at
// most 30: an infinite one (a float32 overflow) has no shift at all.
func LeakyReluIntOK(x, y *graph.Tensor, alpha float32) error {
	if x == nil || y == nil {
		return nil
	}
	if x.DType.IsInt() && y.DType.IsInt() {
		sx, _ := qparams(x)
		sy, _ := qparams(y)
		if m := float64(sx * alpha / sy); !qmath.ShiftFits(math.Abs(m)) {
			return fmt.Errorf("integer LEAKY_RELU of input scale %g, alpha %g, output scale %g: its alpha multiplier %.3g (in float32, as TFLite Micro computes it) needs a left shift of 31 bits or more", sx, alpha, sy, m)
		}
	}
	if x.DType != graph.Int16 && y.DType != graph.Int16 {
		return nil
	}
	if x.DType != y.DType {
		return fmt.Errorf("integer LEAKY_RELU from %s to %s: TFLite Micro's takes the same type in and out", x.DType, y.DType)
	}
	for _, t := range []*graph.Tensor{x, y} {
		if t.Quant == nil || len(t.Quant.Scale) != 1 {
			return fmt.Errorf("int16 LEAKY_RELU tensor %q is not quantized per tensor: TFLite Micro's takes one scale and zero point", t.Name)
		}
		if _, z := qparams(t); z < math.MinInt16 || z > math.MaxInt16 {
			return fmt.Errorf("int16 LEAKY_RELU tensor %q has zero point %d, outside int16's range", t.Name, z)
		}
	}
	sx, _ := qparams(x)
	sy, _ := qparams(y)
	if p := qmath.LeakyReluQuantParams(sx, alpha, sy); p.IdentityShift > 15 || p.AlphaShift > 15 {
		return fmt.Errorf("int16 LEAKY_RELU of input scale %g, alpha %g, output scale %g: a multiplier of 2^15 or more, where x - zero point, rescaled, leaves 32 bits", sx, alpha, sy)
	}
	return nil
}

// reluParams is TFLite Micro's quantized ReluX (RELU, RELU6 as Clip{0,6},
// and any Clip): requantize by in_scale/out_scale, then clamp to the
// quantized bounds zy + roundf(bound/out_scale).
func reluParams(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	p, err := ReluQuant(n, x, y)
	if err != nil {
		return nil, err
	}
	return func(v int32) int32 {
		r := p.Zy + qmath.MultiplyByQuantizedMultiplier(v-p.Zx, p.M, p.Shift)
		return clamp32(r, p.Lo, p.Hi)
	}, nil
}

// ReluParams are an integer RELU's or clamp's: y = clamp(Zy +
// MultiplyByQuantizedMultiplier(x − Zx, M, Shift), Lo, Hi).
type ReluParams struct {
	M              int32
	Shift          int
	Zx, Zy, Lo, Hi int32
}

// ReluQuant derives an integer Relu's or Clip's parameters from its
// tensors' quantization, as TFLite Micro does (CalculateReluOpData: the
// bounds are the clamp's rounded to the output's scale): the scales'
// quotient in float32 for RELU, in double for the clamps.
func ReluQuant(n *graph.Node, x, y *graph.Tensor) (ReluParams, error) {
	minV, maxV := float32(0), float32(math.Inf(1))
	if a, ok := n.Attrs.(*graph.ClipAttrs); ok && a != nil {
		minV, maxV = a.Min, a.Max
	} else if n.Op == graph.Clip {
		return ReluParams{}, fmt.Errorf("needs ClipAttrs")
	}
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	m, s := qmath.RescaleMultiplier(sx, sy)
	if n.Op == graph.Relu {
		// TFLite Micro's RELU divides the scales in float32
		// (CalculateReluOpData), where QUANTIZE and MEAN divide in double.
		m, s = qmath.QuantizeMultiplier(float64(sx / sy))
	}
	lo, hi := dtypeRange(y.DType)
	bound := func(f float32, def int32) int32 {
		if math.IsInf(float64(f), 0) {
			return def
		}
		q := float64(zy) + float64(qmath.Roundf(f/sy))
		return int32(math.Max(float64(lo), math.Min(float64(hi), q)))
	}
	p := ReluParams{M: m, Shift: s, Zx: zx, Zy: zy, Lo: bound(minV, lo), Hi: bound(maxV, hi)}
	if p.Lo > p.Hi {
		// A Clip whose min is above its max gives max everywhere, as
		// ONNX (numpy's clip) and the float path do; the integer clamp
		// applies hi first and gave min (review finding).
		p.Lo = p.Hi
	}
	return p, nil
}

// intSoftmax is TFLite's int8 SOFTMAX: differences to the row maximum are
// rescaled to Q5.26 by beta*scale, exponentiated in fixed point, summed in
// Q12.19, and divided by the sum through a fixed-point reciprocal. The
// output has scale 1/256 and zero point -128 (int8) by convention; an int16
// output of an int8 input (TFLite Micro's templated reference Softmax
// with int16 output) the same arithmetic with 16 output bits: scale
// 1/65536, zero point -32768.
func intSoftmax(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SoftmaxAttrs)
	if !ok {
		return nil, fmt.Errorf("needs SoftmaxAttrs")
	}
	if a.Mode == graph.SoftmaxLog {
		return intLogSoftmax(g, n, a, ins)
	}
	if a.Mode != graph.SoftmaxPlain {
		return nil, fmt.Errorf("integer softmax mode %q is not supported", a.Mode)
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
		beta = 1 // unset (ONNX has no beta)
	}
	int8To16 := g.In(n, 0).DType == graph.Int8 && yt.DType == graph.Int16
	if int8To16 {
		if err := SoftmaxInt8ToInt16OK(g.In(n, 0), yt, beta); err != nil {
			return nil, err
		}
	} else if g.In(n, 0).DType == graph.Int16 || yt.DType == graph.Int16 {
		if err := SoftmaxInt16OK(g.In(n, 0), yt, ax); err != nil {
			return nil, err
		}
		if err := SoftmaxInt16InputOK(g.In(n, 0), beta); err != nil {
			return nil, err
		}
		sx, _ := qparams(g.In(n, 0))
		m, sh := qmath.SoftmaxInt16Params(sx, beta)
		exp, recip := qmath.SoftmaxInt16Tables()
		depth := x.Shape[ax]
		for o := 0; o+depth <= x.Len(); o += depth {
			qmath.SoftmaxInt16Row(x.I[o:o+depth], y.I[o:o+depth], m, sh, exp, recip)
		}
		return []*graph.Data{y}, nil
	}
	if !int8To16 {
		if err := FixedOutputOK(graph.Softmax, g.In(n, 0), yt, beta); err != nil {
			return nil, err
		}
		if err := SoftmaxUint8OK(g.In(n, 0), yt, beta); g.In(n, 0).DType == graph.UInt8 && err != nil {
			return nil, err
		}
	}
	sx, _ := qparams(g.In(n, 0))
	p := qmath.SoftmaxInt8Params(beta, sx)
	lo, hi := dtypeRange(yt.DType)
	outBits := 8 * yt.DType.Size()
	depth := x.Shape[ax]
	inner := graph.NumElements(x.Shape[ax+1:])
	outer := x.Len() / max(depth*inner, 1)
	row, res := make([]int32, depth), make([]int32, depth)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			for c := range row {
				row[c] = int32(x.I[(o*depth+c)*inner+in])
			}
			qmath.SoftmaxRow(p, row, res, outBits, lo, hi)
			for c, v := range res {
				y.I[(o*depth+c)*inner+in] = int64(v)
			}
		}
	}
	return []*graph.Data{y}, nil
}

// FixedOutputOK checks an int8 LOGISTIC (Sigmoid), TANH or SOFTMAX: its
// output must have the encoding TFLite's fixed-point kernels write, scale
// 1/256 and zero point -128 (TANH: 1/128 and 0; SOFTMAX's scale within
// 0.1%, as TFLite checks), since mcugen's kernels, as TFLite Micro's, write
// that encoding whatever the tensor says; TFLite refuses the others (its
// TANH computes a table instead, which TFLite Micro does not). A SOFTMAX
// also needs beta × input scale × 2^26 above 1, which TFLite checks. Other
// types pass (round-3 fuzzer: such models ran, and differed from TFLite).
func FixedOutputOK(op graph.Op, x, y *graph.Tensor, beta float32) error {
	if y == nil || y.DType != graph.Int8 || x == nil || x.DType != graph.Int8 {
		return nil
	}
	sy, zy := qparams(y)
	want, wz, name := 1.0/256, int32(-128), "LOGISTIC"
	switch op {
	case graph.Tanh:
		want, wz, name = 1.0/128, 0, "TANH"
	case graph.Softmax:
		name = "SOFTMAX"
	}
	tol := 0.0
	if op == graph.Softmax {
		tol = 0.001 / 256
	}
	if math.Abs(float64(sy)-want) > tol || zy != wz {
		return fmt.Errorf("int8 %s output %q is quantized as scale %g, zero point %d: TFLite's kernel writes scale 1/%d and zero point %d, and TFLite refuses other encodings", name, y.Name, sy, zy, int(1/want), wz)
	}
	if op == graph.Softmax {
		sx, _ := qparams(x)
		if m := float64(beta) * float64(sx) * (1 << 26); m <= 1 {
			return fmt.Errorf("int8 SOFTMAX of input scale %g and beta %g: beta × scale × 2^26 = %.3g, where TFLite needs more than 1", sx, beta, m)
		}
	}
	return nil
}

// SoftmaxUint8OK checks a uint8 -> uint8 SOFTMAX (TF1's quantized
// classifiers) as TFLite does: per-tensor quantization, an output of zero
// point 0 and scale 1/256 (within 0.1%, as for int8), and beta × input
// scale × 2^26 above 1. Its arithmetic is TFLite's fixed-point reference
// kernel's, the int8 one's from output zero point 0 (TFLite Micro has no
// uint8 softmax, and TFLite's default optimized uint8 kernel computes a
// float table, which can differ by one).
func SoftmaxUint8OK(x, y *graph.Tensor, beta float32) error {
	if x == nil || y == nil || x.DType != graph.UInt8 || y.DType != graph.UInt8 {
		return fmt.Errorf("uint8 softmax wants a uint8 input and a uint8 output")
	}
	for _, t := range []*graph.Tensor{x, y} {
		if t.Quant == nil || len(t.Quant.Scale) != 1 {
			return fmt.Errorf("uint8 SOFTMAX tensor %q is not quantized per tensor", t.Name)
		}
	}
	if sy, zy := qparams(y); math.Abs(float64(sy)-1.0/256) > 0.001/256 || zy != 0 {
		return fmt.Errorf("uint8 SOFTMAX output %q is quantized as scale %g, zero point %d: TFLite's kernel writes scale 1/256 and zero point 0, and TFLite refuses other encodings", y.Name, sy, zy)
	}
	if sx, _ := qparams(x); float64(beta)*float64(sx)*(1<<26) <= 1 {
		return fmt.Errorf("uint8 SOFTMAX of input scale %g and beta %g: beta × scale × 2^26 must be above 1", sx, beta)
	}
	return nil
}

// SoftmaxInt8ToInt16OK checks an int8 -> int16 SOFTMAX as TFLite Micro's
// Prepare does (CalculateSoftmaxParams): per-tensor quantization, an
// output of zero point -32768 and scale 1/65536 within 0.1%, the input's
// beta × scale × 2^26 above 1 (as for int8 -> int8). Its arithmetic is the
// int8 kernel's with a 16-bit output, so any axis the int8 form takes.
func SoftmaxInt8ToInt16OK(x, y *graph.Tensor, beta float32) error {
	if x == nil || y == nil || x.DType != graph.Int8 || y.DType != graph.Int16 {
		return fmt.Errorf("softmax from int8 to int16 wants an int8 input and an int16 output")
	}
	for _, t := range []*graph.Tensor{x, y} {
		if t.Quant == nil || len(t.Quant.Scale) != 1 {
			return fmt.Errorf("int8 -> int16 SOFTMAX tensor %q is not quantized per tensor", t.Name)
		}
	}
	// TFLite Micro compares in float: |scale - 1/65536| <= 0.001/65536.
	if sy, zy := qparams(y); zy != -32768 || float32(math.Abs(float64(sy-float32(1.0/65536)))) > float32(0.001)*float32(1.0/65536) {
		return fmt.Errorf("int8 -> int16 SOFTMAX output %q is quantized as scale %g, zero point %d: TFLite Micro's kernel writes scale 1/65536 and zero point -32768, and refuses other encodings", y.Name, sy, zy)
	}
	sx, _ := qparams(x)
	if m := float64(beta) * float64(sx) * (1 << 26); m <= 1 {
		return fmt.Errorf("int8 -> int16 SOFTMAX of input scale %g and beta %g: beta × scale × 2^26 = %.3g, where TFLite needs more than 1", sx, beta, m)
	}
	return nil
}

// SoftmaxInt16OK checks what TFLite Micro's int16 SOFTMAX takes: int16 in
// and out, zero points 0, an output scale of 1/32768 (within 0.1%), the
// last axis.
func SoftmaxInt16OK(x, y *graph.Tensor, axis int) error {
	if x.DType != graph.Int16 || y.DType != graph.Int16 {
		return fmt.Errorf("softmax from %s to %s: of TFLite's int16 forms mcugen takes int16 to int16 and int8 to int16 only", x.DType, y.DType)
	}
	if err := check16x8(x, y); err != nil {
		return err
	}
	if axis != len(x.Shape)-1 {
		return fmt.Errorf("int16 softmax over axis %d of %v: TFLite's is over the last axis", axis, x.Shape)
	}
	if s, _ := qparams(y); math.Abs(float64(s)-1.0/32768) > 0.001/32768 {
		return fmt.Errorf("int16 softmax output %q has scale %g: TFLite's wants 1/32768", y.Name, s)
	}
	// The sum of a row's exponentials (each up to 32767) is 32-bit, and
	// the rescaled differences (up to 65535 steps) too: TFLite's kernel
	// overflows past these, and mcugen refuses them (review finding).
	if d := x.Shape[axis]; d > 65537 {
		return fmt.Errorf("int16 softmax over %d values: TFLite's 32-bit sum of exponentials holds at most 65537", d)
	}
	return nil
}

// SoftmaxInt16InputOK refuses an int16 softmax whose input scale times
// beta makes the rescaled differences leave 32 bits (input_scale * beta
// of about 5 or more).
func SoftmaxInt16InputOK(x *graph.Tensor, beta float32) error {
	sx, _ := qparams(x)
	m, sh := qmath.SoftmaxInt16Params(sx, beta)
	if sh > 15 || float64(m)*math.Ldexp(1, sh-31)*65535 >= math.MaxInt32-32767 {
		return fmt.Errorf("int16 softmax input %q: scale %g times beta %g rescales a difference of 65535 steps past 32 bits", x.Name, sx, beta)
	}
	return nil
}

// intLogSoftmax is TFLite Micro's int8 LOG_SOFTMAX over the last axis
// (qmath.LogSoftmaxParams): the output is scale 16/256, zero point 127.
func intLogSoftmax(g *graph.Graph, n *graph.Node, a *graph.SoftmaxAttrs, ins []*graph.Data) ([]*graph.Data, error) {
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if err := LogSoftmaxInt8OK(g.In(n, 0), yt, a); err != nil {
		return nil, err
	}
	sx, _ := qparams(g.In(n, 0))
	p := qmath.NewLogSoftmaxParams(sx)
	depth := x.Shape[len(x.Shape)-1]
	for o := 0; o+depth <= x.Len(); o += depth {
		p.LogSoftmaxRow(x.I[o:o+depth], y.I[o:o+depth])
	}
	return []*graph.Data{y}, nil
}

// LogSoftmaxInt8OK checks what TFLite Micro's int8 LOG_SOFTMAX takes: int8
// in and out, the last axis, beta 1, an output of scale 16/256 and zero
// point 127, an input scale whose multipliers the kernel can apply
// (qmath.LogSoftmaxScaleOK).
func LogSoftmaxInt8OK(xt, yt *graph.Tensor, a *graph.SoftmaxAttrs) error {
	if xt == nil || yt == nil || xt.DType != graph.Int8 || yt.DType != graph.Int8 || xt.Quant == nil || yt.Quant == nil ||
		len(xt.Quant.Scale) != 1 || len(yt.Quant.Scale) != 1 {
		return fmt.Errorf("integer log-softmax takes per-tensor quantized int8 in and out")
	}
	if ax := a.Axis; ax != len(xt.Shape)-1 && ax != -1 || (a.Beta != 0 && a.Beta != 1) || len(xt.Shape) == 0 {
		return fmt.Errorf("integer log-softmax runs over the last axis with beta 1")
	}
	if d := xt.Shape[len(xt.Shape)-1]; d >= 4096 {
		// Each exponential adds up to 2^19 to an int32 sum: 4,096 overflow it
		// (TFLite Micro's kernel too).
		return fmt.Errorf("integer log-softmax over %d values: at most 4,095 (the fixed-point sum overflows)", d)
	}
	if s, z := yt.Quant.At(0); s != 16.0/256 || z != 127 {
		return fmt.Errorf("integer log-softmax output %q has scale %g and zero point %d; TFLite's kernel needs 16/256 and 127", yt.Name, s, z)
	}
	if s, _ := xt.Quant.At(0); !qmath.LogSoftmaxScaleOK(s) {
		return fmt.Errorf("integer log-softmax input %q has scale %g: scale × 2^26 = %.3g, where TFLite needs more than 1 (its reverse multiplier is 1 or more, or infinite)", xt.Name, s, float64(s)*(1<<26))
	}
	return nil
}

// intL2Normalize is TFLite's int8 L2_NORMALIZATION over the last axis
// (qmath.L2NormalizeInt8).
func intL2Normalize(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if err := L2NormalizeInt8OK(g.In(n, 0), yt); err != nil {
		return nil, err
	}
	_, zx := qparams(g.In(n, 0))
	depth := x.Shape[len(x.Shape)-1]
	v, out := make([]int32, depth), make([]int32, depth)
	for o := 0; o+depth <= x.Len(); o += depth {
		for i := range v {
			v[i] = int32(x.I[o+i]) - zx
		}
		qmath.L2NormalizeInt8(v, out)
		for i, q := range out {
			y.I[o+i] = int64(q)
		}
	}
	return []*graph.Data{y}, nil
}

// L2NormalizeInt8OK checks what TFLite's int8 L2_NORMALIZATION takes: int8
// in and out, per-tensor quantized, the output at scale 1/128 and zero
// point 0, rows of at most qmath.L2NormMaxDepth values.
func L2NormalizeInt8OK(xt, yt *graph.Tensor) error {
	if xt == nil || yt == nil || xt.DType != graph.Int8 || yt.DType != graph.Int8 || xt.Quant == nil || yt.Quant == nil ||
		len(xt.Quant.Scale) != 1 || len(yt.Quant.Scale) != 1 || len(xt.Shape) == 0 {
		return fmt.Errorf("integer L2 normalization takes per-tensor quantized int8 in and out, at least 1-D")
	}
	if s, z := yt.Quant.At(0); s != 1.0/128 || z != 0 {
		return fmt.Errorf("integer L2 normalization output %q has scale %g and zero point %d; TFLite's kernel needs 1/128 and 0", yt.Name, s, z)
	}
	if d := xt.Shape[len(xt.Shape)-1]; d > qmath.L2NormMaxDepth {
		return fmt.Errorf("integer L2 normalization over %d values: at most %d (the int32 sum of squares overflows)", d, qmath.L2NormMaxDepth)
	}
	return nil
}
