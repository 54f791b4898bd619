package tir

import (
	"cmp"
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	for _, op := range []graph.Op{graph.Add, graph.Sub, graph.Mul, graph.Div, graph.Maximum, graph.Minimum, graph.Pow, graph.Mod, graph.SquaredDifference} {
		register(op, computeBinary)
	}
	for _, op := range []graph.Op{graph.Relu, graph.Clip, graph.LeakyRelu, graph.Sigmoid, graph.Tanh, graph.HardSwish, graph.HardSigmoid, graph.Math} {
		register(op, computeUnary)
	}
	register(graph.Quantize, computeQuantize)
	register(graph.Dequantize, computeDequantize)
}

// broadcastView makes buffer b (a tensor of shape s) addressable with the
// indices of out: dimensions of size 1 (or missing on the left) get stride 0.
func broadcastView(b *Buffer, out []int) error {
	s := b.Shape
	if len(s) > len(out) {
		return fmt.Errorf("cannot broadcast %v to %v", s, out)
	}
	st := graph.Strides(s)
	strides := make([]int, len(out))
	off := len(out) - len(s)
	for i := range out {
		if i < off {
			continue
		}
		switch s[i-off] {
		case out[i]:
			strides[i] = st[i-off]
		case 1:
		default:
			return fmt.Errorf("cannot broadcast %v to %v", s, out)
		}
	}
	b.Shape = append([]int{}, out...)
	b.Strides = strides
	return nil
}

// operand returns input i viewed with the output's shape.
func (k *kctx) operand(i int, out []int) (*Buffer, error) {
	b := k.in(i)
	if b == nil {
		return nil, k.errorf("input %d is missing", i)
	}
	if b.Scope == ScopeConst {
		// A private copy: the view changes shape and strides.
		c := *b
		b = &c
	}
	if err := broadcastView(b, out); err != nil {
		return nil, k.errorf("%v", err)
	}
	return b, nil
}

// elementwise builds a loop nest over shape storing f(indices).
func elementwise(y *Buffer, shape []int, f func(idx []Expr) Expr) Stmt {
	names := make([]string, len(shape))
	for i := range names {
		names[i] = fmt.Sprintf("i%d", i)
	}
	return Loops(names, shape, func(iv []Expr) Stmt {
		return Put(y, f(iv), iv...)
	})
}

func computeBinary(k *kctx) (Stmt, error) {
	y, yt := k.output()
	shape := yt.Shape
	a, err := k.operand(0, shape)
	if err != nil {
		return nil, err
	}
	b, err := k.operand(1, shape)
	if err != nil {
		return nil, err
	}
	var act graph.Activation
	if ba, ok := k.n.Attrs.(*graph.BinaryAttrs); ok && ba != nil {
		act = ba.Act
	}
	k.f.Op = opName(k.n.Op)
	at, bt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if !isInt(at) {
		return elementwise(y, shape, func(iv []Expr) Expr {
			x1, x2 := At(a, iv...), At(b, iv...)
			var r Expr
			switch k.n.Op {
			case graph.Add:
				r = Add(x1, x2)
			case graph.Sub:
				r = Sub(x1, x2)
			case graph.Mul:
				r = Mul(x1, x2)
			case graph.Div:
				r = Div(x1, x2)
			case graph.Maximum:
				r = Max(x1, x2)
			case graph.Minimum:
				r = Min(x1, x2)
			case graph.Pow:
				r = Call(IntrPow, F32, x1, x2)
			case graph.Mod:
				r = Call(IntrFmod, F32, x1, x2)
			}
			return floatAct(act, r)
		}), nil
	}
	if k.n.Op == graph.Pow {
		return nil, k.errorf("integer Pow is not supported")
	}
	if k.n.Op == graph.SquaredDifference && (interp.Plain(k.g, k.n) || (yt.DType != graph.Int8 && yt.DType != graph.Int16)) {
		return nil, k.errorf("SquaredDifference is quantized int8 or int16 only")
	}
	if k.n.Op == graph.Mod && !interp.Plain(k.g, k.n) {
		return nil, k.errorf("quantized Mod is not supported")
	}
	if interp.Plain(k.g, k.n) {
		return plainBinary(k, y, yt, a, b, act)
	}
	s1, z1, err := quantParams(at)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	s2, z2, err := quantParams(bt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	so, zo, err := quantParams(yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	lo, hi, err := actRange(act, yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	clampOut := func(v Expr) Expr { return CastTo(yt.DType, Clamp(v, C(lo), C(hi))) }
	switch k.n.Op {
	case graph.Add, graph.Sub:
		// TFLite: inputs shifted left by 20 (int16: 15), rescaled to twice
		// the larger input scale, summed, rescaled to the output (qmath
		// derives the parameters as TFLite Micro does: ADD in double, SUB
		// in float).
		shift := qmath.AddLeftShift(yt.DType == graph.Int16)
		if err := qmath.AddSubOutputOK(s1, s2, so, shift, k.n.Op == graph.Sub); err != nil {
			return nil, k.errorf("%v", err)
		}
		if equalScaleAdd16(at, bt, yt, s1, s2, so, z1, z2, zo) {
			// Every step below is exact for int16 at three equal scales
			// and zero points 0: x << 15 times 1/2 is x·2^14, the sum's
			// times 2^-14 is x1 ± x2, so the op is that sum clamped (TFLite
			// Micro's LSTM gates add so; TestInt16EqualScaleAdd runs every
			// extreme against graph/interp's general form).
			return elementwise(y, shape, func(iv []Expr) Expr {
				if k.n.Op == graph.Add {
					return clampOut(Add(ld(a, iv...), ld(b, iv...)))
				}
				return clampOut(Sub(ld(a, iv...), ld(b, iv...)))
			}), nil
		}
		p := qmath.AddParams(s1, s2, so, shift)
		if k.n.Op == graph.Sub {
			p = qmath.SubParams(s1, s2, so, shift)
		}
		ls := int64(1) << uint(p.LeftShift)
		return elementwise(y, shape, func(iv []Expr) Expr {
			x1 := Requant(Mul(Add(ld(a, iv...), C(-int64(z1))), C(ls)), C(int64(p.In1Mult)), C(int64(p.In1Shift)))
			x2 := Requant(Mul(Add(ld(b, iv...), C(-int64(z2))), C(ls)), C(int64(p.In2Mult)), C(int64(p.In2Shift)))
			var sum Expr
			if k.n.Op == graph.Add {
				sum = Add(x1, x2)
			} else {
				sum = Sub(x1, x2)
			}
			return clampOut(Add(Requant(sum, C(int64(p.OutMult)), C(int64(p.OutShift))), C(int64(zo))))
		}), nil
	case graph.SquaredDifference:
		// TFLite Micro: inputs shifted left by 7 and rescaled to twice the
		// larger input scale; the difference squared in int32, requantized
		// (qmath.SquaredDiffParams).
		p := qmath.SquaredDifferenceParams(s1, s2, so)
		if yt.DType == graph.Int16 {
			p = qmath.SquaredDifferenceParams16(s1, s2, so) // no left shift
		}
		ls := int64(1) << uint(p.LeftShift)
		return elementwise(y, shape, func(iv []Expr) Expr {
			x1 := Requant(Mul(Add(ld(a, iv...), C(-int64(z1))), C(ls)), C(int64(p.In1Mult)), C(int64(p.In1Shift)))
			x2 := Requant(Mul(Add(ld(b, iv...), C(-int64(z2))), C(ls)), C(int64(p.In2Mult)), C(int64(p.In2Shift)))
			d := Sub(x1, x2)
			return clampOut(Add(Requant(Mul(d, d), C(int64(p.OutMult)), C(int64(p.OutShift))), C(int64(zo))))
		}), nil
	case graph.Mul:
		mo, sho := qmath.MulMultiplier(s1, s2, so)
		return elementwise(y, shape, func(iv []Expr) Expr {
			p := Mul(Add(ld(a, iv...), C(-int64(z1))), Add(ld(b, iv...), C(-int64(z2))))
			return clampOut(Add(Requant(p, C(int64(mo)), C(int64(sho))), C(int64(zo))))
		}), nil
	case graph.Div:
		// TFLite Micro's int8 DIV: a fixed-point reciprocal per element.
		if err := interp.DivInt8OK(at, bt, yt); err != nil {
			return nil, k.errorf("%v", err)
		}
		m, sh := qmath.DivMultiplier(s1, s2, so)
		return elementwise(y, shape, func(iv []Expr) Expr {
			q := Call(IntrDivQ8, I32, Add(ld(a, iv...), C(-int64(z1))), Add(ld(b, iv...), C(-int64(z2))), C(int64(m)), C(int64(sh)))
			return clampOut(Add(q, C(int64(zo))))
		}), nil
	case graph.Maximum, graph.Minimum:
		// TFLite's and TFLite Micro's int8 MAXIMUM / MINIMUM compare the
		// raw values whatever the quantizations (the converter gives them
		// one); mcugen does the same, and the pipeline warns where they
		// differ (round-3 fuzzer: such a model was refused).
		return elementwise(y, shape, func(iv []Expr) Expr {
			if k.n.Op == graph.Maximum {
				return clampOut(Max(ld(a, iv...), ld(b, iv...)))
			}
			return clampOut(Min(ld(a, iv...), ld(b, iv...)))
		}), nil
	}
	return nil, k.errorf("no integer kernel")
}

// equalScaleAdd16 reports whether an int16 ADD or SUB has three equal
// scales and zero points 0: its TFLite arithmetic is then the plain sum
// or difference, saturated.
func equalScaleAdd16(at, bt, yt *graph.Tensor, s1, s2, so float32, z1, z2, zo int32) bool {
	return at.DType == graph.Int16 && bt.DType == graph.Int16 && yt.DType == graph.Int16 &&
		s1 == so && s2 == so && z1 == 0 && z2 == 0 && zo == 0
}

// plainBinary is arithmetic on unquantized integer tensors (ONNX on shapes,
// indices, counts), as graph/interp defines it: computed in 64 bits and
// wrapped to the output type; division truncates, and x/0 is 0.
func plainBinary(k *kctx, y *Buffer, yt *graph.Tensor, a, b *Buffer, act graph.Activation) (Stmt, error) {
	if act != graph.ActNone {
		return nil, k.errorf("a fused activation on plain integers")
	}
	// Operands of 32 bits or less cannot overflow 64; int64 ones wrap
	// through uint64 (signed overflow is undefined in C).
	wide := k.g.In(k.n, 0).DType == I64 || k.g.In(k.n, 1).DType == I64 || yt.DType == I64
	arith := func(intr string, plain func(a, b Expr) Expr) func(a, b Expr) Expr {
		if !wide {
			return plain
		}
		return func(a, b Expr) Expr { return Call(intr, I64, a, b) }
	}
	add, sub, mul := arith(IntrWrapAdd64, Add), arith(IntrWrapSub64, Sub), arith(IntrWrapMul64, Mul)
	// An unsigned divisor is never -1 nor negative: its tests are left out, or
	// gcc's -Wtype-limits rejected the C with -Werror (a uint8 Mod and Div,
	// the docs journey).
	unsigned := k.g.In(k.n, 1).DType == graph.UInt8
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		x1, x2 := CastTo(I64, At(a, iv...)), CastTo(I64, At(b, iv...))
		var r Expr
		switch k.n.Op {
		case graph.Add:
			r = add(x1, x2)
		case graph.Sub:
			r = sub(x1, x2)
		case graph.Mul:
			r = mul(x1, x2)
		case graph.Div:
			// x/0 is 0; x/-1 is -x, wrapped (INT64_MIN / -1 traps).
			zero, one, m1 := &IntImm{T: I64, V: 0}, &IntImm{T: I64, V: 1}, &IntImm{T: I64, V: -1}
			if unsigned {
				r = Sel(EQ(x2, zero), zero, Div(x1, Sel(EQ(x2, zero), one, x2)))
				break
			}
			safe := Sel(Or(EQ(x2, zero), EQ(x2, m1)), one, x2)
			r = Sel(EQ(x2, zero), zero, Sel(EQ(x2, m1), sub(zero, x1), Div(x1, safe)))
		case graph.Maximum:
			r = Max(x1, x2)
		case graph.Mod:
			zero, one := &IntImm{T: I64, V: 0}, &IntImm{T: I64, V: 1}
			bad := Or(EQ(x2, zero), EQ(x2, &IntImm{T: I64, V: -1}))
			if unsigned {
				bad = EQ(x2, zero)
			}
			m := Mod(x1, Sel(bad, one, x2))
			if a, ok := k.n.Attrs.(*graph.ModAttrs); (!ok || a == nil || !a.Fmod) && !unsigned {
				// Python's %: the divisor's sign.
				m = Sel(And(NE(m, zero), NE(LT(m, zero), LT(x2, zero))), Add(m, x2), m)
			}
			r = Sel(bad, zero, m)
		default:
			r = Min(x1, x2)
		}
		return CastTo(yt.DType, r)
	}), nil
}

// computeUnary: float element-wise functions directly; 8-bit integer ones as a
// 256-entry table computed at compile time with the reference interpreter's
// own kernel, which makes them bit-exact by construction.
func computeUnary(k *kctx) (Stmt, error) {
	xt := k.g.In(k.n, 0)
	if xt == nil || xt.IsConst() {
		return nil, k.errorf("needs a non-constant input")
	}
	y, yt := k.output()
	x := k.in(0)
	k.f.Op = opName(k.n.Op)
	if isInt(xt) {
		if k.n.Op == graph.LeakyRelu && (xt.DType == graph.Int16 || yt.DType == graph.Int16) {
			return k.leakyRelu16(x, y, xt, yt)
		}
		if (k.n.Op == graph.Sigmoid || k.n.Op == graph.Tanh) && xt.DType == graph.Int16 && yt.DType == graph.Int16 {
			return k.act16(x, y, xt, yt)
		}
		if (k.n.Op == graph.Relu || k.n.Op == graph.Clip) && xt.DType == graph.Int16 && yt.DType == graph.Int16 {
			return k.relu16(x, y, xt, yt)
		}
		if interp.Abs16(k.n, xt, yt) {
			return k.abs16(x, y, xt, yt)
		}
		return k.lut(x, y, xt, yt)
	}
	fn, err := floatUnary(k.n)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	shape := xt.Shape
	viewAs(x, []int{graph.NumElements(shape)})
	viewAs(y, []int{graph.NumElements(shape)})
	return elementwise(y, y.Shape, func(iv []Expr) Expr { return fn(At(x, iv...)) }), nil
}

func floatUnary(n *graph.Node) (func(Expr) Expr, error) {
	switch n.Op {
	case graph.Relu:
		return func(x Expr) Expr { return Max(x, F(0)) }, nil
	case graph.Clip:
		a, ok := n.Attrs.(*graph.ClipAttrs)
		if !ok || a == nil {
			return nil, fmt.Errorf("missing *graph.ClipAttrs")
		}
		return func(x Expr) Expr { return Min(Max(x, F(a.Min)), F(a.Max)) }, nil
	case graph.LeakyRelu:
		a, ok := n.Attrs.(*graph.LeakyReluAttrs)
		if !ok || a == nil {
			return nil, fmt.Errorf("missing *graph.LeakyReluAttrs")
		}
		return func(x Expr) Expr { return Sel(GE(x, F(0)), x, Mul(x, F(a.Alpha))) }, nil
	case graph.Sigmoid:
		return func(x Expr) Expr {
			return Div(F(1), Add(F(1), Call(IntrExp, F32, Sub(F(0), x))))
		}, nil
	case graph.Tanh:
		return func(x Expr) Expr { return Call(IntrTanh, F32, x) }, nil
	case graph.HardSwish:
		// x · (clamp(x + 3, 0, 6) / 6), ONNX's x · HardSigmoid(x): the
		// product x · 6 first overflowed float32 above 5.7e37 (+Inf
		// where the reference has x: session 48 review); for x ≥ 3 this
		// is x exactly.
		return func(x Expr) Expr {
			return Mul(x, Div(Min(Max(Add(x, F(3)), F(0)), F(6)), F(6)))
		}, nil
	case graph.HardSigmoid:
		a, ok := n.Attrs.(*graph.HardSigmoidAttrs)
		if !ok || a == nil {
			return nil, fmt.Errorf("missing *graph.HardSigmoidAttrs")
		}
		return func(x Expr) Expr {
			return Max(F(0), Min(F(1), Add(Mul(x, F(a.Alpha)), F(a.Beta))))
		}, nil
	case graph.Math:
		a, ok := n.Attrs.(*graph.MathAttrs)
		if !ok || a == nil {
			return nil, fmt.Errorf("missing *graph.MathAttrs")
		}
		return floatMath(*a)
	}
	return nil, fmt.Errorf("no float definition")
}

// floatMath is a Math function in float32 C: the C library's function where
// it has one, else a short expression of them.
func floatMath(a graph.MathAttrs) (func(Expr) Expr, error) {
	libm := map[graph.MathFn]string{
		graph.MathLog: "log", graph.MathSqrt: "sqrt", graph.MathAbs: "fabs", graph.MathCeil: "ceil",
		graph.MathRound: "rint", graph.MathErf: "erf", graph.MathSin: "sin", graph.MathCos: "cos",
		graph.MathTan: "tan", graph.MathAsin: "asin", graph.MathAcos: "acos", graph.MathAtan: "atan",
		graph.MathSinh: "sinh", graph.MathCosh: "cosh", graph.MathAsinh: "asinh", graph.MathAcosh: "acosh",
		graph.MathAtanh: "atanh",
	}
	if name, ok := libm[a.Fn]; ok {
		return func(x Expr) Expr { return Libm(name, x) }, nil
	}
	exp := func(x Expr) Expr { return Call(IntrExp, F32, x) }
	switch a.Fn {
	case graph.MathExp:
		return exp, nil
	case graph.MathFloor:
		return func(x Expr) Expr { return Call(IntrFloor, F32, x) }, nil
	case graph.MathNeg:
		return func(x Expr) Expr { return Sub(F(0), x) }, nil
	case graph.MathReciprocal:
		return func(x Expr) Expr { return Div(F(1), x) }, nil
	case graph.MathSign:
		return func(x Expr) Expr { return Sel(GT(x, F(0)), F(1), Sel(LT(x, F(0)), F(-1), x)) }, nil
	case graph.MathSoftplus:
		// max(x, 0) + log1p(exp(-|x|)): log(exp(x) + 1) without overflow.
		return func(x Expr) Expr {
			return Add(Max(x, F(0)), Libm("log1p", exp(Sub(F(0), Libm("fabs", x)))))
		}, nil
	case graph.MathSoftsign:
		return func(x Expr) Expr { return Div(x, Add(F(1), Libm("fabs", x))) }, nil
	case graph.MathElu:
		return func(x Expr) Expr { return Sel(LT(x, F(0)), Mul(F(a.Alpha), Libm("expm1", x)), x) }, nil
	case graph.MathSelu:
		ga := float32(float64(a.Gamma) * float64(a.Alpha))
		return func(x Expr) Expr {
			return Sel(GT(x, F(0)), Mul(F(a.Gamma), x), Mul(F(ga), Libm("expm1", x)))
		}, nil
	case graph.MathCelu:
		return func(x Expr) Expr {
			return Add(Max(F(0), x), Min(F(0), Mul(F(a.Alpha), Libm("expm1", Div(x, F(a.Alpha))))))
		}, nil
	case graph.MathThresholdedRelu:
		return func(x Expr) Expr { return Sel(GT(x, F(a.Alpha)), x, F(0)) }, nil
	case graph.MathGelu:
		// x/2 · (1 + erf(x/√2)) as x/2 · erfc(−x/√2): no cancellation
		// where erf is near −1 (x = −4 lost three digits).
		return func(x Expr) Expr {
			return Mul(Mul(F(0.5), x), Libm("erfc", Mul(x, F(float32(-1/math.Sqrt2)))))
		}, nil
	case graph.MathGeluTanh:
		// x/2 · (1 + tanh(z)), z = √(2/π) · (x + 0.044715 x³), as
		// x / (1 + exp(−2z)): the same, without 1 + tanh's cancellation.
		return func(x Expr) Expr {
			z2 := Mul(F(float32(-2*math.Sqrt(2/math.Pi))), Add(x, Mul(F(0.044715), Mul(x, Mul(x, x)))))
			return Div(x, Add(F(1), Call(IntrExp, F32, z2)))
		}, nil
	case graph.MathSquare:
		return func(x Expr) Expr { return Mul(x, x) }, nil
	case graph.MathSigmoid:
		return func(x Expr) Expr { return Div(F(1), Add(F(1), exp(Sub(F(0), x)))) }, nil
	case graph.MathTanh:
		return func(x Expr) Expr { return Libm("tanh", x) }, nil
	case graph.MathRsqrt:
		return func(x Expr) Expr { return Div(F(1), Libm("sqrt", x)) }, nil
	case graph.MathShrink:
		return func(x Expr) Expr {
			return Sel(LT(x, F(-a.Alpha)), Add(x, F(a.Beta)), Sel(GT(x, F(a.Alpha)), Sub(x, F(a.Beta)), F(0)))
		}, nil
	}
	return nil, fmt.Errorf("no float definition of %s", a.Fn)
}

// leakyRelu16 is TFLite Micro's int16 LEAKY_RELU (its QuantizeLeakyRelu
// on int16_t), as graph/interp computes it: d = x - zx, then
//
//	y = clamp(zy + requant(d, identity)) for d >= 0,
//	y = clamp(zy + requant(d, alpha))    for d < 0,
//
// with a negative alpha multiplier applied by its magnitude and the result
// negated (qmath.LeakyReluParams.Apply). interp.LeakyReluIntOK bounds the
// zero points and shifts so that no step leaves 32 bits.
func (k *kctx) leakyRelu16(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.LeakyReluAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.LeakyReluAttrs")
	}
	if err := interp.LeakyReluIntOK(xt, yt, a.Alpha); err != nil {
		return nil, k.errorf("%v", err)
	}
	sx, zx, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	sy, zy, err := quantParams(yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	p := qmath.LeakyReluQuantParams(sx, a.Alpha, sy)
	neg := func(d Expr) Expr {
		if p.AlphaMult < 0 {
			// -p.AlphaMult wraps for -2^31, as the interpreter's does.
			return Sub(C(0), Requant(d, C(int64(-p.AlphaMult)), C(int64(p.AlphaShift))))
		}
		return Requant(d, C(int64(p.AlphaMult)), C(int64(p.AlphaShift)))
	}
	lo, hi := yt.DType.Range()
	n := xt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	return Loop("i", n, func(i Expr) Stmt {
		return Let("d", Sub(ld(x, i), C(int64(zx))), func(d Expr) Stmt {
			r := Sel(GE(d, C(0)), Requant(d, C(int64(p.IdentityMult)), C(int64(p.IdentityShift))), neg(d))
			return Put(y, CastTo(yt.DType, Clamp(Add(r, C(int64(zy))), C(lo), C(hi))), i)
		})
	}), nil
}

// relu16 is TFLite Micro's int16 RELU (and the clamps RELU6 and the
// like), as graph/interp computes them (interp.ReluQuant): y = clamp(zy +
// requant(x − zx), lo, hi), a loop an element where 8-bit ones are a
// table.
func (k *kctx) relu16(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	p, err := interp.ReluQuant(k.n, xt, yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	n := xt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	return Loop("i", n, func(i Expr) Stmt {
		r := Requant(Sub(ld(x, i), C(int64(p.Zx))), C(int64(p.M)), C(int64(p.Shift)))
		return Put(y, CastTo(yt.DType, Clamp(Add(r, C(int64(p.Zy))), C(int64(p.Lo)), C(int64(p.Hi)))), i)
	}), nil
}

// abs16 is TFLite Micro's int16 ABS (interp.Abs16, qmath.AbsRescaled):
// |x| requantized by sx/sy where the scales differ, clamped to int16.
func (k *kctx) abs16(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	sx, _, err := quantParams(xt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	sy, _, err := quantParams(yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	n := xt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	lo, hi := yt.DType.Range()
	return Loop("i", n, func(i Expr) Stmt {
		return Let("v", CastTo(I32, ld(x, i)), func(v Expr) Stmt {
			r := Sel(LT(v, C(0)), Sub(C(0), v), v)
			if sx != sy {
				m, s := qmath.QuantizeMultiplier(float64(sx / sy))
				r = Requant(r, C(int64(m)), C(int64(s)))
			}
			return Put(y, CastTo(yt.DType, Clamp(r, C(lo), C(hi))), i)
		})
	}), nil
}

// IntrAct16(x, multiplier, shift, tanh) is TFLite's int16 LOGISTIC (tanh
// 0) or TANH (tanh 1) of one value, its input rescale resolved
// (qmath.Act16Params): the act_s16 helper in C.
const IntrAct16 = "act_s16"

func init() {
	extIntrinsics[IntrAct16] = func(a []val) val {
		p := qmath.Act16Params{Multiplier: int32(a[1].i), LeftShift: int(a[2].i)}
		if a[3].i != 0 {
			return val{i: int64(p.Tanh(int16(a[0].i)))}
		}
		return val{i: int64(p.Sigmoid(int16(a[0].i)))}
	}
}

// act16 is TFLite's int16 LOGISTIC and TANH (the 16x8 scheme, which TFLite
// Micro's int8 LSTM also runs), as graph/interp computes them: one
// act_s16 call an element, with the parameters interp.Act16Params derives.
func (k *kctx) act16(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	p, err := interp.Act16Params(k.n.Op, xt, yt)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	tanh := int64(0)
	if k.n.Op == graph.Tanh {
		tanh = 1
	}
	n := xt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	return Loop("i", n, func(i Expr) Stmt {
		v := Call(IntrAct16, I32, ld(x, i), C(int64(p.Multiplier)), C(int64(p.LeftShift)), C(tanh))
		return Put(y, CastTo(yt.DType, v), i)
	}), nil
}

// lut evaluates the reference kernel on every 8-bit input value and emits y = T[x]
// (or, where T flips the top bit between uint8 and int8, gen_flip_s8).
func (k *kctx) lut(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	r, err := k.tableData(k.n, xt, yt)
	if err != nil {
		return nil, err
	}
	lo, _ := xt.DType.Range()
	n := xt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	if flips(r, xt.DType, yt.DType) {
		// A uint8 model's int8 layers (quant.ShiftUint8Layers) read and
		// write its uint8 edges through this: four elements a word where
		// the table took five instructions an element on the M4.
		return &Evaluate{X: Call("gen_"+KFlip8, I32, &Ptr{Buf: y, Index: C(0)}, &Ptr{Buf: x, Index: C(0)}, C(int64(n)))}, nil
	}
	table := k.tableBuf(r, yt, "_table")
	return Loop("i", n, func(i Expr) Stmt {
		return Put(y, At(table, Sub(CastTo(I32, At(x, i)), C(lo))), i)
	}), nil
}

// flips reports a table from one of uint8 and int8 to the other that is
// x − 128 or x + 128 (the top bit flipped) at every value.
func flips(r *graph.Data, from, to graph.DType) bool {
	if r.DType == graph.Float32 || !(from == graph.UInt8 && to == graph.Int8 || from == graph.Int8 && to == graph.UInt8) {
		return false
	}
	lo, _ := from.Range()
	for i, v := range r.I {
		if v != to.Wrap((lo+int64(i))^0x80) {
			return false
		}
	}
	return true
}

// table runs node (its first input and only output rebound to 256-element
// tensors with xt's and yt's quantization) in the reference interpreter on
// every value of xt's 8-bit type: the table of an element-wise mapping.
func (k *kctx) table(node *graph.Node, xt, yt *graph.Tensor, suffix string) (*Buffer, error) {
	r, err := k.tableData(node, xt, yt)
	if err != nil {
		return nil, err
	}
	return k.tableBuf(r, yt, suffix), nil
}

// tableBuf is table r as a constant buffer of yt's type.
func (k *kctx) tableBuf(r *graph.Data, yt *graph.Tensor, suffix string) *Buffer {
	if yt.DType == F32 {
		return constF32(k.n.Name+suffix, []int{256}, append([]float32{}, r.F...))
	}
	return constBuf(k.n.Name+suffix, yt.DType, []int{256}, append([]int64{}, r.I...))
}

// tableData is table's values.
func (k *kctx) tableData(node *graph.Node, xt, yt *graph.Tensor) (*graph.Data, error) {
	if xt.DType != graph.Int8 && xt.DType != graph.UInt8 {
		return nil, k.errorf("integer %s on %s is not supported", k.n.Op, xt.DType)
	}
	if xt.Quant.PerAxis() || yt.Quant.PerAxis() {
		return nil, k.errorf("integer %s of per-channel quantized %q is not supported (one table maps every element alike)", k.n.Op, cmp.Or(xt.Name, yt.Name))
	}
	lo, _ := xt.DType.Range()
	tg := graph.New("lut", "")
	tg.AddTensor(&graph.Tensor{Name: "x", DType: xt.DType, Shape: []int{256}, Quant: xt.Quant})
	tg.AddTensor(&graph.Tensor{Name: "y", DType: yt.DType, Shape: []int{256}, Quant: yt.Quant})
	tg.AddNode(&graph.Node{Name: node.Name, Op: node.Op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: node.Attrs})
	tg.Inputs, tg.Outputs = []string{"x"}, []string{"y"}
	d := graph.NewData(xt.DType, []int{256})
	for i := range d.I {
		d.I[i] = lo + int64(i)
	}
	res, err := interp.Run(tg, map[string]*graph.Data{"x": d})
	if err != nil {
		return nil, k.errorf("building the lookup table: %v", err)
	}
	return res["y"], nil
}

// computeQuantize: float -> int (round half away from zero, or half to even),
// or int -> int requantization.
func computeQuantize(k *kctx) (Stmt, error) {
	xt := k.g.In(k.n, 0)
	y, yt := k.output()
	x := k.in(0)
	k.f.Op = "quantize"
	if isInt(xt) {
		if xt.DType == graph.Int16 || xt.DType == graph.Int32 {
			return k.requantizeWide(x, y, xt, yt)
		}
		return k.lut(x, y, xt, yt)
	}
	if yt.Quant == nil || len(yt.Quant.Scale) == 0 {
		return nil, k.errorf("output %q has no quantization parameters", yt.Name)
	}
	even := int64(0)
	if qa, ok := k.n.Attrs.(*graph.QuantizeAttrs); ok && qa != nil && qa.RoundHalfEven {
		even = 1
	}
	lo, hi := yt.DType.Range()
	shape := xt.Shape
	ax := -1
	if yt.Quant.PerAxis() {
		ax = yt.Quant.Axis
		if ax < 0 || ax >= len(shape) || shape[ax] != len(yt.Quant.Scale) {
			return nil, k.errorf("%d scales do not match axis %d of %v", len(yt.Quant.Scale), ax, shape)
		}
	}
	zInt8 := true // every zero point within int8 (quantize_f32_s8's)
	for i := range max(len(yt.Quant.Scale), 1) {
		_, zc := yt.Quant.At(i)
		zInt8 = zInt8 && zc >= -128 && zc <= 127
	}
	return elementwise(y, shape, func(iv []Expr) Expr {
		c := 0
		var s, z Expr
		if ax < 0 {
			sc, zc := yt.Quant.At(c)
			s, z = F(sc), C(int64(zc))
		} else {
			n := len(yt.Quant.Scale)
			sv := make([]float32, n)
			zv := make([]int64, n)
			for i := range sv {
				sc, zc := yt.Quant.At(i)
				sv[i], zv[i] = sc, int64(zc)
			}
			s = At(constF32(k.n.Name+"_scale", []int{n}, sv), iv[ax])
			z = At(constBuf(k.n.Name+"_zero_point", I32, []int{n}, zv), iv[ax])
		}
		if yt.DType == graph.Int8 && zInt8 {
			// Clamped with the zero point in one helper (QADD and SSAT
			// with the DSP extension: five instructions fewer an element
			// on the M4 than the clamp's compares).
			return CastTo(yt.DType, Call(IntrQuantizeS8, I32, At(x, iv...), s, z, C(even)))
		}
		q := Call(IntrQuantize, I32, At(x, iv...), s, C(even))
		if zc, ok := IsConst(z); ok && hi-lo < 1<<16 {
			// One clamp, to the range less the zero point, then the
			// zero point: the same, two compares fewer an element (an
			// 8- or 16-bit output: its bounds less z stay int32).
			return CastTo(yt.DType, Add(Clamp(q, C(lo-zc), C(hi-zc)), z))
		}
		if hi-lo >= 1<<16 {
			// An int32 output: the quotient unsaturated (to ±2^40) plus
			// z in 64 bits, clamped to the type. (Clamping q first to
			// [lo − 2^20, hi + 2^20] put bounds outside int32 in the C,
			// which wrapped: every element came out −2146435068, a
			// review found; and a quotient saturated to int32 before z
			// is added loses the ones past 2^31.)
			q64 := Call(IntrQuantize64, I64, At(x, iv...), s, C(even))
			return CastTo(yt.DType, Clamp(Add(q64, CastTo(I64, z)), &IntImm{T: I64, V: lo}, &IntImm{T: I64, V: hi}))
		}
		// q + z cannot overflow: q is clamped first.
		return CastTo(yt.DType, Clamp(Add(Clamp(q, C(lo-1<<20), C(hi+1<<20)), z), C(lo), C(hi)))
	}), nil
}

// requantizeWide is an int16 or int32 -> int8, int16 or int32 QUANTIZE
// (an 8-bit input takes a table): TFLite Micro's Requantize, as graph/interp
// computes it,
//
//	y = clamp(MultiplyByQuantizedMultiplier(x - zx, m, s) + zy)
//
// with m, s = QuantizeMultiplier(double(sx) / double(sy)) and the clamp to
// y's type. Its int32 arithmetic wraps (x - zx of an int32 x, the sum with
// zy): where the operands' ranges do not rule that out, the sum is taken in
// 64 bits and narrowed, so neither the TIR interpreter nor the C overflows.
func (k *kctx) requantizeWide(x, y *Buffer, xt, yt *graph.Tensor) (Stmt, error) {
	switch yt.DType {
	case graph.Int8, graph.Int16, graph.Int32:
	default:
		return nil, k.errorf("integer Quantize from %s to %s is not supported (TFLite takes int8, int16 and int32 outputs)", xt.DType, yt.DType)
	}
	if yt.Quant == nil {
		return nil, k.errorf("output %q has no quantization parameters", yt.Name)
	}
	n := xt.NumElements()
	if yt.NumElements() != n {
		return nil, k.errorf("output %v does not match input %v", yt.Shape, xt.Shape)
	}
	// graph/interp's qparams: the first scale and zero point, scale 1 and
	// zero point 0 without any.
	qp := func(t *graph.Tensor) (float32, int64) {
		if t.Quant == nil || len(t.Quant.Scale) == 0 {
			return 1, 0
		}
		s, z := t.Quant.At(0)
		return s, int64(z)
	}
	sx, zx := qp(xt)
	sy, zy := qp(yt)
	m, sh := qmath.RescaleMultiplier(sx, sy)
	if sh > 31 {
		// requant shifts x left by sh: 32 or more is undefined in C.
		return nil, k.errorf("integer Quantize with a scale ratio %g / %g of 2^31 or more", sx, sy)
	}
	const lo32, hi32 = math.MinInt32, math.MaxInt32
	fits := func(lo, hi int64) bool { return lo >= lo32 && hi <= hi32 }
	// wrapAdd is a + c in int32 arithmetic wrapping as TFLite's (and
	// graph/interp's) does, given a's range [alo, ahi].
	wrapAdd := func(a Expr, c, alo, ahi int64) Expr {
		switch {
		case c == 0:
			return a
		case fits(alo+c, ahi+c):
			return Add(a, &IntImm{T: I32, V: c})
		}
		return CastTo(I32, Add(CastTo(I64, a), &IntImm{T: I64, V: c}))
	}
	xlo, xhi := xt.DType.Range()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	// |requant(d)| <= |d| << left (srdhm by m < 2^31 does not grow it), at
	// most 2^31 once the shift wraps; a right shift e divides it by 2^e,
	// rounded.
	dlo, dhi := xlo-zx, xhi-zx
	if !fits(dlo, dhi) {
		dlo, dhi = lo32, hi32
	}
	r := max(-dlo, dhi)
	if sh > 0 {
		r = min(r<<uint(sh), 1<<31)
	} else {
		r = r>>uint(-sh) + 1
	}
	ylo, yhi := yt.DType.Range()
	return Loop("i", n, func(i Expr) Stmt {
		d := wrapAdd(ld(x, i), -zx, xlo, xhi)
		v := wrapAdd(Requant(d, C(int64(m)), C(int64(sh))), zy, -r, r)
		if yt.DType != graph.Int32 {
			v = CastTo(yt.DType, Clamp(v, C(ylo), C(yhi)))
		}
		return Put(y, v, i)
	}), nil
}

// computeDequantize: y = scale·(x − zp) in float32, per tensor or per axis.
func computeDequantize(k *kctx) (Stmt, error) {
	xt := k.g.In(k.n, 0)
	y, _ := k.output()
	x := k.in(0)
	k.f.Op = "dequantize"
	if xt.Quant == nil || len(xt.Quant.Scale) == 0 {
		return nil, k.errorf("tensor %q (%s) has no quantization parameters", xt.Name, xt.DType)
	}
	if !xt.Quant.PerAxis() {
		if xt.DType == graph.Int8 || xt.DType == graph.UInt8 {
			return k.lut(x, y, xt, k.g.Out(k.n, 0))
		}
		s, z := xt.Quant.At(0)
		n := xt.NumElements()
		viewAs(x, []int{n})
		viewAs(y, []int{n})
		return Loop("i", n, func(i Expr) Stmt {
			return Put(y, Mul(F(s), CastTo(F32, Sub(CastTo(I32, At(x, i)), C(int64(z))))), i)
		}), nil
	}
	ax, nsc := xt.Quant.Axis, len(xt.Quant.Scale)
	if ax < 0 || ax >= len(xt.Shape) || xt.Shape[ax] != nsc {
		return nil, k.errorf("%d scales do not match axis %d of %v", nsc, ax, xt.Shape)
	}
	sv := make([]float32, nsc)
	zv := make([]int64, nsc)
	for i := range sv {
		sc, zc := xt.Quant.At(i)
		sv[i], zv[i] = sc, int64(zc)
	}
	sb := constF32(k.n.Name+"_scale", []int{nsc}, sv)
	zb := constBuf(k.n.Name+"_zero_point", I32, []int{nsc}, zv)
	return elementwise(y, xt.Shape, func(iv []Expr) Expr {
		return Mul(At(sb, iv[ax]), CastTo(F32, Sub(CastTo(I32, At(x, iv...)), At(zb, iv[ax]))))
	}), nil
}
