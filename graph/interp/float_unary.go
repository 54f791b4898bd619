package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Relu, FloatClass, floatUnary(func(*graph.Node) (func(float64) float64, error) {
		return func(x float64) float64 { return math.Max(x, 0) }, nil
	}))
	Register(graph.Clip, FloatClass, floatUnary(func(n *graph.Node) (func(float64) float64, error) {
		a, ok, err := attrsOf[graph.ClipAttrs](n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("clip has no bounds (*graph.ClipAttrs)")
		}
		lo, hi := float64(a.Min), float64(a.Max)
		// ONNX: min(max(x, lo), hi); with lo > hi every value becomes hi.
		return func(x float64) float64 {
			if x < lo {
				x = lo
			}
			if x > hi {
				x = hi
			}
			return x
		}, nil
	}))
	Register(graph.LeakyRelu, FloatClass, floatUnary(func(n *graph.Node) (func(float64) float64, error) {
		a, ok, err := attrsOf[graph.LeakyReluAttrs](n)
		if err != nil {
			return nil, err
		}
		alpha := float64(float32(0.01)) // ONNX default
		if ok {
			alpha = float64(a.Alpha)
		}
		return func(x float64) float64 {
			if x >= 0 {
				return x
			}
			return float64(float32(alpha * x))
		}, nil
	}))
	Register(graph.Sigmoid, FloatClass, floatUnary(func(*graph.Node) (func(float64) float64, error) {
		return func(x float64) float64 {
			if x >= 0 {
				return 1 / (1 + math.Exp(-x))
			}
			e := math.Exp(x)
			return e / (1 + e)
		}, nil
	}))
	Register(graph.Tanh, FloatClass, floatUnary(func(*graph.Node) (func(float64) float64, error) {
		return math.Tanh, nil
	}))
	Register(graph.HardSwish, FloatClass, floatUnary(func(*graph.Node) (func(float64) float64, error) {
		return func(x float64) float64 { return x * math.Max(0, math.Min(6, x+3)) / 6 }, nil
	}))
	Register(graph.HardSigmoid, FloatClass, floatUnary(func(n *graph.Node) (func(float64) float64, error) {
		a, ok, err := attrsOf[graph.HardSigmoidAttrs](n)
		if err != nil {
			return nil, err
		}
		alpha, beta := float64(float32(0.2)), float64(float32(0.5)) // ONNX defaults
		if ok {
			alpha, beta = float64(a.Alpha), float64(a.Beta)
		}
		return func(x float64) float64 { return math.Max(0, math.Min(1, alpha*x+beta)) }, nil
	}))
}

// floatUnary makes an element-wise kernel from a function built from the
// node's attributes; the function computes in float64 and the result is
// rounded to float32 once.
func floatUnary(build func(n *graph.Node) (func(float64) float64, error)) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		f, err := build(n)
		if err != nil {
			return nil, err
		}
		x, err := floatIn(ins, 0, "input")
		if err != nil {
			return nil, err
		}
		out, err := newFloatOut(g, n, 0)
		if err != nil {
			return nil, err
		}
		if len(out.F) != len(x.F) {
			return nil, fmt.Errorf("output shape %v differs from input %v", out.Shape, x.Shape)
		}
		for i, v := range x.F {
			out.F[i] = float32(f(float64(v)))
		}
		return []*graph.Data{out}, nil
	}
}
