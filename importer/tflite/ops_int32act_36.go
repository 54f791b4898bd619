package tflite

import (
	"math"

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
		return false, c.errorf("int32 %s with a fused %s: TFLite applies it, TFLite Micro's int32 kernel ignores it, so mcugen takes neither; put the activation in its own operator", c.name, actNames[actIndex(act)])
	}
	b, err := c.in(1)
	if err != nil {
		return false, err
	}
	y, err := c.out(0)
	if err != nil {
		return false, err
	}
	lo, hi := 0.0, 6.0
	switch act {
	case graph.ActRelu:
		hi = math.MaxInt32
	case graph.ActReluN1To1:
		lo, hi = -1, 1
	}
	m := c.mathNode(graph.Mul, &graph.BinaryAttrs{}, []string{x.Name, b.Name}, "product", graph.Int32, y.Shape, nil)
	if act == graph.ActRelu {
		c.emit(graph.Maximum, nil, []string{m, c.mathScalar("act_min", graph.Int32, lo, nil)}, y)
	} else {
		v := c.mathNode(graph.Maximum, nil, []string{m, c.mathScalar("act_min", graph.Int32, lo, nil)}, "act_low", graph.Int32, y.Shape, nil)
		c.emit(graph.Minimum, nil, []string{v, c.mathScalar("act_max", graph.Int32, hi, nil)}, y)
	}
	c.done = true
	return true, nil
}

// actIndex is act's value in TFLite's ActivationFunctionType.
func actIndex(act graph.Activation) int {
	switch act {
	case graph.ActRelu:
		return 1
	case graph.ActReluN1To1:
		return 2
	case graph.ActRelu6:
		return 3
	}
	return 0
}
