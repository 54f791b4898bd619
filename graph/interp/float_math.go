package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.Math, FloatClass, floatUnary(func(n *graph.Node) (func(float64) float64, error) {
		a, ok, err := attrsOf[graph.MathAttrs](n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("math has no function (*graph.MathAttrs)")
		}
		return MathFunc(a)
	}))
	Register(graph.Math, IntClass, intUnary(mathInt))
}

// MathFunc is the float definition of a Math function (ONNX's), in float64
// with the constants as the float32 the model holds.
func MathFunc(a graph.MathAttrs) (func(float64) float64, error) {
	alpha, gamma := float64(a.Alpha), float64(a.Gamma)
	switch a.Fn {
	case graph.MathExp:
		return math.Exp, nil
	case graph.MathLog:
		return math.Log, nil
	case graph.MathSqrt:
		return math.Sqrt, nil
	case graph.MathAbs:
		return math.Abs, nil
	case graph.MathNeg:
		return func(x float64) float64 { return -x }, nil
	case graph.MathReciprocal:
		return func(x float64) float64 { return 1 / x }, nil
	case graph.MathFloor:
		return math.Floor, nil
	case graph.MathCeil:
		return math.Ceil, nil
	case graph.MathRound:
		return math.RoundToEven, nil
	case graph.MathSign:
		return func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x // 0, -0 and NaN keep themselves
		}, nil
	case graph.MathErf:
		return math.Erf, nil
	case graph.MathSin:
		return math.Sin, nil
	case graph.MathCos:
		return math.Cos, nil
	case graph.MathTan:
		return math.Tan, nil
	case graph.MathAsin:
		return math.Asin, nil
	case graph.MathAcos:
		return math.Acos, nil
	case graph.MathAtan:
		return math.Atan, nil
	case graph.MathSinh:
		return math.Sinh, nil
	case graph.MathCosh:
		return math.Cosh, nil
	case graph.MathAsinh:
		return math.Asinh, nil
	case graph.MathAcosh:
		return math.Acosh, nil
	case graph.MathAtanh:
		return math.Atanh, nil
	case graph.MathSoftplus:
		// log(exp(x) + 1), as max(x, 0) + log1p(exp(-|x|)): no overflow.
		return func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }, nil
	case graph.MathSoftsign:
		return func(x float64) float64 { return x / (1 + math.Abs(x)) }, nil
	case graph.MathSigmoid:
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, nil
	case graph.MathTanh:
		return math.Tanh, nil
	case graph.MathElu:
		return func(x float64) float64 {
			if x < 0 {
				return alpha * (math.Exp(x) - 1)
			}
			return x
		}, nil
	case graph.MathSelu:
		return func(x float64) float64 {
			if x > 0 {
				return gamma * x
			}
			return gamma * alpha * (math.Exp(x) - 1)
		}, nil
	case graph.MathCelu:
		return func(x float64) float64 {
			return math.Max(0, x) + math.Min(0, alpha*(math.Exp(x/alpha)-1))
		}, nil
	case graph.MathThresholdedRelu:
		return func(x float64) float64 {
			if x > alpha {
				return x
			}
			return 0
		}, nil
	case graph.MathSquare:
		return func(x float64) float64 { return x * x }, nil
	case graph.MathRsqrt:
		return func(x float64) float64 { return 1 / math.Sqrt(x) }, nil
	case graph.MathGelu:
		return func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }, nil
	case graph.MathGeluTanh:
		return func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}, nil
	case graph.MathShrink:
		lambd, bias := float64(a.Alpha), float64(a.Beta)
		return func(x float64) float64 {
			switch {
			case x < -lambd:
				return x + bias
			case x > lambd:
				return x - bias
			}
			return 0
		}, nil
	}
	return nil, fmt.Errorf("unknown math function %q", a.Fn)
}

// Abs16 says whether n is TFLite's own int16 ABS (a Math Abs with
// TFLiteInt8 on int16 tensors of zero point 0, as TFLite Micro requires).
func Abs16(n *graph.Node, x, y *graph.Tensor) bool {
	a, ok := n.Attrs.(*graph.MathAttrs)
	if !ok || a == nil || a.Fn != graph.MathAbs || !a.TFLiteInt8 || x == nil || y == nil || x.DType != graph.Int16 || y.DType != graph.Int16 {
		return false
	}
	_, zx := qparams(x)
	_, zy := qparams(y)
	return zx == 0 && zy == 0
}

// mathInt is the 8-bit form of a Math function: the input dequantized, the
// float function, and the result quantized to the output (round half away
// from zero, saturated). The generated code holds it as a 256-entry table.
func mathInt(n *graph.Node, x, y *graph.Tensor) (func(int32) int32, error) {
	a, ok, err := attrsOf[graph.MathAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("math has no function (*graph.MathAttrs)")
	}
	f, err := MathFunc(a)
	if err != nil {
		return nil, err
	}
	if x.Quant == nil || y.Quant == nil {
		return nil, fmt.Errorf("integer %s needs quantized input and output", a.Fn)
	}
	sx, zx := qparams(x)
	sy, zy := qparams(y)
	if Abs16(n, x, y) {
		// TFLite Micro's int16 ABS (zero points 0); the caller clamps.
		return func(v int32) int32 { return qmath.AbsRescaled(v, sx, zx, sy) + zy }, nil
	}
	if x.DType != graph.Int8 && x.DType != graph.UInt8 {
		return nil, fmt.Errorf("integer %s on %s: only 8-bit inputs (a table)", a.Fn, x.DType)
	}
	if a.TFLiteInt8 {
		if x.DType != graph.Int8 || y.DType != graph.Int8 {
			return nil, fmt.Errorf("TFLite's own integer %s on %s is not supported (int8 is)", a.Fn, x.DType)
		}
		switch a.Fn {
		case graph.MathRsqrt:
			return func(v int32) int32 { return qmath.RsqrtInt8(v, sx, zx, sy, zy) }, nil
		case graph.MathAbs:
			return func(v int32) int32 { return qmath.AbsInt8(v, sx, zx, sy, zy) }, nil
		case graph.MathGelu:
			return qmath.LUTPopulateInt8(sx, zx, sy, zy, qmath.GeluF32), nil
		case graph.MathGeluTanh:
			return qmath.LUTPopulateInt8(sx, zx, sy, zy, qmath.GeluTanhF32), nil
		case graph.MathElu:
			if a.Alpha != 1 {
				return nil, fmt.Errorf("TFLite's int8 ELU has alpha 1, not %g", a.Alpha)
			}
			return qmath.LUTPopulateInt8(sx, zx, sy, zy, qmath.EluF32), nil
		}
		return nil, fmt.Errorf("TFLite's own integer %s is not supported (int8 ABS, RSQRT, GELU and ELU are)", a.Fn)
	}
	if a.Float32Island {
		lo, hi := y.DType.Range()
		return func(v int32) int32 {
			x := float32(float64(sx) * float64(v-zx)) // as dequantize
			return int32(qmath.QuantizeFloat(float32(f(float64(x))), sy, zy, lo, hi, a.HalfEven))
		}, nil
	}
	return func(v int32) int32 {
		r := f(float64(sx)*float64(v-zx)) / float64(sy)
		switch {
		case math.IsNaN(r):
			return zy
		case r > 1<<20:
			return 1 << 20
		case r < -(1 << 20):
			return -(1 << 20)
		}
		return int32(math.Round(r)) + zy
	}, nil
}
