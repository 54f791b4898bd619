package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

const (
	codeReduceAny = 91
	codeReduceAll = 140
)

func init() { register((*opctx).reduceBool, codeReduceAny, codeReduceAll) }

// reduceBool maps REDUCE_ALL (TFLite Micro's logical AND over the axes)
// and REDUCE_ANY (OR) of a bool tensor: the values as unquantized int8 0
// and 1, their smallest (all) or largest (any) over the axes, and that as
// bool. Options: keep_dims; axes: a constant int32 input.
func (c *opctx) reduceBool(n *graph.Node) error {
	o, err := c.options(optReducer)
	if err != nil {
		return err
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if x.DType != graph.Bool || out.DType != graph.Bool {
		return c.errorf("input %s and output %s: %s takes and gives bool", x.DType, out.DType, c.name)
	}
	axes, err := c.reducerAxes(x)
	if err != nil {
		return err
	}
	slices.Sort(axes)
	axes = slices.Compact(axes)
	keep := o.boolean(0)
	var red []int
	for i, d := range x.Shape {
		switch {
		case !slices.Contains(axes, i):
			red = append(red, d)
		case keep:
			red = append(red, 1)
		}
	}
	kind := graph.ReduceMin
	if c.code == codeReduceAny {
		kind = graph.ReduceMax
	}
	v := c.mathNode(graph.Cast, &graph.CastAttrs{To: graph.Int8}, []string{x.Name}, "as_int8", graph.Int8, x.Shape, nil)
	v = c.mathNode(graph.Reduce, &graph.ReduceAttrs{Kind: kind, Axes: axes, KeepDims: keep}, []string{v}, "reduced", graph.Int8, red, nil)
	n.Op, n.Attrs, n.Inputs = graph.Cast, &graph.CastAttrs{To: graph.Bool}, []string{v}
	return nil
}
