package onnx

import (
	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["LayerNormalization"] = convLayerNorm
	paramSlots["LayerNormalization"] = []int{1, 2}
	converters["Trilu"] = convTrilu
	paramSlots["Trilu"] = []int{1}
}

// emitOut emits a one-output canonical node for output i and records it.
func (c *nodeCtx) emitOut(i int, op graph.Op, ins []string, attrs any, dt graph.DType, shape []int, l layout) {
	t, v := c.newOut(i, dt, shape, l)
	v.prod = c.im.emit(op, ins, attrs, t)
}

// LayerNormalization over the axes from axis on, in ONNX's own layout:
// d = x - mean(x); y = d * rsqrt(mean(d²) + epsilon) * scale + bias. The
// optional outputs Mean and InvStdDev are the two statistics.
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
	red := append([]int{}, x.shape...)
	for i := axis; i < r; i++ {
		axes = append(axes, i)
		red[i] = 1
	}
	bin := &graph.BinaryAttrs{}
	f := graph.Float32
	xs := im.get(x, asIs)
	mean := c.tmp(graph.Mean, []string{xs}, &graph.MeanAttrs{Axes: axes, KeepDims: true}, f, red, asIs, "mean")
	d := c.tmp(graph.Sub, []string{xs, im.get(mean, asIs)}, bin, f, x.shape, asIs, "centered")
	ds := im.get(d, asIs)
	sq := c.tmp(graph.Mul, []string{ds, ds}, bin, f, x.shape, asIs, "squared")
	v := c.tmp(graph.Mean, []string{im.get(sq, asIs)}, &graph.MeanAttrs{Axes: axes, KeepDims: true}, f, red, asIs, "variance")
	eps := im.g.AddConst(im.g.UniqueName(c.out(0)+"_epsilon"), scalarF(c.float("epsilon", 1e-5))).Name
	ve := c.tmp(graph.Add, []string{im.get(v, asIs), eps}, bin, f, red, asIs, "variance_eps")
	inv := c.tmp(graph.Math, []string{im.get(ve, asIs)}, &graph.MathAttrs{Fn: graph.MathRsqrt}, f, red, asIs, "inv_std")
	n := c.tmp(graph.Mul, []string{ds, im.get(inv, asIs)}, bin, f, x.shape, asIs, "normalized")
	if c.nIn() > 2 && c.n.Input[2] != "" {
		b, err := c.need(2)
		if err != nil {
			return err
		}
		n = c.tmp(graph.Mul, []string{im.get(n, asIs), im.operand(scale, asIs)}, bin, f, x.shape, asIs, "scaled")
		c.emit1(graph.Add, []string{im.get(n, asIs), im.operand(b, asIs)}, bin, f, x.shape, asIs)
	} else {
		c.emit1(graph.Mul, []string{im.get(n, asIs), im.operand(scale, asIs)}, bin, f, x.shape, asIs)
	}
	if c.out(1) != "" {
		c.emitOut(1, graph.Reshape, []string{im.get(mean, asIs)}, nil, f, red, asIs)
	}
	if c.out(2) != "" {
		c.emitOut(2, graph.Reshape, []string{im.get(inv, asIs)}, nil, f, red, asIs)
	}
	return nil
}

// Trilu keeps the upper (or lower) triangle of the last two dimensions from
// diagonal k on: x times a constant 0/1 mask, exact for finite values.
func convTrilu(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	if r < 2 {
		return unsupportedf("Trilu of rank %d", r)
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
	mask := graph.NewData(x.dt, []int{rows, cols})
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			keep := int64(j-i) >= k
			if !upper {
				keep = int64(j-i) <= k
			}
			if keep {
				if x.dt == graph.Float32 {
					mask.F[i*cols+j] = 1
				} else {
					mask.I[i*cols+j] = 1
				}
			}
		}
	}
	if x.dt != graph.Float32 && (x.dt == graph.Int8 || x.dt == graph.UInt8) {
		return unsupportedf("Trilu on %s", x.dt)
	}
	_, err = c.binaryAs("Mul", graph.Mul, x, constValue(c.out(0)+"_mask", mask))
	return err
}
