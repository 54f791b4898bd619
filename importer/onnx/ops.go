package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

type converter func(im *importer, c *nodeCtx) error

var converters = map[string]converter{
	"Identity":           convIdentity,
	"Dropout":            convDropout,
	"Constant":           convConstant,
	"Shape":              convShape,
	"Size":               convSize,
	"Gather":             convGather,
	"Cast":               convCast,
	"ConstantOfShape":    convConstantOfShape,
	"Range":              convRange,
	"Expand":             convExpand,
	"Equal":              convCompare,
	"Less":               convCompare,
	"Greater":            convCompare,
	"Add":                convBinary(graph.Add),
	"Sub":                convBinary(graph.Sub),
	"Mul":                convBinary(graph.Mul),
	"Div":                convBinary(graph.Div),
	"Max":                convBinary(graph.Maximum),
	"Min":                convBinary(graph.Minimum),
	"Sum":                convBinary(graph.Add),
	"Relu":               convUnary(graph.Relu),
	"Sigmoid":            convUnary(graph.Sigmoid),
	"Tanh":               convUnary(graph.Tanh),
	"HardSwish":          convUnary(graph.HardSwish),
	"LeakyRelu":          convLeakyRelu,
	"HardSigmoid":        convHardSigmoid,
	"Clip":               convClip,
	"Softmax":            convSoftmax,
	"Conv":               lift1D(convConv, 1),
	"Gemm":               convGemm,
	"MatMul":             convMatMul,
	"MaxPool":            lift1D(convPool(graph.MaxPool2D), 0),
	"AveragePool":        lift1D(convPool(graph.AvgPool2D), 0),
	"GlobalAveragePool":  lift1D(convGlobalPool(graph.Mean), 0),
	"GlobalMaxPool":      lift1D(convGlobalPool(graph.MaxPool2D), 0),
	"ReduceMean":         convReduceMean,
	"BatchNormalization": convBatchNorm,
	"Flatten":            convReshapeLike,
	"Reshape":            convReshapeLike,
	"Squeeze":            convReshapeLike,
	"Unsqueeze":          convReshapeLike,
	"Transpose":          convTranspose,
	"Concat":             convConcat,
	"Pad":                convPad,
	"Slice":              convSlice,
	"Split":              convSplit,
	"Resize":             convResize,
	"QuantizeLinear":     convQuantize,
	"DequantizeLinear":   convDequantize,
	"QLinearConv":        lift1D(convQLinearConv, 3),
	"QLinearMatMul":      convQLinearMatMul,
	"ConvInteger":        lift1D(convConvInteger, 1),
	"MatMulInteger":      convMatMulInteger,
}

// paramSlots lists, per op, the inputs that must be compile-time constants.
var paramSlots = map[string][]int{
	"BatchNormalization": {1, 2, 3, 4},
	"QuantizeLinear":     {1, 2},
	"DequantizeLinear":   {1, 2},
	"QLinearConv":        {1, 2, 4, 5, 6, 7},
	"QLinearMatMul":      {1, 2, 4, 5, 6, 7},
	"ConvInteger":        {2, 3},
	"MatMulInteger":      {2, 3},
	"Reshape":            {1},
	"Pad":                {1, 2, 3},
	"Slice":              {1, 2, 3, 4},
	"Resize":             {1, 2, 3},
	"Clip":               {1, 2},
	"Squeeze":            {1},
	"Unsqueeze":          {1},
	"ReduceMean":         {1},
	"Split":              {1},
	"Expand":             {1},
	"ConstantOfShape":    {0},
	"Range":              {0, 1, 2},
	"Gather":             {1},
}

// ParamInputs lists the graph inputs of m that feed inputs the importer needs
// as constants (weights of BatchNormalization, quantization parameters,
// shapes, pads, ...). The ONNX backend tests feed such values as inputs;
// bind them with Options.Consts.
func ParamInputs(m *Model) []string {
	if m.Graph == nil {
		return nil
	}
	isInput := map[string]bool{}
	for _, vi := range m.Graph.Input {
		isInput[vi.Name] = true
	}
	isInit := map[string]bool{}
	for _, t := range m.Graph.Initializer {
		delete(isInput, t.Name)
		isInit[t.Name] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		for _, s := range paramSlots[n.OpType] {
			if n.OpType == "Gather" && len(n.Input) > 0 && isInit[n.Input[0]] {
				continue // a table lookup (embedding): the indices are the data
			}
			if s < len(n.Input) && isInput[n.Input[s]] && !seen[n.Input[s]] {
				seen[n.Input[s]] = true
				out = append(out, n.Input[s])
			}
		}
	}
	return out
}

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
		case "value":
			if a.T == nil {
				return fmt.Errorf("attribute value holds no tensor")
			}
			d, err := a.T.ToData()
			if err != nil {
				return err
			}
			return c.setConst(0, d)
		case "value_float":
			return c.setConst(0, scalarF(a.F))
		case "value_floats":
			return c.setConst(0, &graph.Data{DType: graph.Float32, Shape: []int{len(a.Floats)}, F: slices.Clone(a.Floats)})
		case "value_int":
			return c.setConst(0, &graph.Data{DType: graph.Int64, Shape: []int{}, I: []int64{a.I}})
		case "value_ints":
			return c.setConst(0, &graph.Data{DType: graph.Int64, Shape: []int{len(a.Ints)}, I: slices.Clone(a.Ints)})
		case "sparse_value", "value_string", "value_strings":
			return unsupportedf("attribute %s", a.Name)
		}
	}
	return fmt.Errorf("no value attribute")
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
	idx, err := c.constIn(1, "Gather indices")
	if err != nil {
		return err
	}
	if idx == nil || !idx.DType.IsInt() {
		return fmt.Errorf("Gather needs integer indices")
	}
	axis, err := normAxis(int(c.int("axis", 0)), len(x.shape))
	if err != nil {
		return err
	}
	if x.c != nil {
		out, err := gatherData(x.c, idx, axis)
		if err != nil {
			return err
		}
		return c.setConst(0, out)
	}
	// Constant indices into a run-time value: one Slice per index along
	// axis, a Concat, and a Reshape to the output shape.
	if idx.Len() == 0 || idx.Len() > 64 {
		return unsupportedf("Gather of %d constant indices from a run-time value", idx.Len())
	}
	dim := x.shape[axis]
	out := append(append(slices.Clone(x.shape[:axis]), idx.Shape...), x.shape[axis+1:]...)
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
		return unsupportedf("Cast of a run-time value from %s to %s", x.dt, dt)
	}
	return c.setConst(0, castData(x.c, dt))
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
	start, limit, delta := v[0].Float(0), v[1].Float(0), v[2].Float(0)
	if delta == 0 {
		return fmt.Errorf("Range delta is 0")
	}
	n := int(max(0, math.Ceil((limit-start)/delta)))
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
		// x + zeros(shape) broadcasts exactly like Expand.
		if x.dt != graph.Float32 {
			return unsupportedf("Expand of a run-time %s value", x.dt)
		}
		zeros, err := dataOf(graph.Float32, s.Ints())
		if err != nil {
			return err
		}
		_, err = c.binary(graph.Add, x, constValue(c.out(0)+"_zeros", zeros), true)
		return err
	}
	out, err := expandData(x.c, s.Ints())
	if err != nil {
		return err
	}
	return c.setConst(0, out)
}

func convCompare(im *importer, c *nodeCtx) error {
	a, b := c.in(0), c.in(1)
	if a == nil || b == nil || a.c == nil || b.c == nil || !a.dt.IsInt() {
		return unsupportedf("%s of run-time or float values", c.n.OpType)
	}
	out, err := binaryData(c.n.OpType, a.c, b.c)
	if err != nil {
		return err
	}
	out.DType = graph.Bool
	return c.setConst(0, out)
}

// pickLayout chooses the layout of an element-wise op: NHWC when the output
// is rank 4 and some rank-4 run-time input is held in NHWC.
func pickLayout(outRank int, vs ...*value) layout {
	if outRank != 4 {
		return asIs
	}
	l := asIs
	for _, v := range vs {
		if v == nil || v.c != nil {
			continue
		}
		if len(v.shape) != 4 {
			return asIs
		}
		if v.primary == nhwc {
			l = nhwc
		}
	}
	return l
}

// operand returns v's graph tensor for an element-wise op in layout l;
// constants of lower rank are right-aligned to rank 4 before permuting.
func (im *importer) operand(v *value, l layout) string {
	if l == asIs || v.c == nil || len(v.shape) == 4 {
		return im.get(v, l)
	}
	if graph.NumElements(v.shape) == 1 {
		return im.get(v, asIs)
	}
	s := slices.Clone(v.shape)
	for len(s) < 4 {
		s = append([]int{1}, s...)
	}
	d := transposeData(reshapeData(v.c, s), toNHWC)
	return im.g.AddConst(im.g.UniqueName(v.name+"_nhwc"), d).Name
}

func convBinary(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		if c.nIn() == 0 {
			return fmt.Errorf("no inputs")
		}
		acc, err := c.need(0)
		if err != nil {
			return err
		}
		if c.nIn() == 1 {
			c.alias(0, acc)
			return nil
		}
		for i := 1; i < c.nIn(); i++ {
			b, err := c.need(i)
			if err != nil {
				return err
			}
			if b, err = c.legacyBroadcast(acc, b); err != nil {
				return err
			}
			if acc, err = c.binary(op, acc, b, i == c.nIn()-1); err != nil {
				return err
			}
		}
		return nil
	}
}

// legacyBroadcast aligns b to axis of a for opsets before 7, whose
// broadcast=1 matched B against A starting at axis (default: the trailing dims).
func (c *nodeCtx) legacyBroadcast(a, b *value) (*value, error) {
	if c.im.opset >= 7 || c.int("broadcast", 0) == 0 || c.attr("axis") == nil {
		return b, nil
	}
	axis, err := normAxis(int(c.int("axis", 0)), len(a.shape))
	if err != nil {
		return nil, err
	}
	pad := len(a.shape) - axis - len(b.shape)
	if pad < 0 {
		return nil, fmt.Errorf("B of shape %v does not fit A %v at axis %d", b.shape, a.shape, axis)
	}
	if pad == 0 {
		return b, nil
	}
	shape := slices.Clone(b.shape)
	for ; pad > 0; pad-- {
		shape = append(shape, 1)
	}
	if b.c != nil {
		d := reshapeData(b.c, shape)
		return &value{name: b.name + "_bcast", dt: b.dt, shape: shape, c: d}, nil
	}
	t := c.im.newTensor(b.name+"_bcast", b.dt, shape)
	c.im.emit(graph.Reshape, []string{c.im.get(b, asIs)}, nil, t)
	v := &value{name: t.Name, dt: b.dt, shape: shape}
	v.tensors[asIs] = t.Name
	return v, nil
}

func (c *nodeCtx) binary(op graph.Op, a, b *value, final bool) (*value, error) {
	if a.dt != b.dt {
		return nil, fmt.Errorf("inputs are %s and %s", a.dt, b.dt)
	}
	shape, err := broadcastShapes(a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	if a.c != nil && b.c != nil {
		d, err := binaryData(c.n.OpType, a.c, b.c)
		if err != nil {
			return nil, err
		}
		if final {
			return nil, c.setConst(0, d)
		}
		return &value{name: c.out(0) + "_part", dt: d.DType, shape: d.Shape, c: d}, nil
	}
	l := pickLayout(len(shape), a, b)
	ins := []string{c.im.operand(a, l), c.im.operand(b, l)}
	if final {
		c.emit1(op, ins, &graph.BinaryAttrs{}, a.dt, shape, l)
		return nil, nil
	}
	ts := shape
	if l == nhwc {
		ts = permuteShape(shape, toNHWC)
	}
	t := c.im.newTensor(c.out(0)+"_part", a.dt, ts)
	v := &value{name: t.Name, dt: a.dt, shape: shape, primary: l}
	v.tensors[l] = t.Name
	v.prod = c.im.emit(op, ins, &graph.BinaryAttrs{}, t)
	return v, nil
}

// actLayout is the layout a layout-agnostic unary op keeps.
func actLayout(x *value) layout {
	if x.c != nil {
		return asIs
	}
	return x.primary
}

func convUnaryWith(op graph.Op, attrs func(c *nodeCtx) (any, error)) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		var a any
		if attrs != nil {
			if a, err = attrs(c); err != nil {
				return err
			}
		}
		l := actLayout(x)
		c.emit1(op, []string{im.get(x, l)}, a, x.dt, x.shape, l)
		return nil
	}
}

func convUnary(op graph.Op) converter { return convUnaryWith(op, nil) }

var convLeakyRelu = convUnaryWith(graph.LeakyRelu, func(c *nodeCtx) (any, error) {
	return &graph.LeakyReluAttrs{Alpha: c.float("alpha", 0.01)}, nil
})

var convHardSigmoid = convUnaryWith(graph.HardSigmoid, func(c *nodeCtx) (any, error) {
	return &graph.HardSigmoidAttrs{Alpha: c.float("alpha", 0.2), Beta: c.float("beta", 0.5)}, nil
})

var convClip = convUnaryWith(graph.Clip, func(c *nodeCtx) (any, error) {
	a := &graph.ClipAttrs{Min: float32(math.Inf(-1)), Max: float32(math.Inf(1))}
	if x := c.in(0); x != nil && x.dt != graph.Float32 {
		lo, hi := x.dt.Range()
		a.Min, a.Max = float32(lo), float32(hi)
	}
	if c.im.opset < 11 {
		a.Min = c.float("min", a.Min)
		a.Max = c.float("max", a.Max)
		return a, nil
	}
	for i, p := range []*float32{&a.Min, &a.Max} {
		d, err := c.constIn(i+1, "Clip bound")
		if err != nil {
			return nil, err
		}
		if d != nil {
			if d.Len() != 1 {
				return nil, fmt.Errorf("Clip bound must be a scalar")
			}
			*p = float32(d.Float(0))
		}
	}
	return a, nil
})

func convSoftmax(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	def := int64(1)
	if im.opset >= 13 {
		def = -1
	}
	axis, err := normAxis(int(c.int("axis", def)), r)
	if err != nil {
		return err
	}
	if im.opset < 13 && axis != r-1 {
		// Softmax over the flattened trailing dims [prod(shape[:axis]), prod(shape[axis:])].
		outer := graph.NumElements(x.shape[:axis])
		flat := im.newTensor(x.name+"_2d", x.dt, []int{outer, graph.NumElements(x.shape[axis:])})
		im.emit(graph.Reshape, []string{im.get(x, asIs)}, nil, flat)
		sm := im.newTensor(c.out(0)+"_2d", x.dt, flat.Shape)
		im.emit(graph.Softmax, []string{flat.Name}, &graph.SoftmaxAttrs{Axis: 1, Beta: 1}, sm)
		c.emit1(graph.Reshape, []string{sm.Name}, nil, x.dt, x.shape, asIs)
		return nil
	}
	l := actLayout(x)
	if l == nhwc {
		axis = nhwcAxis(axis)
	}
	c.emit1(graph.Softmax, []string{im.get(x, l)}, &graph.SoftmaxAttrs{Axis: axis, Beta: 1}, x.dt, x.shape, l)
	return nil
}

// spatial holds the resolved 2-D window geometry of a conv or pool.
type spatial struct {
	kernel, stride, dil [2]int
	pad                 graph.Padding
	out                 [2]int
}

func (c *nodeCtx) window(in [2]int, kernel [2]int, ceil bool) (*spatial, error) {
	s := &spatial{kernel: kernel, stride: [2]int{1, 1}, dil: [2]int{1, 1}}
	if v, ok := c.ints("strides"); ok {
		if len(v) != 2 {
			return nil, fmt.Errorf("strides %v: want 2 values", v)
		}
		s.stride = [2]int{v[0], v[1]}
	}
	if v, ok := c.ints("dilations"); ok {
		if len(v) != 2 {
			return nil, fmt.Errorf("dilations %v: want 2 values", v)
		}
		s.dil = [2]int{v[0], v[1]}
	}
	for i := 0; i < 2; i++ {
		if s.stride[i] < 1 || s.dil[i] < 1 || kernel[i] < 1 {
			return nil, fmt.Errorf("kernel %v, strides %v, dilations %v must be positive", kernel, s.stride, s.dil)
		}
	}
	var pb, pe [2]int
	if v, ok := c.ints("pads"); ok {
		if len(v) != 4 {
			return nil, fmt.Errorf("pads %v: want 4 values", v)
		}
		pb, pe = [2]int{v[0], v[1]}, [2]int{v[2], v[3]}
		for _, p := range v {
			if p < 0 {
				return nil, unsupportedf("negative pads %v", v)
			}
		}
	}
	ap := c.str("auto_pad", "NOTSET")
	for i := 0; i < 2; i++ {
		ek := (kernel[i]-1)*s.dil[i] + 1
		switch ap {
		case "NOTSET", "":
		case "VALID":
			pb[i], pe[i] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			o := (in[i] + s.stride[i] - 1) / s.stride[i]
			total := max(0, (o-1)*s.stride[i]+ek-in[i])
			if ap == "SAME_UPPER" {
				pb[i] = total / 2
			} else {
				pb[i] = total - total/2
			}
			pe[i] = total - pb[i]
		default:
			return nil, fmt.Errorf("auto_pad %q", ap)
		}
		span := in[i] + pb[i] + pe[i] - ek
		if span < 0 {
			return nil, fmt.Errorf("kernel %d (dilated %d) larger than padded input %d", kernel[i], ek, in[i]+pb[i]+pe[i])
		}
		o := span/s.stride[i] + 1
		if ceil && ap != "SAME_UPPER" && ap != "SAME_LOWER" {
			o = (span+s.stride[i]-1)/s.stride[i] + 1
			if (o-1)*s.stride[i] >= in[i]+pb[i] {
				o--
			}
			if extra := (o-1)*s.stride[i] + ek - (in[i] + pb[i] + pe[i]); extra > 0 {
				pe[i] += extra
			}
		}
		s.out[i] = o
	}
	s.pad = graph.Padding{Top: pb[0], Left: pb[1], Bottom: pe[0], Right: pe[1]}
	return s, nil
}

func need4(x *value, what string) error {
	switch len(x.shape) {
	case 4:
		return nil
	case 3:
		return unsupportedf("1-D %s (input rank 3); only 2-D is supported", what)
	case 5:
		return unsupportedf("3-D %s (input rank 5); only 2-D is supported", what)
	}
	return unsupportedf("%s of a rank-%d input", what, len(x.shape))
}

// convGeometry resolves Conv-like attributes for x [N,C,H,W] and w [M,C/G,KH,KW].
func (c *nodeCtx) convGeometry(x, w *value) (*spatial, int, error) {
	if err := need4(x, "convolution"); err != nil {
		return nil, 0, err
	}
	if len(w.shape) != 4 {
		return nil, 0, fmt.Errorf("weights of shape %v", w.shape)
	}
	if k, ok := c.ints("kernel_shape"); ok && (len(k) != 2 || k[0] != w.shape[2] || k[1] != w.shape[3]) {
		return nil, 0, fmt.Errorf("kernel_shape %v disagrees with weights %v", k, w.shape)
	}
	group := int(c.int("group", 1))
	if group < 1 || x.shape[1]%group != 0 || w.shape[0]%group != 0 || x.shape[1]/group != w.shape[1] {
		return nil, 0, fmt.Errorf("group %d does not fit input %v and weights %v", group, x.shape, w.shape)
	}
	s, err := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{w.shape[2], w.shape[3]}, false)
	return s, group, err
}

func convConv(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("Conv on %s", x.dt)
	}
	s, group, err := c.convGeometry(x, w)
	if err != nil {
		return err
	}
	ins := []string{im.get(x, nhwc), im.get(w, nhwc), ""}
	if b := c.in(2); b != nil {
		if len(b.shape) != 1 || b.shape[0] != w.shape[0] {
			return fmt.Errorf("bias of shape %v for %d output channels", b.shape, w.shape[0])
		}
		ins[2] = im.get(b, asIs)
	}
	attrs := &graph.Conv2DAttrs{Stride: s.stride, Dilation: s.dil, Pad: s.pad, Group: group}
	c.emit1(graph.Conv2D, ins, attrs, x.dt, []int{x.shape[0], w.shape[0], s.out[0], s.out[1]}, nhwc)
	return nil
}

// constMatrixT returns the [N,K] transpose of a constant [K,N] matrix.
func constMatrixT(d *graph.Data) *graph.Data { return transposeData(d, []int{1, 0}) }

func convGemm(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if len(a.shape) != 2 || len(b.shape) != 2 {
		return fmt.Errorf("Gemm of shapes %v and %v: want matrices", a.shape, b.shape)
	}
	if a.dt != graph.Float32 || b.dt != graph.Float32 {
		return unsupportedf("Gemm on %s", a.dt)
	}
	alpha, beta := c.float("alpha", 1), c.float("beta", 1)
	transA, transB := c.int("transA", 0) != 0, c.int("transB", 0) != 0
	m, k := a.shape[0], a.shape[1]
	if transA {
		m, k = k, m
	}
	kb, n := b.shape[0], b.shape[1]
	if transB {
		kb, n = n, kb
	}
	if kb != k {
		return fmt.Errorf("Gemm inner dimensions %d and %d differ", k, kb)
	}
	cv := c.in(2)
	if cv != nil {
		if _, err := broadcastShapes([]int{m, n}, cv.shape); err != nil || len(cv.shape) > 2 {
			return fmt.Errorf("C of shape %v does not broadcast to [%d,%d]", cv.shape, m, n)
		}
	}
	out := []int{m, n}
	if b.c != nil {
		w := b.c
		if !transB {
			w = constMatrixT(w)
		}
		if alpha != 1 {
			w = w.Clone()
			for i := range w.F {
				w.F[i] *= alpha
			}
		}
		ain := im.get(a, asIs)
		if transA {
			ain = im.transpose(ain, []int{1, 0}, a.name+"_T")
		}
		ins := []string{ain, im.g.AddConst(im.g.UniqueName(b.name+"_fc"), w).Name, ""}
		biasFolded := false
		if cv != nil && cv.c != nil && beta != 0 && (graph.NumElements(cv.shape) == n || graph.NumElements(cv.shape) == 1) && (len(cv.shape) < 2 || cv.shape[0] == 1) {
			bias := graph.NewData(graph.Float32, []int{n})
			for j := 0; j < n; j++ {
				bias.F[j] = beta * cv.c.F[min(j, cv.c.Len()-1)]
			}
			ins[2] = im.g.AddConst(im.g.UniqueName(cv.name+"_bias"), bias).Name
			biasFolded = true
		}
		if cv == nil || beta == 0 || biasFolded {
			c.emit1(graph.FullyConnected, ins, &graph.FullyConnectedAttrs{}, graph.Float32, out, asIs)
			return nil
		}
		t := im.newTensor(c.out(0)+"_ab", graph.Float32, out)
		im.emit(graph.FullyConnected, ins, &graph.FullyConnectedAttrs{}, t)
		return c.gemmAddC(t.Name, cv, beta, out)
	}
	t := im.newTensor(c.out(0)+"_ab", graph.Float32, out)
	im.emit(graph.BatchMatMul, []string{im.get(a, asIs), im.get(b, asIs)}, &graph.BatchMatMulAttrs{AdjX: transA, AdjY: transB}, t)
	cur := t.Name
	if alpha != 1 {
		if cv == nil || beta == 0 {
			c.emit1(graph.Mul, []string{cur, im.g.AddConst(im.g.UniqueName(c.out(0)+"_alpha"), scalarF(alpha)).Name}, &graph.BinaryAttrs{}, graph.Float32, out, asIs)
			return nil
		}
		s := im.newTensor(c.out(0)+"_alpha_ab", graph.Float32, out)
		im.emit(graph.Mul, []string{cur, im.g.AddConst(im.g.UniqueName(c.out(0)+"_alpha"), scalarF(alpha)).Name}, &graph.BinaryAttrs{}, s)
		cur = s.Name
	}
	if cv == nil || beta == 0 {
		c.emit1(graph.Reshape, []string{cur}, nil, graph.Float32, out, asIs)
		return nil
	}
	return c.gemmAddC(cur, cv, beta, out)
}

// gemmAddC adds beta*C to the Gemm product held in tensor ab.
func (c *nodeCtx) gemmAddC(ab string, cv *value, beta float32, out []int) error {
	im := c.im
	var cn string
	switch {
	case cv.c != nil:
		d := cv.c.Clone()
		for i := range d.F {
			d.F[i] *= beta
		}
		cn = im.g.AddConst(im.g.UniqueName(cv.name+"_beta"), d).Name
	case beta == 1:
		cn = im.get(cv, asIs)
	default:
		t := im.newTensor(cv.name+"_beta", graph.Float32, cv.shape)
		im.emit(graph.Mul, []string{im.get(cv, asIs), im.g.AddConst(im.g.UniqueName(cv.name+"_betac"), scalarF(beta)).Name}, &graph.BinaryAttrs{}, t)
		cn = t.Name
	}
	c.emit1(graph.Add, []string{ab, cn}, &graph.BinaryAttrs{}, graph.Float32, out, asIs)
	return nil
}

// matmulShape is numpy matmul's output shape for ranks >= 2.
func matmulShape(a, b []int) ([]int, error) {
	if len(a) < 2 || len(b) < 2 {
		return nil, unsupportedf("MatMul of a 1-D operand (shapes %v, %v)", a, b)
	}
	if a[len(a)-1] != b[len(b)-2] {
		return nil, fmt.Errorf("MatMul of shapes %v and %v: inner dimensions differ", a, b)
	}
	batch, err := broadcastShapes(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, err
	}
	return append(batch, a[len(a)-2], b[len(b)-1]), nil
}

func convMatMul(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if a.dt != graph.Float32 || b.dt != graph.Float32 {
		return unsupportedf("MatMul on %s", a.dt)
	}
	out, err := matmulShape(a.shape, b.shape)
	if err != nil {
		return err
	}
	if b.c != nil && len(b.shape) == 2 {
		w := im.g.AddConst(im.g.UniqueName(b.name+"_fc"), constMatrixT(b.c))
		c.emit1(graph.FullyConnected, []string{im.get(a, asIs), w.Name, ""}, &graph.FullyConnectedAttrs{KeepDims: true}, graph.Float32, out, asIs)
		return nil
	}
	c.emit1(graph.BatchMatMul, []string{im.get(a, asIs), im.get(b, asIs)}, &graph.BatchMatMulAttrs{}, graph.Float32, out, asIs)
	return nil
}

func convPool(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if err := need4(x, "pooling"); err != nil {
			return err
		}
		if c.out(1) != "" {
			return unsupportedf("MaxPool Indices output")
		}
		k, ok := c.ints("kernel_shape")
		if !ok || len(k) != 2 {
			return fmt.Errorf("kernel_shape %v: want 2 values", k)
		}
		ceil := c.int("ceil_mode", 0) != 0
		s, err := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{k[0], k[1]}, ceil)
		if err != nil {
			return err
		}
		attrs := &graph.PoolAttrs{Kernel: s.kernel, Stride: s.stride, Dilation: s.dil, Pad: s.pad}
		if op == graph.AvgPool2D {
			attrs.CountIncludePad = c.int("count_include_pad", 0) != 0
			if ceil && attrs.CountIncludePad {
				if ext, _ := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{k[0], k[1]}, false); ext.out != s.out {
					return unsupportedf("ceil_mode with count_include_pad")
				}
			}
		}
		if x.dt != graph.Float32 && op == graph.AvgPool2D {
			return unsupportedf("AveragePool on %s", x.dt)
		}
		c.emit1(op, []string{im.get(x, nhwc)}, attrs, x.dt, []int{x.shape[0], x.shape[1], s.out[0], s.out[1]}, nhwc)
		return nil
	}
}

func convGlobalPool(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if err := need4(x, "global pooling"); err != nil {
			return err
		}
		var attrs any = &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}
		if op == graph.MaxPool2D {
			attrs = &graph.PoolAttrs{Kernel: [2]int{x.shape[2], x.shape[3]}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
		}
		c.emit1(op, []string{im.get(x, nhwc)}, attrs, x.dt, []int{x.shape[0], x.shape[1], 1, 1}, nhwc)
		return nil
	}
}

func convReduceMean(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	axes, ok := c.ints("axes")
	if im.opset >= 18 {
		d, err := c.constIn(1, "ReduceMean axes")
		if err != nil {
			return err
		}
		ok = d != nil && d.Len() > 0
		if ok {
			axes = d.Ints()
		}
	}
	if !ok || len(axes) == 0 {
		if c.int("noop_with_empty_axes", 0) != 0 {
			c.alias(0, x)
			return nil
		}
		axes = nil
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	red := make([]bool, r)
	for _, a := range axes {
		n, err := normAxis(a, r)
		if err != nil {
			return err
		}
		red[n] = true
	}
	keep := c.int("keepdims", 1) != 0
	var out []int
	for i, d := range x.shape {
		if red[i] {
			if keep {
				out = append(out, 1)
			}
		} else {
			out = append(out, d)
		}
	}
	l := actLayout(x)
	outL := l
	if l == nhwc && !keep {
		// The kept NHWC dims must stay in ONNX order for the output to be as-is.
		last := -1
		for _, p := range toNHWC {
			if red[p] {
				continue
			}
			if p < last {
				l = asIs
			}
			last = p
		}
		outL = asIs
	}
	var gaxes []int
	for i := 0; i < r; i++ {
		if red[i] {
			if l == nhwc {
				gaxes = append(gaxes, nhwcAxis(i))
			} else {
				gaxes = append(gaxes, i)
			}
		}
	}
	slices.Sort(gaxes)
	if x.dt != graph.Float32 {
		return unsupportedf("ReduceMean on %s", x.dt)
	}
	c.emit1(graph.Mean, []string{im.get(x, l)}, &graph.MeanAttrs{Axes: gaxes, KeepDims: keep}, x.dt, out, outL)
	return nil
}

func convBatchNorm(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if len(c.n.Output) > 1 || c.int("training_mode", 0) != 0 {
		return unsupportedf("BatchNormalization in training mode")
	}
	var p [4]*graph.Data
	for i := range p {
		d, err := c.constIn(i+1, "BatchNormalization parameter")
		if err != nil {
			return err
		}
		if d == nil || d.DType != graph.Float32 {
			return fmt.Errorf("parameter %d is missing or not float", i+1)
		}
		p[i] = d
	}
	if len(x.shape) < 2 || x.dt != graph.Float32 {
		return fmt.Errorf("input of shape %v", x.shape)
	}
	ch := x.shape[1]
	for i, d := range p {
		if d.Len() != ch {
			return fmt.Errorf("parameter %d has %d values for %d channels", i+1, d.Len(), ch)
		}
	}
	eps := float64(c.float("epsilon", 1e-5))
	scale, shift := make([]float32, ch), make([]float32, ch)
	for i := 0; i < ch; i++ {
		s := float64(p[0].F[i]) / math.Sqrt(float64(p[3].F[i])+eps)
		scale[i] = float32(s)
		shift[i] = float32(float64(p[1].F[i]) - float64(p[2].F[i])*s)
	}
	if im.foldIntoProducer(x, scale, shift) {
		c.alias(0, x)
		return nil
	}
	l := actLayout(x)
	if len(x.shape) != 4 {
		l = asIs
	}
	cshape := []int{ch}
	if l == asIs {
		for i := 2; i < len(x.shape); i++ {
			cshape = append(cshape, 1)
		}
	}
	sc := im.g.AddConst(im.g.UniqueName(c.out(0)+"_bn_scale"), &graph.Data{DType: graph.Float32, Shape: cshape, F: scale})
	sh := im.g.AddConst(im.g.UniqueName(c.out(0)+"_bn_shift"), &graph.Data{DType: graph.Float32, Shape: cshape, F: shift})
	ts := x.shape
	if l == nhwc {
		ts = permuteShape(x.shape, toNHWC)
	}
	mid := im.newTensor(c.out(0)+"_bn_mul", graph.Float32, ts)
	im.emit(graph.Mul, []string{im.get(x, l), sc.Name}, &graph.BinaryAttrs{}, mid)
	c.emit1(graph.Add, []string{mid.Name, sh.Name}, &graph.BinaryAttrs{}, graph.Float32, x.shape, l)
	return nil
}

// foldIntoProducer folds y = x*scale[c] + shift[c] into the Conv2D or
// FullyConnected that produced x, when x has no other reader and the
// producer's weights are constant.
func (im *importer) foldIntoProducer(x *value, scale, shift []float32) bool {
	n := x.prod
	if n == nil || x.aliased || im.uses[x.name] != 1 || (n.Op != graph.Conv2D && n.Op != graph.FullyConnected) {
		return false
	}
	if n.Op == graph.Conv2D && x.primary != nhwc {
		return false
	}
	if n.Op == graph.FullyConnected && len(x.shape) != 2 {
		return false
	}
	w := im.g.Tensors[n.Inputs[1]]
	if w.Data == nil || w.DType != graph.Float32 || w.Quant != nil || w.Shape[0] != len(scale) {
		return false
	}
	var b *graph.Tensor
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b = im.g.Tensors[n.Inputs[2]]
		if b.Data == nil {
			return false
		}
	}
	wd := w.Data.Clone()
	per := wd.Len() / len(scale)
	for o := range scale {
		for i := 0; i < per; i++ {
			wd.F[o*per+i] *= scale[o]
		}
	}
	bd := graph.NewData(graph.Float32, []int{len(scale)})
	for o := range scale {
		var b0 float32
		if b != nil {
			b0 = b.Data.F[o]
		}
		bd.F[o] = b0*scale[o] + shift[o]
	}
	for len(n.Inputs) < 3 {
		n.Inputs = append(n.Inputs, "")
	}
	n.Inputs[1] = im.g.AddConst(im.g.UniqueName(w.Name+"_bn"), wd).Name
	n.Inputs[2] = im.g.AddConst(im.g.UniqueName(n.Name+"_bias_bn"), bd).Name
	return true
}

func convReshapeLike(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	var out []int
	switch c.n.OpType {
	case "Flatten":
		axis := int(c.int("axis", 1))
		if axis < 0 {
			axis += r
		}
		if axis < 0 || axis > r {
			return fmt.Errorf("axis %d out of range for rank %d", c.int("axis", 1), r)
		}
		out = []int{graph.NumElements(x.shape[:axis]), graph.NumElements(x.shape[axis:])}
	case "Reshape":
		var spec []int
		if im.opset < 5 {
			spec, _ = c.ints("shape")
		} else {
			d, err := c.constIn(1, "Reshape shape")
			if err != nil {
				return err
			}
			if d == nil {
				return fmt.Errorf("no shape input")
			}
			spec = d.Ints()
		}
		allowZero := c.int("allowzero", 0) != 0
		infer := -1
		known := 1
		out = make([]int, len(spec))
		for i, s := range spec {
			switch {
			case s == -1 && infer < 0:
				infer = i
				continue
			case s == 0 && !allowZero:
				if i >= r {
					return fmt.Errorf("shape %v copies dimension %d of a rank-%d input", spec, i, r)
				}
				s = x.shape[i]
			case s < 0:
				return fmt.Errorf("bad shape %v", spec)
			}
			out[i] = s
			known *= s
			if known > maxElements {
				return fmt.Errorf("bad shape %v", spec)
			}
		}
		total := graph.NumElements(x.shape)
		if infer >= 0 {
			if known == 0 || total%known != 0 {
				return fmt.Errorf("cannot reshape %v to %v", x.shape, spec)
			}
			out[infer] = total / known
		}
	case "Squeeze", "Unsqueeze":
		var axes []int
		var ok bool
		if im.opset >= 13 {
			d, err := c.constIn(1, c.n.OpType+" axes")
			if err != nil {
				return err
			}
			if d != nil {
				axes, ok = d.Ints(), true
			}
		} else {
			axes, ok = c.ints("axes")
		}
		if c.n.OpType == "Squeeze" {
			drop := make([]bool, r)
			for _, a := range axes {
				n, err := normAxis(a, r)
				if err != nil {
					return err
				}
				if x.shape[n] != 1 {
					return fmt.Errorf("cannot squeeze axis %d of shape %v", a, x.shape)
				}
				drop[n] = true
			}
			for i, d := range x.shape {
				if !drop[i] && (ok || d != 1) {
					out = append(out, d)
				}
			}
			out = append([]int{}, out...)
		} else {
			if !ok {
				return fmt.Errorf("Unsqueeze without axes")
			}
			nr := r + len(axes)
			ins := make([]bool, nr)
			for _, a := range axes {
				n, err := normAxis(a, nr)
				if err != nil {
					return err
				}
				if ins[n] {
					return fmt.Errorf("axis %d repeated", a)
				}
				ins[n] = true
			}
			j := 0
			out = make([]int, nr)
			for i := range out {
				if ins[i] {
					out[i] = 1
				} else {
					out[i] = x.shape[j]
					j++
				}
			}
		}
	}
	if graph.NumElements(out) != graph.NumElements(x.shape) {
		return fmt.Errorf("cannot reshape %v to %v", x.shape, out)
	}
	if x.c != nil {
		return c.setConst(0, reshapeData(x.c, out))
	}
	c.emit1(graph.Reshape, []string{im.get(x, asIs)}, nil, x.dt, out, asIs)
	return nil
}

func convTranspose(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	perm, ok := c.ints("perm")
	if !ok {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if len(perm) != r {
		return fmt.Errorf("perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	for i, p := range perm {
		if p < 0 {
			p += r
			perm[i] = p
		}
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("bad perm %v", perm)
		}
		seen[p] = true
	}
	out := permuteShape(x.shape, perm)
	if x.c != nil {
		return c.setConst(0, transposeData(x.c, perm))
	}
	src := im.get(x, actLayout(x))
	gp := perm
	if actLayout(x) == nhwc {
		gp = make([]int, r)
		for i, p := range perm {
			gp[i] = nhwcAxis(p)
		}
	}
	if onlyUnitMoves(im.g.Tensors[src].Shape, gp) {
		c.emit1(graph.Reshape, []string{src}, nil, x.dt, out, asIs)
		return nil
	}
	c.emit1(graph.Transpose, []string{src}, &graph.TransposeAttrs{Perm: gp}, x.dt, out, asIs)
	return nil
}

func convConcat(im *importer, c *nodeCtx) error {
	var vs []*value
	for i := 0; i < c.nIn(); i++ {
		if v := c.in(i); v != nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return fmt.Errorf("no inputs")
	}
	r := len(vs[0].shape)
	if c.attr("axis") == nil && im.opset >= 4 {
		return fmt.Errorf("no axis attribute")
	}
	axis := int(c.int("axis", 1))
	axis, err := normAxis(axis, r)
	if err != nil {
		return err
	}
	out := slices.Clone(vs[0].shape)
	out[axis] = 0
	allConst := true
	var ds []*graph.Data
	for _, v := range vs {
		if len(v.shape) != r || v.dt != vs[0].dt {
			return fmt.Errorf("inputs of shapes %v and %v (%s, %s)", vs[0].shape, v.shape, vs[0].dt, v.dt)
		}
		for i := range v.shape {
			if i != axis && v.shape[i] != out[i] {
				return fmt.Errorf("inputs of shapes %v and %v", vs[0].shape, v.shape)
			}
		}
		out[axis] += v.shape[axis]
		allConst = allConst && v.c != nil
		ds = append(ds, v.c)
	}
	if allConst {
		return c.setConst(0, concatData(ds, axis, out))
	}
	l := pickLayout(r, vs...)
	ga := axis
	if l == nhwc {
		ga = nhwcAxis(axis)
	}
	var ins []string
	for _, v := range vs {
		ins = append(ins, im.get(v, l))
	}
	c.emit1(graph.Concat, ins, &graph.ConcatAttrs{Axis: ga}, vs[0].dt, out, l)
	return nil
}

func convPad(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	mode := c.str("mode", "constant")
	if mode != "constant" && mode != "reflect" && mode != "edge" {
		return unsupportedf("Pad mode %q", mode)
	}
	var pads []int
	var val float64
	if im.opset < 11 {
		var ok bool
		if pads, ok = c.ints("pads"); !ok {
			pads, _ = c.ints("paddings")
		}
		val = float64(c.float("value", 0))
	} else {
		d, err := c.constIn(1, "Pad pads")
		if err != nil {
			return err
		}
		if d == nil {
			return fmt.Errorf("no pads input")
		}
		pads = d.Ints()
		if v, err := c.constIn(2, "Pad value"); err != nil {
			return err
		} else if v != nil && v.Len() > 0 {
			val = v.Float(0)
		}
		if ax, err := c.constIn(3, "Pad axes"); err != nil {
			return err
		} else if ax != nil {
			axes := ax.Ints()
			if len(pads) != 2*len(axes) {
				return fmt.Errorf("%d pads for %d axes", len(pads), len(axes))
			}
			full := make([]int, 2*r)
			for i, a := range axes {
				n, err := normAxis(a, r)
				if err != nil {
					return err
				}
				full[n], full[n+r] = pads[i], pads[i+len(axes)]
			}
			pads = full
		}
	}
	if len(pads) != 2*r {
		return fmt.Errorf("%d pads for rank %d", len(pads), r)
	}
	out := slices.Clone(x.shape)
	for i := 0; i < r; i++ {
		if pads[i] < 0 || pads[i+r] < 0 {
			return unsupportedf("negative pads %v", pads)
		}
		if mode == "reflect" && (pads[i] >= x.shape[i] || pads[i+r] >= x.shape[i]) && (pads[i] > 0 || pads[i+r] > 0) {
			return unsupportedf("reflect pads %v larger than the input %v", pads, x.shape)
		}
		out[i] += pads[i] + pads[i+r]
	}
	if graph.NumElements(out) > maxElements {
		return fmt.Errorf("padded shape %v is too large", out)
	}
	l := actLayout(x)
	gp := pads
	if l == nhwc {
		gp = make([]int, 2*r)
		for i := 0; i < r; i++ {
			gp[i], gp[i+r] = pads[toNHWC[i]], pads[toNHWC[i]+r]
		}
	}
	c.emit1(graph.Pad, []string{im.get(x, l)}, &graph.PadAttrs{Pads: gp, Value: val, Mode: mode}, x.dt, out, l)
	return nil
}

func convSlice(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	var starts, ends, axes, steps []int
	if im.opset < 10 {
		starts, _ = c.ints("starts")
		ends, _ = c.ints("ends")
		axes, _ = c.ints("axes")
	} else {
		get := func(i int) ([]int, error) {
			d, err := c.constIn(i, "Slice parameter")
			if err != nil || d == nil {
				return nil, err
			}
			return d.Ints(), nil
		}
		if starts, err = get(1); err != nil {
			return err
		}
		if ends, err = get(2); err != nil {
			return err
		}
		if axes, err = get(3); err != nil {
			return err
		}
		if steps, err = get(4); err != nil {
			return err
		}
	}
	if len(starts) != len(ends) || (axes != nil && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return fmt.Errorf("starts %v, ends %v, axes %v, steps %v differ in length", starts, ends, axes, steps)
	}
	begin, end, stride := make([]int, r), slices.Clone(x.shape), make([]int, r)
	for i := range stride {
		stride[i] = 1
	}
	done := make([]bool, r)
	for i := range starts {
		a := i
		if axes != nil {
			if a, err = normAxis(axes[i], r); err != nil {
				return err
			}
		}
		if done[a] {
			return fmt.Errorf("axis %d sliced twice", a)
		}
		done[a] = true
		st := 1
		if steps != nil {
			st = steps[i]
		}
		if st == 0 {
			return fmt.Errorf("step 0")
		}
		dim := x.shape[a]
		b, e := starts[i], ends[i]
		if b < 0 {
			b += dim
		}
		if e < 0 {
			e += dim
		}
		if st > 0 {
			b, e = max(0, min(dim, b)), max(0, min(dim, e))
		} else {
			b, e = max(0, min(dim-1, b)), max(-1, min(dim-1, e))
		}
		begin[a], end[a], stride[a] = b, e, st
	}
	out := make([]int, r)
	for i := range out {
		n := 0
		if stride[i] > 0 && end[i] > begin[i] {
			n = (end[i] - begin[i] + stride[i] - 1) / stride[i]
		} else if stride[i] < 0 && end[i] < begin[i] {
			n = (begin[i] - end[i] - stride[i] - 1) / -stride[i]
		}
		out[i] = n
	}
	if x.c != nil {
		return c.setConst(0, sliceData(x.c, begin, stride, out))
	}
	if graph.NumElements(out) == 0 {
		return unsupportedf("empty slice")
	}
	l := actLayout(x)
	if l == nhwc {
		begin, end, stride = permuteShape(begin, toNHWC), permuteShape(end, toNHWC), permuteShape(stride, toNHWC)
	}
	c.emit1(graph.Slice, []string{im.get(x, l)}, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, x.dt, out, l)
	return nil
}

func convSplit(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	axis, err := normAxis(int(c.int("axis", 0)), r)
	if err != nil {
		return err
	}
	nOut := len(c.n.Output)
	var sizes []int
	if im.opset >= 13 {
		d, err := c.constIn(1, "Split sizes")
		if err != nil {
			return err
		}
		if d != nil {
			sizes = d.Ints()
		}
	} else {
		sizes, _ = c.ints("split")
	}
	dim := x.shape[axis]
	if sizes == nil {
		ns := int(c.int("num_outputs", int64(nOut)))
		if ns <= 0 {
			return fmt.Errorf("no outputs")
		}
		chunk := (dim + ns - 1) / ns
		for i := 0; i < ns; i++ {
			sizes = append(sizes, max(0, min(chunk, dim-i*chunk)))
		}
	}
	if len(sizes) != nOut {
		return fmt.Errorf("%d split sizes for %d outputs", len(sizes), nOut)
	}
	start := 0
	for i, s := range sizes {
		if s < 0 {
			return fmt.Errorf("bad split %v", sizes)
		}
		out := slices.Clone(x.shape)
		out[axis] = s
		begin, end, stride := make([]int, r), slices.Clone(x.shape), make([]int, r)
		for j := range stride {
			stride[j] = 1
		}
		begin[axis], end[axis] = start, start+s
		start += s
		if start > dim {
			return fmt.Errorf("split %v exceeds dimension %d", sizes, dim)
		}
		if x.c != nil {
			if err := c.setConst(i, sliceData(x.c, begin, stride, out)); err != nil {
				return err
			}
			continue
		}
		if c.out(i) == "" {
			continue
		}
		if s == 0 {
			return unsupportedf("empty split")
		}
		l := actLayout(x)
		if l == nhwc {
			begin, end, stride = permuteShape(begin, toNHWC), permuteShape(end, toNHWC), permuteShape(stride, toNHWC)
		}
		t, v := c.newOut(i, x.dt, out, l)
		v.prod = im.emit(graph.Slice, []string{im.get(x, l)}, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, t)
	}
	return nil
}

func convResize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := need4(x, "Resize"); err != nil {
		return err
	}
	mode := c.str("mode", "nearest")
	coord := c.str("coordinate_transformation_mode", "half_pixel")
	if im.opset < 11 {
		coord = "asymmetric"
	}
	nearest := c.str("nearest_mode", "round_prefer_floor")
	if im.opset < 11 {
		nearest = "floor"
	}
	switch {
	case c.int("antialias", 0) != 0:
		return unsupportedf("Resize antialias")
	case c.attr("axes") != nil:
		return unsupportedf("Resize axes")
	case c.str("keep_aspect_ratio_policy", "stretch") != "stretch":
		return unsupportedf("Resize keep_aspect_ratio_policy")
	}
	gm := map[string]string{"nearest": "nearest", "linear": "bilinear"}[mode]
	if gm == "" {
		return unsupportedf("Resize mode %q", mode)
	}
	switch coord {
	case "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn":
	default:
		return unsupportedf("Resize coordinate_transformation_mode %q", coord)
	}
	var scales, sizes *graph.Data
	if im.opset < 11 {
		if scales, err = c.constIn(1, "Resize scales"); err != nil {
			return err
		}
	} else {
		if scales, err = c.constIn(2, "Resize scales"); err != nil {
			return err
		}
		if sizes, err = c.constIn(3, "Resize sizes"); err != nil {
			return err
		}
	}
	out := slices.Clone(x.shape)
	var scale [2]float32
	switch {
	case sizes != nil && sizes.Len() > 0:
		if sizes.Len() != 4 {
			return fmt.Errorf("sizes %v for rank 4", sizes.Ints())
		}
		out = sizes.Ints()
	case scales != nil && scales.Len() > 0:
		if scales.Len() != 4 {
			return fmt.Errorf("%d scales for rank 4", scales.Len())
		}
		for i := range out {
			s := scales.Float(i)
			if s <= 0 {
				return fmt.Errorf("scale %v", s)
			}
			out[i] = int(math.Floor(float64(x.shape[i]) * s))
		}
		scale = [2]float32{float32(scales.Float(2)), float32(scales.Float(3))}
	default:
		return fmt.Errorf("neither scales nor sizes given")
	}
	if out[0] != x.shape[0] || out[1] != x.shape[1] {
		return unsupportedf("Resize of the batch or channel axis")
	}
	if out[2] <= 0 || out[3] <= 0 || graph.NumElements(out) > maxElements {
		return fmt.Errorf("output shape %v", out)
	}
	attrs := &graph.ResizeAttrs{Mode: gm, Coord: coord, Nearest: nearest, Scale: scale}
	c.emit1(graph.Resize, []string{im.get(x, nhwc)}, attrs, x.dt, out, nhwc)
	return nil
}

// lift1D runs a 2-D conv or pool converter on a 1-D (rank-3) node by
// viewing [N,C,L] as [N,C,1,L] and the result back as rank 3.
func lift1D(conv converter, weight int) converter {
	return func(im *importer, c *nodeCtx) error {
		x := c.in(0)
		if x == nil || len(x.shape) != 3 || c.out(0) == "" {
			return conv(im, c)
		}
		n := *c.n
		n.Input = slices.Clone(c.n.Input)
		n.Output = []string{c.out(0) + "_2d"}
		n.Attribute = nil
		for _, a := range c.n.Attribute {
			b := *a
			switch a.Name {
			case "kernel_shape", "strides", "dilations":
				if len(a.Ints) != 1 {
					return fmt.Errorf("%s %v for a 1-D input", a.Name, a.Ints)
				}
				b.Ints = []int64{1, a.Ints[0]}
			case "pads":
				if len(a.Ints) != 2 {
					return fmt.Errorf("pads %v for a 1-D input", a.Ints)
				}
				b.Ints = []int64{0, a.Ints[0], 0, a.Ints[1]}
			}
			n.Attribute = append(n.Attribute, &b)
		}
		lift := func(i int) {
			v := c.in(i)
			if v == nil || len(v.shape) != 3 {
				return
			}
			s := []int{v.shape[0], v.shape[1], 1, v.shape[2]}
			name := im.g.UniqueName(v.name + "_2d")
			if v.c != nil {
				im.vals[name] = &value{name: name, dt: v.dt, shape: s, c: reshapeData(v.c, s)}
			} else {
				t := im.newTensor(name, v.dt, s)
				im.emit(graph.Reshape, []string{im.get(v, asIs)}, nil, t)
				nv := &value{name: name, dt: v.dt, shape: s}
				nv.tensors[asIs] = t.Name
				im.vals[name] = nv
			}
			n.Input[i] = name
		}
		lift(0)
		if weight > 0 {
			lift(weight)
		}
		if err := conv(im, &nodeCtx{im: im, n: &n}); err != nil {
			return err
		}
		y := im.vals[n.Output[0]]
		out := []int{y.shape[0], y.shape[1], y.shape[3]}
		t, v := c.newOut(0, y.dt, out, asIs)
		src := im.get(y, asIs)
		t.Quant = im.g.Tensors[src].Quant
		v.prod = im.emit(graph.Reshape, []string{src}, nil, t)
		return nil
	}
}
