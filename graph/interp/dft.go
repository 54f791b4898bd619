package interp

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.DFT, FloatClass, dftOp) }

// dftOp is graph.DFT: each transform summed directly in float64 (no FFT:
// the reference is the definition) and rounded to float32 once.
func dftOp(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.DFTAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("DFT needs *graph.DFTAttrs (%v)", err)
	}
	if len(ins) < 1 || ins[0] == nil || ins[0].DType != graph.Float32 {
		return nil, fmt.Errorf("DFT needs a float32 signal")
	}
	x := ins[0]
	var win *graph.Data
	var wshape []int
	if len(ins) > 1 && ins[1] != nil {
		win, wshape = ins[1], ins[1].Shape
		if win.DType != graph.Float32 {
			return nil, fmt.Errorf("DFT window is %s, want float32", win.DType)
		}
	}
	shape, err := graph.DFTShape(&a, x.Shape, wshape)
	if err != nil {
		return nil, err
	}
	full := shape
	if a.Power {
		full = append(slices.Clone(shape), 2)
	}
	y := graph.NewData(graph.Float32, full)
	r := len(x.Shape)
	c := x.Shape[r-1]
	bins := a.DFTBins()
	// transform reads sample m through at (an element offset, or -1 past
	// the signal's end) and writes bin k's real part at put(k) and its
	// imaginary part right after.
	transform := func(at func(m int) int, w func(m int) float64, put func(k int) int) {
		for k := 0; k < bins; k++ {
			var re, im float64
			for m := 0; m < a.N; m++ {
				o := at(m)
				if o < 0 {
					continue
				}
				xr, xi := float64(x.F[o]), 0.0
				if c == 2 {
					xi = float64(x.F[o+1])
				}
				if w != nil {
					xr, xi = xr*w(m), xi*w(m)
				}
				th := 2 * math.Pi * float64(k*m%a.N) / float64(a.N)
				cs, sn := math.Cos(th), math.Sin(th)
				if a.Inverse {
					sn = -sn
				}
				// (xr + i xi)(cos - i sin)
				re += xr*cs + xi*sn
				im += xi*cs - xr*sn
			}
			if a.Inverse {
				re, im = re/float64(a.N), im/float64(a.N)
			}
			o := put(k)
			y.F[o], y.F[o+1] = float32(re), float32(im)
		}
	}
	if a.Frames > 0 {
		var w func(m int) float64
		if win != nil {
			w = func(m int) float64 { return float64(win.F[m]) }
		}
		for b := 0; b < x.Shape[0]; b++ {
			for f := 0; f < a.Frames; f++ {
				transform(func(m int) int { return (b*x.Shape[1] + f*a.Step + m) * c },
					w, func(k int) int { return ((b*a.Frames+f)*bins + k) * 2 })
			}
		}
		return []*graph.Data{power(&a, y, shape)}, nil
	}
	outer := graph.NumElements(x.Shape[:a.Axis])
	length := x.Shape[a.Axis]
	inner := graph.NumElements(x.Shape[a.Axis+1 : r-1])
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			transform(func(m int) int {
				if m >= length {
					return -1
				}
				return ((o*length+m)*inner + i) * c
			}, nil, func(k int) int { return ((o*bins+k)*inner + i) * 2 })
		}
	}
	return []*graph.Data{power(&a, y, shape)}, nil
}

// power is y's squared magnitudes (re² + im² of float32 parts, in float32,
// as the sum of squares it stands for computes them) when a asks for them.
func power(a *graph.DFTAttrs, y *graph.Data, shape []int) *graph.Data {
	if !a.Power {
		return y
	}
	p := graph.NewData(graph.Float32, shape)
	for i := range p.F {
		re, im := y.F[2*i], y.F[2*i+1]
		p.F[i] = float32(re*re) + float32(im*im) // rounded apart: no fused multiply-add
	}
	return p
}
