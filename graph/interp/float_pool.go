package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.MaxPool2D, FloatClass, floatPool(false))
	Register(graph.AvgPool2D, FloatClass, floatPool(true))
	Register(graph.Mean, FloatClass, floatMean)
	Register(graph.Reduce, FloatClass, floatReduce)
}

// poolOutOK reports whether out is the floor- or ceil-mode pool output length.
func poolOutOK(out, in, padBefore, padAfter, k, stride, dil int) bool {
	eff := dil*(k-1) + 1
	span := in + padBefore + padAfter - eff
	if span < 0 {
		return out == 0
	}
	floor := span/stride + 1
	ceil := (span+stride-1)/stride + 1
	return out >= floor && out <= ceil
}

// floatPool makes the MaxPool2D or AvgPool2D kernel on NHWC. The output size
// comes from the output tensor, so ceil-mode windows that run past the padded
// input are allowed: they hold only the elements inside it. MaxPool ignores
// padding. AvgPool divides by the number of window elements inside the input,
// or with CountIncludePad inside the padded input (as ONNX and PyTorch do).
func floatPool(avg bool) Kernel {
	return func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
		a, ok, err := attrsOf[graph.PoolAttrs](n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("pool has no attributes (*graph.PoolAttrs)")
		}
		x, err := floatIn(ins, 0, "input")
		if err != nil {
			return nil, err
		}
		pw, err := poolWindowOf(&a, x.Shape)
		if err != nil {
			return nil, err
		}
		N, H, W, C, KH, KW, sh, sw, dh, dw, p := pw.n, pw.h, pw.w, pw.c, pw.kh, pw.kw, pw.sh, pw.sw, pw.dh, pw.dw, pw.pad
		act, err := actFunc(a.Act)
		if err != nil {
			return nil, err
		}
		out, err := newFloatOut(g, n, 0)
		if err != nil {
			return nil, err
		}
		if len(out.Shape) != 4 || out.Shape[0] != N || out.Shape[3] != C ||
			!poolOutOK(out.Shape[1], H, p.Top, p.Bottom, KH, sh, dh) ||
			!poolOutOK(out.Shape[2], W, p.Left, p.Right, KW, sw, dw) {
			return nil, fmt.Errorf("pool output shape %v does not follow from input %v, kernel %v, stride %v, dilation %v, padding %+v",
				out.Shape, x.Shape, a.Kernel, a.Stride, a.Dilation, p)
		}
		OH, OW := out.Shape[1], out.Shape[2]
		for nb := 0; nb < N; nb++ {
			for oy := 0; oy < OH; oy++ {
				for ox := 0; ox < OW; ox++ {
					for c := 0; c < C; c++ {
						// float32, in the generated C's order and
						// compensated as it is: a pool whose result is
						// quantized again must round as the firmware does (review finding:
						// float64 sums put outputs one step apart at
						// ties, and test failed on valid QDQ models).
						var sum, comp float32 // compensated, as the C's (tir.computePool)
						m := negInf
						cnt, cntPad := 0, 0
						for ky := 0; ky < KH; ky++ {
							iy := oy*sh - p.Top + ky*dh
							if iy >= H+p.Bottom {
								continue
							}
							for kx := 0; kx < KW; kx++ {
								ix := ox*sw - p.Left + kx*dw
								if ix >= W+p.Right {
									continue
								}
								cntPad++
								if iy < 0 || iy >= H || ix < 0 || ix >= W {
									continue
								}
								v := x.F[((nb*H+iy)*W+ix)*C+c]
								cnt++
								y := v - comp
								t := sum + y
								comp = kahanErr(t, sum, y)
								sum = t
								m = nanMax(v, m)
							}
						}
						var r float64
						switch {
						case !avg:
							r = float64(m)
						case a.CountIncludePad && cntPad > 0:
							r = float64(sum / float32(cntPad))
						case cnt > 0:
							r = float64(sum / float32(cnt))
						}
						out.F[((nb*OH+oy)*OW+ox)*C+c] = float32(act(r))
					}
				}
			}
		}
		return []*graph.Data{out}, nil
	}
}

// floatMean is ReduceMean over Axes (all axes when empty); the output shape,
// with or without the kept size-1 dims, comes from the output tensor.
func floatMean(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, _, err := attrsOf[graph.MeanAttrs](n)
	if err != nil {
		return nil, err
	}
	return floatSum32(g, n, ins, a.Axes, func(v float32) float32 { return v },
		func(s float32, cnt int) float32 { return s / float32(cnt) })
}

// floatSum32 sums term(x) over axes as the generated C does (tir's
// floatSumNest): compensated (Kahan) float32 sums, each output's terms in
// input order, then fin. Results that are quantized again (a QDQ model's
// ReduceMean, a LayerNorm's first step) round as the firmware's do; float64
// sums put them one step apart at ties (review finding).
func floatSum32(g *graph.Graph, n *graph.Node, ins []*graph.Data, axes []int, term func(float32) float32, fin func(s float32, cnt int) float32) ([]*graph.Data, error) {
	x, out, offs, cnt, err := reduceSetup(g, n, ins, axes)
	if err != nil {
		return nil, err
	}
	acc := make([]float32, len(out.F))
	comp := make([]float32, len(out.F))
	for i, v := range x.F {
		o := offs[i]
		y := term(v) - comp[o]
		t := acc[o] + y
		comp[o] = kahanErr(t, acc[o], y)
		acc[o] = t
	}
	for i, s := range acc {
		out.F[i] = fin(s, cnt)
	}
	return []*graph.Data{out}, nil
}

// floatReduce is ONNX's ReduceX: the sums as the generated C computes them
// (floatSum32), products, extremes and LogSumExp in float64, rounded once.
func floatReduce(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ReduceAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("reduce has no kind (*graph.ReduceAttrs)")
	}
	same := func(s float64, _, _ int) float64 { return s }
	id := func(v float32) float32 { return v }
	sq := func(v float32) float32 { return float32(v * v) } // the conversion: no fused multiply-add
	same32 := func(s float32, _ int) float32 { return s }
	switch a.Kind {
	case graph.ReduceSum:
		return floatSum32(g, n, ins, a.Axes, id, same32)
	case graph.ReduceL1:
		return floatSum32(g, n, ins, a.Axes, func(v float32) float32 { return float32(math.Abs(float64(v))) }, same32)
	case graph.ReduceL2:
		// sqrt of a float32, correctly rounded as sqrtf is.
		return floatSum32(g, n, ins, a.Axes, sq, func(s float32, _ int) float32 { return float32(math.Sqrt(float64(s))) })
	case graph.ReduceSumSquare:
		return floatSum32(g, n, ins, a.Axes, sq, same32)
	case graph.ReduceLogSum:
		return floatSum32(g, n, ins, a.Axes, id, func(s float32, _ int) float32 { return float32(math.Log(float64(s))) })
	case graph.ReduceProd:
		return floatReduceOver(g, n, ins, a.Axes, 1, func(s, v float64, _ int) float64 { return s * v }, same)
	case graph.ReduceMax:
		return floatReduceOver(g, n, ins, a.Axes, math.Inf(-1), func(s, v float64, _ int) float64 { return nanMax64(s, v) }, same)
	case graph.ReduceMin:
		return floatReduceOver(g, n, ins, a.Axes, math.Inf(1), func(s, v float64, _ int) float64 { return nanMin64(s, v) }, same)
	case graph.ReduceLogSumExp:
		// Two passes, as the C: max + log Σ exp(x − max), which no float32
		// input can overflow.
		mx, err := floatReduceOver(g, n, ins, a.Axes, math.Inf(-1), func(s, v float64, _ int) float64 { return nanMax64(s, v) }, same)
		if err != nil {
			return nil, err
		}
		m := mx[0].F
		return floatReduceOver(g, n, ins, a.Axes, 0, func(s, v float64, o int) float64 { return s + math.Exp(v-float64(m[o])) },
			func(s float64, o, _ int) float64 { return math.Log(s) + float64(m[o]) })
	}
	return nil, fmt.Errorf("unknown reduction %q", a.Kind)
}

// floatReduceOver folds every input element into the output element o at
// its index with the reduced axes zeroed (all axes when axes is empty),
// starting from init, then finishes each output with the count of elements
// folded into it.
func floatReduceOver(g *graph.Graph, n *graph.Node, ins []*graph.Data, axes []int, init float64,
	add func(s, v float64, o int) float64, fin func(s float64, o, cnt int) float64) ([]*graph.Data, error) {
	x, out, offs, cnt, err := reduceSetup(g, n, ins, axes)
	if err != nil {
		return nil, err
	}
	acc := make([]float64, len(out.F))
	for i := range acc {
		acc[i] = init
	}
	for i, v := range x.F {
		acc[offs[i]] = add(acc[offs[i]], float64(v), offs[i])
	}
	for i, s := range acc {
		out.F[i] = float32(fin(s, i, cnt))
	}
	return []*graph.Data{out}, nil
}

// kahanErr is a compensated sum's rounding error for its new total t =
// acc + y, as the C's (tir's kahanStep): (t - acc) - y, or 0 where that is
// NaN (an infinite term), so a sum of [Inf, 1] stays Inf.
func kahanErr(t, acc, y float32) float32 {
	e := (t - acc) - y
	if e-e != 0 {
		// Not finite: an infinite term, or a total that overflowed (as
		// the generated C's kahanStep).
		return 0
	}
	return e
}

// reduceSetup is a float reduction's input, its output tensor, each input
// element's output offset and the count of elements an output folds.
func reduceSetup(g *graph.Graph, n *graph.Node, ins []*graph.Data, axes []int) (x, out *graph.Data, offs []int, cnt int, err error) {
	if x, err = floatIn(ins, 0, "input"); err != nil {
		return nil, nil, nil, 0, err
	}
	if out, err = newFloatOut(g, n, 0); err != nil {
		return nil, nil, nil, 0, err
	}
	offs, cnt, err = reduceOffsets(n, x.Shape, axes, out.Shape)
	return x, out, offs, cnt, err
}

// reduceOffsets maps every element of an input of shape in to its output
// element when axes are reduced (all axes when axes is empty), checking that
// out is the reduced shape with or without the kept size-1 axes; cnt is the
// number of elements folded into each output.
func reduceOffsets(n *graph.Node, in []int, axes []int, out []int) (offs []int, cnt int, err error) {
	r := len(in)
	reduce := make([]bool, r)
	if len(axes) == 0 {
		for i := range reduce {
			reduce[i] = true
		}
	}
	for _, ax := range axes {
		ax, err := normAxis(ax, r)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", n.Op, err)
		}
		reduce[ax] = true
	}
	keep, drop := []int{}, []int{}
	cnt = 1
	for i, d := range in {
		if reduce[i] {
			keep = append(keep, 1)
			cnt *= d
		} else {
			keep = append(keep, d)
			drop = append(drop, d)
		}
	}
	// The importers let a file's output shape stand where it differs from
	// the computed one in axes of 1 only (the same elements in the same
	// order).
	if !sameShape(out, keep) && !sameShape(out, drop) && !sameShape(graph.WithoutOnes(out), graph.WithoutOnes(drop)) {
		return nil, 0, fmt.Errorf("%s output shape %v, reducing axes %v of %v gives %v (or %v without the kept dims)", n.Op, out, reducedAxes(reduce), in, keep, drop)
	}
	return broadcastOffsets(keep, in), cnt, nil
}

func reducedAxes(reduce []bool) []int {
	var s []int
	for i, r := range reduce {
		if r {
			s = append(s, i)
		}
	}
	return s
}

// poolWindow is a pool's NHWC input dimensions and its checked window.
type poolWindow struct {
	n, h, w, c, kh, kw, sh, sw, dh, dw int
	pad                                graph.Padding
}

// poolWindowOf checks a pool's 4-D NHWC input shape and window.
func poolWindowOf(a *graph.PoolAttrs, shape []int) (poolWindow, error) {
	if len(shape) != 4 {
		return poolWindow{}, fmt.Errorf("pool input %v is not 4-D NHWC", shape)
	}
	w := poolWindow{n: shape[0], h: shape[1], w: shape[2], c: shape[3], kh: a.Kernel[0], kw: a.Kernel[1],
		sh: pos1(a.Stride[0]), sw: pos1(a.Stride[1]), dh: pos1(a.Dilation[0]), dw: pos1(a.Dilation[1]), pad: a.Pad}
	if w.kh <= 0 || w.kw <= 0 || w.sh < 0 || w.sw < 0 || w.dh < 0 || w.dw < 0 {
		return poolWindow{}, fmt.Errorf("bad pool kernel %v, stride %v or dilation %v", a.Kernel, a.Stride, a.Dilation)
	}
	if p := a.Pad; p.Top < 0 || p.Left < 0 || p.Bottom < 0 || p.Right < 0 {
		return poolWindow{}, fmt.Errorf("negative pool padding %+v", p)
	}
	return w, nil
}
