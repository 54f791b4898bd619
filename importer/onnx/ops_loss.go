package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// The loss functions NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (opsets 12 and 13, float32), composed of canonical ops in ONNX layout.

func init() {
	converters["NegativeLogLikelihoodLoss"] = convNLLLoss
	converters["SoftmaxCrossEntropyLoss"] = convSCELoss
}

// NegativeLogLikelihoodLoss(input [N, C, d1..dk], target [N, d1..dk],
// weight [C]): loss[n, d] = −input[n, target[n, d], d] · weight[target[n, d]]
// (weight 1 without the input), 0 where target is ignore_index; reduced by
// "none", "sum" or "mean" (the default): the sum divided by the sum of the
// weights of the targets not ignored (their count without weights; 0/0, a
// NaN, when every target is ignored, as ONNX's reference computes it).
func convNLLLoss(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	return lossFrom(c, x, "NegativeLogLikelihoodLoss")
}

// SoftmaxCrossEntropyLoss(scores, labels, weights) is
// NegativeLogLikelihoodLoss of LogSoftmax(scores) along the class axis;
// its optional second output is that LogSoftmax.
func convSCELoss(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := lossCheck(c, x, "SoftmaxCrossEntropyLoss"); err != nil {
		return err
	}
	x3, err := lossFlat(c, x)
	if err != nil {
		return err
	}
	sm := &graph.SoftmaxAttrs{Axis: 1, Beta: 1, Mode: graph.SoftmaxLog}
	out := -1
	if c.out(1) != "" && slices.Equal(x3.shape, x.shape) {
		out = 1 // the log-probabilities are the second output as they are
	}
	lp, err := c.step(out, "log_prob", graph.Softmax, sm, graph.Float32, x3.shape, x3)
	if err != nil {
		return err
	}
	if c.out(1) != "" && out < 0 {
		if _, err := c.step(1, "", graph.Reshape, nil, graph.Float32, x.shape, lp); err != nil {
			return err
		}
	}
	return lossOf(c, x, lp)
}

// lossFrom is NegativeLogLikelihoodLoss of x (op names the node's op in
// errors).
func lossFrom(c *nodeCtx, x *value, op string) error {
	if err := lossCheck(c, x, op); err != nil {
		return err
	}
	x3, err := lossFlat(c, x)
	if err != nil {
		return err
	}
	return lossOf(c, x, x3)
}

// lossCheck checks the operands and attributes the two losses share.
func lossCheck(c *nodeCtx, x *value, op string) error {
	if x.dt != graph.Float32 {
		return unsupportedf("%s on %s", op, x.dt)
	}
	if len(x.shape) < 2 {
		return fmt.Errorf("input of rank %d: want [N, C, d1, ..., dk]", len(x.shape))
	}
	if c.out(0) == "" {
		return fmt.Errorf("no output")
	}
	t, err := c.need(1)
	if err != nil {
		return err
	}
	if t.dt != graph.Int64 && t.dt != graph.Int32 {
		return fmt.Errorf("target is %s, want int64 or int32", t.dt)
	}
	want := append([]int{x.shape[0]}, x.shape[2:]...)
	if !slices.Equal(t.shape, want) {
		return fmt.Errorf("target %v does not match input %v: want %v", t.shape, x.shape, want)
	}
	if w := c.in(2); w != nil {
		if w.dt != graph.Float32 {
			return fmt.Errorf("weight is %s, want float32", w.dt)
		}
		if !slices.Equal(w.shape, []int{x.shape[1]}) {
			return fmt.Errorf("weight %v: want [%d] (one per class)", w.shape, x.shape[1])
		}
	}
	switch r := c.str("reduction", "mean"); r {
	case "none", "sum", "mean":
	default:
		return fmt.Errorf("reduction %q: want none, sum or mean", r)
	}
	return nil
}

// lossFlat is x as [N, C, D], D the product of d1..dk (1 when k is 0).
func lossFlat(c *nodeCtx, x *value) (*value, error) {
	s := []int{x.shape[0], x.shape[1], graph.NumElements(x.shape[2:])}
	if slices.Equal(s, x.shape) {
		return x, nil
	}
	return c.step(-1, "input_3d", graph.Reshape, nil, x.dt, s, x)
}

// lossOf writes the node's output 0: the loss of the log-probabilities
// lp [N, C, D] (x is the node's input, for its shape) against input 1,
// the targets, with input 2, the class weights.
func lossOf(c *nodeCtx, x, lp *value) error {
	f, bin := graph.Float32, &graph.BinaryAttrs{}
	t, err := c.need(1)
	if err != nil {
		return err
	}
	n, d := x.shape[0], graph.NumElements(x.shape[2:])
	s := []int{n, 1, d}
	t3, err := c.step(-1, "target_3d", graph.Reshape, nil, t.dt, s, t)
	if err != nil {
		return err
	}
	// The log-probability of each target's class. Gather clamps an index
	// outside [−C, C) into the axis (ONNX leaves such a target undefined),
	// so no load leaves the tensor; ignored targets are masked below.
	picked, err := c.step(-1, "picked", graph.Gather, &graph.GatherAttrs{Axis: 1, Elements: true}, f, s, lp, t3)
	if err != nil {
		return err
	}
	loss, err := c.step(-1, "nll", graph.Math, &graph.MathAttrs{Fn: graph.MathNeg}, f, s, picked)
	if err != nil {
		return err
	}
	var wt *value // the weight of each target, ignored ones 0; nil: all 1
	if w := c.in(2); w != nil {
		if wt, err = c.step(-1, "target_weight", graph.Gather, &graph.GatherAttrs{Axis: 0}, f, s, w, t3); err != nil {
			return err
		}
		if loss, err = c.step(-1, "weighted", graph.Mul, bin, f, s, loss, wt); err != nil {
			return err
		}
	}
	// An ignore_index no int32 target can equal ignores nothing.
	if a := c.attr("ignore_index"); a != nil && (t.dt == graph.Int64 || a.I == int64(int32(a.I))) {
		ii := graph.NewData(t.dt, []int{})
		ii.I[0] = a.I
		ignored, err := c.step(-1, "ignored", graph.Compare, &graph.CompareAttrs{Kind: "Equal"}, graph.Bool, s, t3, constValue(c.out(0)+"_ignore_index", ii))
		if err != nil {
			return err
		}
		zero := constValue(c.out(0)+"_zero", scalarF(0))
		// Where, not a product by 0: an ignored target's term may be
		// infinite (a class of probability 0).
		if loss, err = c.step(-1, "kept", graph.Where, nil, f, s, ignored, zero, loss); err != nil {
			return err
		}
		if wt == nil {
			wt = constValue(c.out(0)+"_one", scalarF(1))
		}
		if wt, err = c.step(-1, "kept_weight", graph.Where, nil, f, s, ignored, zero, wt); err != nil {
			return err
		}
	}
	switch c.str("reduction", "mean") {
	case "none":
		_, err = c.step(0, "", graph.Reshape, nil, f, t.shape, loss)
		return err
	case "sum":
		_, err = lossSum(c, 0, "sum", loss)
		return err
	}
	total, err := lossSum(c, -1, "sum", loss)
	if err != nil {
		return err
	}
	var den *value
	if wt == nil {
		den = constValue(c.out(0)+"_count", scalarF(float32(n*d)))
	} else if den, err = lossSum(c, -1, "weight_sum", wt); err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Div, bin, f, []int{}, total, den)
	return err
}

// lossSum is the sum of every element of v (out as in step): one
// ReduceSum over all its axes. (The generated C's float sums are
// compensated, tir.floatSumNest, so thousands of terms stay within ONNX's
// tolerance without summing in stages.)
func lossSum(c *nodeCtx, out int, suffix string, v *value) (*value, error) {
	axes := make([]int, len(v.shape))
	for a := range axes {
		axes[a] = a
	}
	return c.step(out, suffix, graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: axes}, v.dt, []int{}, v)
}
