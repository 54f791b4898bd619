package tflite

import (
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// int32Act handles a fused activation on int32 ADD, SUB and MUL (plain
// integers; the kernels take none). TFLite and TFLite Micro agree on MUL:
// the wrapped product is clamped to the activation's range (RELU [0,
// 2^31 − 1], RELU6 [0, 6], RELU_N1_TO_1 [−1, 1]), here a Maximum and a
// Minimum with constants. On ADD and SUB they disagree: TFLite clamps,
// TFLite Micro's int32 kernels ignore the activation (their range is all of
// int32), so mcugen refuses rather than pick one. It reports whether it
// built the operator.
func (c *opctx) int32Act(act graph.Activation) (bool, error) {
	x, err := c.in(0)
	if err != nil || act == graph.ActNone || x.DType != graph.Int32 || isQuantized(x) {
		return false, err
	}
	if c.code != opMul {
		return false, c.errorf("int32 %s with a fused %s: TFLite applies it, TFLite Micro's int32 kernel ignores it, so mcugen takes neither; put the activation in its own operator", c.name, strings.ToUpper(act.String()))
	}
	b, err := c.in(1)
	if err != nil {
		return false, err
	}
	y, err := c.out(0)
	if err != nil {
		return false, err
	}
	lo, hi, _ := act.Bounds()
	m := c.mathNode(graph.Mul, &graph.BinaryAttrs{}, []string{x.Name, b.Name}, "product", graph.Int32, y.Shape, nil)
	low := []string{m, c.mathScalar("act_min", graph.Int32, lo, nil)}
	if math.IsInf(hi, 1) {
		c.emit(graph.Maximum, nil, low, y)
	} else {
		v := c.mathNode(graph.Maximum, nil, low, "act_low", graph.Int32, y.Shape, nil)
		c.emit(graph.Minimum, nil, []string{v, c.mathScalar("act_max", graph.Int32, hi, nil)}, y)
	}
	c.done = true
	return true, nil
}
