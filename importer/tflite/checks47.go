package tflite

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// The checks of this file refuse operators TFLite's InterpreterBuilder or
// its kernels' Prepare refuse, which the importer read some meaning into
// (review findings: a structural mutator's files compiled, and some then
// crashed the interpreter or computed what TFLite never would).

// maxInputs is the most inputs TFLite's kernels take for the common
// operators (NumInputs counts the absent ones, -1, too): an input beyond
// them was never read, so a file listing one is not what it seems.
var maxInputs = map[int32]int{
	opAdd: 2, opSub: 2, opMul: 2, opMaximum: 2, opMinimum: 2,
	opSoftmax: 1, opAveragePool2D: 1, opMaxPool2D: 1, codeL2Pool2D: 1,
	opConv2D: 3, opDepthwiseConv2D: 3, opFullyConnected: 3, opTransposeConv: 4,
	opReshape: 2, opSqueeze: 1, opExpandDims: 2,
	opLogistic: 1, opTanh: 1, opRelu: 1, opRelu6: 1, opReluN1To1: 1, opLeakyRelu: 1, opHardSwish: 1,
	opQuantize: 1, opDequantize: 1, opCast: 1,
	opTranspose: 2, opPad: 3, opPadV2: 3, opStridedSlice: 4, opResizeNearestNeighbor: 2,
	opArgMax: 2, opArgMin: 2, opMean: 2, opSum: 2, opReduceProd: 2, opReduceMax: 2, opReduceMin: 2,
	opBatchMatMul: 2,
}

// checkInputIndices refuses what TFLite's InterpreterBuilder refuses of an
// operator's input list, whether or not the kernel reads the input: an
// index past the subgraph's tensors, or a negative one other than -1
// (kTfLiteOptionalTensor, the only mark of an absent input; -2 read as
// absent). It also refuses more inputs than the kernel takes.
func (c *opctx) checkInputIndices() error {
	for k, i := range c.ins {
		switch {
		case i < -1:
			return c.errorf("input %d has tensor index %d: only -1 marks an absent input", k, i)
		case int(i) >= len(c.d.tensors):
			return c.errorf("input %d: tensor index %d out of range (%d tensors)", k, i, len(c.d.tensors))
		}
	}
	if n, ok := maxInputs[c.code]; ok && len(c.ins) > n {
		return c.errorf("%d inputs: TFLite's %s takes at most %d", len(c.ins), c.name, n)
	}
	return nil
}

// checkKernel makes, on the file's tensors, before any is read in another
// form (a hybrid operator's weights dequantized), the checks TFLite's
// kernels make in Prepare that the mapping would not: tensor types,
// quantization the kernel needs, the axis of per-channel weights, the
// bias scale of a quantized FULLY_CONNECTED, the shape a RESHAPE gives.
func (c *opctx) checkKernel() error {
	switch c.code {
	case opConv2D, opDepthwiseConv2D, opFullyConnected:
		return c.checkWeighted(0)
	case opTransposeConv:
		return c.checkWeighted(2)
	case opAdd, opSub, opMul, opMaximum, opMinimum:
		return c.checkBinaryTypes()
	case opLeakyRelu, opLogistic, opTanh, opHardSwish, opSoftmax:
		return c.checkQuantized(0)
	case opReshape:
		return c.checkReshape()
	}
	return nil
}

// quantizedType says whether dt is an integer type TFLite quantizes
// activations and weights in.
func quantizedType(dt graph.DType) bool {
	return dt == graph.Int8 || dt == graph.UInt8 || dt == graph.Int16
}

// checkQuantized refuses an int8, uint8 or int16 input (at position act)
// or output without quantization parameters, for a kernel that rescales
// by them (TFLite reads a scale of 0 there).
func (c *opctx) checkQuantized(act int) error {
	x, err := c.in(act)
	if err != nil {
		return err
	}
	y, err := c.out(0)
	if err != nil {
		return err
	}
	for _, t := range []*graph.Tensor{x, y} {
		if quantizedType(t.DType) && t.Quant == nil {
			return c.errorf("%s tensor %q has no quantization parameters: TFLite's %s rescales by them", t.DType, t.Name, c.name)
		}
	}
	return nil
}

// checkWeighted checks a convolution or fully connected layer whose
// activation is input act (the weights are input 1, the bias input 2, or 3
// for TRANSPOSE_CONV) as TFLite's kernels do: a quantized
// layer has quantized input, weights and output, weights of the input's
// kind (int8, or int4, for int8 and int16; uint8 for uint8) quantized per
// channel along the output channels (dimension 0, 3 for DEPTHWISE_CONV_2D),
// and writes the type its kernel writes; a float layer writes float32.
func (c *opctx) checkWeighted(act int) error {
	x, err := c.in(act)
	if err != nil {
		return err
	}
	w, err := c.in(1)
	if err != nil {
		return err
	}
	y, err := c.out(0)
	if err != nil {
		return err
	}
	if x.DType == graph.Float32 {
		// Hybrid weights are checked by dequantizeHybrid.
		if y.DType != graph.Float32 {
			return c.errorf("float32 input %q, %s output %q: TFLite's float %s writes float32", x.Name, y.DType, y.Name, c.name)
		}
		return nil
	}
	if !quantizedType(x.DType) {
		return c.errorf("%s input %q: TFLite's %s takes float32, int8, uint8 or int16", x.DType, x.Name, c.name)
	}
	wt := c.d.tensors[c.ins[1]].i8(tensorType, 0)
	outs := []graph.DType{x.DType}
	switch {
	case x.DType == graph.UInt8 && wt != ttUInt8:
		return c.errorf("uint8 input %q with %s weights %q: TFLite's uint8 %s takes uint8 weights", x.Name, fileTypeName(wt), w.Name, c.name)
	case x.DType != graph.UInt8 && wt != ttInt8 && wt != ttInt4:
		return c.errorf("%s input %q with %s weights %q: TFLite's %s %s takes int8 (or int4) weights", x.DType, x.Name, fileTypeName(wt), w.Name, x.DType, c.name)
	}
	if c.code == opFullyConnected && x.DType != graph.Int16 {
		// TFLite's quantized FULLY_CONNECTED also writes int16.
		outs = append(outs, graph.Int16)
	}
	if !slices.Contains(outs, y.DType) {
		return c.errorf("%s input %q, %s output %q: TFLite's %s %s writes %s", x.DType, x.Name, y.DType, y.Name, x.DType, c.name, dtypeList(outs))
	}
	for _, t := range []*graph.Tensor{x, w, y} {
		if t.Quant == nil {
			return c.errorf("%s tensor %q has no quantization parameters: TFLite's %s %s rescales by them", t.DType, t.Name, x.DType, c.name)
		}
	}
	axis := 0
	if c.code == opDepthwiseConv2D {
		axis = 3
	}
	// TFLite's kernels take one scale or one per output channel and never
	// read quantized_dimension: a square filter marked along its input
	// channels runs per output channel there, and so it is read here.
	if n := len(w.Quant.Scale); n > 1 && w.Quant.Axis != axis {
		if axis >= len(w.Shape) || w.Shape[axis] != n {
			return c.errorf("filter %q has %d scales along axis %d; %s wants one, or one per output channel (axis %d)", w.Name, n, w.Quant.Axis, c.name, axis)
		}
		w.Quant.Axis = axis
	}
	bi := 2
	if c.code == opTransposeConv {
		bi = 3
	}
	b, err := c.optIn(bi)
	if err != nil || b == nil || b.Quant == nil || len(w.Quant.Scale) != 1 || (c.code != opFullyConnected && x.DType != graph.UInt8) {
		return err
	}
	// GetQuantizedConvolutionMultipler: TFLite's quantized
	// FULLY_CONNECTED (and its legacy uint8 convolutions) refuse a bias
	// whose scale is not about input scale × filter scale: the kernel
	// adds the bias as if it were (|difference| / output scale ≤ 0.02).
	prod := float64(x.Quant.Scale[0]) * float64(w.Quant.Scale[0])
	if bs := float64(b.Quant.Scale[0]); math.Abs(prod-bs)/float64(y.Quant.Scale[0]) > 0.02 {
		return c.errorf("bias %q has scale %g, input scale × filter scale is %g: TFLite wants them within 0.02 of the output scale (%g)", b.Name, float32(bs), float32(prod), y.Quant.Scale[0])
	}
	return nil
}

// checkBinaryTypes refuses an element-wise binary operator whose inputs
// differ in type, or whose output has another type than its inputs
// (TFLite's ADD sets the output's type to its inputs'), but for TFLite's
// MUL of int16 inputs into int8 or uint8. Quantized operands are checked
// by checkQuant.
func (c *opctx) checkBinaryTypes() error {
	if len(c.ins) < 2 {
		return nil // input 1 is missing: reported by the mapping
	}
	a, b, y, err := c.binary()
	if err != nil {
		return err
	}
	if a.DType != b.DType {
		return c.errorf("inputs %q (%s) and %q (%s): TFLite's %s wants inputs of one type", a.Name, a.DType, b.Name, b.DType, c.name)
	}
	if y.DType != a.DType && !(c.code == opMul && a.DType == graph.Int16 && (y.DType == graph.Int8 || y.DType == graph.UInt8)) {
		return c.errorf("%s inputs, %s output %q: TFLite's %s writes its inputs' type", a.DType, y.DType, y.Name, c.name)
	}
	return nil
}

// checkReshape refuses a RESHAPE whose shape, the constant shape tensor
// (input 1, when an int32 vector, as TFLite's ShapeIsVector asks) or else
// the new_shape option, with its -1 resolved, does not give the output
// tensor's shape: TFLite sizes the output by it, mcugen by the file's
// output shape. A shape computed at run time, or an empty new_shape, gives
// nothing to check (TFLite Micro reads the output's shape there too).
func (c *opctx) checkReshape() error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	y, err := c.out(0)
	if err != nil {
		return err
	}
	if graph.NumElements(y.Shape) != graph.NumElements(x.Shape) {
		return nil // the graph's check names the output's count
	}
	var shape []int
	what := ""
	if len(c.ins) > 1 && c.ins[1] >= 0 {
		// Read from the file, not imported: the mapping never imports it
		// (an import refused tf.reshape(x, [])'s empty shape vector, [0],
		// and counted the shape among the weights: second review).
		tt := c.d.tensors[c.ins[1]]
		if raw := tt.ints(tensorShape); len(raw) == 1 && tt.i8(tensorType, 0) == ttInt32 && raw[0] >= 0 {
			what = fmt.Sprintf("shape tensor %q", tt.str(tensorName))
			if raw[0] > 0 {
				d, err := c.d.data(int(tt.u32(tensorBuffer, 0)), ttInt32, graph.Int32, []int{int(raw[0])})
				if err != nil {
					return c.errorf("%s: %v", what, err)
				}
				if d == nil {
					return nil // computed at run time
				}
				shape = d.Ints()
			} else {
				shape = []int{} // a scalar
			}
		}
	}
	if what == "" && c.optType == optReshape {
		raw := c.opts.ints(0)
		if err := c.d.check(); err != nil {
			return c.errorf("new_shape: %v", err)
		}
		if len(raw) == 0 {
			return nil
		}
		for _, v := range raw {
			shape = append(shape, int(v))
		}
		what = "new_shape"
		if len(shape) == 1 && shape[0] == 0 {
			shape = []int{} // TFLite's legacy mark of a scalar
		}
	}
	if what == "" {
		return nil
	}
	n, stretch := 1, -1
	for k, v := range shape {
		switch {
		case v == -1 && stretch < 0:
			stretch = k
		case v < 0:
			return c.errorf("%s %v: only one dimension may be -1, and none negative otherwise", what, shape)
		default:
			n *= v
			if n > math.MaxInt32 {
				return c.errorf("%s %v is too large", what, shape)
			}
		}
	}
	in := graph.NumElements(x.Shape)
	got := slices.Clone(shape)
	if stretch >= 0 {
		if n == 0 || in%n != 0 {
			return c.errorf("%s %v does not fit input %q %v (%d elements)", what, shape, x.Name, x.Shape, in)
		}
		got[stretch] = in / n
		n = in
	}
	if n != in {
		return c.errorf("%s %v gives %d elements, input %q %v has %d", what, shape, n, x.Name, x.Shape, in)
	}
	if !slices.Equal(graph.WithoutOnes(got), graph.WithoutOnes(y.Shape)) {
		return c.errorf("%s %v gives shape %v, the output %q is %v", what, shape, got, y.Name, y.Shape)
	}
	return nil
}

// optReshape is ReshapeOptions' position in the BuiltinOptions union.
const optReshape = 17

// samePadding reads TFLite's Padding enum: SAME (0) or VALID (1); any
// other value was read as VALID.
func (c *opctx) samePadding(v int8) (bool, error) {
	switch v {
	case 0:
		return true, nil
	case 1:
		return false, nil
	}
	return false, c.errorf("padding %d unknown (SAME is 0, VALID 1)", v)
}

// fileTypeName names a TFLite tensor type as the file stores it.
func fileTypeName(tt int8) string {
	switch tt {
	case ttInt4:
		return "int4"
	case ttFloat16:
		return "float16"
	}
	if dt, err := dtypeOf(tt); err == nil && tt != ttUInt32 && tt != ttUInt64 {
		return dt.String()
	}
	return fmt.Sprintf("type %d", tt)
}

func dtypeList(ds []graph.DType) string {
	s := ""
	for i, d := range ds {
		switch {
		case i == 0:
		case i == len(ds)-1:
			s += " or "
		default:
			s += ", "
		}
		s += d.String()
	}
	return s
}

// binary imports a two-operand operator's inputs and output.
func (c *opctx) binary() (a, b, y *graph.Tensor, err error) {
	if a, err = c.in(0); err != nil {
		return nil, nil, nil, err
	}
	if b, err = c.in(1); err != nil {
		return nil, nil, nil, err
	}
	y, err = c.out(0)
	return a, b, y, err
}
