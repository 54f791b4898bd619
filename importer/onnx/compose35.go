package onnx

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Normalizations composed of canonical ops in ONNX layout: LRN and
// MeanVarianceNormalization (float32).

func init() {
	converters["LRN"] = convLRN
	converters["MeanVarianceNormalization"] = convMVN
}

// LRN (x [N, C, D1, ...]): square_sum[n, c, ...] is the sum of x² over the
// channels c − ⌊(size−1)/2⌋ .. c + ⌈(size−1)/2⌉ that exist, and
// y = x / (bias + alpha/size · square_sum)^beta. The window is a sum of
// size slices of the squares padded with zero channels.
func convLRN(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "LRN"); err != nil {
		return err
	}
	size := int(c.int("size", 0))
	if size < 1 {
		return unsupportedf("LRN size %d: want a positive size", size)
	}
	if len(x.shape) < 3 {
		return unsupportedf("LRN of rank %d: want [N, C, D1, ...]", len(x.shape))
	}
	if x.shape[1] < 1 {
		return unsupportedf("LRN over %d channels", x.shape[1])
	}
	alpha, beta, bias := c.float("alpha", 1e-4), c.float("beta", 0.75), c.float("bias", 1)
	f, bin, r := graph.Float32, &graph.BinaryAttrs{}, len(x.shape)
	sq, err := c.step(-1, "square", graph.Mul, bin, f, x.shape, x, x)
	if err != nil {
		return err
	}
	// A window reaches at most C-1 channels either side: beyond that it
	// sums padding only, so the slices stop there (size still divides
	// alpha). A size of 20,000 made 20,000 slices and never finished
	// importing (review).
	half := (size - 1) / 2
	lo, hi := min(half, x.shape[1]-1), min(size-1-half, x.shape[1]-1)
	pads := make([]int, 2*r)
	pads[1], pads[r+1] = lo, hi
	padShape := slices.Clone(x.shape)
	padShape[1] += lo + hi
	padded, err := c.step(-1, "square_padded", graph.Pad, &graph.PadAttrs{Pads: pads, Mode: "constant"}, f, padShape, sq)
	if err != nil {
		return err
	}
	var sum *value
	for k := range lo + hi + 1 {
		begin, end, stride := make([]int, r), slices.Clone(padShape), make([]int, r)
		for i := range stride {
			stride[i] = 1
		}
		begin[1], end[1] = k, k+x.shape[1]
		s, err := c.step(-1, "window", graph.Slice, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, f, x.shape, padded)
		if err != nil {
			return err
		}
		if sum == nil {
			sum = s
		} else if sum, err = c.step(-1, "square_sum", graph.Add, bin, f, x.shape, sum, s); err != nil {
			return err
		}
	}
	scaled, err := c.step(-1, "scaled", graph.Mul, bin, f, x.shape, sum, constValue(c.out(0)+"_alpha", scalarF(alpha/float32(size))))
	if err != nil {
		return err
	}
	base, err := c.step(-1, "base", graph.Add, bin, f, x.shape, scaled, constValue(c.out(0)+"_bias", scalarF(bias)))
	if err != nil {
		return err
	}
	den, err := c.step(-1, "denominator", graph.Pow, bin, f, x.shape, base, constValue(c.out(0)+"_beta", scalarF(beta)))
	if err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Div, bin, f, x.shape, x, den)
	return err
}

// MeanVarianceNormalization (axes, default [0, 2, 3]):
// y = (x − mean) / sqrt(mean((x − mean)²)), the means over axes (ONNX's
// function body, no epsilon).
func convMVN(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "MeanVarianceNormalization"); err != nil {
		return err
	}
	axes := []int{0, 2, 3}
	if v, ok := c.ints("axes"); ok {
		axes = axes[:0]
		for _, a := range v {
			n, err := normAxis(int(a), len(x.shape))
			if err != nil {
				return err
			}
			axes = append(axes, n)
		}
	}
	for _, a := range axes {
		if a >= len(x.shape) {
			return unsupportedf("MeanVarianceNormalization axis %d of a rank-%d input", a, len(x.shape))
		}
	}
	slices.Sort(axes)
	axes = slices.Compact(axes)
	f, bin := graph.Float32, &graph.BinaryAttrs{}
	kept := slices.Clone(x.shape)
	for _, a := range axes {
		kept[a] = 1
	}
	mean := &graph.MeanAttrs{Axes: axes, KeepDims: true}
	mu, err := c.step(-1, "mean", graph.Mean, mean, f, kept, x)
	if err != nil {
		return err
	}
	d, err := c.step(-1, "centered", graph.Sub, bin, f, x.shape, x, mu)
	if err != nil {
		return err
	}
	d2, err := c.step(-1, "squared", graph.Mul, bin, f, x.shape, d, d)
	if err != nil {
		return err
	}
	v, err := c.step(-1, "variance", graph.Mean, mean, f, kept, d2)
	if err != nil {
		return err
	}
	sd, err := c.step(-1, "deviation", graph.Math, &graph.MathAttrs{Fn: graph.MathSqrt}, f, kept, v)
	if err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Div, bin, f, x.shape, d, sd)
	return err
}
