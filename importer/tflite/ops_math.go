package tflite

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
)

// The element-wise arithmetic, comparison, logic and normalisation
// operators. Each maps onto canonical ops, or an exact composition of them,
// with TFLite's semantics; an operator whose integer form TFLite computes
// with arithmetic of its own that the graph's integer kernels do not
// reproduce bit for bit is refused for that type.

// Builtin operator codes of this file.
const (
	codeL2Normalization   = 11
	codeL2Pool2D          = 12
	codeLocalResponseNorm = 13
	codeResizeBilinear    = 23
	codeDiv               = 42
	codeLogSoftmax        = 50
	codePrelu             = 54
	codeLess              = 58
	codeGreater           = 61
	codeGreaterEqual      = 62
	codeLessEqual         = 63
	codeSelect            = 64
	codeEqual             = 71
	codeNotEqual          = 72
	codePow               = 78
	codeLogicalOr         = 84
	codeLogicalAnd        = 86
	codeLogicalNot        = 87
	codeFloorDiv          = 90
	codeFloorMod          = 95
	codeSquaredDifference = 99
	codeAddN              = 106
	codeSelectV2          = 123
	codeCumsum            = 128
	codeGelu              = 150
	codeRelu0To1          = 152
	codeSign              = 158
)

// BuiltinOptions union types of this file's operators.
const (
	moptL2Norm            = 12
	moptLRN               = 13
	moptResizeBilinear    = 15
	moptDiv               = 29
	moptLogSoftmax        = 36
	moptLess              = 41
	moptGreater           = 44
	moptGreaterEqual      = 45
	moptLessEqual         = 46
	moptSelect            = 47
	moptEqual             = 53
	moptNotEqual          = 54
	moptPow               = 56
	moptLogicalOr         = 60
	moptLogicalAnd        = 62
	moptLogicalNot        = 63
	moptFloorDiv          = 65
	moptFloorMod          = 72
	moptSquaredDifference = 76
	moptAddN              = 82
	moptSelectV2          = 98
	moptCumsum            = 102
	moptGelu              = 116
	moptSign              = 123
)

func init() {
	register(mathDiv, codeDiv)
	register(mathSquaredDifference, codeSquaredDifference)
	register(mathPow, codePow)
	register(mathFloorDiv, codeFloorDiv)
	register(mathFloorMod, codeFloorMod)
	register(mathAddN, codeAddN)
	register(mathGelu, codeGelu)
	register(mathLogSoftmax, codeLogSoftmax)
	register(mathL2Norm, codeL2Normalization)
	register(mathPrelu, codePrelu)
	register(mathL2Pool, codeL2Pool2D)
	register(mathCumsum, codeCumsum)
	register(mathSign, codeSign)
	register(mathRelu0To1, codeRelu0To1)
	register(mathLRN, codeLocalResponseNorm)
	register(mathResizeBilinear, codeResizeBilinear)
	register(mathCompare, codeEqual, codeNotEqual, codeLess, codeLessEqual, codeGreater, codeGreaterEqual)
	register(mathLogic, codeLogicalAnd, codeLogicalOr, codeLogicalNot)
	register(mathSelect, codeSelect, codeSelectV2)
}

// mathOpts are the options table types of the operators that have one.
var mathOpts = map[int32]uint8{
	codeDiv: moptDiv, codeSquaredDifference: moptSquaredDifference, codePow: moptPow,
	codeFloorDiv: moptFloorDiv, codeFloorMod: moptFloorMod, codeAddN: moptAddN,
	codeGelu: moptGelu, codeLogSoftmax: moptLogSoftmax, codeL2Normalization: moptL2Norm,
	codeL2Pool2D: optPool2D, codeCumsum: moptCumsum, codeSign: moptSign,
	codeLocalResponseNorm: moptLRN, codeResizeBilinear: moptResizeBilinear,
	codeEqual: moptEqual, codeNotEqual: moptNotEqual, codeLess: moptLess,
	codeLessEqual: moptLessEqual, codeGreater: moptGreater, codeGreaterEqual: moptGreaterEqual,
	codeLogicalAnd: moptLogicalAnd, codeLogicalOr: moptLogicalOr, codeLogicalNot: moptLogicalNot,
	codeSelect: moptSelect, codeSelectV2: moptSelectV2,
}

// mathOptions returns the operator's options table (checking its type).
func (c *opctx) mathOptions() (table, error) {
	want, ok := mathOpts[c.code]
	if !ok {
		return c.options(0)
	}
	return c.options(want)
}

// mathNode adds an intermediate node computing a new tensor of type dt.
func (c *opctx) mathNode(op graph.Op, attrs any, ins []string, suffix string, dt graph.DType, shape []int, q *graph.Quant) string {
	return c.step(op, attrs, ins, suffix, dt, shape, q).Name
}

// mathScalar adds a rank-0 constant of type dt holding v (the stored value
// for an integer type, with quantization q).
func (c *opctx) mathScalar(suffix string, dt graph.DType, v float64, q *graph.Quant) string {
	d := graph.NewData(dt, []int{})
	if dt == graph.Float32 {
		d.F[0] = float32(v)
	} else {
		d.I[0] = int64(v)
	}
	t := c.temp(suffix, dt, nil, q)
	t.Shape, t.Data = []int{}, d
	return t.Name
}

// mathIO imports the first nIn inputs and output 0.
func (c *opctx) mathIO(nIn int) ([]*graph.Tensor, *graph.Tensor, error) {
	ins := make([]*graph.Tensor, nIn)
	for i := range ins {
		t, err := c.in(i)
		if err != nil {
			return nil, nil, err
		}
		ins[i] = t
	}
	y, err := c.out(0)
	if err != nil {
		return nil, nil, err
	}
	if len(c.outs) != 1 {
		return nil, nil, c.errorf("%d outputs, want 1", len(c.outs))
	}
	return ins, y, nil
}

func isQuantized(t *graph.Tensor) bool {
	return t != nil && t.Quant != nil && len(t.Quant.Scale) > 0
}

// sameQuantParams reports whether a and b are both unquantized or share one
// per-tensor scale and zero point.
func sameQuantParams(a, b *graph.Tensor) bool {
	if !isQuantized(a) || !isQuantized(b) {
		return !isQuantized(a) && !isQuantized(b)
	}
	if a.Quant.PerAxis() || b.Quant.PerAxis() {
		return false
	}
	sa, za := a.Quant.At(0)
	sb, zb := b.Quant.At(0)
	return sa == sb && za == zb
}

// mathTypes checks that every tensor has the type of the first and that
// the type is one of allowed (plain integer tensors: no quantization);
// why is the reason given for a refused type.
func (c *opctx) mathTypes(allowed []graph.DType, why string, ts ...*graph.Tensor) error {
	dt := ts[0].DType
	for _, t := range ts[1:] {
		if t.DType != dt {
			return c.errorf("operands of types %s and %s: all must be %s", dt, t.DType, dt)
		}
	}
	if !slices.Contains(allowed, dt) {
		if why == "" {
			why = fmt.Sprintf("supported types are %v", allowed)
		}
		return c.errorf("%s tensors are not supported: %s", dt, why)
	}
	if dt != graph.Float32 {
		for _, t := range ts {
			if isQuantized(t) {
				return c.errorf("quantized %s tensor %q is not supported: %s", dt, t.Name, why)
			}
		}
	}
	return nil
}

var (
	floatOnly  = []graph.DType{graph.Float32}
	floatInt32 = []graph.DType{graph.Float32, graph.Int32}
)

// mathBroadcast checks that the inputs broadcast to the output's shape.
func (c *opctx) mathBroadcast(y *graph.Tensor, xs ...*graph.Tensor) error {
	shape := []int{}
	for _, x := range xs {
		r := max(len(shape), len(x.Shape))
		s := make([]int, r)
		for i := range s {
			a, b := 1, 1
			if j := i - (r - len(shape)); j >= 0 {
				a = shape[j]
			}
			if j := i - (r - len(x.Shape)); j >= 0 {
				b = x.Shape[j]
			}
			switch {
			case a == b || b == 1:
				s[i] = a
			case a == 1:
				s[i] = b
			default:
				return c.errorf("input shapes do not broadcast (%v and %v)", shape, x.Shape)
			}
		}
		shape = s
	}
	if !slices.Equal(shape, y.Shape) {
		return c.errorf("inputs broadcast to %v, the output is %v", shape, y.Shape)
	}
	return nil
}

// binaryIO imports two inputs and the output of an element-wise operator,
// checks the types and the broadcast.
func (c *opctx) binaryIO(allowed []graph.DType, why string) (x, z, y *graph.Tensor, err error) {
	ins, y, err := c.mathIO(2)
	if err != nil {
		return nil, nil, nil, err
	}
	x, z = ins[0], ins[1]
	if err := c.mathTypes(allowed, why, x, z, y); err != nil {
		return nil, nil, nil, err
	}
	if err := c.mathBroadcast(y, x, z); err != nil {
		return nil, nil, nil, err
	}
	return x, z, y, nil
}

// mathDiv maps DIV: float32 with its fused activation; int32 truncates
// toward zero (C division, as TFLite's kernel), without activation; int8
// is TFLite Micro's fixed-point quotient (qmath.DivInt8), with activation.
func mathDiv(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	act, err := c.act(o.u8(0, 0))
	if err != nil {
		return err
	}
	if ins, y, err := c.mathIO(2); err == nil && y.DType == graph.Int8 {
		x, z := ins[0], ins[1]
		if err := interp.DivInt8OK(x, z, y); err != nil {
			return c.errorf("%v", err)
		}
		if err := c.mathBroadcast(y, x, z); err != nil {
			return err
		}
		n.Op, n.Attrs, n.Inputs = graph.Div, &graph.BinaryAttrs{Act: act}, []string{x.Name, z.Name}
		return nil
	}
	x, z, _, err := c.binaryIO(floatInt32, "TFLite's int8 DIV is supported, other quantized types are not")
	if err != nil {
		return err
	}
	if x.DType == graph.Int32 && act != graph.ActNone {
		return c.errorf("int32 DIV with fused activation %s is not supported", act)
	}
	n.Op, n.Attrs, n.Inputs = graph.Div, &graph.BinaryAttrs{Act: act}, []string{x.Name, z.Name}
	return nil
}

// mathSquaredDifference maps SQUARED_DIFFERENCE: float and int32 as
// d = x - y; d * d, int8 and int16 as graph.SquaredDifference.
func mathSquaredDifference(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	ins, y, err := c.mathIO(2)
	if err != nil {
		return err
	}
	if x, z := ins[0], ins[1]; y.DType == graph.Int16 || x.DType == graph.Int16 {
		return c.squaredDifference16(n, x, z, y) // ops_int16_36.go
	} else if y.DType == graph.Int8 {
		// TFLite Micro's fixed point (graph.SquaredDifference).
		for _, t := range []*graph.Tensor{x, z, y} {
			if t.DType != graph.Int8 || t.Quant == nil || len(t.Quant.Scale) != 1 {
				return c.errorf("int8 SQUARED_DIFFERENCE needs per-tensor quantized int8 inputs and output (%q is not)", t.Name)
			}
		}
		if err := c.mathBroadcast(y, x, z); err != nil {
			return err
		}
		n.Op, n.Inputs = graph.SquaredDifference, []string{x.Name, z.Name}
		return nil
	}
	x, z, y, err := c.binaryIO(floatInt32, "TFLite's int8 and int16 SQUARED_DIFFERENCE are supported, other quantized types are not")
	if err != nil {
		return err
	}
	d := c.mathNode(graph.Sub, nil, []string{x.Name, z.Name}, "diff", y.DType, y.Shape, nil)
	n.Op, n.Inputs = graph.Mul, []string{d, d}
	return nil
}

// mathPow maps POW (float32).
func mathPow(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	x, z, _, err := c.binaryIO(floatOnly, "the graph's Pow is float32 only (TFLite's integer POW is not reproduced)")
	if err != nil {
		return err
	}
	n.Op, n.Inputs = graph.Pow, []string{x.Name, z.Name}
	return nil
}

// floorAdjust adds the bool tensor that says where a truncated remainder r
// of x by z must be corrected to the floored one: r and z of opposite signs
// (r != 0). As Where(z < 0, r > 0, r < 0).
func (c *opctx) floorAdjust(r string, z *graph.Tensor, y *graph.Tensor) string {
	zero := c.mathScalar("zero", y.DType, 0, nil)
	zneg := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "Less"}, []string{z.Name, zero}, "divisor_negative", graph.Bool, z.Shape, nil)
	rpos := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "Greater"}, []string{r, zero}, "rem_positive", graph.Bool, y.Shape, nil)
	rneg := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "Less"}, []string{r, zero}, "rem_negative", graph.Bool, y.Shape, nil)
	return c.mathNode(graph.Where, nil, []string{zneg, rpos, rneg}, "adjust", graph.Bool, y.Shape, nil)
}

// mathFloorDiv maps FLOOR_DIV: a quotient less one where the remainder
// (fmod) and the divisor differ in sign. int32: the truncated quotient,
// which makes floor(x / y) exactly. float32: (x - fmod(x, y)) / y rounded
// to an integer, TFLite's double-precision floor(x / y) where a float32
// quotient would round up onto the next integer.
func mathFloorDiv(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	x, z, y, err := c.binaryIO(floatInt32, "TFLite's FLOOR_DIV works on raw integers; quantized tensors are not supported")
	if err != nil {
		return err
	}
	r := c.mathNode(graph.Mod, &graph.ModAttrs{Fmod: true}, []string{x.Name, z.Name}, "rem", y.DType, y.Shape, nil)
	adj := c.floorAdjust(r, z, y)
	var q string
	if y.DType == graph.Float32 {
		// TFLite floors the quotient in double; a float32 quotient can round
		// up onto the next integer (1 / 0.1f is 9.99999985 in double, 10 in
		// float32). Python's way stays in float32: (x - fmod(x, z)) / z is
		// an integer up to rounding, so round it, then step down where the
		// remainder's sign differs from the divisor's.
		xr := c.mathNode(graph.Sub, nil, []string{x.Name, r}, "minus_rem", y.DType, y.Shape, nil)
		d := c.mathNode(graph.Div, nil, []string{xr, z.Name}, "exact_quotient", y.DType, y.Shape, nil)
		q = c.mathNode(graph.Math, &graph.MathAttrs{Fn: graph.MathRound}, []string{d}, "quotient", y.DType, y.Shape, nil)
	} else {
		q = c.mathNode(graph.Div, nil, []string{x.Name, z.Name}, "quotient", y.DType, y.Shape, nil)
	}
	one := c.mathScalar("one", y.DType, 1, nil)
	qm1 := c.mathNode(graph.Sub, nil, []string{q, one}, "quotient_minus_one", y.DType, y.Shape, nil)
	n.Op, n.Inputs = graph.Where, []string{adj, qm1, q}
	return nil
}

// mathFloorMod maps FLOOR_MOD: the remainder with the divisor's sign. int32
// is the graph's Mod (Python's %); float32 is fmod, plus y where the
// remainder is non-zero and of the other sign (TFLite's exact steps).
func mathFloorMod(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	x, z, y, err := c.binaryIO(floatInt32, "TFLite's FLOOR_MOD works on raw integers; quantized tensors are not supported")
	if err != nil {
		return err
	}
	if y.DType != graph.Float32 {
		n.Op, n.Inputs = graph.Mod, []string{x.Name, z.Name}
		return nil
	}
	r := c.mathNode(graph.Mod, &graph.ModAttrs{Fmod: true}, []string{x.Name, z.Name}, "fmod", y.DType, y.Shape, nil)
	adj := c.floorAdjust(r, z, y)
	ry := c.mathNode(graph.Add, nil, []string{r, z.Name}, "fmod_plus_divisor", y.DType, y.Shape, nil)
	n.Op, n.Inputs = graph.Where, []string{adj, ry, r}
	return nil
}

// mathAddN maps ADD_N: ((x0 + x1) + x2) + ..., all of one shape (int8:
// addNInt8).
func mathAddN(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	if len(c.ins) < 2 {
		return c.errorf("ADD_N needs at least 2 inputs, has %d", len(c.ins))
	}
	ins, y, err := c.mathIO(len(c.ins))
	if err != nil {
		return err
	}
	if y.DType == graph.Int8 || ins[0].DType == graph.Int8 {
		return addNInt8(c, n, ins, y) // ops_addn_cumsum_36.go
	}
	if err := c.mathTypes(floatInt32, "ADD_N takes float32, int32 and int8", append(ins, y)...); err != nil {
		return err
	}
	for _, t := range ins {
		if !slices.Equal(t.Shape, y.Shape) {
			return c.errorf("input %q has shape %v, the output %v: ADD_N does not broadcast", t.Name, t.Shape, y.Shape)
		}
	}
	acc := ins[0].Name
	for i := 1; i < len(ins)-1; i++ {
		acc = c.mathNode(graph.Add, nil, []string{acc, ins[i].Name}, fmt.Sprintf("sum%d", i), y.DType, y.Shape, nil)
	}
	n.Op, n.Inputs = graph.Add, []string{acc, ins[len(ins)-1].Name}
	return nil
}

// unaryIO imports input 0 and output 0 of one shape and type.
func (c *opctx) unaryIO(allowed []graph.DType, why string) (x, y *graph.Tensor, err error) {
	ins, y, err := c.mathIO(1)
	if err != nil {
		return nil, nil, err
	}
	x = ins[0]
	if err := c.mathTypes(allowed, why, x, y); err != nil {
		return nil, nil, err
	}
	if !slices.Equal(x.Shape, y.Shape) {
		return nil, nil, c.errorf("output shape %v differs from input %v", y.Shape, x.Shape)
	}
	return x, y, nil
}

// mathGelu maps GELU (float32): 0.5·x·(1 + erf(x/√2)), or with approximate
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in TFLite's order of steps.
func mathGelu(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	if ins, y, err := c.mathIO(1); err == nil && (ins[0].DType == graph.Int8 || y.DType == graph.Int8) {
		// TFLite's table, built in float32 (qmath.LUTPopulateInt8).
		x := ins[0]
		for _, t := range []*graph.Tensor{x, y} {
			if t.DType != graph.Int8 || t.Quant == nil || len(t.Quant.Scale) != 1 {
				return c.errorf("int8 GELU needs per-tensor quantized int8 input and output (%q is not)", t.Name)
			}
		}
		if !slices.Equal(x.Shape, y.Shape) {
			return c.errorf("output shape %v differs from the input's %v", y.Shape, x.Shape)
		}
		fn := graph.MathGelu
		if o.boolean(0) {
			fn = graph.MathGeluTanh
		}
		n.Op, n.Attrs, n.Inputs = graph.Math, &graph.MathAttrs{Fn: fn, TFLiteInt8: true}, []string{x.Name}
		return nil
	}
	x, y, err := c.unaryIO(floatOnly, "TFLite's int8 GELU is supported, other quantized types are not")
	if err != nil {
		return err
	}
	f32 := graph.Float32
	mul := func(a, b, suffix string) string {
		return c.mathNode(graph.Mul, nil, []string{a, b}, suffix, f32, y.Shape, nil)
	}
	var inner string
	if o.boolean(0) {
		p := mul(x.Name, c.mathScalar("c0_044715", f32, float64(float32(0.044715)), nil), "cubic0")
		p = mul(p, x.Name, "cubic1")
		p = mul(p, x.Name, "cubic2")
		s := c.mathNode(graph.Add, nil, []string{x.Name, p}, "poly", f32, y.Shape, nil)
		k := mul(s, c.mathScalar("sqrt_2_over_pi", f32, math.Sqrt(2/math.Pi), nil), "scaled")
		inner = c.mathNode(graph.Tanh, nil, []string{k}, "tanh", f32, y.Shape, nil)
	} else {
		t := mul(x.Name, c.mathScalar("inv_sqrt2", f32, 1/math.Sqrt2, nil), "scaled")
		inner = c.mathNode(graph.Math, &graph.MathAttrs{Fn: graph.MathErf}, []string{t}, "erf", f32, y.Shape, nil)
	}
	a := c.mathNode(graph.Add, nil, []string{inner, c.mathScalar("one", f32, 1, nil)}, "one_plus", f32, y.Shape, nil)
	h := mul(x.Name, c.mathScalar("half", f32, 0.5, nil), "half_x")
	n.Op, n.Inputs = graph.Mul, []string{h, a}
	return nil
}

// mathLogSoftmax maps LOG_SOFTMAX along the last axis: float32, or int8
// with TFLite Micro's fixed point (output scale 16/256, zero point 127).
func mathLogSoftmax(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	ins, y, err := c.mathIO(1)
	if err != nil {
		return err
	}
	x := ins[0]
	if len(x.Shape) == 0 {
		return c.errorf("LOG_SOFTMAX of a scalar")
	}
	a := &graph.SoftmaxAttrs{Axis: len(x.Shape) - 1, Beta: 1, Mode: graph.SoftmaxLog}
	if x.DType == graph.Int8 {
		if err := interp.LogSoftmaxInt8OK(x, y, a); err != nil {
			return c.errorf("%v", err)
		}
	} else if x, _, err = c.unaryIO(floatOnly, "TFLite's int8 LOG_SOFTMAX is supported, other integer forms are not"); err != nil {
		return err
	}
	n.Op, n.Inputs, n.Attrs = graph.Softmax, []string{x.Name}, a
	return nil
}

// mathL2Norm maps L2_NORMALIZATION over the last axis: int8 as
// graph.L2Normalize (TFLite's fixed point), float32 as
// x / max(sqrt(Σx²), 1e-6), TFLite's epsilon. TFLite's kernel ignores the
// fused activation of the options, and so does this.
func mathL2Norm(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	if ins, y, err := c.mathIO(1); err == nil && (ins[0].DType == graph.Int8 || y.DType == graph.Int8) {
		// TFLite's fixed-point inverse square root (qmath.L2NormalizeInt8).
		if err := interp.L2NormalizeInt8OK(ins[0], y); err != nil {
			return c.errorf("%v", err)
		}
		if !slices.Equal(ins[0].Shape, y.Shape) {
			return c.errorf("output shape %v differs from the input's %v", y.Shape, ins[0].Shape)
		}
		n.Op, n.Inputs = graph.L2Normalize, []string{ins[0].Name}
		return nil
	}
	x, _, err := c.unaryIO(floatOnly, "TFLite's int8 L2_NORMALIZATION is supported, other quantized types are not")
	if err != nil {
		return err
	}
	if len(x.Shape) == 0 {
		return c.errorf("L2_NORMALIZATION of a scalar")
	}
	r := len(x.Shape)
	ns := slices.Clone(x.Shape)
	ns[r-1] = 1
	f32 := graph.Float32
	norm := c.mathNode(graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceL2, Axes: []int{r - 1}, KeepDims: true}, []string{x.Name}, "norm", f32, ns, nil)
	eps := c.mathScalar("epsilon", f32, float64(float32(1e-6)), nil)
	clamped := c.mathNode(graph.Maximum, nil, []string{norm, eps}, "norm_eps", f32, ns, nil)
	n.Op, n.Inputs = graph.Div, []string{x.Name, clamped}
	return nil
}

// mathPrelu maps PRELU: x >= 0 ? x : x·alpha, alpha broadcast against x.
func mathPrelu(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	ins, y, err := c.mathIO(2)
	if err != nil {
		return err
	}
	x, alpha := ins[0], ins[1]
	if err := c.mathBroadcast(y, x, alpha); err != nil {
		return err
	}
	if x.DType == graph.Int8 {
		return c.preluInt8(n, x, alpha, y)
	}
	if x.DType == graph.Int16 {
		return c.preluInt16(n, x, alpha, y) // ops_int16_36.go
	}
	if err := c.mathTypes(floatOnly, "", x, alpha, y); err != nil {
		return err
	}
	zero := c.mathScalar("zero", graph.Float32, 0, nil)
	cond := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "GreaterOrEqual"}, []string{x.Name, zero}, "non_negative", graph.Bool, x.Shape, nil)
	neg := c.mathNode(graph.Mul, nil, []string{x.Name, alpha.Name}, "scaled", graph.Float32, y.Shape, nil)
	n.Op, n.Inputs = graph.Where, []string{cond, x.Name, neg}
	return nil
}

// preluInt8 is TFLite's int8 PRELU as a composition: where x >= its zero
// point, x requantized to the output (TFLite's multiplier 1: s_x / s_y);
// elsewhere (x - z_x)(alpha - z_a) requantized by s_x·s_a / s_y, which is
// the graph's int8 Mul. Both branches round with
// MultiplyByQuantizedMultiplier, add z_y and saturate, as TFLite does.
func (c *opctx) preluInt8(n *graph.Node, x, alpha, y *graph.Tensor) error {
	for _, t := range []*graph.Tensor{x, alpha, y} {
		if t.DType != graph.Int8 {
			return c.errorf("int8 PRELU needs int8 input, alpha and output; %q is %s", t.Name, t.DType)
		}
		if !isQuantized(t) || t.Quant.PerAxis() {
			return c.errorf("int8 PRELU needs per-tensor quantization on %q", t.Name)
		}
	}
	// The two multipliers as TFLite Micro derives them (CalculatePreluParams,
	// in double: the Quantize's and the Mul's below). TFLite's own kernel
	// derives them in float32, and can differ by one where the two
	// roundings give other Q31 multipliers (most realistic scales): mcugen
	// follows TFLite Micro, as everywhere.
	_, zx := x.Quant.At(0)
	zq := &graph.Quant{Scale: slices.Clone(x.Quant.Scale), ZeroPoint: slices.Clone(x.Quant.ZeroPoint)}
	zero := c.mathScalar("zero_point", graph.Int8, float64(zx), zq)
	cond := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "GreaterOrEqual"}, []string{x.Name, zero}, "non_negative", graph.Bool, x.Shape, nil)
	yq := func() *graph.Quant {
		return &graph.Quant{Scale: slices.Clone(y.Quant.Scale), ZeroPoint: slices.Clone(y.Quant.ZeroPoint)}
	}
	pos := c.mathNode(graph.Quantize, nil, []string{x.Name}, "positive", graph.Int8, x.Shape, yq())
	neg := c.mathNode(graph.Mul, nil, []string{x.Name, alpha.Name}, "negative", graph.Int8, y.Shape, yq())
	n.Op, n.Inputs = graph.Where, []string{cond, pos, neg}
	return nil
}

// mathL2Pool maps L2_POOL_2D (float32): sqrt of the mean of the squares
// over the window's elements inside the input, then the fused activation.
func mathL2Pool(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	ins, y, err := c.mathIO(1)
	if err != nil {
		return err
	}
	x := ins[0]
	if err := c.mathTypes(floatOnly, "int8 L2_POOL_2D is not supported", x, y); err != nil {
		return err
	}
	a := &graph.PoolAttrs{
		Kernel:   [2]int{int(o.i32(4, 0)), int(o.i32(3, 0))},
		Stride:   [2]int{int(o.i32(2, 0)), int(o.i32(1, 0))},
		Dilation: [2]int{1, 1},
	}
	act, err := c.act(o.u8(5, 0))
	if err != nil {
		return err
	}
	same, err := c.samePadding(o.i8(0, 0))
	if err != nil {
		return err
	}
	if a.Pad, err = c.window(x, same, a.Kernel[0], a.Kernel[1], a.Stride[0], a.Stride[1], 1, 1); err != nil {
		return err
	}
	if len(y.Shape) != 4 || y.Shape[0] != x.Shape[0] || y.Shape[3] != x.Shape[3] {
		return c.errorf("output shape %v does not fit input %v", y.Shape, x.Shape)
	}
	f32 := graph.Float32
	sq := c.mathNode(graph.Mul, nil, []string{x.Name, x.Name}, "square", f32, x.Shape, nil)
	mean := c.mathNode(graph.AvgPool2D, a, []string{sq}, "mean_square", f32, y.Shape, nil)
	sqrt := &graph.MathAttrs{Fn: graph.MathSqrt}
	lo, hi, _ := act.Bounds()
	if act == graph.ActNone || act == graph.ActRelu {
		// A square root is never below 0: RELU changes nothing.
		n.Op, n.Attrs, n.Inputs = graph.Math, sqrt, []string{mean}
		return nil
	}
	root := c.mathNode(graph.Math, sqrt, []string{mean}, "root", f32, y.Shape, nil)
	n.Op, n.Attrs, n.Inputs = graph.Clip, &graph.ClipAttrs{Min: float32(lo), Max: float32(hi)}, []string{root}
	return nil
}

// mathCumsum maps CUMSUM (float32, int32; int8 in cumsumInt8): input 1 is the constant axis.
func mathCumsum(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	if x, err := c.in(0); err == nil && x.DType == graph.Int8 {
		return cumsumInt8(c, n, o) // ops_addn_cumsum_36.go
	}
	x, _, err := c.unaryIO(floatInt32, "CUMSUM takes float32, int32 and int8")
	if err != nil {
		return err
	}
	ax, err := c.axisArg(1, max(len(x.Shape), 1))
	if err != nil {
		return err
	}
	if len(x.Shape) == 0 {
		return c.errorf("CUMSUM of a scalar")
	}
	n.Op, n.Inputs = graph.CumSum, []string{x.Name}
	n.Attrs = &graph.CumSumAttrs{Axis: ax, Exclusive: o.boolean(0), Reverse: o.boolean(1)}
	return nil
}

// mathSign maps SIGN: float32 as Math Sign; int32 as (x > 0) - (x < 0).
func mathSign(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	x, y, err := c.unaryIO(floatInt32, "int8 SIGN is not supported")
	if err != nil {
		return err
	}
	if x.DType == graph.Float32 {
		n.Op, n.Attrs, n.Inputs = graph.Math, &graph.MathAttrs{Fn: graph.MathSign}, []string{x.Name}
		return nil
	}
	zero := c.mathScalar("zero", y.DType, 0, nil)
	gt := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "Greater"}, []string{x.Name, zero}, "positive", graph.Bool, x.Shape, nil)
	lt := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "Less"}, []string{x.Name, zero}, "negative", graph.Bool, x.Shape, nil)
	gi := c.mathNode(graph.Cast, &graph.CastAttrs{To: y.DType}, []string{gt}, "positive_int", y.DType, x.Shape, nil)
	li := c.mathNode(graph.Cast, &graph.CastAttrs{To: y.DType}, []string{lt}, "negative_int", y.DType, x.Shape, nil)
	n.Op, n.Inputs = graph.Sub, []string{gi, li}
	return nil
}

// mathRelu0To1 maps RELU_0_TO_1: Clip to [0, 1]. Its int8 form is TFLite's
// ReluX kernel (requantize, then clamp), which the graph's integer Clip is.
func mathRelu0To1(c *opctx, n *graph.Node) error {
	ins, y, err := c.mathIO(1)
	if err != nil {
		return err
	}
	x := ins[0]
	switch {
	case x.DType == graph.Float32 && y.DType == graph.Float32:
	case x.DType == graph.Int8 && y.DType == graph.Int8 && isQuantized(x) && isQuantized(y) && !x.Quant.PerAxis() && !y.Quant.PerAxis():
	default:
		return c.errorf("%s to %s is not supported (float32, or int8 with per-tensor quantization)", x.DType, y.DType)
	}
	if !slices.Equal(x.Shape, y.Shape) {
		return c.errorf("output shape %v differs from input %v", y.Shape, x.Shape)
	}
	n.Op, n.Attrs, n.Inputs = graph.Clip, &graph.ClipAttrs{Min: 0, Max: 1}, []string{x.Name}
	return nil
}

// mathLRN maps LOCAL_RESPONSE_NORMALIZATION (float32, 4-D) over the last
// axis: x · (bias + alpha·Σ x²)^-beta, the sum over the channels within
// radius of each (both sides, as TensorFlow and TFLite's optimized kernel
// do). The windowed sum is a convolution of the squares, viewed as
// [N·H·W, C, 1, 1], with a column of 2r+1 weights alpha.
func mathLRN(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	x, y, err := c.unaryIO(floatOnly, "int8 LOCAL_RESPONSE_NORMALIZATION is not supported")
	if err != nil {
		return err
	}
	if len(x.Shape) != 4 {
		return c.errorf("input shape %v is not 4-D", x.Shape)
	}
	radius := int(o.i32(0, 0))
	bias, alpha, beta := o.f32(1, 0), o.f32(2, 0), o.f32(3, 0)
	if radius < 0 {
		return c.errorf("radius %d is negative", radius)
	}
	ch := x.Shape[3]
	if ch == 0 {
		return c.errorf("input shape %v has no channels", x.Shape)
	}
	r := min(radius, ch-1) // channels further away than C-1 never exist
	k := 2*r + 1
	rows := graph.NumElements(x.Shape[:3])
	f32 := graph.Float32
	view := []int{rows, ch, 1, 1}
	sq := c.mathNode(graph.Mul, nil, []string{x.Name, x.Name}, "square", f32, x.Shape, nil)
	sqv := c.mathNode(graph.Reshape, nil, []string{sq}, "square_view", f32, view, nil)
	w := graph.NewData(f32, []int{1, k, 1, 1})
	for i := range w.F {
		w.F[i] = alpha
	}
	wt := c.temp("window", f32, w.Shape, nil)
	wt.Data = w
	conv := &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: r, Bottom: r}, Group: 1}
	sum := c.mathNode(graph.Conv2D, conv, []string{sqv, wt.Name, ""}, "window_sum", f32, view, nil)
	sum = c.mathNode(graph.Reshape, nil, []string{sum}, "window_sum_nhwc", f32, x.Shape, nil)
	base := c.mathNode(graph.Add, nil, []string{sum, c.mathScalar("bias", f32, float64(bias), nil)}, "base", f32, x.Shape, nil)
	mult := c.mathNode(graph.Pow, nil, []string{base, c.mathScalar("minus_beta", f32, -float64(beta), nil)}, "multiplier", f32, y.Shape, nil)
	n.Op, n.Inputs = graph.Mul, []string{x.Name, mult}
	return nil
}

// mathResizeBilinear maps RESIZE_BILINEAR (float32, int8). The size input must
// be the constant [H, W] of the output. TFLite's coordinates are x·in/out,
// (x + 0.5)·in/out - 0.5 with half_pixel_centers, or x·(in-1)/(out-1) with
// align_corners, with both taps clamped to the input: the graph's bilinear
// Resize with "asymmetric", "half_pixel" or "align_corners".
func mathResizeBilinear(c *opctx, n *graph.Node) error {
	o, err := c.mathOptions()
	if err != nil {
		return err
	}
	ins, y, err := c.mathIO(1)
	if err != nil {
		return err
	}
	x := ins[0]
	if x.DType != graph.Float32 || y.DType != graph.Float32 {
		// TFLite's integer kernel interpolates stored values
		// (graph.IntResizeTaps): int8 in and out, quantized alike.
		if x.DType != graph.Int8 {
			return c.errorf("%s RESIZE_BILINEAR is not supported (float32 and int8 are)", x.DType)
		}
		if err := c.copyOK(x, y); err != nil {
			return err
		}
	}
	size, err := c.constInts(1, "size")
	if err != nil {
		return err
	}
	if len(x.Shape) != 4 || len(y.Shape) != 4 || len(size) != 2 {
		return c.errorf("input %v, size %v and output %v must be NHWC and [H, W]", x.Shape, size, y.Shape)
	}
	if size[0] != y.Shape[1] || size[1] != y.Shape[2] || y.Shape[0] != x.Shape[0] || y.Shape[3] != x.Shape[3] {
		return c.errorf("size %v and input %v do not give the output shape %v", size, x.Shape, y.Shape)
	}
	if size[0] <= 0 || size[1] <= 0 || x.Shape[1] <= 0 || x.Shape[2] <= 0 {
		return c.errorf("size %v and input %v must be positive", size, x.Shape)
	}
	align, half := o.boolean(2), o.boolean(3)
	a := &graph.ResizeAttrs{Mode: "bilinear", Coord: "asymmetric"}
	switch {
	case align && half:
		return c.errorf("align_corners and half_pixel_centers both set (TFLite refuses this)")
	case align:
		a.Coord = "align_corners"
	case half:
		a.Coord = "half_pixel"
	}
	n.Op, n.Attrs, n.Inputs = graph.Resize, a, []string{x.Name}
	return nil
}

// compareKinds are the graph comparisons of the TFLite operators.
var compareKinds = map[int32]string{
	codeEqual: "Equal", codeNotEqual: "Equal", codeLess: "Less", codeLessEqual: "LessOrEqual",
	codeGreater: "Greater", codeGreaterEqual: "GreaterOrEqual",
}

// compareExact says whether TFLite Micro's rescaling of a comparison's
// operands (x − zp shifted left by 8, then multiplied by scale's Q31
// multiplier with MultiplyByQuantizedMultiplierSmallerThanOneExp) keeps
// every two neighbouring values of dt apart, so that comparing the raw
// values gives its answers. Scales of 1 or more, which its Prepare does
// not expect, are left to the raw comparison.
func compareExact(dt graph.DType, scale float32, zp int32) bool {
	if scale >= 1 || (dt != graph.Int8 && dt != graph.UInt8) {
		return true
	}
	lo, hi := int32(-128), int32(127)
	if dt == graph.UInt8 {
		lo, hi = 0, 255
	}
	m, shift := qmath.QuantizeMultiplier(float64(scale))
	f := func(q int32) int32 {
		return qmath.RoundingDivideByPOT(qmath.SaturatingRoundingDoublingHighMul((q-zp)*256, m), -shift)
	}
	prev := f(lo)
	for q := lo + 1; q <= hi; q++ {
		v := f(q)
		if v <= prev {
			return false
		}
		prev = v
	}
	return true
}

// mathCompare maps the comparisons. Two quantized operands must share one
// scale and zero point: TFLite then compares the raw values less the zero
// point, shifted left by 8 and rescaled by the scale (comparisons.cc,
// ComparisonWithScaling), the same order as the raw values wherever that
// rescaling keeps neighbours apart (compareExact), so the raw comparison
// is the same; with different parameters it rescales each side
// differently, which is refused.
func mathCompare(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	ins, y, err := c.mathIO(2)
	if err != nil {
		return err
	}
	x, z := ins[0], ins[1]
	if y.DType != graph.Bool {
		return c.errorf("output is %s, want bool", y.DType)
	}
	if x.DType != z.DType {
		return c.errorf("operands of types %s and %s", x.DType, z.DType)
	}
	if x.DType == graph.Int16 {
		return c.errorf("int16 comparisons are not supported")
	}
	if isQuantized(x) || isQuantized(z) {
		if !sameQuantParams(x, z) {
			return c.errorf("comparing quantized tensors with different scales or zero points is not supported (TFLite rescales both; not reproduced)")
		}
		if s, zp := x.Quant.At(0); !compareExact(x.DType, s, zp) {
			return c.errorf("%s comparison at scale %g: TFLite Micro compares the values shifted left by 8 and rescaled by the scale, which merges neighbouring ones below 1/256; mcugen compares them raw and does not reproduce that", x.DType, s)
		}
	}
	if err := c.mathBroadcast(y, x, z); err != nil {
		return err
	}
	a := &graph.CompareAttrs{Kind: compareKinds[c.code]}
	if c.code == codeNotEqual {
		eq := c.mathNode(graph.Compare, a, []string{x.Name, z.Name}, "equal", graph.Bool, y.Shape, nil)
		n.Op, n.Attrs, n.Inputs = graph.Logic, &graph.LogicAttrs{Kind: "Not"}, []string{eq}
		return nil
	}
	n.Op, n.Attrs, n.Inputs = graph.Compare, a, []string{x.Name, z.Name}
	return nil
}

// mathLogic maps LOGICAL_AND, LOGICAL_OR (broadcast) and LOGICAL_NOT on bool.
func mathLogic(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	k := map[int32]string{codeLogicalAnd: "And", codeLogicalOr: "Or", codeLogicalNot: "Not"}[c.code]
	nIn := 2
	if c.code == codeLogicalNot {
		nIn = 1
	}
	ins, y, err := c.mathIO(nIn)
	if err != nil {
		return err
	}
	for _, t := range append(ins, y) {
		if t.DType != graph.Bool {
			return c.errorf("tensor %q is %s, logical operators take bool", t.Name, t.DType)
		}
	}
	if err := c.mathBroadcast(y, ins...); err != nil {
		return err
	}
	n.Op, n.Attrs = graph.Logic, &graph.LogicAttrs{Kind: k}
	for _, t := range ins {
		n.Inputs = append(n.Inputs, t.Name)
	}
	return nil
}

// mathSelect maps SELECT and SELECT_V2 to Where. TFLite copies the stored
// values, so quantized x, y and output must share their parameters.
// SELECT (v1) takes x and y of one shape and a condition of that shape, a
// scalar, or a vector over x's first axis (which is reshaped to broadcast).
func mathSelect(c *opctx, n *graph.Node) error {
	if _, err := c.mathOptions(); err != nil {
		return err
	}
	ins, y, err := c.mathIO(3)
	if err != nil {
		return err
	}
	cond, x, z := ins[0], ins[1], ins[2]
	if cond.DType != graph.Bool {
		return c.errorf("condition is %s, want bool", cond.DType)
	}
	if x.DType != z.DType || x.DType != y.DType {
		return c.errorf("x, y and output of types %s, %s and %s must agree", x.DType, z.DType, y.DType)
	}
	if !sameQuantParams(x, z) || !sameQuantParams(x, y) {
		return c.errorf("x, y and output must share one scale and zero point (TFLite copies stored values)")
	}
	cname := cond.Name
	if c.code == codeSelect {
		if !slices.Equal(x.Shape, z.Shape) {
			return c.errorf("SELECT needs x and y of one shape, have %v and %v", x.Shape, z.Shape)
		}
		switch {
		case slices.Equal(cond.Shape, x.Shape), len(cond.Shape) == 0:
		case len(cond.Shape) == 1 && len(x.Shape) > 1 && cond.Shape[0] == x.Shape[0]:
			shape := make([]int, len(x.Shape))
			for i := range shape {
				shape[i] = 1
			}
			shape[0] = cond.Shape[0]
			cname = c.mathNode(graph.Reshape, nil, []string{cond.Name}, "condition_rows", graph.Bool, shape, nil)
		default:
			return c.errorf("SELECT condition of shape %v does not fit x of shape %v", cond.Shape, x.Shape)
		}
		if !slices.Equal(y.Shape, x.Shape) {
			return c.errorf("output shape %v differs from x %v", y.Shape, x.Shape)
		}
	} else if err := c.mathBroadcast(y, cond, x, z); err != nil {
		return err
	}
	n.Op, n.Inputs = graph.Where, []string{cname, x.Name, z.Name}
	return nil
}
