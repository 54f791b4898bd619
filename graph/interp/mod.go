package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	fmod := floatBinary(func(a, b float32) float32 { return float32(math.Mod(float64(a), float64(b))) })
	Register(graph.Mod, FloatClass, func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		plain := *n
		plain.Attrs = nil // ModAttrs: floats always take the dividend's sign
		return fmod(g, &plain, ins)
	})
	Register(graph.Mod, IntClass, intMod)
}

// intMod is ONNX Mod on plain integers: the remainder with the divisor's
// sign (Python's %), or with the dividend's (C's %) when Fmod; x mod 0 is 0,
// as the generated C defines it.
func intMod(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	y, yt, err := binaryOperands(g, n, ins)
	if err != nil {
		return nil, err
	}
	if !Plain(g, n) {
		return nil, fmt.Errorf("quantized Mod is not supported")
	}
	fmod := false
	if a, ok := n.Attrs.(*graph.ModAttrs); ok && a != nil {
		fmod = a.Fmod
	}
	a, b := ins[0], ins[1]
	for i := range y.I {
		u, v := a.I[broadcastIndex(i, y.Shape, a.Shape)], b.I[broadcastIndex(i, y.Shape, b.Shape)]
		y.I[i] = yt.DType.Wrap(ModInt(u, v, fmod))
	}
	return []*graph.Data{y}, nil
}

// ModInt is the integer remainder of u by v: C's (fmod) or Python's; 0
// when v is 0.
func ModInt(u, v int64, fmod bool) int64 {
	if v == 0 {
		return 0
	}
	if v == -1 {
		return 0 // also where u / v overflows
	}
	r := u % v
	if !fmod && r != 0 && (r < 0) != (v < 0) {
		r += v
	}
	return r
}
