package tflite

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// opctx carries one operator while it is mapped to a canonical op.
type opctx struct {
	d       *decoder
	index   int
	code    int32
	name    string
	ins     []int32
	outs    []int32
	optType uint8
	opts    table
	// unshrunk is the full-rank shape of a strided slice that drops axes.
	unshrunk []int
	// done is set by a builder that has added every node of the operator
	// itself (several outputs, or outputs that fold to constants).
	done bool
	// subst are inputs read in another form than the file's (a hybrid
	// operator's weights dequantized), by input position.
	subst map[int]string
}

func (c *opctx) errorf(format string, a ...any) error {
	return fmt.Errorf("operator %d (%s): %s", c.index, c.name, fmt.Sprintf(format, a...))
}

// in imports input i (it must be present).
func (c *opctx) in(i int) (*graph.Tensor, error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return nil, c.errorf("input %d is missing", i)
	}
	if name, ok := c.subst[i]; ok {
		return c.d.g.Tensors[name], nil
	}
	name, err := c.d.tensor(int(c.ins[i]))
	if err != nil {
		return nil, c.errorf("%v", err)
	}
	return c.d.g.Tensors[name], nil
}

// optIn imports input i or returns nil when it is absent.
func (c *opctx) optIn(i int) (*graph.Tensor, error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return nil, nil
	}
	return c.in(i)
}

// weighted imports the inputs of a conv or fully connected operator: the
// activation, the weights and the optional bias.
func (c *opctx) weighted() (x, w, b *graph.Tensor, err error) {
	if x, err = c.in(0); err != nil {
		return nil, nil, nil, err
	}
	if w, err = c.in(1); err != nil {
		return nil, nil, nil, err
	}
	b, err = c.optIn(2)
	return x, w, b, err
}

// constInts reads a constant integer input (shape, axes, paddings).
func (c *opctx) constInts(i int, what string) ([]int, error) {
	t, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if !t.IsConst() || t.DType == graph.Float32 {
		return nil, c.errorf("%s (input %d) must be a constant integer tensor", what, i)
	}
	return t.Data.Ints(), nil
}

// options returns the builtin options table, checking its union type.
func (c *opctx) options(want uint8) (table, error) {
	if c.optType != 0 && c.optType != want {
		return table{}, c.errorf("builtin options of type %d, want %d", c.optType, want)
	}
	if c.optType == 0 {
		return table{r: c.d.r}, nil
	}
	return c.opts, nil
}

// actNames are the names of TFLite's ActivationFunctionType values.
var actNames = []string{"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"}

func (c *opctx) act(v uint8) (graph.Activation, error) {
	switch v {
	case 0:
		return graph.ActNone, nil
	case 1:
		return graph.ActRelu, nil
	case 2:
		return graph.ActReluN1To1, nil
	case 3:
		return graph.ActRelu6, nil
	}
	return 0, c.errorf("fused activation %d not supported", v)
}

func (d *decoder) operator(index int, op table) error {
	oi := int(op.u32(operatorOpcodeIndex, 0))
	ins, outs := op.ints(operatorInputs), op.ints(operatorOutputs)
	optType := op.u8(operatorOptionsType, 0)
	opts := op.sub(operatorOptions, "builtin options")
	if err := d.check(); err != nil {
		return fmt.Errorf("operator %d: %w", index, err)
	}
	if oi < 0 || oi >= len(d.codes) {
		return fmt.Errorf("operator %d: opcode index %d out of range (%d operator codes)", index, oi, len(d.codes))
	}
	c := &opctx{d: d, index: index, code: d.codes[oi], ins: ins, outs: outs, optType: optType, opts: opts}
	c.name = OpName(c.code)
	if c.code == opCustom {
		c.name = fmt.Sprintf("CUSTOM %q", d.customs[oi])
	}
	if err := c.checkInputIndices(); err != nil {
		return err
	}
	if isResourceOp(c.code) {
		if d.depth > 0 {
			return c.errorf("resource variables inside IF or WHILE are not supported")
		}
		return c.resourceOp()
	}
	if len(outs) == 0 {
		return c.errorf("no outputs")
	}
	if c.code == opCustom && d.customs[oi] == customDetection {
		opts := op.bytes(operatorCustomOpts)
		if err := d.check(); err != nil {
			return c.errorf("custom options: %v", err)
		}
		return c.detection(opts)
	}
	if c.code == opCustom && d.customs[oi] == customDecode {
		return c.tflmDecode()
	}
	if c.code == opCustom && d.customs[oi] == "ethos-u" {
		// Vela's output: the layers it mapped are one command stream for
		// an Ethos-U NPU (review: the bare "op not supported" left the
		// way out unsaid).
		return c.errorf("op not supported: a model compiled by Vela for an Arm Ethos-U NPU; give mcugen the model from before Vela")
	}
	if f := signalOps[d.customs[oi]]; c.code == opCustom && f != nil {
		opts := op.bytes(operatorCustomOpts)
		if err := d.check(); err != nil {
			return c.errorf("custom options: %v", err)
		}
		return f(c, opts)
	}
	if err := c.wideUnsignedBuiltin(); err != nil {
		return err
	}
	if err := c.checkKernel(); err != nil {
		return err
	}
	if folded, err := c.foldDequantize(); folded || err != nil {
		return err
	}
	if err := c.dequantizeHybrid(); err != nil {
		return err
	}
	n, err := c.node()
	if err != nil {
		return err
	}
	if c.done {
		return nil
	}
	if err := c.checkMixed(n); err != nil {
		return err
	}
	for _, o := range outs {
		name, err := d.tensor(int(o))
		if err != nil {
			return c.errorf("output: %v", err)
		}
		t := d.g.Tensors[name]
		if t.IsConst() {
			return c.errorf("output %q is a constant", name)
		}
		d.fileSize[name] = append([]int(nil), t.Shape...)
		n.Outputs = append(n.Outputs, name)
	}
	n.Name = n.Outputs[0]
	if err := c.checkQuant(n); err != nil {
		return err
	}
	if c.unshrunk != nil {
		// A strided slice that drops axes: slice into a tensor of the full
		// rank, then reshape to the file's output shape.
		out := d.g.Tensors[n.Outputs[0]]
		mid := &graph.Tensor{Name: d.g.UniqueName(out.Name + "/unshrunk"), DType: out.DType, Shape: c.unshrunk, Quant: out.Quant}
		d.g.AddTensor(mid)
		n.Outputs[0] = mid.Name
		d.g.AddNode(n)
		n = &graph.Node{Name: out.Name, Op: graph.Reshape, Inputs: []string{mid.Name}, Outputs: []string{out.Name}}
	}
	d.g.AddNode(n)
	return nil
}

// node maps the operator to a canonical node (inputs and attributes).
func (c *opctx) node() (*graph.Node, error) {
	var (
		n   = &graph.Node{}
		err error
	)
	// Inputs that are passed straight through, by position.
	pass := func(idx ...int) error {
		for _, i := range idx {
			t, err := c.optIn(i)
			if err != nil {
				return err
			}
			name := ""
			if t != nil {
				name = t.Name
			}
			n.Inputs = append(n.Inputs, name)
		}
		return nil
	}
	switch c.code {
	case opConv2D:
		err = c.conv(n)
	case opTransposeConv:
		err = c.transposeConv(n)
	case opUnidirectionalSequenceLSTM, opUnidirectionalSequenceRNN:
		err = c.recurrent(n)
	case opCast:
		err = c.cast(n)
	case opDepthwiseConv2D:
		err = c.depthwise(n)
	case opFullyConnected:
		n.Op = graph.FullyConnected
		o, e := c.options(optFullyConnected)
		if e != nil {
			return nil, e
		}
		if o.i8(1, 0) != 0 {
			return nil, c.errorf("shuffled weights format not supported")
		}
		// (a missing or bad operand is reported by pass below)
		x, _ := c.optIn(0)
		w, _ := c.optIn(1)
		b, _ := c.optIn(2)
		if x != nil && w != nil {
			if err := c.check16x8(x, w, b, o.i8(4, 0), false); err != nil {
				return nil, err
			}
		}
		a := &graph.FullyConnectedAttrs{KeepDims: o.boolean(2)}
		if a.Act, err = c.act(o.u8(0, 0)); err == nil {
			n.Attrs = a
			err = pass(0, 1, 2)
		}
	case opAveragePool2D, opMaxPool2D:
		err = c.pool(n)
	case opAdd, opSub, opMul:
		ops := map[int32]graph.Op{opAdd: graph.Add, opSub: graph.Sub, opMul: graph.Mul}
		opt := map[int32]uint8{opAdd: optAdd, opSub: optSub, opMul: optMul}
		n.Op = ops[c.code]
		o, e := c.options(opt[c.code])
		if e != nil {
			return nil, e
		}
		a := &graph.BinaryAttrs{}
		if a.Act, err = c.act(o.u8(0, 0)); err == nil {
			if built, e := c.int32Act(a.Act); built || e != nil {
				return n, e // ops_int32act_36.go
			}
			n.Attrs = a
			err = pass(0, 1)
		}
	case opMaximum, opMinimum:
		n.Op = graph.Maximum
		if c.code == opMinimum {
			n.Op = graph.Minimum
		}
		err = pass(0, 1)
	case opSoftmax:
		o, e := c.options(optSoftmax)
		if e != nil {
			return nil, e
		}
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		// TFLite's softmax of beta +Inf is NaN or 0 (NaN was refused).
		beta := o.f32(0, 0)
		if math.IsNaN(float64(beta)) || math.IsInf(float64(beta), 0) {
			return nil, c.errorf("beta %g is not finite", beta)
		}
		n.Op = graph.Softmax
		n.Attrs = &graph.SoftmaxAttrs{Axis: max(len(x.Shape)-1, 0), Beta: beta}
		err = pass(0)
	case opReshape, opSqueeze, opExpandDims:
		n.Op = graph.Reshape
		err = pass(0)
	case opQuantize:
		n.Op = graph.Quantize
		err = pass(0)
	case opDequantize:
		n.Op = graph.Dequantize
		err = pass(0)
	case opPad, opPadV2:
		err = c.pad(n)
	case opConcatenation:
		o, e := c.options(optConcatenation)
		if e != nil {
			return nil, e
		}
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		ax := int(o.i32(0, 0))
		if ax < 0 {
			ax += len(x.Shape)
		}
		if ax < 0 || ax >= len(x.Shape) {
			return nil, c.errorf("axis %d out of range for shape %v", o.i32(0, 0), x.Shape)
		}
		// TFLite's and TFLite Micro's Prepare refuse a fused activation
		// here (the converter never writes one).
		if v := o.u8(1, 0); v != 0 {
			name := fmt.Sprint(v)
			if int(v) < len(actNames) {
				name = actNames[v]
			}
			return nil, c.errorf("fused activation %s: TFLite refuses a fused activation on CONCATENATION (only NONE)", name)
		}
		a := &graph.ConcatAttrs{Axis: ax}
		if a.Act, err = c.act(o.u8(1, 0)); err == nil {
			n.Op, n.Attrs = graph.Concat, a
			for i := range c.ins {
				if err = pass(i); err != nil {
					break
				}
			}
		}
	case opMean, opSum, opReduceProd, opReduceMax, opReduceMin:
		o, e := c.options(optReducer)
		if e != nil {
			return nil, e
		}
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		if c.code != opMean && x.DType != graph.Float32 {
			// int8 REDUCE_MAX and REDUCE_MIN pick a stored value (their
			// input and output share quantization); SUM rescales the sum
			// as TFLite Micro's QuantizedMeanOrSum does; PROD is refused.
			sum16 := c.code == opSum && x.DType == graph.Int16
			if (c.code != opReduceMax && c.code != opReduceMin && c.code != opSum) || (x.DType != graph.Int8 && !sum16) {
				return nil, c.errorf("%s %s is not supported (float32, int8 SUM, REDUCE_MAX and REDUCE_MIN, and int16 SUM, are)", x.DType, c.name)
			}
			out, e := c.out(0)
			if e != nil {
				return nil, e
			}
			if c.code == opSum {
				if out.DType != x.DType || out.Quant == nil || len(out.Quant.Scale) != 1 || x.Quant == nil || len(x.Quant.Scale) != 1 {
					return nil, c.errorf("%s SUM needs per-tensor quantized %s input and output", x.DType, x.DType)
				}
			} else if e := c.copyOK(x, out); e != nil {
				return nil, e
			}
		}
		axes, e := c.reducerAxes(x)
		if e != nil {
			return nil, e
		}
		if k, ok := floatReduce[c.code]; ok {
			n.Op, n.Attrs = graph.Reduce, &graph.ReduceAttrs{Kind: k, Axes: axes, KeepDims: o.boolean(0)}
		} else {
			n.Op, n.Attrs = graph.Mean, &graph.MeanAttrs{Axes: axes, KeepDims: o.boolean(0)}
		}
		err = pass(0)
	case opFloor, opExp, opNeg, opSin, opLog, opSqrt, opRsqrt, opSquare, opAbs, opCeil, opCos, opElu, opRound:
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		a := &graph.MathAttrs{Fn: floatMath[c.code], Alpha: 1}
		switch {
		case c.code == opAbs && x.DType == graph.Int16:
			// TFLite Micro's int16 ABS: quantized with zero points 0
			// (interp.Abs16).
			out, e := c.out(0)
			if e != nil {
				return nil, e
			}
			if out.DType != graph.Int16 || x.Quant == nil || out.Quant == nil || len(x.Quant.Scale) != 1 || len(out.Quant.Scale) != 1 || x.Quant.ZeroPoint[0] != 0 || out.Quant.ZeroPoint[0] != 0 {
				return nil, c.errorf("int16 ABS needs per-tensor quantized int16 input and output with zero points 0")
			}
			a.TFLiteInt8 = true
		case (c.code == opRsqrt || c.code == opAbs) && x.DType == graph.Int8:
			// TFLite Micro's fixed point (qmath.RsqrtInt8, qmath.AbsInt8).
			out, e := c.out(0)
			if e != nil {
				return nil, e
			}
			if out.DType != graph.Int8 || x.Quant == nil || out.Quant == nil || len(x.Quant.Scale) != 1 || len(out.Quant.Scale) != 1 {
				return nil, c.errorf("int8 %s needs per-tensor quantized int8 input and output", c.name)
			}
			a.TFLiteInt8 = true
		case c.code == opElu && x.DType == graph.Int8:
			// TFLite Micro's table, built in float32 (qmath.EluF32).
			out, e := c.out(0)
			if e != nil {
				return nil, e
			}
			if out.DType != graph.Int8 || x.Quant == nil || out.Quant == nil || len(x.Quant.Scale) != 1 || len(out.Quant.Scale) != 1 {
				return nil, c.errorf("int8 ELU needs per-tensor quantized int8 input and output")
			}
			a.TFLiteInt8 = true
		case x.DType != graph.Float32:
			return nil, c.errorf("%s input: only float32 (and int8 ABS, RSQRT and ELU, int16 ABS) is supported", x.DType)
		}
		n.Op, n.Attrs = graph.Math, a
		err = pass(0)
	case opArgMax, opArgMin:
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		axes, e := c.constInts(1, "axis")
		if e != nil {
			return nil, e
		}
		if len(axes) != 1 {
			return nil, c.errorf("axis has %d values, want 1", len(axes))
		}
		if axes[0] < -len(x.Shape) || axes[0] >= len(x.Shape) {
			return nil, c.errorf("axis %d out of range for shape %v", axes[0], x.Shape)
		}
		n.Op, n.Attrs = graph.ArgMax, &graph.ArgAttrs{Axis: (axes[0] + len(x.Shape)) % len(x.Shape), Min: c.code == opArgMin}
		err = pass(0)
	case opLogistic:
		n.Op = graph.Sigmoid
		err = pass(0)
	case opTanh:
		n.Op = graph.Tanh
		err = pass(0)
	case opRelu:
		n.Op = graph.Relu
		err = pass(0)
	case opRelu6:
		n.Op, n.Attrs = graph.Clip, &graph.ClipAttrs{Min: 0, Max: 6}
		err = pass(0)
	case opReluN1To1:
		n.Op, n.Attrs = graph.Clip, &graph.ClipAttrs{Min: -1, Max: 1}
		err = pass(0)
	case opLeakyRelu:
		o, e := c.options(optLeakyRelu)
		if e != nil {
			return nil, e
		}
		n.Op, n.Attrs = graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: o.f32(0, 0)}
		err = pass(0)
	case opHardSwish:
		n.Op = graph.HardSwish
		err = pass(0)
	case opStridedSlice:
		err = c.stridedSlice(n)
	case opTranspose:
		perm, e := c.constInts(1, "permutation")
		if e != nil {
			return nil, e
		}
		n.Op, n.Attrs = graph.Transpose, &graph.TransposeAttrs{Perm: perm}
		err = pass(0)
	case opResizeNearestNeighbor:
		o, e := c.options(optResizeNearestNeighbor)
		if e != nil {
			return nil, e
		}
		// The size input must give the output's height and width (it was
		// ignored: sizes [-4,4] or [2^20,2^20] imported with the file's
		// output shape; review finding).
		x, e := c.in(0)
		if e != nil {
			return nil, e
		}
		y, e := c.out(0)
		if e != nil {
			return nil, e
		}
		size, e := c.constInts(1, "size")
		if e != nil {
			return nil, e
		}
		if len(x.Shape) != 4 || len(y.Shape) != 4 || len(size) != 2 {
			return nil, c.errorf("input %v, size %v and output %v must be NHWC and [H, W]", x.Shape, size, y.Shape)
		}
		if size[0] <= 0 || size[1] <= 0 || size[0] != y.Shape[1] || size[1] != y.Shape[2] || y.Shape[0] != x.Shape[0] || y.Shape[3] != x.Shape[3] {
			return nil, c.errorf("size %v and input %v do not give the output shape %v", size, x.Shape, y.Shape)
		}
		a := &graph.ResizeAttrs{Mode: "nearest", Coord: "asymmetric", Nearest: "floor"}
		switch {
		case o.boolean(0):
			a.Coord, a.Nearest = "align_corners", "round_prefer_ceil"
		case o.boolean(1):
			a.Coord = "tf_half_pixel_for_nn"
		}
		n.Op, n.Attrs = graph.Resize, a
		err = pass(0)
	case opBatchMatMul:
		o, e := c.options(optBatchMatMul)
		if e != nil {
			return nil, e
		}
		n.Op, n.Attrs = graph.BatchMatMul, &graph.BatchMatMulAttrs{AdjX: o.boolean(0), AdjY: o.boolean(1)}
		if err = pass(0, 1); err == nil {
			err = c.batchMatMul16(n) // ops_int16_36.go
		}
	default:
		build, ok := moreOps[c.code]
		if !ok {
			return nil, c.errorf("op not supported")
		}
		err = build(c, n)
	}
	if err != nil {
		return nil, err
	}
	if e := c.d.check(); e != nil {
		return nil, c.errorf("%v", e)
	}
	return n, nil
}

// explicitPadding turns TFLite's SAME/VALID into explicit padding the way
// TFLite's ComputePaddingHeightWidth does (the odd element goes after).
func explicitPadding(same bool, in, k, stride, dil int) (before, after int) {
	if !same {
		return 0, 0
	}
	eff := (k-1)*dil + 1
	out := (in + stride - 1) / stride
	total := (out-1)*stride + eff - in
	if total <= 0 {
		return 0, 0
	}
	return total / 2, total - total/2
}

func (c *opctx) window(x *graph.Tensor, same bool, kh, kw, sh, sw, dh, dw int) (graph.Padding, error) {
	if len(x.Shape) != 4 {
		return graph.Padding{}, c.errorf("input shape %v is not 4-D (NHWC)", x.Shape)
	}
	if kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || kh > 1<<16 || kw > 1<<16 || sh > 1<<16 || sw > 1<<16 || dh > 1<<16 || dw > 1<<16 {
		return graph.Padding{}, c.errorf("kernel %dx%d, stride %dx%d, dilation %dx%d: must be positive", kh, kw, sh, sw, dh, dw)
	}
	var p graph.Padding
	p.Top, p.Bottom = explicitPadding(same, x.Shape[1], kh, sh, dh)
	p.Left, p.Right = explicitPadding(same, x.Shape[2], kw, sw, dw)
	return p, nil
}

func (c *opctx) conv(n *graph.Node) error {
	o, err := c.options(optConv2D)
	if err != nil {
		return err
	}
	x, w, b, err := c.weighted()
	if err != nil {
		return err
	}
	if len(w.Shape) != 4 || len(x.Shape) != 4 || w.Shape[3] == 0 || x.Shape[3]%w.Shape[3] != 0 {
		return c.errorf("weights %v do not fit input %v", w.Shape, x.Shape)
	}
	if err := c.check16x8(x, w, b, o.i8(6, 0), false); err != nil {
		return err
	}
	a := &graph.Conv2DAttrs{
		Stride:   [2]int{int(o.i32(2, 0)), int(o.i32(1, 0))},
		Dilation: [2]int{int(o.i32(5, 1)), int(o.i32(4, 1))},
		Group:    x.Shape[3] / w.Shape[3],
	}
	if a.Act, err = c.act(o.u8(3, 0)); err != nil {
		return err
	}
	same, err := c.samePadding(o.i8(0, 0))
	if err != nil {
		return err
	}
	if a.Pad, err = c.window(x, same, w.Shape[1], w.Shape[2], a.Stride[0], a.Stride[1], a.Dilation[0], a.Dilation[1]); err != nil {
		return err
	}
	n.Op, n.Attrs = graph.Conv2D, a
	n.Inputs = []string{x.Name, w.Name, ""}
	if b != nil {
		n.Inputs[2] = b.Name
	}
	return nil
}

func (c *opctx) depthwise(n *graph.Node) error {
	o, err := c.options(optDepthwiseConv2D)
	if err != nil {
		return err
	}
	x, w, b, err := c.weighted()
	if err != nil {
		return err
	}
	if len(w.Shape) != 4 || len(x.Shape) != 4 || w.Shape[0] != 1 || x.Shape[3] == 0 || w.Shape[3]%x.Shape[3] != 0 {
		return c.errorf("depthwise weights %v do not fit input %v", w.Shape, x.Shape)
	}
	if !w.IsConst() {
		return c.errorf("depthwise weights %q must be constant", w.Name)
	}
	if err := c.check16x8(x, w, b, 0, true); err != nil {
		return err
	}
	if m := int(o.i32(3, 0)); m > 0 && m*x.Shape[3] != w.Shape[3] {
		return c.errorf("depth multiplier %d does not match weights %v and %d input channels", m, w.Shape, x.Shape[3])
	}
	a := &graph.Conv2DAttrs{
		Stride:   [2]int{int(o.i32(2, 0)), int(o.i32(1, 0))},
		Dilation: [2]int{int(o.i32(6, 1)), int(o.i32(5, 1))},
		Group:    x.Shape[3],
	}
	if a.Act, err = c.act(o.u8(4, 0)); err != nil {
		return err
	}
	same, err := c.samePadding(o.i8(0, 0))
	if err != nil {
		return err
	}
	if a.Pad, err = c.window(x, same, w.Shape[1], w.Shape[2], a.Stride[0], a.Stride[1], a.Dilation[0], a.Dilation[1]); err != nil {
		return err
	}
	wi := int(c.ins[1])
	if _, ok := c.subst[1]; ok {
		wi = -2 - wi // the dequantized weights: another tensor than the file's
	}
	name, ok := c.d.dwNames[wi]
	if !ok {
		name = c.d.transposeDepthwise(w)
		c.d.dwNames[wi] = name
	}
	n.Op, n.Attrs = graph.Conv2D, a
	n.Inputs = []string{x.Name, name, ""}
	if b != nil {
		n.Inputs[2] = b.Name
	}
	return nil
}

// check16x8 checks a convolution or fully connected layer with an int16
// input against what TFLite Micro's 16x8 kernels take: int8 weights, an
// int32 or int64 bias (int64 for the depthwise kernel, which reads its bias
// as int64 whatever its type), or none. Without a bias the accumulator is
// 64-bit unless the options' quantized_bias_type asks for int32
// (biasType), which is refused.
func (c *opctx) check16x8(x, w, b *graph.Tensor, biasType int8, depthwise bool) error {
	if x.DType != graph.Int16 {
		return nil
	}
	if w.DType != graph.Int8 {
		return c.errorf("int16 input %q with %s weights: TFLite's 16x8 layers take int8 weights", x.Name, w.DType)
	}
	switch {
	case b == nil && biasType == ttInt32:
		return c.errorf("int16 layer without a bias whose options ask for an int32 accumulator: not supported")
	case b == nil:
	case depthwise && b.DType != graph.Int64:
		return c.errorf("int16 depthwise convolution with a %s bias %q: TFLite Micro's 16x8 depthwise kernel reads its bias as int64", b.DType, b.Name)
	case b.DType != graph.Int64 && b.DType != graph.Int32:
		return c.errorf("int16 layer with a %s bias %q: TFLite's 16x8 layers take int32 or int64", b.DType, b.Name)
	}
	return nil
}

// transposeDepthwise rewrites TFLite's [1,KH,KW,Cout] depthwise weights as
// [Cout,KH,KW,1]; per-channel quantization moves from axis 3 to axis 0.
func (d *decoder) transposeDepthwise(w *graph.Tensor) string {
	kh, kw, co := w.Shape[1], w.Shape[2], w.Shape[3]
	v := graph.NewData(w.DType, []int{co, kh, kw, 1})
	for y := 0; y < kh; y++ {
		for x := 0; x < kw; x++ {
			for o := 0; o < co; o++ {
				src := (y*kw+x)*co + o
				dst := (o*kh+y)*kw + x
				if w.DType == graph.Float32 {
					v.F[dst] = w.Data.F[src]
				} else {
					v.I[dst] = w.Data.I[src]
				}
			}
		}
	}
	t := &graph.Tensor{Name: w.Name, DType: w.DType, Shape: v.Shape, Data: v}
	if q := w.Quant; q != nil {
		t.Quant = &graph.Quant{Scale: q.Scale, ZeroPoint: q.ZeroPoint}
	}
	// The transposed weights take the file's name (the C names its
	// constants after it) unless a node already reads the file's layout
	// under it; the file's layout stays readable by later operators
	// (a CONV_2D, or a hybrid depthwise's dequantization, sharing the
	// tensor) under a name of its own.
	// Inside an unrolled IF or WHILE the weights may be the caller's
	// tensor (a subgraph input): it keeps its name and layout there.
	if d.depth > 0 || slices.ContainsFunc(d.g.Nodes, func(n *graph.Node) bool { return slices.Contains(n.Inputs, w.Name) }) {
		t.Name = d.g.UniqueName(w.Name + "/ohwi")
		d.g.AddTensor(t)
		return t.Name
	}
	for i, name := range d.names {
		if name == w.Name {
			file := *w
			file.Name = d.g.UniqueName(w.Name + "/hwio")
			d.g.AddTensor(&file)
			d.names[i] = file.Name
			d.spare = append(d.spare, file.Name)
		}
	}
	d.g.AddTensor(t)
	return t.Name
}

func (c *opctx) pool(n *graph.Node) error {
	o, err := c.options(optPool2D)
	if err != nil {
		return err
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	a := &graph.PoolAttrs{
		Kernel:   [2]int{int(o.i32(4, 0)), int(o.i32(3, 0))},
		Stride:   [2]int{int(o.i32(2, 0)), int(o.i32(1, 0))},
		Dilation: [2]int{1, 1},
	}
	if a.Act, err = c.act(o.u8(5, 0)); err != nil {
		return err
	}
	same, err := c.samePadding(o.i8(0, 0))
	if err != nil {
		return err
	}
	if a.Pad, err = c.window(x, same, a.Kernel[0], a.Kernel[1], a.Stride[0], a.Stride[1], 1, 1); err != nil {
		return err
	}
	n.Op = graph.MaxPool2D
	if c.code == opAveragePool2D {
		n.Op = graph.AvgPool2D
	}
	n.Attrs = a
	n.Inputs = []string{x.Name}
	return nil
}

func (c *opctx) pad(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	p, err := c.constInts(1, "paddings")
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if len(p) != 2*r {
		return c.errorf("paddings hold %d values, want %d for shape %v", len(p), 2*r, x.Shape)
	}
	a := &graph.PadAttrs{Mode: "constant", Pads: make([]int, 2*r)}
	for i := 0; i < r; i++ {
		a.Pads[i], a.Pads[r+i] = p[2*i], p[2*i+1]
		if p[2*i] < 0 || p[2*i+1] < 0 || p[2*i] > 1<<20 || p[2*i+1] > 1<<20 {
			return c.errorf("padding %v out of range", p)
		}
	}
	if len(c.outs) > 0 && x.DType != graph.Float32 {
		// TFLite pads a quantized tensor with the output's zero point.
		name, err := c.d.tensor(int(c.outs[0]))
		if err != nil {
			return c.errorf("output: %v", err)
		}
		if q := c.d.g.Tensors[name].Quant; q != nil {
			a.Value = float64(q.ZeroPoint[0])
		}
	}
	if c.code == opPadV2 {
		if v, err := c.optIn(2); err != nil {
			return err
		} else if v != nil {
			if !v.IsConst() || v.Data.Len() != 1 {
				return c.errorf("constant_values must be a constant scalar")
			}
			a.Value = v.Data.Float(0)
		}
	}
	n.Op, n.Attrs, n.Inputs = graph.Pad, a, []string{x.Name}
	return nil
}

func (c *opctx) stridedSlice(n *graph.Node) error {
	o, err := c.options(optStridedSlice)
	if err != nil {
		return err
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	begin, err := c.constInts(1, "begin")
	if err != nil {
		return err
	}
	end, err := c.constInts(2, "end")
	if err != nil {
		return err
	}
	strides := make([]int, len(begin))
	for i := range strides {
		strides[i] = 1
	}
	if len(c.ins) > 3 && c.ins[3] >= 0 {
		if strides, err = c.constInts(3, "strides"); err != nil {
			return err
		}
	}
	beginMask, endMask := int(o.i32(0, 0)), int(o.i32(1, 0))
	shrink := int(o.i32(4, 0))
	offset := o.boolean(5)
	r := len(x.Shape)
	if len(end) != len(begin) || len(strides) != len(begin) {
		return c.errorf("begin %v, end %v, strides %v do not fit shape %v", begin, end, strides, x.Shape)
	}
	// An ellipsis or new axes (TF's x[..., 1], x[tf.newaxis, :]): the
	// entries are rewritten one per input axis, as TensorFlow's dense spec
	// does; the slice's result is then reshaped to the file's output shape,
	// which has the new axes (it was refused: round-3 fuzzer).
	reshape := false
	if ell, newAx := int(o.i32(2, 0)), int(o.i32(3, 0)); ell != 0 || newAx != 0 {
		if bits.OnesCount(uint(ell)) > 1 {
			return c.errorf("ellipsis_mask %#b: more than one ellipsis", ell)
		}
		takes := 0 // entries that take an input axis
		for i := range begin {
			if ell&(1<<i) == 0 && newAx&(1<<i) == 0 {
				takes++
			}
		}
		if takes > r {
			return c.errorf("begin %v, end %v, strides %v do not fit shape %v", begin, end, strides, x.Shape)
		}
		var db, de, ds []int
		var dbm, dem, dsh int
		for i := range begin {
			switch {
			case ell&(1<<i) != 0: // the axes the other entries leave, whole
				for k := 0; k < r-takes; k++ {
					dbm, dem = dbm|1<<len(db), dem|1<<len(db)
					db, de, ds = append(db, 0), append(de, 0), append(ds, 1)
				}
			case newAx&(1<<i) != 0: // an output axis of 1; no input axis
			default:
				ax := len(db)
				if beginMask&(1<<i) != 0 {
					dbm |= 1 << ax
				}
				if endMask&(1<<i) != 0 {
					dem |= 1 << ax
				}
				if shrink&(1<<i) != 0 {
					dsh |= 1 << ax
				}
				db, de, ds = append(db, begin[i]), append(de, end[i]), append(ds, strides[i])
			}
		}
		begin, end, strides, beginMask, endMask, shrink = db, de, ds, dbm, dem, dsh
		reshape = true
	}
	if len(begin) > r {
		return c.errorf("begin %v, end %v, strides %v do not fit shape %v", begin, end, strides, x.Shape)
	}
	a := &graph.SliceAttrs{Begin: make([]int, r), End: make([]int, r), Stride: make([]int, r)}
	for ax := 0; ax < r; ax++ {
		size := x.Shape[ax]
		if ax >= len(begin) {
			a.Begin[ax], a.End[ax], a.Stride[ax] = 0, size, 1
			continue
		}
		st := strides[ax]
		if st == 0 {
			return c.errorf("stride 0 on axis %d", ax)
		}
		clamp := func(v int) int {
			if st > 0 {
				return min(max(v, 0), size)
			}
			return min(max(v, -1), size-1)
		}
		// TFLite's StartForAxis / StopForAxis.
		s := begin[ax]
		if beginMask&(1<<ax) != 0 {
			if st > 0 {
				s = math.MinInt32
			} else {
				s = math.MaxInt32
			}
		}
		if s < 0 {
			s += size
		}
		s = clamp(s)
		// TFLite's StridedSliceEndForAxis: offset adds the start as
		// computed above (after the mask, the wrap and the clamp; the raw
		// begin refused valid models, a review finding), and a shrunk axis
		// whose start is past its end is empty.
		e := end[ax]
		if offset {
			e += s
		}
		switch {
		case shrink&(1<<ax) != 0 && s >= size:
			e, st = s, 1
		case shrink&(1<<ax) != 0:
			e, st = s+1, 1
		default:
			if endMask&(1<<ax) != 0 {
				if st > 0 {
					e = math.MaxInt32
				} else {
					e = math.MinInt32
				}
			}
			if e < 0 {
				e += size
			}
			e = clamp(e)
		}
		a.Begin[ax], a.End[ax], a.Stride[ax] = s, e, st
	}
	if shrink != 0 || reshape {
		c.unshrunk = make([]int, r)
		for i := range c.unshrunk {
			if st := a.Stride[i]; st > 0 {
				c.unshrunk[i] = max(0, (a.End[i]-a.Begin[i]+st-1)/st)
			} else {
				c.unshrunk[i] = max(0, (a.Begin[i]-a.End[i]-st-1)/(-st))
			}
		}
	}
	n.Op, n.Attrs, n.Inputs = graph.Slice, a, []string{x.Name}
	return nil
}

// foldDequantize turns DEQUANTIZE of a constant (float16 or int8 weights of
// a float model) into a float32 constant, computed as the kernel would.
func (c *opctx) foldDequantize() (bool, error) {
	if c.code != opDequantize || len(c.ins) != 1 || len(c.outs) != 1 || c.ins[0] < 0 {
		return false, nil
	}
	x, err := c.in(0)
	if err != nil || !x.IsConst() {
		return false, err
	}
	name, err := c.d.tensor(int(c.outs[0]))
	if err != nil {
		return false, c.errorf("output: %v", err)
	}
	y := c.d.g.Tensors[name]
	if y.DType != graph.Float32 || graph.NumElements(y.Shape) != x.Data.Len() {
		return false, c.errorf("output %q must be float32 with the input's %d elements", name, x.Data.Len())
	}
	if x.DType != graph.Float32 && x.Quant == nil {
		return false, c.errorf("constant input %q has no quantization", x.Name)
	}
	y.Data = dequantized(x, y.Shape)
	return true, nil
}

// dequantized is constant x in float32 with the given shape (of x's
// element count): each value scale·(q − zero point) along x's
// quantization axis, as TFLite's kernels compute it.
func dequantized(x *graph.Tensor, shape []int) *graph.Data {
	v := graph.NewData(graph.Float32, shape)
	for i := range v.F {
		if x.DType == graph.Float32 {
			v.F[i] = x.Data.F[i]
			continue
		}
		ch := 0
		if x.Quant.PerAxis() {
			ch = (i / graph.NumElements(x.Shape[x.Quant.Axis+1:])) % x.Shape[x.Quant.Axis]
		}
		s, z := x.Quant.At(ch)
		v.F[i] = float32(float64(s) * float64(x.Data.I[i]-int64(z)))
	}
	return v
}

// checkMixed refuses a convolution, fully connected layer or matrix
// product whose input and weights differ in being float, where
// dequantizeHybrid has not made them agree (weights computed at run time,
// or a float input with float weights and an integer output).
// checkQuant refuses quantization TFLite's kernels would not read as the
// file says (review findings, each compiled and ran "bit-exact" against the
// interpreter but not as TFLite computes):
//   - an activation quantized per channel (TFLite's are per tensor; every
//     channel was read with channel 0's scale);
//   - an int8 ADD, SUB or MUL on tensors without quantization (a wrapping
//     sum: 100 + 100 gave -56);
//   - int16 activations of a 16x8 layer or ADD/SUB with a zero point (the
//     scheme is symmetric; the interpreter refused them at run time only);
//   - int8 convolution weights with a zero point, and per-channel fully
//     connected ones: TFLite's kernels take them to be 0 (a weight of 1 at
//     zero point 9 times 5 is 5 there, and was -40 here).
func (c *opctx) checkQuant(n *graph.Node) error {
	g := c.d.g
	tensors := append(append([]string{}, n.Inputs...), n.Outputs...)
	for _, name := range tensors {
		t := g.Tensors[name]
		if t == nil || t.IsConst() || t.Quant == nil {
			continue
		}
		if len(t.Quant.Scale) > 1 {
			return c.errorf("activation %q is quantized per channel (%d scales): TFLite quantizes activations per tensor", name, len(t.Quant.Scale))
		}
	}
	switch n.Op {
	case graph.Add, graph.Sub, graph.Mul:
		for _, name := range tensors {
			if t := g.Tensors[name]; t != nil && (t.DType == graph.Int8 || t.DType == graph.UInt8 || t.DType == graph.Int16) && (t.Quant == nil || len(t.Quant.Scale) == 0) {
				return c.errorf("%s tensor %q has no quantization parameters", t.DType, name)
			}
		}
	}
	switch n.Op {
	case graph.Conv2D, graph.FullyConnected, graph.BatchMatMul, graph.ConvTranspose2D, graph.Add, graph.Sub:
		for _, name := range tensors {
			t := g.Tensors[name]
			if t == nil || t.IsConst() || t.DType != graph.Int16 || t.Quant == nil {
				continue
			}
			for _, z := range t.Quant.ZeroPoint {
				if z != 0 {
					return c.errorf("int16 tensor %q has zero point %d: TFLite's 16x8 scheme wants 0", name, z)
				}
			}
		}
	}
	if n.Op == graph.Conv2D || n.Op == graph.FullyConnected {
		x, w := g.Tensors[n.Inputs[0]], g.Tensors[n.Inputs[1]]
		if x != nil && w != nil && x.DType != graph.Float32 && w.DType == graph.Int8 && w.Quant != nil &&
			(n.Op == graph.Conv2D || len(w.Quant.Scale) > 1) {
			for _, z := range w.Quant.ZeroPoint {
				if z != 0 {
					what := "convolutions take"
					if n.Op == graph.FullyConnected {
						what = "per-channel fully connected layers take"
					}
					return c.errorf("int8 weights %q have zero point %d: TFLite's int8 %s symmetric weights (zero point 0) and ignore it", w.Name, z, what)
				}
			}
		}
	}
	return nil
}

func (c *opctx) checkMixed(n *graph.Node) error {
	switch n.Op {
	case graph.Conv2D, graph.FullyConnected, graph.BatchMatMul:
	default:
		return nil
	}
	x, w := c.d.g.Tensors[n.Inputs[0]], c.d.g.Tensors[n.Inputs[1]]
	if x != nil && w != nil && (x.DType == graph.Float32) != (w.DType == graph.Float32) {
		if x.DType == graph.Float32 {
			// Constant integer weights would have been dequantized.
			return c.errorf("float32 input with %s weights computed at run time is not supported (a dynamic-range model's weights are constants)", w.DType)
		}
		return c.errorf("%s input with float32 weights is not supported", x.DType)
	}
	return nil
}

// transposeConv maps TRANSPOSE_CONV (inputs: output shape, weights
// [Cout, KH, KW, Cin], input, optional bias). TFLite pads it as the
// convolution from the output back to the input: the leading pad is that
// convolution's, and rows past the file's output shape are dropped (or,
// when the output is larger, zero-extended as OutPad).
func (c *opctx) transposeConv(n *graph.Node) error {
	o, err := c.options(optTransposeConv)
	if err != nil {
		return err
	}
	w, err := c.in(1)
	if err != nil {
		return err
	}
	x, err := c.in(2)
	if err != nil {
		return err
	}
	b, err := c.optIn(3)
	if err != nil {
		return err
	}
	shape, err := c.transposeConvShape()
	if err != nil {
		return err
	}
	if len(w.Shape) != 4 || len(x.Shape) != 4 || len(shape) != 4 || w.Shape[3] != x.Shape[3] || shape[3] != w.Shape[0] {
		return c.errorf("weights %v, input %v and output shape %v do not fit", w.Shape, x.Shape, shape)
	}
	if !w.IsConst() {
		return c.errorf("weights %q must be constant", w.Name)
	}
	if x.DType == graph.Int16 {
		// TFLite Micro's 16x8 TRANSPOSE_CONV accumulates in 64 bits
		// whatever the bias, which it reads as int64 (an int16 bias it
		// widens): an int32 one would be misread (review finding).
		if w.DType != graph.Int8 {
			return c.errorf("int16 input %q with %s weights: TFLite's 16x8 layers take int8 weights", x.Name, w.DType)
		}
		if b != nil && b.DType != graph.Int64 && b.DType != graph.Int16 {
			return c.errorf("int16 transpose convolution with a %s bias %q: TFLite Micro's 16x8 kernel reads its bias as int64", b.DType, b.Name)
		}
	}
	a := &graph.ConvTransposeAttrs{Stride: [2]int{int(o.i32(2, 0)), int(o.i32(1, 0))}, Dilation: [2]int{1, 1}, Group: 1}
	if a.Stride[0] < 1 || a.Stride[1] < 1 {
		return c.errorf("strides %v must be positive", a.Stride)
	}
	if a.Act, err = c.act(o.u8(3, 0)); err != nil {
		return err
	}
	same, err := c.samePadding(o.i8(0, 0))
	if err != nil {
		return err
	}
	for i, p := range []struct{ lead, end, out *int }{{&a.Pad.Top, &a.Pad.Bottom, &a.OutPad[0]}, {&a.Pad.Left, &a.Pad.Right, &a.OutPad[1]}} {
		in, k, s, out := x.Shape[1+i], w.Shape[1+i], a.Stride[i], shape[1+i]
		*p.lead, _ = explicitPadding(same, out, k, s, 1)
		end := (in-1)*s + k - *p.lead - out
		if end < 0 {
			*p.out, end = -end, 0
		}
		*p.end = end
	}
	n.Op, n.Attrs = graph.ConvTranspose2D, a
	n.Inputs = []string{x.Name, w.Name, ""}
	if b != nil {
		n.Inputs[2] = b.Name
	}
	return nil
}

// transposeConvShape is TRANSPOSE_CONV's output shape: its constant input
// 0, or, where that is computed or fed at run time (TFLM's seanet models
// feed it as a model input), the output tensor's shape in the file, which
// is what TFLite Micro's kernel sizes its output by.
func (c *opctx) transposeConvShape() ([]int, error) {
	t, err := c.in(0)
	if err != nil {
		return nil, err
	}
	if t.IsConst() {
		return c.constInts(0, "output shape")
	}
	if t.DType == graph.Float32 || len(t.Shape) != 1 || t.Shape[0] != 4 {
		return nil, c.errorf("output shape (input 0) must be an integer tensor of 4 values")
	}
	y, err := c.out(0)
	if err != nil {
		return nil, err
	}
	return slices.Clone(y.Shape), nil
}

// cast maps CAST: the output tensor's type, by graph.CastData's rules
// (TFLite leaves a float out of an integer type's range undefined; mcugen
// saturates). Quantized tensors convert their stored values in TFLite,
// which mcugen does not reproduce: they are refused.
func (c *opctx) cast(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	if len(c.outs) != 1 {
		return c.errorf("%d outputs", len(c.outs))
	}
	yn, err := c.d.tensor(int(c.outs[0]))
	if err != nil {
		return c.errorf("output: %v", err)
	}
	y := c.d.g.Tensors[yn]
	if x.Quant != nil || y.Quant != nil {
		return c.errorf("CAST of quantized tensors (%s to %s) is not supported", x.DType, y.DType)
	}
	n.Op, n.Attrs, n.Inputs = graph.Cast, &graph.CastAttrs{To: y.DType}, []string{x.Name}
	return nil
}
