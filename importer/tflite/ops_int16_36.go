package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// TFLite Micro's int16 ("16x8") forms of BATCH_MATMUL, SQUARED_DIFFERENCE
// and PRELU (session 36). Each refuses, with the reason, what TFLite
// Micro's kernel refuses at Prepare or would read otherwise than mcugen
// computes it.

// batchMatMul16 checks a BATCH_MATMUL with an int16 operand or output:
// TFLite Micro's Prepare takes both operands of one type, the output of
// the same, ranks 2 to 5 and zero points 0 for int16; it reads one scale
// a tensor. graph/interp computes it (reference_ops::BatchMatMul<int16_t,
// int64_t>: a 64-bit accumulator and MultiplyByQuantizedMultiplier's int64
// overload).
func (c *opctx) batchMatMul16(n *graph.Node) error {
	a, b, y, err := c.binary()
	if err != nil {
		return err
	}
	ts := []*graph.Tensor{a, b, y}
	if !slices.ContainsFunc(ts, func(t *graph.Tensor) bool { return t.DType == graph.Int16 }) {
		return nil
	}
	for _, t := range ts {
		if t.DType != graph.Int16 {
			return c.errorf("int16 BATCH_MATMUL needs int16 operands and output (TFLite Micro takes one type for all three); %q is %s", t.Name, t.DType)
		}
		if !isQuantized(t) || len(t.Quant.Scale) != 1 {
			return c.errorf("int16 BATCH_MATMUL needs %q quantized per tensor", t.Name)
		}
		if _, z := t.Quant.At(0); z != 0 {
			return c.errorf("int16 tensor %q has zero point %d: TFLite Micro's int16 BATCH_MATMUL wants 0", t.Name, z)
		}
	}
	for _, t := range []*graph.Tensor{a, b} {
		if r := len(t.Shape); r < 2 || r > 5 {
			return c.errorf("int16 BATCH_MATMUL operand %q has rank %d: TFLite Micro takes 2 to 5", t.Name, r)
		}
	}
	return nil
}

// squaredDifference16 maps int16 SQUARED_DIFFERENCE (TFLite Micro's int16
// branch: zero points 0, no left shift; graph.SquaredDifference computes
// it with qmath.SquaredDifferenceParams16).
func (c *opctx) squaredDifference16(n *graph.Node, x, z, y *graph.Tensor) error {
	for _, t := range []*graph.Tensor{x, z, y} {
		if t.DType != graph.Int16 || !isQuantized(t) || len(t.Quant.Scale) != 1 {
			return c.errorf("int16 SQUARED_DIFFERENCE needs per-tensor quantized int16 inputs and output (%q is not)", t.Name)
		}
		if _, zp := t.Quant.At(0); zp != 0 {
			return c.errorf("int16 tensor %q has zero point %d: TFLite Micro's int16 SQUARED_DIFFERENCE wants 0", t.Name, zp)
		}
	}
	if err := c.mathBroadcast(y, x, z); err != nil {
		return err
	}
	if !slices.Equal(x.Shape, z.Shape) && len(y.Shape) > 6 {
		// BroadcastBinaryFunction6DSlow.
		return c.errorf("int16 SQUARED_DIFFERENCE broadcasting over rank %d: TFLite Micro broadcasts up to rank 6", len(y.Shape))
	}
	n.Op, n.Inputs = graph.SquaredDifference, []string{x.Name, z.Name}
	return nil
}

// preluInt16 is TFLite Micro's int16 PRELU (int16 input and output, int8
// alpha; zero points as given, which its kernel subtracts and adds) as the
// composition preluInt8 builds: where x >= z_x, x requantized to the output
// by double(s_x) / double(s_y) (an int16 QUANTIZE: requantizeWide);
// elsewhere (x - z_x)(alpha - z_a) requantized by double(s_x)·s_a / s_y
// (the graph's integer Mul, whose product of an int16 and an int8 value
// less their zero points fits int32). Both round with
// MultiplyByQuantizedMultiplier, add z_y and saturate to int16, as
// BroadcastPrelu4DSlow does.
func (c *opctx) preluInt16(n *graph.Node, x, alpha, y *graph.Tensor) error {
	for _, t := range []*graph.Tensor{x, y} {
		if t.DType != graph.Int16 {
			return c.errorf("int16 PRELU needs int16 input and output (TFLite Micro reads the output as its input's type); %q is %s", t.Name, t.DType)
		}
	}
	if alpha.DType != graph.Int8 {
		return c.errorf("int16 PRELU needs an int8 alpha (TFLite Micro's Prepare checks it); %q is %s", alpha.Name, alpha.DType)
	}
	for _, t := range []*graph.Tensor{x, alpha, y} {
		if !isQuantized(t) || t.Quant.PerAxis() || len(t.Quant.Scale) != 1 {
			return c.errorf("int16 PRELU needs per-tensor quantization on %q", t.Name)
		}
	}
	if len(y.Shape) > 8 {
		// BroadcastBinaryOpSimple's kMaxRank.
		return c.errorf("int16 PRELU of rank %d: TFLite Micro takes up to 8", len(y.Shape))
	}
	_, zx := x.Quant.At(0)
	zq := &graph.Quant{Scale: slices.Clone(x.Quant.Scale), ZeroPoint: slices.Clone(x.Quant.ZeroPoint)}
	zero := c.mathScalar("zero_point", graph.Int16, float64(zx), zq)
	cond := c.mathNode(graph.Compare, &graph.CompareAttrs{Kind: "GreaterOrEqual"}, []string{x.Name, zero}, "non_negative", graph.Bool, x.Shape, nil)
	yq := func() *graph.Quant {
		return &graph.Quant{Scale: slices.Clone(y.Quant.Scale), ZeroPoint: slices.Clone(y.Quant.ZeroPoint)}
	}
	pos := c.mathNode(graph.Quantize, nil, []string{x.Name}, "positive", graph.Int16, x.Shape, yq())
	neg := c.mathNode(graph.Mul, nil, []string{x.Name, alpha.Name}, "negative", graph.Int16, y.Shape, yq())
	n.Op, n.Inputs = graph.Where, []string{cond, pos, neg}
	return nil
}
