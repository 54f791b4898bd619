package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Converters of ops that fold away: Identity, Dropout, Constant and the
// shape arithmetic (Shape, Gather, Cast, ConstantOfShape, Range, Expand, ...).

func convIdentity(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	c.alias(0, x)
	return nil
}

func convDropout(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if tm := c.in(2); tm != nil && (tm.c == nil || tm.c.Len() != 1 || tm.c.Float(0) != 0) {
		return unsupportedf("Dropout in training mode")
	}
	c.alias(0, x)
	if c.out(1) != "" {
		m := graph.NewData(graph.Bool, x.shape)
		for i := range m.I {
			m.I[i] = 1
		}
		return c.setConst(1, m)
	}
	return nil
}

func convConstant(im *importer, c *nodeCtx) error {
	for _, a := range c.n.Attribute {
		switch a.Name {
		case "value", "value_float", "value_floats", "value_int", "value_ints":
			if a.Name == "value" && a.T == nil {
				return fmt.Errorf("attribute value holds no tensor")
			}
			// The first value attribute, read as the QOperator rewrite
			// reads a Constant's scale (constantAttrTensor).
			d, err := constantAttrTensor(c.n).ToData()
			if err != nil {
				return err
			}
			return c.setFileConst(d)
		case "sparse_value", "value_string", "value_strings":
			return unsupportedf("attribute %s", a.Name)
		}
	}
	return fmt.Errorf("no value attribute")
}

// setFileConst records output 0 as a constant read from the file (it does
// not count against the folding budget, as initializers do not).
func (c *nodeCtx) setFileConst(d *graph.Data) error {
	c.im.hold(d)
	return c.setConst(0, d)
}

func convShape(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	start, end := int(c.int("start", 0)), int(c.int("end", int64(r)))
	clamp := func(v int) int {
		if v < 0 {
			v += r
		}
		return max(0, min(r, v))
	}
	start, end = clamp(start), clamp(end)
	if end < start {
		end = start
	}
	return c.setConst(0, intsData(x.shape[start:end]))
}

func convSize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	return c.setConst(0, &graph.Data{DType: graph.Int64, Shape: []int{}, I: []int64{int64(graph.NumElements(x.shape))}})
}

func convGather(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	axis, err := normAxis(int(c.int("axis", 0)), len(x.shape))
	if err != nil {
		return err
	}
	if iv := c.in(1); iv != nil && iv.c == nil {
		// Run-time indices (an embedding lookup): the Gather op.
		if !iv.dt.IsInt() {
			return fmt.Errorf("Gather needs integer indices")
		}
		out := append(append(slices.Clone(x.shape[:axis]), iv.shape...), x.shape[axis+1:]...)
		c.emit1(graph.Gather, []string{im.get(x, asIs), im.get(iv, asIs)}, &graph.GatherAttrs{Axis: axis}, x.dt, out, asIs)
		return nil
	}
	idx, err := c.constIn(1, "Gather indices")
	if err != nil {
		return err
	}
	if idx == nil || !idx.DType.IsInt() {
		return fmt.Errorf("Gather needs integer indices")
	}
	if x.c != nil {
		out, err := gatherData(x.c, idx, axis)
		if err != nil {
			return err
		}
		return c.setConst(0, out)
	}
	// Constant indices into a run-time value: up to 64, one Slice per index
	// along axis, a Concat, and a Reshape to the output shape; up to 65,536,
	// a Gather reading a constant table of them.
	if idx.Len() == 0 || idx.Len() > 65536 {
		return unsupportedf("Gather of %d constant indices from a run-time value", idx.Len())
	}
	dim := x.shape[axis]
	out := append(append(slices.Clone(x.shape[:axis]), idx.Shape...), x.shape[axis+1:]...)
	if idx.Len() > 64 {
		// The table is int32, checked and made non-negative here.
		tab := graph.NewData(graph.Int32, idx.Shape)
		for i, k := range idx.I {
			if k < 0 {
				k += int64(dim)
			}
			if k < 0 || k >= int64(dim) {
				return fmt.Errorf("index %d out of range for dimension %d", idx.I[i], dim)
			}
			tab.I[i] = k
		}
		if err := c.im.account(tab); err != nil {
			return err
		}
		_, err := c.step(0, "", graph.Gather, &graph.GatherAttrs{Axis: axis}, x.dt, out, x, constValue(c.out(0)+"_indices", tab))
		return err
	}
	src := im.get(x, asIs)
	var parts []string
	for _, k := range idx.I {
		if k < 0 {
			k += int64(dim)
		}
		if k < 0 || k >= int64(dim) {
			return fmt.Errorf("index %d out of range for dimension %d", k, dim)
		}
		begin, end, stride := make([]int, len(x.shape)), slices.Clone(x.shape), make([]int, len(x.shape))
		for i := range stride {
			stride[i] = 1
		}
		begin[axis], end[axis] = int(k), int(k)+1
		ps := slices.Clone(x.shape)
		ps[axis] = 1
		t := im.newTensor(c.out(0)+"_part", x.dt, ps)
		im.emit(graph.Slice, []string{src}, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, t)
		parts = append(parts, t.Name)
	}
	cat := parts[0]
	if len(parts) > 1 {
		cs := slices.Clone(x.shape)
		cs[axis] = len(parts)
		t := im.newTensor(c.out(0)+"_cat", x.dt, cs)
		im.emit(graph.Concat, parts, &graph.ConcatAttrs{Axis: axis}, t)
		cat = t.Name
	}
	c.emit1(graph.Reshape, []string{cat}, nil, x.dt, out, asIs)
	return nil
}

func convCast(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	to := int32(c.int("to", 0))
	dt, ok := graphDType(to)
	if !ok {
		return unsupportedf("Cast to %s", DTypeName(to))
	}
	if x.dt == dt {
		c.alias(0, x)
		return nil
	}
	if x.c == nil {
		xs := im.get(x, asIs)
		if t := im.g.Tensors[xs]; t != nil && t.Quant != nil {
			return unsupportedf("Cast of a quantized value from %s to %s", x.dt, dt)
		}
		c.emit1(graph.Cast, []string{xs}, &graph.CastAttrs{To: dt}, dt, x.shape, asIs)
		return nil
	}
	return c.setConst(0, graph.CastData(x.c, dt))
}

func convConstantOfShape(im *importer, c *nodeCtx) error {
	s, err := c.constIn(0, "shape")
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no shape input")
	}
	fill := &graph.Data{DType: graph.Float32, Shape: []int{1}, F: []float32{0}}
	if a := c.attr("value"); a != nil && a.T != nil {
		if fill, err = a.T.ToData(); err != nil {
			return err
		}
		if fill.Len() != 1 {
			return fmt.Errorf("value must hold one element")
		}
	}
	out, err := dataOf(fill.DType, s.Ints())
	if err != nil {
		return err
	}
	for i := 0; i < out.Len(); i++ {
		if out.DType == graph.Float32 {
			out.F[i] = fill.F[0]
		} else {
			out.I[i] = fill.I[0]
		}
	}
	return c.setConst(0, out)
}

func convRange(im *importer, c *nodeCtx) error {
	var v [3]*graph.Data
	for i := range v {
		d, err := c.constIn(i, "Range bound")
		if err != nil {
			return err
		}
		if d == nil || d.Len() != 1 {
			return fmt.Errorf("Range input %d must be a scalar", i)
		}
		v[i] = d
	}
	if v[0].DType != graph.Float32 && v[1].DType != graph.Float32 && v[2].DType != graph.Float32 {
		return intRange(c, v[0].DType, v[0].I[0], v[1].I[0], v[2].I[0])
	}
	start, limit, delta := v[0].Float(0), v[1].Float(0), v[2].Float(0)
	for i, b := range []float64{start, limit, delta} {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("Range %s is %v: it must be a finite number", [...]string{"start", "limit", "delta"}[i], b)
		}
	}
	if delta == 0 {
		return fmt.Errorf("Range delta is 0")
	}
	cnt := math.Ceil((limit - start) / delta)
	if !(cnt <= maxElements) {
		return fmt.Errorf("Range from %v to %v by %v has more than %d elements", start, limit, delta, maxElements)
	}
	n := int(max(0, cnt))
	out, err := dataOf(v[0].DType, []int{n})
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		x := start + float64(i)*delta
		if out.DType == graph.Float32 {
			out.F[i] = float32(x)
		} else {
			out.I[i] = int64(x)
		}
	}
	return c.setConst(0, out)
}

// intRange is an integer Range in integer arithmetic: in float64 an int64
// start near INT64_MAX rounded to 2^63, whose conversion back is the
// platform's, and bounds beyond 2^53 lost their low bits. The count,
// ceil((limit − start) / delta), is taken on the distance as a uint64 (it
// fits whatever the bounds); every element lies between start and limit,
// so it fits the type, and start + i·delta, wrapping as Go's int64 does,
// is exact.
func intRange(c *nodeCtx, dt graph.DType, start, limit, delta int64) error {
	if delta == 0 {
		return fmt.Errorf("Range delta is 0")
	}
	var cnt uint64
	switch {
	case delta > 0 && limit > start:
		d, step := uint64(limit)-uint64(start), uint64(delta)
		cnt = d/step + min(d%step, 1)
	case delta < 0 && limit < start:
		d, step := uint64(start)-uint64(limit), -uint64(delta)
		cnt = d/step + min(d%step, 1)
	}
	if cnt > maxElements {
		return fmt.Errorf("Range from %v to %v by %v has more than %d elements", start, limit, delta, maxElements)
	}
	n := int(cnt)
	out, err := dataOf(dt, []int{n})
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		out.I[i] = start + int64(i)*delta
	}
	return c.setConst(0, out)
}

func convExpand(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	s, err := c.constIn(1, "Expand shape")
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no shape input")
	}
	if x.c == nil {
		// x + zeros(shape) broadcasts exactly like Expand (plain integers
		// too); a bool x is x OR false. The zeros have 1 wherever x already
		// has the output's size (an attention mask [1,1,1,128] expanded to
		// [1,8,128,128] needs zeros [1,8,128,1], not 131,072 of them).
		if t := im.g.Tensors[x.tensors[x.primary]]; t != nil && t.Quant != nil && len(t.Quant.Scale) > 0 {
			return unsupportedf("Expand of a quantized run-time %s value", x.dt)
		}
		zs := slices.Clone(s.Ints())
		for j := range zs {
			if k := len(x.shape) - len(zs) + j; k >= 0 && x.shape[k] == zs[j] || zs[j] == 1 {
				zs[j] = 1
			} else if k >= 0 && x.shape[k] != 1 && zs[j] != x.shape[k] {
				return fmt.Errorf("shape %v does not broadcast with %v", s.Ints(), x.shape)
			}
		}
		zeros, err := dataOf(x.dt, zs)
		if err != nil {
			return err
		}
		z := constValue(c.out(0)+"_zeros", zeros)
		if x.dt != graph.Bool {
			_, err = c.binary(graph.Add, x, z, true)
			return err
		}
		shape, err := broadcastShapes(x.shape, z.shape)
		if err != nil {
			return err
		}
		l := pickLayout(len(shape), x, z)
		c.emit1(graph.Logic, []string{im.operand(x, l), im.operand(z, l)}, &graph.LogicAttrs{Kind: "Or"}, graph.Bool, shape, l)
		return nil
	}
	out, err := expandData(x.c, s.Ints())
	if err != nil {
		return err
	}
	return c.setConst(0, out)
}
