package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["LayerNormalization"] = convLayerNorm
	paramSlots["LayerNormalization"] = []int{1, 2}
	converters["Trilu"] = convTrilu
	converters["InstanceNormalization"] = convInstanceNorm
	paramSlots["InstanceNormalization"] = []int{1, 2}
	paramSlots["Trilu"] = []int{1}
}

// emitOut emits a one-output canonical node for output i and records it.
func (c *nodeCtx) emitOut(i int, op graph.Op, ins []string, attrs any, dt graph.DType, shape []int, l layout) {
	t, v := c.newOut(i, dt, shape, l)
	v.prod = c.im.emit(op, ins, attrs, t)
}

// normalize emits (x - mean) * rsqrt(mean((x - mean)²) + epsilon) over
// axes, in ONNX layout; it returns the result and the two statistics.
func (c *nodeCtx) normalize(x *value, axes []int, eps float32) (n, mean, inv *value) {
	im := c.im
	red := append([]int{}, x.shape...)
	for _, a := range axes {
		red[a] = 1
	}
	bin := &graph.BinaryAttrs{}
	f := graph.Float32
	xs := im.get(x, asIs)
	mean = c.tmp(graph.Mean, []string{xs}, &graph.MeanAttrs{Axes: axes, KeepDims: true}, f, red, asIs, "mean")
	d := c.tmp(graph.Sub, []string{xs, im.get(mean, asIs)}, bin, f, x.shape, asIs, "centered")
	ds := im.get(d, asIs)
	sq := c.tmp(graph.Mul, []string{ds, ds}, bin, f, x.shape, asIs, "squared")
	v := c.tmp(graph.Mean, []string{im.get(sq, asIs)}, &graph.MeanAttrs{Axes: axes, KeepDims: true}, f, red, asIs, "variance")
	e := im.g.AddConst(im.g.UniqueName(c.out(0)+"_epsilon"), scalarF(eps)).Name
	ve := c.tmp(graph.Add, []string{im.get(v, asIs), e}, bin, f, red, asIs, "variance_eps")
	inv = c.tmp(graph.Math, []string{im.get(ve, asIs)}, &graph.MathAttrs{Fn: graph.MathRsqrt}, f, red, asIs, "inv_std")
	n = c.tmp(graph.Mul, []string{ds, im.get(inv, asIs)}, bin, f, x.shape, asIs, "normalized")
	return n, mean, inv
}

// affine emits n * scale + bias (bias may be nil) as output 0.
func (c *nodeCtx) affine(n *value, scale, bias string) {
	bin := &graph.BinaryAttrs{}
	if bias == "" {
		c.emit1(graph.Mul, []string{c.im.get(n, asIs), scale}, bin, graph.Float32, n.shape, asIs)
		return
	}
	n = c.tmp(graph.Mul, []string{c.im.get(n, asIs), scale}, bin, graph.Float32, n.shape, asIs, "scaled")
	c.emit1(graph.Add, []string{c.im.get(n, asIs), bias}, bin, graph.Float32, n.shape, asIs)
}

// LayerNormalization over the axes from axis on, with its optional Mean
// and InvStdDev outputs.
func convLayerNorm(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	scale, err := c.need(1)
	if err != nil {
		return err
	}
	if err := needFloat(x, "LayerNormalization"); err != nil {
		return err
	}
	r := len(x.shape)
	axis, err := normAxis(int(c.int("axis", -1)), r)
	if err != nil {
		return err
	}
	var axes []int
	for i := axis; i < r; i++ {
		axes = append(axes, i)
	}
	// Scale and bias are multiplied and added with numpy's broadcast, and
	// Y has X's shape (review: a scale of [5] over a last dimension of 8
	// failed later in a Mul the importer had made; a second review: a
	// [1, 1, 4] scale over [2, 3, 4] is valid).
	fits := func(what string, v *value) error {
		if b, err := broadcastShapes(x.shape, v.shape); err != nil || !slices.Equal(b, x.shape) {
			return fmt.Errorf("%s of shape %v does not broadcast to X's shape %v", what, v.shape, x.shape)
		}
		return nil
	}
	if err := fits("Scale", scale); err != nil {
		return err
	}
	n, mean, inv := c.normalize(x, axes, c.float("epsilon", 1e-5))
	bias := ""
	if c.nIn() > 2 && c.n.Input[2] != "" {
		b, err := c.need(2)
		if err != nil {
			return err
		}
		if err := fits("B", b); err != nil {
			return err
		}
		bias = im.operand(b, asIs)
	}
	c.affine(n, im.operand(scale, asIs), bias)
	if c.out(1) != "" {
		c.emitOut(1, graph.Reshape, []string{im.get(mean, asIs)}, nil, graph.Float32, mean.shape, asIs)
	}
	if c.out(2) != "" {
		c.emitOut(2, graph.Reshape, []string{im.get(inv, asIs)}, nil, graph.Float32, inv.shape, asIs)
	}
	return nil
}

// InstanceNormalization: per sample and channel over the spatial axes,
// then the per-channel scale and bias.
func convInstanceNorm(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "InstanceNormalization"); err != nil {
		return err
	}
	r := len(x.shape)
	if r < 3 {
		return fmt.Errorf("input of rank %d", r)
	}
	var axes []int
	for i := 2; i < r; i++ {
		axes = append(axes, i)
	}
	// Scale and bias [C] broadcast as [C, 1, ...].
	perChannel := func(i int) (string, error) {
		v, err := c.need(i)
		if err != nil {
			return "", err
		}
		if v.c == nil || v.c.Len() != x.shape[1] {
			return "", fmt.Errorf("input %d must be a constant of %d values", i, x.shape[1])
		}
		s := []int{x.shape[1]}
		for len(s) < r-1 {
			s = append(s, 1)
		}
		return im.g.AddConst(im.g.UniqueName(v.name+"_c11"), reshapeData(v.c, s)).Name, nil
	}
	scale, err := perChannel(1)
	if err != nil {
		return err
	}
	bias, err := perChannel(2)
	if err != nil {
		return err
	}
	n, _, _ := c.normalize(x, axes, c.float("epsilon", 1e-5))
	c.affine(n, scale, bias)
	return nil
}

// Trilu keeps the upper (or lower) triangle of the last two dimensions from
// diagonal k on: Where(mask, x, 0) with a constant bool mask (folded when x
// is constant), exact for every value, infinities included.
func convTrilu(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	if r < 2 {
		return unsupportedf("Trilu of rank %d", r)
	}
	if x.dt == graph.Int8 || x.dt == graph.UInt8 {
		return unsupportedf("Trilu on %s", x.dt)
	}
	k := int64(0)
	if c.nIn() > 1 && c.n.Input[1] != "" {
		d, err := c.constIn(1, "Trilu k")
		if err != nil {
			return err
		}
		if d == nil || d.Len() != 1 {
			return unsupportedf("Trilu k is not one constant")
		}
		k = d.I[0]
	}
	upper := c.int("upper", 1) != 0
	rows, cols := x.shape[r-2], x.shape[r-1]
	mask := graph.NewData(graph.Bool, []int{rows, cols})
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if d := int64(j - i); upper && d >= k || !upper && d <= k {
				mask.I[i*cols+j] = 1
			}
		}
	}
	vals := []*value{constValue(c.out(0)+"_mask", mask), x, constValue(c.out(0)+"_zero", graph.NewData(x.dt, nil))}
	if d, ok, err := foldConst(graph.Where, nil, x.dt, x.shape, vals); ok || err != nil {
		if err != nil {
			return err
		}
		return c.setConst(0, d)
	}
	c.emit1(graph.Where, []string{im.get(vals[0], asIs), im.get(x, asIs), im.get(vals[2], asIs)}, nil, x.dt, x.shape, asIs)
	return nil
}

// Tile repeats x along each axis: one Concat of copies per repeated axis
// (a constant x is tiled at import).
func convTile(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	d, err := c.constIn(1, "Tile repeats")
	if err != nil {
		return err
	}
	if d == nil || d.Len() != len(x.shape) {
		return fmt.Errorf("repeats must be a constant of %d values", len(x.shape))
	}
	reps := d.Ints()
	v := x
	var todo []int
	copies := 0
	for i, r := range reps {
		if r < 1 {
			return unsupportedf("Tile with repeat %d", r)
		}
		// The output's size is checked before anything is computed or
		// allocated for it (x's dimensions are at most maxElements, so
		// the quotient bounds the product without overflow).
		if r > maxElements/max(1, x.shape[i]) {
			return fmt.Errorf("repeats %v tile %v into more than %d elements", reps, x.shape, maxElements)
		}
		if r > 1 {
			todo = append(todo, i)
			copies += r
		}
	}
	out := slices.Clone(x.shape)
	for i, r := range reps {
		out[i] *= r
	}
	if err := checkShape(out); err != nil {
		return fmt.Errorf("repeats %v: output %w", reps, err)
	}
	if len(todo) == 0 {
		c.alias(0, x)
		return nil
	}
	if x.c == nil && copies > maxTileCopies {
		// Each copy of a run-time value is one Concat input.
		return unsupportedf("Tile repeats %v make %d copies of a run-time value (at most %d are supported)", reps, copies, maxTileCopies)
	}
	for k, ax := range todo {
		shape := append([]int{}, v.shape...)
		shape[ax] *= reps[ax]
		if v.c != nil {
			parts := make([]*graph.Data, reps[ax])
			for i := range parts {
				parts[i] = v.c
			}
			cd := concatData(parts, ax, shape)
			if k == len(todo)-1 {
				return c.setConst(0, cd)
			}
			v = constValue(v.name+"_tiled", cd)
			continue
		}
		src := im.get(v, asIs)
		ins := make([]string, reps[ax])
		for i := range ins {
			ins[i] = src
		}
		if k == len(todo)-1 {
			c.emit1(graph.Concat, ins, &graph.ConcatAttrs{Axis: ax}, v.dt, shape, asIs)
			return nil
		}
		v = c.tmp(graph.Concat, ins, &graph.ConcatAttrs{Axis: ax}, v.dt, shape, asIs, fmt.Sprintf("tile%d", ax))
	}
	return nil
}

func init() {
	converters["Tile"] = convTile
	paramSlots["Tile"] = []int{1}
}
