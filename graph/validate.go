package graph

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"

	"github.com/mcugen/mcugen/graph/qmath"
	gg "gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// Validate checks that g is well formed: every name resolves, every tensor
// has one producer (or is a constant or graph input), nodes come in an
// order where inputs exist before use, shapes are sane, constants hold
// the data their shape promises, and quantization parameters are usable.
func Validate(g *Graph) error {
	if len(g.Outputs) == 0 {
		return fmt.Errorf("graph %q has no outputs", g.Name)
	}
	// A stateful model's states are outputs too: one with nothing else
	// compiled, and run failed in the runner (a review finding).
	own := 0
	for _, o := range g.Outputs {
		if !slices.ContainsFunc(g.States, func(s State) bool { return s.Out == o }) {
			own++
		}
	}
	if own == 0 {
		return fmt.Errorf("graph %q has no outputs but its %d state(s)", g.Name, len(g.States))
	}
	for name, t := range g.Tensors {
		if t.Name != name {
			return fmt.Errorf("tensor %q is stored under the name %q", t.Name, name)
		}
		if err := validateTensor(t); err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
	}
	defined := map[string]string{}
	for _, name := range g.Inputs {
		t := g.Tensors[name]
		if t == nil {
			return fmt.Errorf("graph input %q: no such tensor", name)
		}
		if t.IsConst() {
			return fmt.Errorf("graph input %q is a constant", name)
		}
		defined[name] = "graph input"
	}
	for _, n := range g.Nodes {
		if err := validateWindow(n); err != nil {
			return fmt.Errorf("node %q (%s): %w", n.Name, n.Op, err)
		}
		// A NaN attribute (a LeakyRelu's alpha, a Clip bound folded from
		// a NaN initializer) makes every output NaN or differ between the
		// C and the reference (adversarial journey: they compiled).
		if f := nanField(reflect.ValueOf(n.Attrs)); f != "" {
			return fmt.Errorf("node %q (%s): attribute %s is NaN", n.Name, n.Op, f)
		}
		for i, in := range n.Inputs {
			if in == "" {
				continue
			}
			t := g.Tensors[in]
			if t == nil {
				return fmt.Errorf("node %q (%s): input %d names no tensor %q", n.Name, n.Op, i, in)
			}
			if _, ok := defined[in]; !ok && !t.IsConst() {
				return fmt.Errorf("node %q (%s): input %q is not computed before it is used (cycle or wrong order)", n.Name, n.Op, in)
			}
			// ±Inf is allowed in constants (attention masks), but not in
			// a layer's weights or bias, where it only makes Inf and NaN.
			if i >= 1 && t.Data != nil && weighted[n.Op] {
				for j, v := range t.Data.F {
					if math.IsInf(float64(v), 0) {
						return fmt.Errorf("node %q (%s): tensor %q: element %d is %v: a layer's weights and bias must be finite numbers", n.Name, n.Op, in, j, v)
					}
				}
			}
		}
		if err := checkTypes(g, n); err != nil {
			return fmt.Errorf("node %q (%s): %w", n.Name, n.Op, err)
		}
		if err := CheckMultiplier(g, n); err != nil {
			return fmt.Errorf("node %q (%s): %w", n.Name, n.Op, err)
		}
		for _, out := range n.Outputs {
			t := g.Tensors[out]
			if t == nil {
				return fmt.Errorf("node %q (%s): output %q names no tensor", n.Name, n.Op, out)
			}
			if by, dup := defined[out]; dup {
				return fmt.Errorf("node %q (%s): output %q is already written by %s", n.Name, n.Op, out, by)
			}
			if t.IsConst() {
				return fmt.Errorf("node %q (%s): output %q is a constant", n.Name, n.Op, out)
			}
			defined[out] = fmt.Sprintf("node %q", n.Name)
		}
	}
	for _, name := range g.Outputs {
		if _, ok := defined[name]; !ok {
			if t := g.Tensors[name]; t == nil || !t.IsConst() {
				return fmt.Errorf("graph output %q is never computed", name)
			}
		}
	}
	return validateStates(g)
}

// maxWindow bounds the strides, dilations, pads and output padding of a
// convolution or pool: far above any real model's, and small enough that
// no sum or product of them with a shape overflows (a hostile attribute
// must not wrap into a plausible window that indexes out of bounds).
const maxWindow = 1 << 20

// validateWindow checks the window attributes of a Conv2D,
// ConvTranspose2D or pool. Zero strides and dilations mean 1.
func validateWindow(n *Node) error {
	var stride, dil, outPad [2]int
	var kernel []int
	var pad Padding
	switch a := n.Attrs.(type) {
	case *Conv2DAttrs:
		stride, dil, pad = a.Stride, a.Dilation, a.Pad
	case *ConvTransposeAttrs:
		stride, dil, pad, outPad = a.Stride, a.Dilation, a.Pad, a.OutPad
	case *PoolAttrs:
		stride, dil, pad, kernel = a.Stride, a.Dilation, a.Pad, a.Kernel[:]
	case *MaxPoolIndicesAttrs:
		stride, dil, pad, kernel = a.Stride, a.Dilation, a.Pad, a.Kernel[:]
	default:
		return nil
	}
	for _, f := range []struct {
		name   string
		v      []int
		lo, hi int
	}{
		{"stride", stride[:], 0, maxWindow},
		{"dilation", dil[:], 0, maxWindow},
		{"padding", []int{pad.Top, pad.Left, pad.Bottom, pad.Right}, 0, maxWindow},
		{"output padding", outPad[:], 0, maxWindow},
		{"kernel", kernel, 1, MaxElements},
	} {
		for _, x := range f.v {
			if x < f.lo || x > f.hi {
				return fmt.Errorf("%s %v: each must be in [%d, %d]", f.name, f.v, f.lo, f.hi)
			}
		}
	}
	return nil
}

// movesData are the ops whose output holds elements of their first input
// (of every input, for Concat), so it has its type.
var movesData = map[Op]bool{Reshape: true, Transpose: true, Slice: true, Pad: true, Concat: true, MaxPool2D: true, AvgPool2D: true,
	Resize: true, Maximum: true, Minimum: true, Relu: true, Clip: true}

// intToFloat are the ops whose integer kernels cannot write a float32
// output (a Dequantize or Cast does that).
var intToFloat = map[Op]bool{Conv2D: true, ConvTranspose2D: true, FullyConnected: true, BatchMatMul: true, Add: true, Sub: true,
	Mul: true, Mean: true, Softmax: true, Sigmoid: true, Tanh: true, SquaredDifference: true, L2Normalize: true, LeakyRelu: true,
	HardSwish: true}

// floatToInt are the ops whose float32 kernels cannot write an integer
// output (a Quantize or Cast does that): a file's float32 input to an int8
// Tanh, Sigmoid, Elu, HardSwish, LeakyRelu, Rsqrt, Mean or Sum compiled
// the float kernel into int8 storage, and the firmware disagreed with the
// reference (session 57's review; TFLite refuses such a model).
var floatToInt = map[Op]bool{Conv2D: true, ConvTranspose2D: true, FullyConnected: true, BatchMatMul: true, Add: true, Sub: true,
	Mul: true, Mean: true, Softmax: true, Sigmoid: true, Tanh: true, SquaredDifference: true, L2Normalize: true, LeakyRelu: true,
	HardSwish: true, Math: true, Reduce: true}

// checkTypes holds n's element types and ranks to what its kernels take,
// where a file's own tensor types could say otherwise (a review finding:
// an int8 Concat of a float input, an int8 pool writing float32, a float
// bias on an int8 convolution, a Dequantize to int8 all compiled into C
// that converted or dropped values).
func checkTypes(g *Graph, n *Node) error {
	x, y := g.In(n, 0), g.Out(n, 0)
	if x == nil || y == nil || x.DType == Invalid || y.DType == Invalid {
		return nil
	}
	keeps := movesData[n.Op]
	if a, ok := n.Attrs.(*ReduceAttrs); ok && n.Op == Reduce && (a.Kind == ReduceMax || a.Kind == ReduceMin) {
		keeps = true
	}
	if keeps {
		for i, in := range n.Inputs {
			if t := g.Tensors[in]; t != nil && (i == 0 || n.Op == Concat) && t.DType != y.DType {
				return fmt.Errorf("input %q is %s and output %q is %s: the op keeps its input's type", in, t.DType, y.Name, y.DType)
			}
		}
	}
	if intToFloat[n.Op] && x.DType != Float32 && x.DType != Bool && y.DType == Float32 {
		return fmt.Errorf("input %q is %s and output %q is float32: its integer kernel writes integers", x.Name, x.DType, y.Name)
	}
	if floatToInt[n.Op] && x.DType == Float32 && y.DType != Float32 {
		return fmt.Errorf("input %q is float32 and output %q is %s: its float kernel writes float32", x.Name, y.Name, y.DType)
	}
	switch n.Op {
	case Add, Sub, Mul, Div:
		if x.DType == Bool || y.DType == Bool {
			return fmt.Errorf("%s of bool tensors", n.Op)
		}
	case Dequantize:
		if y.DType != Float32 || x.DType == Float32 {
			return fmt.Errorf("input %q is %s and output %q is %s: a Dequantize maps integers to float32", x.Name, x.DType, y.Name, y.DType)
		}
	case Quantize:
		// (a mutated file's float32 output compiled, and the reference
		// refused it: session 44's mutation test)
		if !y.DType.IsInt() {
			return fmt.Errorf("output %q is %s: a Quantize writes integers", y.Name, y.DType)
		}
	case Conv2D, FullyConnected, ConvTranspose2D:
		b := g.In(n, 2)
		if b == nil {
			break
		}
		if x.DType.IsInt() && b.DType != Int32 && b.DType != Int64 {
			return fmt.Errorf("bias %q is %s on %s input %q: an integer layer's bias is int32 (int64 for int16)", b.Name, b.DType, x.DType, x.Name)
		}
		if x.DType == Float32 && b.DType != Float32 {
			return fmt.Errorf("bias %q is %s on float32 input %q", b.Name, b.DType, x.Name)
		}
	}
	switch n.Op {
	case Conv2D, ConvTranspose2D, MaxPool2D, AvgPool2D:
		if len(x.Shape) != 4 || len(y.Shape) != 4 {
			return fmt.Errorf("input %q %v and output %q %v must both be 4-D", x.Name, x.Shape, y.Name, y.Shape)
		}
	case Pad, Transpose, Concat:
		// Their kernels index the output by the input's axes: an output
		// of another shape (a file's) was written past its end (a Pad
		// of [1,2,2,1] into [1,3,3]: the lowering's index out of range,
		// session 44's mutation test).
		if want, err := inferShape(g, n, x); err == nil && want != nil && !slices.Equal(want, y.Shape) {
			return fmt.Errorf("output %q is %v; its input %q %v and attributes make it %v", y.Name, y.Shape, x.Name, x.Shape, want)
		}
	}
	return nil
}

// weighted are the ops whose inputs after the first are a layer's weights
// and bias when constant.
var weighted = map[Op]bool{Conv2D: true, ConvTranspose2D: true, FullyConnected: true}

// scaleProducts are the ops whose integer output is requantized by the
// product of their first two inputs' scales over the output's.
var scaleProducts = map[Op]bool{Conv2D: true, ConvTranspose2D: true, FullyConnected: true, BatchMatMul: true, Mul: true}

// rescales are the ops whose integer inputs are rescaled, each by its
// scale over the output's.
var rescales = map[Op]bool{Add: true, Sub: true, Concat: true, Quantize: true, Relu: true, Clip: true, LeakyRelu: true, AvgPool2D: true, Resize: true}

// CheckMultiplier refuses an integer op whose requantization multiplier
// (input scale × weight scale / output scale, or an input's scale over the
// output's) the kernels would apply as a left shift of 31 bits or more,
// which leaves nothing of the accumulator (and from 32 on, C leaves it
// undefined): review finding, a 1e30 input scale compiled to a shift of
// 100, and the C disagreed with the interpreter. No converter writes one;
// a hostile file or a broken calibration does. ONNX QLinear layers
// (RequantFloat) multiply in float and have no shift.
func CheckMultiplier(g *Graph, n *Node) error {
	if len(n.Outputs) == 0 {
		return nil
	}
	y := intQuant(g, n.Outputs[0])
	if y == nil {
		return nil
	}
	sy := float64(slices.Min(y.Quant.Scale))
	switch {
	case rescales[n.Op]:
		for _, in := range n.Inputs {
			if x := intQuant(g, in); x != nil {
				if sx := float64(slices.Max(x.Quant.Scale)); !qmath.ShiftFits(sx / sy) {
					return fmt.Errorf("input %q's scale %g over the output's %g is %.3g: the integer kernels would rescale by it with a left shift of 31 bits or more", in, float32(sx), float32(sy), sx/sy)
				}
			}
		}
	case scaleProducts[n.Op] && len(n.Inputs) >= 2 && !requantFloat(n):
		a, b := intQuant(g, n.Inputs[0]), intQuant(g, n.Inputs[1])
		if a == nil || b == nil {
			return nil
		}
		sa, sb := float64(slices.Max(a.Quant.Scale)), float64(slices.Max(b.Quant.Scale))
		if m := sa * sb / sy; !qmath.ShiftFits(m) {
			return fmt.Errorf("its requantization multiplier %.3g (input scale %g × weight scale %g / output scale %g) needs a left shift of 31 bits or more, which the integer kernels cannot apply", m, float32(sa), float32(sb), float32(sy))
		}
		// A fully connected layer with one weight scale and a batch
		// matmul multiply the two scales in float32 first
		// (qmath.ProductMultiplier), which can overflow where the double
		// product above does not (1e20 × 1e20).
		if (n.Op == FullyConnected || n.Op == BatchMatMul) && len(b.Quant.Scale) == 1 {
			if m := qmath.ProductReal(float32(sa), float32(sb), float32(sy)); !qmath.ShiftFits(m) {
				return fmt.Errorf("its requantization multiplier %.3g (input scale %g × weight scale %g in float32, as TFLite multiplies them, / output scale %g) needs a left shift of 31 bits or more, which the integer kernels cannot apply", m, float32(sa), float32(sb), float32(sy))
			}
		}
	case scaleProducts[n.Op] && len(n.Inputs) >= 2:
		// ONNX's QLinear layers (RequantFloat) scale the accumulator by
		// x scale × w scale / y scale in float32: where that overflows,
		// 0 × Inf is NaN, which no integer conversion defines.
		a, b := intQuant(g, n.Inputs[0]), intQuant(g, n.Inputs[1])
		if a == nil || b == nil {
			return nil
		}
		sa, sy := a.Quant.Scale[0], y.Quant.Scale[0]
		for _, sb := range b.Quant.Scale {
			if f := sa * sb / sy; math.IsInf(float64(f), 0) {
				return fmt.Errorf("its requantization scale (input scale %g × weight scale %g / output scale %g, in float32 as ONNX Runtime computes it) is %v: the QLinear kernel cannot multiply by it", sa, sb, sy, f)
			}
		}
	case (n.Op == SVDFFeature || n.Op == SVDFTime) && len(n.Inputs) >= 2:
		// TFLite Micro's SVDF multipliers: float(s1 · s2) / s3 in float32,
		// s3 the state's (SVDFFeature, its third input) or the output's.
		ts := []*Tensor{intQuant(g, n.Inputs[0]), intQuant(g, n.Inputs[1]), y}
		if n.Op == SVDFFeature && len(n.Inputs) >= 3 {
			ts[2] = intQuant(g, n.Inputs[2])
		}
		if ts[0] == nil || ts[1] == nil || ts[2] == nil {
			return nil
		}
		s1, s2, s3 := ts[0].Quant.Scale[0], ts[1].Quant.Scale[0], ts[2].Quant.Scale[0]
		if m := qmath.SVDFReal(s1, s2, s3); !qmath.ShiftFits(m) {
			return fmt.Errorf("its requantization multiplier %.3g (scale %g × scale %g / scale %g, in float32 as TFLite Micro computes it) needs a left shift of 31 bits or more, which the integer kernels cannot apply", m, s1, s2, s3)
		}
	}
	return nil
}

// intQuant is the tensor name if it is a quantized integer one, else nil.
func intQuant(g *Graph, name string) *Tensor {
	if t := g.Tensors[name]; name != "" && t != nil && t.Quant != nil && len(t.Quant.Scale) > 0 && t.DType.IsInt() {
		return t
	}
	return nil
}

// requantFloat reports whether n requantizes in float (ONNX's QLinear).
func requantFloat(n *Node) bool {
	switch a := n.Attrs.(type) {
	case *Conv2DAttrs:
		return a != nil && a.Requant == RequantFloat
	case *FullyConnectedAttrs:
		return a != nil && a.Requant == RequantFloat
	case *BatchMatMulAttrs:
		return a != nil && a.Requant == RequantFloat
	}
	return false
}

func validateTensor(t *Tensor) error {
	if t.DType == Invalid {
		return fmt.Errorf("no dtype")
	}
	if err := CheckShape(t.Shape); err != nil && len(t.Shape) > 0 {
		return err
	}
	if n := int64(t.NumElements()) * int64(t.DType.Size()); n > MaxBytes {
		return fmt.Errorf("%s%v is %d bytes: more than the %d (2 GiB) the generated code's 32-bit offsets address", t.DType, t.Shape, n, int64(MaxBytes))
	}
	if t.Data != nil {
		if t.Data.DType != t.DType {
			return fmt.Errorf("constant data is %s, tensor is %s", t.Data.DType, t.DType)
		}
		if t.Data.Len() != t.NumElements() {
			return fmt.Errorf("constant holds %d elements, shape %v needs %d", t.Data.Len(), t.Shape, t.NumElements())
		}
		if err := t.Data.Check(); err != nil {
			return err
		}
		// ±Inf is a value models hold (PyTorch's -inf attention masks);
		// NaN is not one a constant should hold.
		for i, v := range t.Data.F {
			if math.IsNaN(float64(v)) {
				return fmt.Errorf("element %d is NaN: a constant must be a number (±Inf is one)", i)
			}
		}
	}
	if q := t.Quant; q != nil {
		if len(q.Scale) == 0 {
			return fmt.Errorf("quantization without a scale")
		}
		for _, s := range q.Scale {
			if !(s > 0) || math.IsInf(float64(s), 0) {
				return fmt.Errorf("quantization scale %g is not a positive finite number", s)
			}
		}
		if len(q.ZeroPoint) != 0 && len(q.ZeroPoint) != 1 && len(q.ZeroPoint) != len(q.Scale) {
			return fmt.Errorf("%d zero points for %d scales", len(q.ZeroPoint), len(q.Scale))
		}
		if len(q.Scale) > 1 {
			if q.Axis < 0 || q.Axis >= len(t.Shape) || t.Shape[q.Axis] != len(q.Scale) {
				return fmt.Errorf("%d per-axis scales do not match axis %d of %v", len(q.Scale), q.Axis, t.Shape)
			}
		}
		if t.DType.IsInt() {
			lo, hi := t.DType.Range()
			for _, z := range q.ZeroPoint {
				if int64(z) < lo || int64(z) > hi {
					return fmt.Errorf("zero point %d outside %s range", z, t.DType)
				}
			}
		}
	}
	return nil
}

// TopoSort reorders g.Nodes into a dependency order (stable: among ready
// nodes the earlier one goes first). It fails on a cycle, naming a node in it.
func TopoSort(g *Graph) error {
	dg := simple.NewDirectedGraph()
	for i := range g.Nodes {
		dg.AddNode(simple.Node(i))
	}
	prod := map[string]int{}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			prod[o] = i
		}
	}
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			if p, ok := prod[in]; ok && p != i {
				if !dg.HasEdgeFromTo(int64(p), int64(i)) {
					dg.SetEdge(dg.NewEdge(simple.Node(p), simple.Node(i)))
				}
			} else if ok && p == i {
				return fmt.Errorf("node %q (%s) reads its own output %q", n.Name, n.Op, in)
			}
		}
	}
	order, err := topo.SortStabilized(dg, func(ns []gg.Node) {
		sort.Slice(ns, func(i, j int) bool { return ns[i].ID() < ns[j].ID() })
	})
	if err != nil {
		if u, ok := err.(topo.Unorderable); ok && len(u) > 0 && len(u[0]) > 0 {
			ids := make([]int, 0, len(u[0]))
			for _, nd := range u[0] {
				ids = append(ids, int(nd.ID()))
			}
			sort.Ints(ids)
			return fmt.Errorf("node %q (%s) is part of a cycle", g.Nodes[ids[0]].Name, g.Nodes[ids[0]].Op)
		}
		return err
	}
	nodes := make([]*Node, len(order))
	for i, nd := range order {
		nodes[i] = g.Nodes[nd.ID()]
	}
	g.Nodes = nodes
	return nil
}

// nanField names the first float field of an attribute struct (through
// pointers, slices and nested structs) that holds NaN, or "".
func nanField(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return nanField(v.Elem())
	case reflect.Float32, reflect.Float64:
		if math.IsNaN(v.Float()) {
			return "value"
		}
	case reflect.Slice, reflect.Array:
		if v.Len() > 4096 {
			return "" // a table, not a parameter
		}
		for i := 0; i < v.Len(); i++ {
			if f := nanField(v.Index(i)); f != "" {
				return fmt.Sprintf("element %d", i)
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if f := nanField(v.Field(i)); f != "" {
				if f == "value" {
					return v.Type().Field(i).Name
				}
				return v.Type().Field(i).Name + " " + f
			}
		}
	}
	return ""
}
