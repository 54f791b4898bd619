package onnx

import (
	"fmt"
	"strconv"

	"github.com/mcugen/mcugen/graph"
)

// ONNX Runtime's quantized operators of the com.microsoft domain (its
// "QOperator" format: what quantize_static wrote by default before the QDQ
// format, and what the model zoo's -int8 models hold) are each defined as
// the float operator between DequantizeLinear of its inputs and
// QuantizeLinear of its output. expandMicrosoftQOps rewrites them into that
// standard form before import, so they fold to the int8 kernels as a QDQ
// model's operators do (quant.FoldQDQ: TFLite's fixed-point requantization,
// which rounds twice, where ONNX Runtime computes these in float: they may
// differ by one step, near a tie or not, up to about 0.6 of a step before
// rounding, as 72 × 0.8 → 58, / 4 → 15 against 72 × 0.2 = 14.4 → 14); QLinearConv
// and QLinearMatMul stay themselves (ONNX's float requantization, as
// standard ONNX defines them).

const msDomain = "com.microsoft"

// msQOp describes one com.microsoft operator's inputs: the float operator
// it stands for, and for each quantized operand its (tensor, scale, zero
// point) input positions; out is the output's (scale, zero point).
type msQOp struct {
	op       string
	operands [][3]int
	out      [2]int
}

var msQOps = map[string]msQOp{
	"QLinearAdd":               {"Add", [][3]int{{0, 1, 2}, {3, 4, 5}}, [2]int{6, 7}},
	"QLinearMul":               {"Mul", [][3]int{{0, 1, 2}, {3, 4, 5}}, [2]int{6, 7}},
	"QLinearSigmoid":           {"Sigmoid", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearLeakyRelu":         {"LeakyRelu", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearGlobalAveragePool": {"GlobalAveragePool", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearAveragePool":       {"AveragePool", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearSoftmax":           {"Softmax", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearConcat":            {"Concat", nil, [2]int{0, 1}}, // operands: triplets from input 2
	"QGemm":                    {"Gemm", [][3]int{{0, 1, 2}, {3, 4, 5}}, [2]int{7, 8}},
	"QLinearReduceMean":        {"ReduceMean", [][3]int{{0, 1, 2}}, [2]int{3, 4}},
	"QLinearWhere":             {"Where", [][3]int{{1, 2, 3}, {4, 5, 6}}, [2]int{7, 8}}, // input 0, the condition, goes first as it is
}

// msSame are com.microsoft operators with the standard operator's inputs
// and meaning.
var msSame = map[string]bool{"QuantizeLinear": true, "DequantizeLinear": true, "QLinearConv": true}

// msExpander rewrites one graph.
type msExpander struct {
	g      *Graph
	names  map[string]bool
	consts map[string]*Tensor
	types  map[string]int32 // element types known from the file
	inputs map[string]bool  // graph inputs that are not initializers
	opset  int64
	added  []*Tensor
}

// expandMicrosoftQOps rewrites the graph's com.microsoft quantized operators
// in place (see above). Other operators, of any domain, are left as they are.
func expandMicrosoftQOps(g *Graph, opset int64) error {
	found := false
	for _, n := range g.Nodes {
		if n.Domain == msDomain && (msSame[n.OpType] || msQOps[n.OpType].op != "") {
			found = true
		}
	}
	if !found {
		return nil
	}
	x := &msExpander{g: g, names: map[string]bool{}, consts: map[string]*Tensor{}, types: map[string]int32{}, opset: opset}
	for _, t := range g.Initializer {
		x.names[t.Name] = true
		x.consts[t.Name] = t
		x.types[t.Name] = t.DataType
	}
	x.inputs = map[string]bool{}
	for _, vi := range g.Input {
		if x.consts[vi.Name] == nil {
			x.inputs[vi.Name] = true
		}
	}
	for _, list := range [][]*ValueInfo{g.Input, g.Output, g.ValueInfo} {
		for _, vi := range list {
			x.names[vi.Name] = true
			if vi.Type != nil && !vi.Type.NotTensor && vi.Type.ElemType != 0 {
				x.types[vi.Name] = vi.Type.ElemType
			}
		}
	}
	for _, n := range g.Nodes {
		x.names[n.Name] = true
		for _, o := range n.Output {
			x.names[o] = true
		}
		if n.OpType == "Constant" && (n.Domain == "" || n.Domain == "ai.onnx") && len(n.Output) == 1 {
			if t := constantAttrTensor(n); t != nil {
				x.consts[n.Output[0]] = t
				x.types[n.Output[0]] = t.DataType
			}
		}
	}
	var out []*Node
	for i, n := range g.Nodes {
		if n.Domain != msDomain {
			out = append(out, n)
			continue
		}
		if n.Name == "" {
			n.Name = fmt.Sprintf("%s_%d", n.OpType, i)
		}
		if msSame[n.OpType] {
			if n.OpType == "QLinearConv" && attrInt(n, "channels_last", 0) != 0 {
				return msUnsupported(n, "channels_last=1 (ONNX Runtime's NHWC form) is not supported; save the model before ONNX Runtime's layout optimizations")
			}
			c := *n
			c.Domain = ""
			out = append(out, &c)
			continue
		}
		spec, ok := msQOps[n.OpType]
		if !ok {
			out = append(out, n)
			continue
		}
		nodes, err := x.expand(n, spec)
		if err != nil {
			return err
		}
		out = append(out, nodes...)
	}
	g.Nodes = out
	g.Initializer = append(g.Initializer, x.added...)
	return nil
}

func msErr(n *Node, format string, a ...any) error {
	return fmt.Errorf("node %q (%s::%s): %s", n.Name, msDomain, n.OpType, fmt.Sprintf(format, a...))
}

// msUnsupported is msErr for what mcugen does not take (an UnsupportedError,
// as the converters' are).
func msUnsupported(n *Node, format string, a ...any) error {
	return &UnsupportedError{Msg: msErr(n, format, a...).Error()}
}

func attrInt(n *Node, name string, def int64) int64 {
	for _, a := range n.Attribute {
		if a.Name == name {
			return a.I
		}
	}
	return def
}

// attrFloat is n's float attribute name, or def.
func attrFloat(n *Node, name string, def float32) float32 {
	for _, a := range n.Attribute {
		if a.Name == name {
			return a.F
		}
	}
	return def
}

// fresh returns an unused tensor or node name built from base.
func (x *msExpander) fresh(base string) string {
	name := base
	for i := 1; x.names[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	x.names[name] = true
	return name
}

func input(n *Node, i int) string {
	if i < len(n.Input) {
		return n.Input[i]
	}
	return ""
}

// expand returns the standard nodes for one com.microsoft operator.
func (x *msExpander) expand(n *Node, spec msQOp) ([]*Node, error) {
	operands := spec.operands
	if n.OpType == "QLinearConcat" {
		if len(n.Input) < 5 || (len(n.Input)-2)%3 != 0 {
			return nil, msErr(n, "%d inputs; QLinearConcat takes Y_scale, Y_zero_point and then (tensor, scale, zero point) for each input", len(n.Input))
		}
		for i := 2; i < len(n.Input); i += 3 {
			operands = append(operands, [3]int{i, i + 1, i + 2})
		}
	}
	for _, o := range operands {
		if input(n, o[0]) == "" || input(n, o[1]) == "" {
			return nil, msErr(n, "input %d or its scale (input %d) is missing", o[0], o[1])
		}
	}
	if len(n.Output) != 1 || n.Output[0] == "" {
		return nil, msErr(n, "%d outputs; it has one", len(n.Output))
	}
	// Scales and zero points fed at run time (onnx2c's tests feed them as
	// graph inputs) are refused here, naming this node rather than the
	// DequantizeLinear written for it.
	params := []int{spec.out[0], spec.out[1]}
	for _, o := range operands {
		params = append(params, o[1], o[2])
	}
	for _, i := range params {
		if name := input(n, i); name != "" && x.inputs[name] {
			return nil, msUnsupported(n, "not supported: input %d (%q), a scale or zero point, is a graph input; it must be a constant", i, name)
		}
	}
	attrs := []*Attribute{}
	for _, a := range n.Attribute {
		switch a.Name {
		case "channels_last":
			if a.I != 0 {
				return nil, msUnsupported(n, "channels_last=1 (ONNX Runtime's NHWC form) is not supported; save the model before ONNX Runtime's layout optimizations")
			}
		case "axis":
			if n.OpType == "QLinearSoftmax" {
				continue // set below, whatever the model's opset
			}
			attrs = append(attrs, a)
		case "opset":
			// QLinearSoftmax's opset: the Softmax semantics it follows.
			// Before opset 13 Softmax flattens from axis on; from 13 it
			// takes one axis. They agree on the last axis.
			if (a.I < 13) != (x.opset < 13) && attrInt(n, "axis", -1) != -1 {
				return nil, msUnsupported(n, "opset %d Softmax over axis %d in an opset %d model is not supported", a.I, attrInt(n, "axis", -1), x.opset)
			}
		default:
			attrs = append(attrs, a)
		}
	}
	if n.OpType == "QLinearSoftmax" {
		// Its axis defaults to -1 (Softmax's did to 1 before opset 13).
		attrs = append(attrs, &Attribute{Name: "axis", Type: AttrInt, I: attrInt(n, "axis", -1)})
	}
	var nodes []*Node
	var ins []string
	if n.OpType == "QLinearWhere" {
		if input(n, 0) == "" {
			return nil, msErr(n, "the condition (input 0) is missing")
		}
		ins = append(ins, input(n, 0))
	}
	// A QGemm's alpha > 0 goes into B's scale (and C's): alpha·(A·B + C) is
	// A·(alpha·B) + alpha·C, which folds to an int8 FullyConnected, where a
	// Gemm's alpha left a float Mul behind it (review finding).
	alpha, bScale := float32(1), ""
	if n.OpType == "QGemm" {
		alpha = attrFloat(n, "alpha", 1)
		if t := x.consts[input(n, 4)]; alpha > 0 && alpha != 1 && t != nil {
			if d, err := t.ToData(); err == nil && d.DType == graph.Float32 && d.Len() > 0 {
				sd := graph.NewData(graph.Float32, d.Shape)
				for i, v := range d.F {
					sd.F[i] = v * alpha
				}
				st := NewTensor(x.fresh(n.Output[0]+"/b_scale_alpha"), sd)
				x.added = append(x.added, st)
				x.consts[st.Name] = st
				bScale = st.Name
			}
		}
	}
	for k, o := range operands {
		name := x.fresh(n.Output[0] + "/dequantized" + strconv.Itoa(k))
		dq := &Node{OpType: "DequantizeLinear", Name: x.fresh(n.Name + "/dequantize" + strconv.Itoa(k)), Output: []string{name},
			Input: []string{input(n, o[0]), input(n, o[1])}}
		if n.OpType == "QGemm" && k == 1 && bScale != "" {
			dq.Input[1] = bScale
		}
		if z := input(n, o[2]); z != "" {
			dq.Input = append(dq.Input, z)
		}
		if n.OpType == "QGemm" && k == 1 {
			// Per-column scales of B run along its N axis.
			axis := int64(1)
			if attrInt(n, "transB", 0) != 0 {
				axis = 0
			}
			dq.Attribute = []*Attribute{{Name: "axis", Type: AttrInt, I: axis}}
		}
		nodes = append(nodes, dq)
		ins = append(ins, name)
	}
	if n.OpType == "QGemm" {
		k := float32(1)
		if bScale != "" {
			k = alpha // in C's scale; Gemm's alpha and beta are 1
		}
		bias, err := x.gemmBias(n, k)
		if err != nil {
			return nil, err
		}
		if bias != nil {
			nodes = append(nodes, bias)
			ins = append(ins, bias.Output[0])
		}
		// C is quantized with scale alpha·a_scale·b_scale: Y = alpha·(A·B + C).
		if bScale != "" {
			kept := attrs[:0]
			for _, a := range attrs {
				if a.Name != "alpha" {
					kept = append(kept, a)
				}
			}
			attrs = kept
		} else {
			attrs = append(attrs, &Attribute{Name: "beta", Type: AttrFloat, F: alpha})
		}
	}
	if n.OpType == "QLinearReduceMean" && x.opset >= 18 {
		// From opset 18 ReduceMean takes its axes as an input.
		var axes []int64
		kept := attrs[:0]
		for _, a := range attrs {
			if a.Name == "axes" {
				axes = a.Ints
				continue
			}
			kept = append(kept, a)
		}
		attrs = kept
		if axes != nil {
			d := graph.NewData(graph.Int64, []int{len(axes)})
			copy(d.I, axes)
			t := NewTensor(x.fresh(n.Output[0]+"/axes"), d)
			x.added = append(x.added, t)
			x.consts[t.Name] = t
			ins = append(ins, t.Name)
		}
	}
	scale, zp := input(n, spec.out[0]), input(n, spec.out[1])
	if n.OpType == "QGemm" && scale == "" {
		// No output scale: the result is float.
		nodes = append(nodes, &Node{OpType: spec.op, Name: n.Name, Input: ins, Output: []string{n.Output[0]}, Attribute: attrs})
		return nodes, nil
	}
	if scale == "" {
		return nil, msErr(n, "the output scale (input %d) is missing", spec.out[0])
	}
	if zp == "" {
		var err error
		if zp, err = x.zeroPoint(n, operands); err != nil {
			return nil, err
		}
	}
	y := x.fresh(n.Output[0] + "/float")
	nodes = append(nodes,
		&Node{OpType: spec.op, Name: n.Name, Input: ins, Output: []string{y}, Attribute: attrs},
		&Node{OpType: "QuantizeLinear", Name: x.fresh(n.Name + "/quantize"), Input: []string{y, scale, zp}, Output: []string{n.Output[0]}})
	return nodes, nil
}

// zeroPoint makes the zero (of the operands' type) an omitted output zero
// point stands for: QuantizeLinear without one would give uint8.
func (x *msExpander) zeroPoint(n *Node, operands [][3]int) (string, error) {
	dt := int32(0)
	for _, o := range operands {
		for _, name := range []string{input(n, o[2]), input(n, o[0])} {
			if t, ok := x.types[name]; ok && name != "" && dt == 0 {
				dt = t
			}
		}
	}
	gdt, _ := graphDType(dt)
	if gdt != graph.Int8 && gdt != graph.UInt8 {
		return "", msErr(n, "no output zero point, and the operands' type is not known (give the zero point: its type is the output's)")
	}
	t := NewTensor(x.fresh(n.Output[0]+"/zero_point"), graph.NewData(gdt, nil))
	x.added = append(x.added, t)
	x.consts[t.Name] = t
	return t.Name, nil
}

// gemmBias dequantizes QGemm's int32 C with scale k·a_scale·b_scale (k is
// alpha where B's scale took it, else 1 and Gemm's beta applies alpha). The
// scales must be constants.
func (x *msExpander) gemmBias(n *Node, k float32) (*Node, error) {
	c := input(n, 6)
	if c == "" {
		return nil, nil
	}
	var scales [2]*graph.Data
	for k, i := range []int{1, 4} {
		t := x.consts[input(n, i)]
		if t == nil {
			return nil, msErr(n, "input %d (a scale) is not a constant: C's scale is computed from it", i)
		}
		d, err := t.ToData()
		if err != nil || d.DType != graph.Float32 || d.Len() == 0 {
			return nil, msErr(n, "input %d: a scale must be float", i)
		}
		scales[k] = d
	}
	if scales[0].Len() != 1 {
		return nil, msErr(n, "a_scale has %d values; it is a scalar", scales[0].Len())
	}
	s := graph.NewData(graph.Float32, nil)
	if bl := scales[1].Len(); bl > 1 {
		s = graph.NewData(graph.Float32, []int{bl})
	}
	for i := range s.F {
		s.F[i] = scales[0].F[0] * scales[1].F[i] * k
	}
	st := NewTensor(x.fresh(n.Output[0]+"/bias_scale"), s)
	x.added = append(x.added, st)
	x.consts[st.Name] = st
	name := x.fresh(n.Output[0] + "/bias")
	return &Node{OpType: "DequantizeLinear", Name: x.fresh(n.Name + "/dequantize_bias"), Input: []string{c, st.Name}, Output: []string{name},
		Attribute: []*Attribute{{Name: "axis", Type: AttrInt, I: 0}}}, nil
}

// constantAttrTensor is the tensor a Constant node holds, in whichever of its
// attributes it is written (value, or the scalar and list forms exporters
// write for a scale or zero point: value_float, value_floats, value_int,
// value_ints); nil for none.
func constantAttrTensor(n *Node) *Tensor {
	for _, a := range n.Attribute {
		switch a.Name {
		case "value":
			if a.T != nil {
				return a.T
			}
		case "value_float":
			return &Tensor{DataType: TFloat, FloatData: []float32{a.F}}
		case "value_floats":
			return &Tensor{DataType: TFloat, Dims: []int64{int64(len(a.Floats))}, FloatData: a.Floats}
		case "value_int":
			return &Tensor{DataType: TInt64, Int64Data: []int64{a.I}}
		case "value_ints":
			return &Tensor{DataType: TInt64, Dims: []int64{int64(len(a.Ints))}, Int64Data: a.Ints}
		}
	}
	return nil
}
