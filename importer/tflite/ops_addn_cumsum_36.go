package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// int8 ADD_N and CUMSUM as TFLite Micro computes them (kernels/add_n.cc,
// kernels/cumsum.cc): each stored value less the zero point is shifted left
// by 20 and halved, the int32 sum rescaled by 2·s_x/(2^20·s_y). Both
// kernels start the sum at the rescaled −zero point (qmath.SumInt8Params),
// and mcugen copies that term to be bit-exact with them.

// sumInt8Quant checks the quantization TFLite Micro's Prepare reads (the
// first input's and the output's per-tensor scale and zero point) and
// derives the parameters.
func (c *opctx) sumInt8Quant(op string, x, y *graph.Tensor) (qmath.SumInt8Params, error) {
	for _, t := range []*graph.Tensor{x, y} {
		if !isQuantized(t) || t.Quant.PerAxis() || len(t.Quant.Scale) != 1 {
			return qmath.SumInt8Params{}, c.errorf("int8 %s needs one scale and zero point on %q", op, t.Name)
		}
	}
	sx, zx := x.Quant.At(0)
	sy, zy := y.Quant.At(0)
	p, err := qmath.SumInt8ParamsFor(op, sx, zx, sy, zy)
	if err != nil {
		return p, c.errorf("%v", err)
	}
	return p, nil
}

// addNInt8 maps int8 ADD_N. TFLite Micro's Prepare needs every input of the
// first one's shape, type, scale and zero point, and an int8 output. Its
// kernel is CUMSUM's along a new leading axis of the stacked inputs, read
// at the last position (same parameters, same start, same order of
// additions), so ADD_N is Reshape, Concat, CumSum (TFLiteInt8), Slice and
// Reshape.
func addNInt8(c *opctx, n *graph.Node, ins []*graph.Tensor, y *graph.Tensor) error {
	x := ins[0]
	for i, t := range append(slices.Clone(ins), y) {
		if t.DType != graph.Int8 {
			return c.errorf("int8 ADD_N: tensor %q is %s; TFLite Micro needs every input and the output int8", t.Name, t.DType)
		}
		if i > 0 && i < len(ins) && !sameQuantParams(t, x) {
			return c.errorf("int8 ADD_N: input %d (%q) is quantized otherwise than input 0; TFLite Micro needs one scale and zero point on every input", i, t.Name)
		}
		if !slices.Equal(t.Shape, y.Shape) {
			return c.errorf("input %q has shape %v, the output %v: ADD_N does not broadcast", t.Name, t.Shape, y.Shape)
		}
	}
	if _, err := c.sumInt8Quant("ADD_N", x, y); err != nil {
		return err
	}
	shape := append([]int{1}, y.Shape...)
	stacked := make([]string, len(ins))
	for i, t := range ins {
		stacked[i] = c.mathNode(graph.Reshape, nil, []string{t.Name}, "expanded", graph.Int8, shape, x.Quant)
	}
	shape[0] = len(ins)
	all := c.mathNode(graph.Concat, &graph.ConcatAttrs{Axis: 0}, stacked, "stacked", graph.Int8, shape, x.Quant)
	sums := c.mathNode(graph.CumSum, &graph.CumSumAttrs{Axis: 0, TFLiteInt8: true}, []string{all}, "sums", graph.Int8, shape, y.Quant)
	a := fullSlice(shape)
	a.Begin[0] = len(ins) - 1
	last := c.mathNode(graph.Slice, a, []string{sums}, "sum", graph.Int8, append([]int{1}, y.Shape...), y.Quant)
	n.Op, n.Attrs, n.Inputs = graph.Reshape, nil, []string{last}
	return nil
}

// cumsumInt8 maps int8 CUMSUM: TFLite Micro's Prepare needs an int8 output
// of the input's shape, an int32 axis of one element and a rank of at least
// 1; its Eval refuses an axis outside the rank.
func cumsumInt8(c *opctx, n *graph.Node, o table) error {
	ins, y, err := c.mathIO(2)
	if err != nil {
		return err
	}
	x, axis := ins[0], ins[1]
	if y.DType != graph.Int8 {
		return c.errorf("int8 CUMSUM: output %q is %s; TFLite Micro needs the input's type", y.Name, y.DType)
	}
	if !slices.Equal(x.Shape, y.Shape) {
		return c.errorf("output shape %v differs from input %v", y.Shape, x.Shape)
	}
	if axis.DType != graph.Int32 {
		return c.errorf("int8 CUMSUM: axis %q is %s; TFLite Micro needs int32", axis.Name, axis.DType)
	}
	if len(x.Shape) == 0 {
		return c.errorf("CUMSUM of a scalar")
	}
	ax, err := c.axisArg(1, len(x.Shape))
	if err != nil {
		return err
	}
	if _, err := c.sumInt8Quant("CUMSUM", x, y); err != nil {
		return err
	}
	n.Op, n.Inputs = graph.CumSum, []string{x.Name}
	n.Attrs = &graph.CumSumAttrs{Axis: ax, Exclusive: o.boolean(0), Reverse: o.boolean(1), TFLiteInt8: true}
	return nil
}
