package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Converters of element-wise ops, activations and Softmax: they keep the
// layout of their inputs.

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
			if c.nIn() == 2 && c.foldChannelConst(op, acc, b) {
				return nil
			}
			if acc, err = c.binary(op, acc, b, i == c.nIn()-1); err != nil {
				return err
			}
		}
		return nil
	}
}

// foldChannelConst folds a per-channel constant Add, Sub (x - k) or Mul
// into the FullyConnected or Conv2D that produced x, as BatchNorm is folded.
func (c *nodeCtx) foldChannelConst(op graph.Op, x, k *value) bool {
	if x.c != nil || k.c == nil || x.prod == nil || x.dt != graph.Float32 || k.dt != graph.Float32 {
		return false
	}
	if op != graph.Add && op != graph.Sub && op != graph.Mul {
		return false
	}
	axis := -1
	switch {
	case x.prod.Op == graph.FullyConnected && len(x.shape) == 2:
		axis = 1
	case x.prod.Op == graph.Conv2D && x.primary == nhwc && (len(x.shape) == 4 || len(x.shape) == 3):
		axis = 1 // a 1-D conv's too (lift1D)
	default:
		return false
	}
	if s, err := broadcastShapes(x.shape, k.shape); err != nil || !slices.Equal(s, x.shape) {
		return false
	}
	// Every dimension of k but the channel one (right-aligned) must be 1.
	kc := 1
	for i, d := range k.shape {
		if j := len(x.shape) - len(k.shape) + i; j == axis {
			kc = d
		} else if d != 1 {
			return false
		}
	}
	ch := x.shape[axis]
	scale, shift := make([]float32, ch), make([]float32, ch)
	for i := range ch {
		v := k.c.F[min(i, kc-1)]
		scale[i] = 1
		switch op {
		case graph.Add:
			shift[i] = v
		case graph.Sub:
			shift[i] = -v
		case graph.Mul:
			scale[i] = v
		}
	}
	if !c.im.foldIntoProducer(x, scale, shift) {
		return false
	}
	c.alias(0, x)
	return true
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
	if x.c != nil || len(x.shape) == 3 {
		return asIs
	}
	return x.primary
}

// liftedLayout is actLayout for an element-wise op that keeps a 1-D
// value's NHWC tensor (a conv's [N,1,L,C]) where it has one: its
// activation then reads the conv's output directly, and the next 1-D conv
// its output, with no transposes between.
func liftedLayout(x *value) layout {
	if x.c == nil && len(x.shape) == 3 && x.primary == nhwc {
		return nhwc
	}
	return actLayout(x)
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
		l := liftedLayout(x)
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
	// Opset 11 made the bounds inputs: attributes left from opset 6 would
	// be dropped, and the Clip clip nothing (review).
	for _, name := range []string{"min", "max"} {
		if c.attr(name) != nil {
			return nil, fmt.Errorf("attribute %q: Clip takes its bounds as inputs from opset 11 (this model's is %d)", name, c.im.opset)
		}
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

var convSoftmax = convSoftmaxMode(graph.SoftmaxPlain)

// convSoftmaxMode maps Softmax, LogSoftmax and Hardmax: one axis from
// opset 13, the flattened trailing dimensions before it.
func convSoftmaxMode(mode graph.SoftmaxMode) converter {
	return func(im *importer, c *nodeCtx) error { return softmaxOp(im, c, mode) }
}

func init() {
	converters["LogSoftmax"] = convSoftmaxMode(graph.SoftmaxLog)
	converters["Hardmax"] = convSoftmaxMode(graph.SoftmaxHard)
}

func softmaxOp(im *importer, c *nodeCtx, mode graph.SoftmaxMode) error {
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
		im.emit(graph.Softmax, []string{flat.Name}, &graph.SoftmaxAttrs{Axis: 1, Beta: 1, Mode: mode}, sm)
		c.emit1(graph.Reshape, []string{sm.Name}, nil, x.dt, x.shape, asIs)
		return nil
	}
	l := actLayout(x)
	if l == nhwc {
		axis = nhwcAxis(axis)
	}
	c.emit1(graph.Softmax, []string{im.get(x, l)}, &graph.SoftmaxAttrs{Axis: axis, Beta: 1, Mode: mode}, x.dt, x.shape, l)
	return nil
}

// convMath maps an ONNX element-wise function to Math with its constants'
// defaults; float inputs only (a quantized model gets it as a table after
// quantization).
func convMath(fn graph.MathFn, alpha, gamma float32) converter {
	f := convUnaryWith(graph.Math, func(c *nodeCtx) (any, error) {
		if x := c.in(0); x != nil && x.dt != graph.Float32 {
			return nil, unsupportedf("%s on %s", fn, x.dt)
		}
		return &graph.MathAttrs{Fn: fn, Alpha: c.float("alpha", alpha), Gamma: c.float("gamma", gamma)}, nil
	})
	if fn != graph.MathNeg {
		return f
	}
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if x.dt == graph.Float32 || x.dt == graph.Int8 || x.dt == graph.UInt8 {
			return f(im, c)
		}
		// Neg of plain integers (shape arithmetic): x * -1, folded when constant.
		m1 := graph.NewData(x.dt, nil)
		m1.I[0] = -1
		_, err = c.binaryAs("Mul", graph.Mul, x, constValue(c.out(0)+"_minus1", m1))
		return err
	}
}

func init() {
	for _, fn := range []graph.MathFn{
		graph.MathExp, graph.MathLog, graph.MathSqrt, graph.MathAbs, graph.MathNeg, graph.MathReciprocal,
		graph.MathFloor, graph.MathCeil, graph.MathRound, graph.MathSign, graph.MathErf, graph.MathSin,
		graph.MathCos, graph.MathTan, graph.MathAsin, graph.MathAcos, graph.MathAtan, graph.MathSinh,
		graph.MathCosh, graph.MathAsinh, graph.MathAcosh, graph.MathAtanh, graph.MathSoftplus, graph.MathSoftsign,
	} {
		converters[string(fn)] = convMath(fn, 0, 0)
	}
	converters["Elu"] = convMath(graph.MathElu, 1, 0)
	converters["Celu"] = convMath(graph.MathCelu, 1, 0)
	converters["ThresholdedRelu"] = convMath(graph.MathThresholdedRelu, 1, 0)
	converters["Selu"] = convMath(graph.MathSelu, 1.67326319217681884765625, 1.05070102214813232421875)
	// Gelu (opset 20): one Math node, so that an int8 model runs it as one
	// table (mathInt) rather than an Erf or Tanh between float steps.
	converters["Gelu"] = convUnaryWith(graph.Math, func(c *nodeCtx) (any, error) {
		if x := c.in(0); x != nil && x.dt != graph.Float32 {
			return nil, unsupportedf("Gelu on %s", x.dt)
		}
		switch a := c.str("approximate", "none"); a {
		case "none":
			return &graph.MathAttrs{Fn: graph.MathGelu}, nil
		case "tanh":
			return &graph.MathAttrs{Fn: graph.MathGeluTanh}, nil
		default:
			return nil, fmt.Errorf("approximate %q: want none or tanh", a)
		}
	})
	converters["Shrink"] = convUnaryWith(graph.Math, func(c *nodeCtx) (any, error) {
		if x := c.in(0); x != nil && x.dt != graph.Float32 {
			return nil, unsupportedf("Shrink on %s", x.dt)
		}
		return &graph.MathAttrs{Fn: graph.MathShrink, Alpha: c.float("lambd", 0.5), Beta: c.float("bias", 0)}, nil
	})
}

// convArg maps ArgMax/ArgMin (int64 indices) in ONNX's own axis order.
func convArg(min bool) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if x.dt == graph.Int64 {
			return unsupportedf("ArgMax/ArgMin on int64")
		}
		axis, err := normAxis(int(c.int("axis", 0)), len(x.shape))
		if err != nil {
			return err
		}
		a := &graph.ArgAttrs{Axis: axis, KeepDims: c.int("keepdims", 1) != 0, Min: min, SelectLast: c.int("select_last_index", 0) != 0}
		var out []int
		for i, d := range x.shape {
			switch {
			case i != axis:
				out = append(out, d)
			case a.KeepDims:
				out = append(out, 1)
			}
		}
		c.emit1(graph.ArgMax, []string{im.get(x, asIs)}, a, graph.Int64, out, asIs)
		return nil
	}
}

func init() {
	converters["ArgMax"] = convArg(false)
	converters["ArgMin"] = convArg(true)
}

// convPow maps Pow on a float base; a constant integer exponent becomes float.
func convPow(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if a.dt != graph.Float32 {
		return unsupportedf("Pow of %s", a.dt)
	}
	if b.dt != graph.Float32 {
		if b.c == nil {
			return unsupportedf("Pow with a run-time %s exponent", b.dt)
		}
		f := graph.NewData(graph.Float32, b.c.Shape)
		for i := range f.F {
			f.F[i] = float32(b.c.Float(i))
		}
		b = constValue(b.name+"_f32", f)
	}
	_, err = c.binary(graph.Pow, a, b, true)
	return err
}

func init() { converters["Pow"] = convPow }
