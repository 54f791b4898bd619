package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

func init() {
	for _, k := range []string{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"} {
		converters[k] = convElementwise(graph.Compare, func(c *nodeCtx) any { return &graph.CompareAttrs{Kind: c.n.OpType} })
	}
	for _, k := range []string{"And", "Or", "Xor", "Not"} {
		converters[k] = convElementwise(graph.Logic, func(c *nodeCtx) any { return &graph.LogicAttrs{Kind: c.n.OpType} })
	}
	converters["Where"] = convElementwise(graph.Where, func(*nodeCtx) any { return nil })
	converters["Mod"] = convElementwise(graph.Mod, func(c *nodeCtx) any { return &graph.ModAttrs{Fmod: c.int("fmod", 0) != 0} })
}

// convElementwise maps an element-wise op of every input (broadcast) in
// ONNX's own layout; with all inputs constant the reference interpreter
// folds it.
func convElementwise(op graph.Op, attrs func(c *nodeCtx) any) converter {
	return func(im *importer, c *nodeCtx) error {
		var vals []*value
		for i := 0; i < c.nIn(); i++ {
			v, err := c.need(i)
			if err != nil {
				return err
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return fmt.Errorf("no inputs")
		}
		shape := vals[0].shape
		for _, v := range vals[1:] {
			s, err := broadcastShapes(shape, v.shape)
			if err != nil {
				return err
			}
			shape = s
		}
		dt := graph.Bool
		if op == graph.Mod {
			if len(vals) != 2 || vals[0].dt != vals[1].dt {
				return fmt.Errorf("Mod needs two inputs of one type")
			}
			dt = vals[0].dt
			if dt == graph.Float32 && c.int("fmod", 0) == 0 {
				return fmt.Errorf("Mod of floats needs fmod=1")
			}
		}
		if op == graph.Where {
			if len(vals) != 3 || vals[1].dt != vals[2].dt {
				return fmt.Errorf("Where needs a condition and two values of one type")
			}
			if vals[0].dt != graph.Bool {
				return fmt.Errorf("Where's condition is %s: ONNX wants bool", vals[0].dt)
			}
			dt = vals[1].dt
		}
		a := attrs(c)
		if d, ok, err := foldConst(op, a, dt, shape, vals); ok || err != nil {
			if err != nil {
				return err
			}
			return c.setConst(0, d)
		}
		var ins []string
		for _, v := range vals {
			ins = append(ins, im.get(v, asIs))
		}
		c.emit1(op, ins, a, dt, shape, asIs)
		return nil
	}
}

// foldConst runs op on constant inputs in the reference interpreter; ok
// is false when an input is not constant.
func foldConst(op graph.Op, attrs any, dt graph.DType, shape []int, vals []*value) (*graph.Data, bool, error) {
	g := graph.New("fold", "onnx")
	n := &graph.Node{Name: "fold", Op: op, Attrs: attrs, Outputs: []string{"y"}}
	for i, v := range vals {
		if v.c == nil {
			return nil, false, nil
		}
		name := fmt.Sprintf("c%d", i)
		g.AddConst(name, v.c)
		n.Inputs = append(n.Inputs, name)
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: shape})
	g.AddNode(n)
	g.Outputs = []string{"y"}
	out, err := interp.Run(g, map[string]*graph.Data{})
	if err != nil {
		return nil, true, err
	}
	return out["y"], true, nil
}

// convCumSum maps CumSum with a constant axis, in ONNX's own layout.
func convCumSum(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	d, err := c.constIn(1, "CumSum axis")
	if err != nil {
		return err
	}
	if d == nil || d.Len() != 1 {
		return fmt.Errorf("axis must be one constant")
	}
	ax, err := normAxis(d.Ints()[0], len(x.shape))
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 && x.dt != graph.Int32 && x.dt != graph.Int64 {
		return unsupportedf("CumSum on %s", x.dt)
	}
	a := &graph.CumSumAttrs{Axis: ax, Exclusive: c.int("exclusive", 0) != 0, Reverse: c.int("reverse", 0) != 0}
	c.emit1(graph.CumSum, []string{im.get(x, asIs)}, a, x.dt, x.shape, asIs)
	return nil
}

func init() {
	converters["CumSum"] = convCumSum
	paramSlots["CumSum"] = []int{1}
}

// constIndicesIn refuses constant indices outside their axes: index i of
// each group of k is checked against axis first+i of dims, negative ones
// counting from the end. ONNX leaves such indices an error; mcugen clamps run-time
// indices (they are data), but a constant one is the model's own mistake
// and was clamped or dropped in silence (review).
func constIndicesIn(iv *value, dims []int, first, k int) error {
	if iv.c == nil || k < 1 {
		return nil
	}
	for n, v := range iv.c.I {
		ax := first + n%k
		if d := dims[ax]; v < -int64(d) || v >= int64(d) {
			return fmt.Errorf("constant index %d (element %d of the indices) is out of range for axis %d of size %d", v, n, ax, d)
		}
	}
	return nil
}

// convGatherElements maps GatherElements; constant operands fold.
func convGatherElements(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	iv, err := c.need(1)
	if err != nil {
		return err
	}
	if !iv.dt.IsInt() || len(iv.shape) != len(x.shape) {
		return fmt.Errorf("GatherElements needs integer indices of the data's rank")
	}
	axis, err := normAxis(int(c.int("axis", 0)), len(x.shape))
	if err != nil {
		return err
	}
	if err := constIndicesIn(iv, x.shape, axis, 1); err != nil {
		return err
	}
	a := &graph.GatherAttrs{Axis: axis, Elements: true}
	if d, ok, err := foldConst(graph.Gather, a, x.dt, iv.shape, []*value{x, iv}); ok || err != nil {
		if err != nil {
			return err
		}
		return c.setConst(0, d)
	}
	c.emit1(graph.Gather, []string{im.get(x, asIs), im.get(iv, asIs)}, a, x.dt, iv.shape, asIs)
	return nil
}

func init() { converters["GatherElements"] = convGatherElements }

// convScatter maps ScatterElements (and the older Scatter, its same
// semantics) and ScatterND; constant operands fold.
func convScatter(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	iv, err := c.need(1)
	if err != nil {
		return err
	}
	u, err := c.need(2)
	if err != nil {
		return err
	}
	if !iv.dt.IsInt() {
		return fmt.Errorf("indices are %s, want int32 or int64", iv.dt)
	}
	if u.dt != x.dt {
		return fmt.Errorf("updates are %s, data %s", u.dt, x.dt)
	}
	a := &graph.ScatterAttrs{ND: c.n.OpType == "ScatterND", Reduction: c.str("reduction", "none")}
	if a.Reduction == "none" {
		a.Reduction = ""
	}
	if !slices.Contains(graph.ScatterReductions, a.Reduction) {
		return unsupportedf("%s reduction %q", c.n.OpType, a.Reduction)
	}
	if a.Reduction != "" && x.dt == graph.Bool {
		return fmt.Errorf("reduction %q on bool data", a.Reduction)
	}
	if !a.ND {
		if a.Axis, err = normAxis(int(c.int("axis", 0)), len(x.shape)); err != nil {
			return err
		}
	}
	if err := graph.ScatterShapes(a, x.shape, iv.shape, u.shape); err != nil {
		return err
	}
	if a.ND {
		err = constIndicesIn(iv, x.shape, 0, iv.shape[len(iv.shape)-1])
	} else {
		err = constIndicesIn(iv, x.shape, a.Axis, 1)
	}
	if err != nil {
		return err
	}
	if d, ok, err := foldConst(graph.Scatter, a, x.dt, x.shape, []*value{x, iv, u}); ok || err != nil {
		if err != nil {
			return err
		}
		return c.setConst(0, d)
	}
	c.emit1(graph.Scatter, []string{im.get(x, asIs), im.get(iv, asIs), im.get(u, asIs)}, a, x.dt, x.shape, asIs)
	return nil
}

func init() {
	converters["ScatterElements"] = convScatter
	converters["Scatter"] = convScatter
	converters["ScatterND"] = convScatter
}
