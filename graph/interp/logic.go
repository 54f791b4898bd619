package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	for _, c := range []Class{FloatClass, IntClass} {
		Register(graph.Compare, c, compare)
		Register(graph.Logic, c, logic)
		Register(graph.Where, c, where)
	}
}

// compare is ONNX Equal, Less, Greater, LessOrEqual and GreaterOrEqual:
// floats as floats (NaN compares false, unequal), integers exactly. Two
// quantized operands must share their parameters (raw values then order
// as the real ones).
func compare(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.CompareAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("compare needs *graph.CompareAttrs (%v)", err)
	}
	if len(ins) < 2 || ins[0] == nil || ins[1] == nil {
		return nil, fmt.Errorf("compare needs two inputs")
	}
	if err := sameQuant(g.In(n, 0), g.In(n, 1)); err != nil {
		return nil, err
	}
	x, z := ins[0], ins[1]
	if (x.DType == graph.Float32) != (z.DType == graph.Float32) {
		return nil, fmt.Errorf("compare of %s and %s", x.DType, z.DType)
	}
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	for i := range y.I {
		p, q := broadcastIndex(i, y.Shape, x.Shape), broadcastIndex(i, y.Shape, z.Shape)
		var c int // -1, 0, 1, or 2 for unordered (NaN)
		if x.DType == graph.Float32 {
			u, v := x.F[p], z.F[q]
			switch {
			case math.IsNaN(float64(u)) || math.IsNaN(float64(v)):
				c = 2
			case u < v:
				c = -1
			case u > v:
				c = 1
			}
		} else {
			u, v := x.I[p], z.I[q]
			switch {
			case u < v:
				c = -1
			case u > v:
				c = 1
			}
		}
		var r bool
		switch a.Kind {
		case "Equal":
			r = c == 0
		case "Less":
			r = c == -1
		case "Greater":
			r = c == 1
		case "LessOrEqual":
			r = c == -1 || c == 0
		case "GreaterOrEqual":
			r = c == 1 || c == 0
		default:
			return nil, fmt.Errorf("unknown comparison %q", a.Kind)
		}
		if r {
			y.I[i] = 1
		}
	}
	return []*graph.Data{y}, nil
}

// sameQuant refuses two quantized operands with different parameters.
func sameQuant(a, b *graph.Tensor) error {
	qa, qb := a != nil && a.Quant != nil && len(a.Quant.Scale) > 0, b != nil && b.Quant != nil && len(b.Quant.Scale) > 0
	if !qa && !qb {
		return nil
	}
	if qa != qb || fmt.Sprint(a.Quant.Scale, a.Quant.ZeroPoint) != fmt.Sprint(b.Quant.Scale, b.Quant.ZeroPoint) {
		return fmt.Errorf("comparing quantized tensors with different parameters is not supported")
	}
	return nil
}

// logic is ONNX And, Or, Xor (broadcast) and Not on bool tensors.
func logic(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.LogicAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("logic needs *graph.LogicAttrs (%v)", err)
	}
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if len(ins) < 1 || ins[0] == nil || ins[0].DType != graph.Bool {
		return nil, fmt.Errorf("logic needs bool inputs")
	}
	x := ins[0]
	if a.Kind == "Not" {
		for i := range y.I {
			y.I[i] = 1 - x.I[i]&1
		}
		return []*graph.Data{y}, nil
	}
	if len(ins) < 2 || ins[1] == nil || ins[1].DType != graph.Bool {
		return nil, fmt.Errorf("logic %s needs two bool inputs", a.Kind)
	}
	z := ins[1]
	for i := range y.I {
		u, v := x.I[broadcastIndex(i, y.Shape, x.Shape)] != 0, z.I[broadcastIndex(i, y.Shape, z.Shape)] != 0
		var r bool
		switch a.Kind {
		case "And":
			r = u && v
		case "Or":
			r = u || v
		case "Xor":
			r = u != v
		default:
			return nil, fmt.Errorf("unknown logic operator %q", a.Kind)
		}
		if r {
			y.I[i] = 1
		}
	}
	return []*graph.Data{y}, nil
}

// where is ONNX Where: cond ? x : y with broadcasting; x and y share their
// dtype (and quantization).
func where(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if len(ins) < 3 || ins[0] == nil || ins[1] == nil || ins[2] == nil {
		return nil, fmt.Errorf("where needs three inputs")
	}
	c, a, b := ins[0], ins[1], ins[2]
	if c.DType != graph.Bool || a.DType != b.DType {
		return nil, fmt.Errorf("where of %s ? %s : %s", c.DType, a.DType, b.DType)
	}
	err := sameQuant(g.In(n, 1), g.In(n, 2))
	if err != nil {
		return nil, err
	}
	yt := g.Out(n, 0)
	if yt == nil || yt.DType != a.DType {
		return nil, fmt.Errorf("output of where must have the inputs' dtype %s", a.DType)
	}
	y, err := outAny(g, n, a.DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	for i := 0; i < y.Len(); i++ {
		src, j := b, broadcastIndex(i, y.Shape, b.Shape)
		if c.I[broadcastIndex(i, y.Shape, c.Shape)] != 0 {
			src, j = a, broadcastIndex(i, y.Shape, a.Shape)
		}
		if y.DType == graph.Float32 {
			y.F[i] = src.F[j]
		} else {
			y.I[i] = src.I[j]
		}
	}
	return []*graph.Data{y}, nil
}
