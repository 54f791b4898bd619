package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["TopK"] = convTopK
	paramSlots["TopK"] = []int{1}
}

// convTopK maps TopK (X, K; axis, largest, sorted) to one graph.TopK node per
// output used: the values, and the indices (int64). The results come sorted
// whatever "sorted" says (an order the operator allows either way).
func convTopK(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if x.dt == graph.Int64 {
		return unsupportedf("TopK on int64")
	}
	kd, err := c.constIn(1, "TopK k")
	if err != nil {
		return err
	}
	if kd == nil || kd.Len() != 1 {
		return fmt.Errorf("k must be one constant value")
	}
	axis, err := normAxis(int(c.int("axis", -1)), len(x.shape))
	if err != nil {
		return err
	}
	k := int(kd.Float(0))
	if k < 1 || k > x.shape[axis] {
		return unsupportedf("TopK with k %v on an axis of %d", kd.Float(0), x.shape[axis])
	}
	out := slices.Clone(x.shape)
	out[axis] = k
	for i, dt := range []graph.DType{x.dt, graph.Int64} {
		if i >= len(c.n.Output) || c.out(i) == "" {
			continue
		}
		a := &graph.TopKAttrs{Axis: axis, K: k, Largest: c.int("largest", 1) != 0, Indices: i == 1}
		t, v := c.newOut(i, dt, out, asIs)
		v.prod = im.emit(graph.TopK, []string{im.get(x, asIs)}, a, t)
		if i == 0 {
			if in := im.g.Tensors[im.get(x, asIs)]; in != nil && in.Quant != nil {
				q := *in.Quant // the values keep the input's parameters
				t.Quant = &q
			}
		}
	}
	return nil
}
