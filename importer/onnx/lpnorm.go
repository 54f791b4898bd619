package onnx

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() { converters["LpNormalization"] = convLpNorm }

// LpNormalization (axis, default -1; p, 1 or 2, default 2): y = x / ‖x‖ₚ,
// the norm over axis kept as a dimension of 1 (ONNX's reference: a zero
// norm gives what the division gives, ±Inf or NaN). float32 only: a Reduce
// (L1 or L2) and a Div.
func convLpNorm(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "LpNormalization"); err != nil {
		return err
	}
	if len(x.shape) == 0 {
		return unsupportedf("LpNormalization of a scalar")
	}
	axis, err := normAxis(int(c.int("axis", -1)), len(x.shape))
	if err != nil {
		return err
	}
	kind := graph.ReduceL2
	switch p := c.int("p", 2); p {
	case 1:
		kind = graph.ReduceL1
	case 2:
	default:
		return unsupportedf("LpNormalization p = %d: ONNX defines p = 1 and p = 2 only", p)
	}
	kept := slices.Clone(x.shape)
	kept[axis] = 1
	norm, err := c.step(-1, "norm", graph.Reduce, &graph.ReduceAttrs{Kind: kind, Axes: []int{axis}, KeepDims: true}, graph.Float32, kept, x)
	if err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Div, &graph.BinaryAttrs{}, graph.Float32, x.shape, x, norm)
	return err
}
