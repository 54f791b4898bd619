package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.Add, IntClass, plainOr(intAddSub(false), func(a, b int64) int64 { return a + b }))
	Register(graph.Sub, IntClass, plainOr(intAddSub(true), func(a, b int64) int64 { return a - b }))
	Register(graph.Mul, IntClass, plainOr(intMul, func(a, b int64) int64 { return a * b }))
	Register(graph.Div, IntClass, intDiv)
	Register(graph.SquaredDifference, IntClass, intSquaredDifference)
	Register(graph.Maximum, IntClass, intMinMax(true))
	Register(graph.Minimum, IntClass, intMinMax(false))
}

func binaryAct(n *graph.Node) graph.Activation {
	if a, ok := n.Attrs.(*graph.BinaryAttrs); ok && a != nil {
		return a.Act
	}
	return graph.ActNone
}

// binaryOperands checks two integer inputs and allocates the output.
func binaryOperands(g *graph.Graph, n *graph.Node, ins []*graph.Data) (*graph.Data, *graph.Tensor, error) {
	if err := needInts(ins, 0, 1); err != nil {
		return nil, nil, err
	}
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, nil, err
	}
	if len(ins[0].Shape) > len(y.Shape) || len(ins[1].Shape) > len(y.Shape) {
		return nil, nil, fmt.Errorf("inputs %v and %v do not broadcast to %v", ins[0].Shape, ins[1].Shape, y.Shape)
	}
	return y, yt, nil
}

// Plain reports whether no operand or result of n is quantized: ONNX
// arithmetic on integer tensors (shapes, indices, counts) rather than
// TFLite's quantized kernels.
func Plain(g *graph.Graph, n *graph.Node) bool {
	for _, nm := range append(append([]string{}, n.Inputs...), n.Outputs...) {
		if t := g.Tensor(nm); t != nil && t.Quant != nil && len(t.Quant.Scale) > 0 {
			return false
		}
	}
	return true
}

// plainOr runs f element-wise, wrapping to the output type, when the node's
// tensors carry no quantization; otherwise the quantized kernel q.
func plainOr(q Kernel, f func(a, b int64) int64) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		if !Plain(g, n) {
			return q(g, n, ins)
		}
		y, yt, err := binaryOperands(g, n, ins)
		if err != nil {
			return nil, err
		}
		if binaryAct(n) != graph.ActNone {
			return nil, fmt.Errorf("a fused activation on plain integers")
		}
		a, b := ins[0], ins[1]
		for i := range y.I {
			y.I[i] = yt.DType.Wrap(f(a.I[broadcastIndex(i, y.Shape, a.Shape)], b.I[broadcastIndex(i, y.Shape, b.Shape)]))
		}
		return []*graph.Data{y}, nil
	}
}

// intAddSub is TFLite's integer ADD / SUB: both inputs are offset by their
// zero points, shifted left by 20 bits, scaled by their own multipliers
// (scale / (2 * max scale)), added or subtracted, and scaled to the output
// by 2 * max scale / (2^20 * output scale).
func intAddSub(sub bool) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		y, yt, err := binaryOperands(g, n, ins)
		if err != nil {
			return nil, err
		}
		if err := check16x8(g.In(n, 0), g.In(n, 1), yt); err != nil {
			return nil, err
		}
		s1, z1 := qparams(g.In(n, 0))
		s2, z2 := qparams(g.In(n, 1))
		sy, zy := qparams(yt)
		shift := qmath.AddLeftShift(yt.DType == graph.Int16)
		if err := qmath.AddSubOutputOK(s1, s2, sy, shift, sub); err != nil {
			return nil, err
		}
		p := qmath.AddParams(s1, s2, sy, shift)
		if sub {
			p = qmath.SubParams(s1, s2, sy, shift)
		}
		lo, hi := actRange(binaryAct(n), yt)
		eachQuantPair(y, ins[0], ins[1], z1, z2, func(v1, v2 int32) int32 { return clamp32(p.Combine(v1, v2, sub)+zy, lo, hi) })
		return []*graph.Data{y}, nil
	}
}

// intSquaredDifference is TFLite Micro's int8 SQUARED_DIFFERENCE
// (qmath.SquaredDiffParams), clamped to the int8 range: it has no fused
// activation.
func intSquaredDifference(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	y, yt, err := binaryOperands(g, n, ins)
	if err != nil {
		return nil, err
	}
	if (yt.DType != graph.Int8 && yt.DType != graph.Int16) || Plain(g, n) {
		return nil, fmt.Errorf("SquaredDifference is quantized int8 or int16 only")
	}
	s1, z1 := qparams(g.In(n, 0))
	s2, z2 := qparams(g.In(n, 1))
	sy, zy := qparams(yt)
	p, lo, hi := qmath.SquaredDifferenceParams(s1, s2, sy), int32(-128), int32(127)
	if yt.DType == graph.Int16 {
		// TFLite Micro's int16 branch (zero points 0, no left shift).
		if err := check16x8(g.In(n, 0), g.In(n, 1), yt); err != nil {
			return nil, err
		}
		p, lo, hi = qmath.SquaredDifferenceParams16(s1, s2, sy), -32768, 32767
	}
	eachQuantPair(y, ins[0], ins[1], z1, z2, func(v1, v2 int32) int32 { return clamp32(p.Apply(v1, v2)+zy, lo, hi) })
	return []*graph.Data{y}, nil
}

// intMul is TFLite's integer MUL: (a - za) * (b - zb) requantized by
// s_a * s_b / s_y.
func intMul(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	y, yt, err := binaryOperands(g, n, ins)
	if err != nil {
		return nil, err
	}
	s1, z1 := qparams(g.In(n, 0))
	s2, z2 := qparams(g.In(n, 1))
	sy, zy := qparams(yt)
	m, sh := qmath.MulMultiplier(s1, s2, sy)
	lo, hi := actRange(binaryAct(n), yt)
	eachQuantPair(y, ins[0], ins[1], z1, z2, func(v1, v2 int32) int32 {
		return clamp32(qmath.MultiplyByQuantizedMultiplier(v1*v2, m, sh)+zy, lo, hi)
	})
	return []*graph.Data{y}, nil
}

// intMinMax is TFLite's MAXIMUM / MINIMUM on raw values (the converter gives
// inputs and output one quantization).
func intMinMax(isMax bool) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		y, _, err := binaryOperands(g, n, ins)
		if err != nil {
			return nil, err
		}
		a, b := ins[0], ins[1]
		for i := range y.I {
			v1 := a.I[broadcastIndex(i, y.Shape, a.Shape)]
			v2 := b.I[broadcastIndex(i, y.Shape, b.Shape)]
			if isMax {
				y.I[i] = max(v1, v2)
			} else {
				y.I[i] = min(v1, v2)
			}
		}
		return []*graph.Data{y}, nil
	}
}

// intDiv is plain integer division (ONNX Div on integer tensors), truncating
// toward zero and wrapping to the output type; x/0 is 0. On quantized int8
// tensors it is TFLite Micro's int8 DIV (qmath.DivInt8).
func intDiv(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	y, yt, err := binaryOperands(g, n, ins)
	if err != nil {
		return nil, err
	}
	if yt.Quant != nil || g.In(n, 0).Quant != nil || g.In(n, 1).Quant != nil {
		return quantDiv(g, n, ins, y, yt)
	}
	a, b := ins[0], ins[1]
	for i := range y.I {
		d := b.I[broadcastIndex(i, y.Shape, b.Shape)]
		if d == 0 {
			y.I[i] = 0 // defined here, as in the generated C: no trap on a microcontroller
			continue
		}
		y.I[i] = yt.DType.Wrap(a.I[broadcastIndex(i, y.Shape, a.Shape)] / d)
	}
	return []*graph.Data{y}, nil
}

// quantDiv is TFLite Micro's int8 DIV (qmath.DivInt8) with its fused
// activation; DivInt8OK says which tensors it takes.
func quantDiv(g *graph.Graph, n *graph.Node, ins []*graph.Data, y *graph.Data, yt *graph.Tensor) ([]*graph.Data, error) {
	if err := DivInt8OK(g.In(n, 0), g.In(n, 1), yt); err != nil {
		return nil, err
	}
	s1, z1 := qparams(g.In(n, 0))
	s2, z2 := qparams(g.In(n, 1))
	sy, zy := qparams(yt)
	m, sh := qmath.DivMultiplier(s1, s2, sy)
	lo, hi := actRange(binaryAct(n), yt)
	eachQuantPair(y, ins[0], ins[1], z1, z2, func(v1, v2 int32) int32 { return clamp32(qmath.DivInt8(v1, v2, m, sh)+zy, lo, hi) })
	return []*graph.Data{y}, nil
}

// DivInt8OK checks that a quantized Div is one TFLite's int8 DIV computes:
// int8 tensors quantized per tensor, with a multiplier shift of at most
// qmath.DivMaxShift (a quotient scale s1 / (s2 · sy) below 2^23).
func DivInt8OK(x, z, y *graph.Tensor) error {
	for _, t := range []*graph.Tensor{x, z, y} {
		if t == nil || t.DType != graph.Int8 || t.Quant == nil || len(t.Quant.Scale) != 1 {
			return fmt.Errorf("quantized Div needs per-tensor quantized int8 inputs and output (TFLite's int8 DIV)")
		}
	}
	s1, _ := qparams(x)
	s2, _ := qparams(z)
	sy, _ := qparams(y)
	if _, sh := qmath.DivMultiplier(s1, s2, sy); sh > qmath.DivMaxShift || s2 <= 0 || sy <= 0 {
		return fmt.Errorf("int8 Div with scales %g / (%g · %g): the quotient scale is out of TFLite's int8 DIV's range", s1, s2, sy)
	}
	return nil
}

// eachQuantPair sets y.I[i] = f(a − z1, b − z2) over the broadcast
// operands: the element loop of the quantized binary kernels.
func eachQuantPair(y, a, b *graph.Data, z1, z2 int32, f func(v1, v2 int32) int32) {
	for i := range y.I {
		v1 := int32(a.I[broadcastIndex(i, y.Shape, a.Shape)]) - z1
		v2 := int32(b.I[broadcastIndex(i, y.Shape, b.Shape)]) - z2
		y.I[i] = int64(f(v1, v2))
	}
}
