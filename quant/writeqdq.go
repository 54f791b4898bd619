package quant

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/fileio"
)

// ErrQDQUnsupported is wrapped by the error of an op (or math function) the
// QDQ writer has no ONNX form for: the int8 graph is fine, only the file
// cannot be written.
var ErrQDQUnsupported = errors.New("not supported by the QDQ writer")

// WriteQDQ writes an int8 graph (from Quantize or FoldQDQ) as a QDQ ONNX
// model (opset 13): float inputs followed by QuantizeLinear, every integer op
// as DequantizeLinear -> float op -> QuantizeLinear with the graph's scales
// and zero points, per-channel int8 weights and int32 biases as
// DequantizeLinear of initializers (axis 0), float outputs. 4-D activations
// keep the graph's NHWC shapes at the model's inputs and outputs and are
// transposed to NCHW around Conv and pooling. Loaded back through
// importer/onnx, FoldQDQ and IntIO give the same int8 graph.
func WriteQDQ(g *graph.Graph, path string) error {
	m, err := QDQModel(g)
	if err != nil {
		return err
	}
	if err := fileio.WriteAtomic(path, m.Marshal()); err != nil {
		return fmt.Errorf("quant: write QDQ model: %w", err)
	}
	return nil
}

type qdqWriter struct {
	g     *graph.Graph
	og    *onnx.Graph
	nchw  map[string]bool   // ONNX value of an IR tensor is NCHW
	float map[string]string // "T/nchw" or "T/nhwc" -> float ONNX value
	seq   int
	inits map[string]bool
	used  map[string]bool // names of the values the writer made
	// cur names what is being written: the IR node (or the model input or
	// output) whose name the nodes written for it derive theirs from.
	cur   string
	nodes map[string]bool // node names taken
	mains map[string]bool // IR node names given to a written node
}

// fresh returns name, or name with a number, unused by the IR graph's
// tensors and by the values and initializers written so far (the IR may
// hold a tensor named like a value the writer derives, "x_dequant").
func (w *qdqWriter) fresh(name string) string {
	base := name
	for w.used[name] || w.inits[name] || w.g.Tensors[name] != nil {
		w.seq++
		name = fmt.Sprintf("%s_%d", base, w.seq)
	}
	w.used[name] = true
	return name
}

// isValue reports whether name is an IR activation, which the written
// model holds under its own name (an initializer must not take it).
func (w *qdqWriter) isValue(name string) bool {
	t := w.g.Tensors[name]
	return t != nil && !t.IsConst()
}

// QDQModel builds the ONNX model WriteQDQ writes.
func QDQModel(g *graph.Graph) (*onnx.Model, error) {
	if len(g.States) > 0 {
		// ErrQDQUnsupported: the model's, so quantize names the model, not
		// the -o file (quantizer review).
		return nil, fmt.Errorf("quant: QDQ model: tensor %q is carried from one inference to the next, which an ONNX model cannot say (%w)", g.States[0].In, ErrQDQUnsupported)
	}
	// The written model keeps the float model's input and output names: the int8
	// tensors behind its QuantizeLinear and DequantizeLinear edges take new ones.
	g, orig := renameInt8IO(g)
	w := &qdqWriter{g: g, og: &onnx.Graph{Name: g.Name}, nchw: map[string]bool{}, float: map[string]string{}, inits: map[string]bool{}, used: map[string]bool{}, nodes: map[string]bool{}, mains: map[string]bool{}}
	// Each IR node's name goes to the ONNX node that computes it (its Conv,
	// Gemm, QuantizeLinear), so a model read back keeps the layer names: it
	// is reserved first, the nodes written around it taking derived names
	// (conv1/quant, conv1/transpose) that cannot take it.
	for _, n := range g.Nodes {
		w.nodes[n.Name] = true
	}
	for _, name := range orig {
		w.used[name] = true
	}
	written := map[string]bool{} // the file's input and output names so far
	for _, in := range g.Inputs {
		t := g.Tensors[in]
		if t.DType == graph.Int8 {
			name := orig[in]
			w.cur = name
			written[name] = true
			w.og.Input = append(w.og.Input, valueInfo(name, graph.Float32, t.Shape))
			w.node("QuantizeLinear", []string{name, w.scale(in, t.Quant), w.zp(in, t.Quant)}, []string{in})
		} else {
			w.og.Input = append(w.og.Input, valueInfo(in, t.DType, t.Shape))
		}
	}
	for _, n := range g.Nodes {
		w.cur = n.Name
		if err := w.emit(n); err != nil {
			return nil, fmt.Errorf("quant: write QDQ: node %q (%s): %w", n.Name, n.Op, err)
		}
	}
	for _, out := range g.Outputs {
		t := g.Tensors[out]
		name := out
		w.cur = out
		if orig[out] != "" {
			w.cur = orig[out]
		}
		if t.IsConst() && !written[out] {
			// A constant output (the model returns a weight): a Constant
			// node makes it, as the importer wants every output made by
			// a node (review finding: the file was written without it,
			// and mcugen refused the file it wrote).
			written[out] = true
			name := out
			if w.inits[name] || w.isValue(name) {
				name = w.fresh(out + "_out") // a node's input holds the name already
			}
			w.node("Constant", nil, []string{name}, &onnx.Attribute{Name: "value", Type: onnx.AttrTensor, T: onnx.NewTensor("", t.Data)})
			w.og.Output = append(w.og.Output, valueInfo(name, t.DType, t.Shape))
			continue
		}
		if t.DType == graph.Int8 {
			// The model's name, unless an input or an earlier output took it (a
			// tensor that is both, or listed twice): then a fresh one.
			final := orig[out]
			if written[final] {
				final = w.fresh(final + "_float")
			}
			written[final] = true
			name = final
			if len(t.Shape) == 4 && w.nchw[out] {
				name = w.fresh(out + "_float_nchw")
			}
			w.node("DequantizeLinear", []string{out, w.scale(name, t.Quant), w.zp(name, t.Quant)}, []string{name})
			if len(t.Shape) == 4 && w.nchw[out] {
				w.node("Transpose", []string{name}, []string{final}, ints("perm", 0, 2, 3, 1))
				name = final
			}
		} else if w.nchw[out] {
			name = w.fresh(out + "_nhwc")
			w.node("Transpose", []string{out}, []string{name}, ints("perm", 0, 2, 3, 1))
		}
		w.og.Output = append(w.og.Output, valueInfo(name, graph.Float32, t.Shape))
	}
	// Opset 14 where HardSwish is written (its first opset); the other
	// ops written mean the same in both.
	opset := int64(13)
	for _, n := range g.Nodes {
		if n.Op == graph.HardSwish {
			opset = 14
		}
	}
	return &onnx.Model{IRVersion: 8, ProducerName: "mcugen", OpsetImport: []onnx.OpsetID{{Version: opset}}, Graph: w.og}, nil
}

// renameInt8IO returns a copy of g whose int8 inputs and outputs have new
// names (name_q), and the map from each new name to the old one, which the
// float edges of the written model take. g itself is not changed.
func renameInt8IO(g *graph.Graph) (*graph.Graph, map[string]string) {
	orig := map[string]string{}
	ren := map[string]string{}
	taken := func(n string) bool { _, ok := g.Tensors[n]; return ok || orig[n] != "" }
	for _, list := range [][]string{g.Inputs, g.Outputs} {
		for _, name := range list {
			if t := g.Tensors[name]; t == nil || t.DType != graph.Int8 || ren[name] != "" {
				continue
			}
			n := name + "_q"
			for i := 1; taken(n); i++ {
				n = fmt.Sprintf("%s_q%d", name, i)
			}
			ren[name], orig[n] = n, name
		}
	}
	if len(ren) == 0 {
		return g, orig
	}
	r := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = n
			if m, ok := ren[n]; ok {
				out[i] = m
			}
		}
		return out
	}
	c := *g
	c.Tensors = make(map[string]*graph.Tensor, len(g.Tensors))
	for n, t := range g.Tensors {
		if m, ok := ren[n]; ok {
			tc := *t
			tc.Name = m
			t = &tc
			n = m
		}
		c.Tensors[n] = t
	}
	c.Nodes = make([]*graph.Node, len(g.Nodes))
	for i, n := range g.Nodes {
		nc := *n
		nc.Inputs, nc.Outputs = r(n.Inputs), r(n.Outputs)
		c.Nodes[i] = &nc
	}
	c.Inputs, c.Outputs = r(g.Inputs), r(g.Outputs)
	return &c, orig
}

func valueInfo(name string, dt graph.DType, shape []int) *onnx.ValueInfo {
	tp := &onnx.TypeProto{ElemType: onnx.NewTensor("", graph.NewData(dt, nil)).DataType, HasShape: true}
	for _, d := range shape {
		tp.Shape = append(tp.Shape, onnx.Dim{Value: int64(d), HasValue: true})
	}
	return &onnx.ValueInfo{Name: name, Type: tp}
}

func ints(name string, v ...int) *onnx.Attribute {
	a := &onnx.Attribute{Name: name, Type: onnx.AttrInts}
	for _, x := range v {
		a.Ints = append(a.Ints, int64(x))
	}
	return a
}

func intAttr(name string, v int) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrInt, I: int64(v)}
}

// node writes a node named after w.cur and its op (conv1/quant,
// conv1/transpose), or op_N outside any.
func (w *qdqWriter) node(op string, ins, outs []string, attrs ...*onnx.Attribute) {
	var name string
	switch {
	case w.cur == "":
		w.seq++
		name = fmt.Sprintf("%s_%d", op, w.seq)
	case op == "QuantizeLinear":
		name = w.cur + "/quant"
	case op == "DequantizeLinear":
		name = w.cur + "/dequant"
	default:
		name = w.cur + "/" + strings.ToLower(op)
	}
	base := name
	for i := 2; w.nodes[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	w.nodes[name] = true
	w.og.Nodes = append(w.og.Nodes, &onnx.Node{Name: name, OpType: op, Input: ins, Output: outs, Attribute: attrs})
}

// main writes the node that computes IR node n's result, under n's name
// (a derived one if an earlier IR node had the same name).
func (w *qdqWriter) main(n *graph.Node, op string, ins, outs []string, attrs ...*onnx.Attribute) {
	if n.Name == "" || w.mains[n.Name] {
		w.node(op, ins, outs, attrs...)
		return
	}
	w.mains[n.Name] = true
	on := &onnx.Node{Name: n.Name, OpType: op, Input: ins, Output: outs, Attribute: attrs}
	if w.g.KeepFloat[n.Name] {
		on.DocString = onnx.KeepFloatMark
	}
	w.og.Nodes = append(w.og.Nodes, on)
}

func (w *qdqWriter) init(name string, d *graph.Data) string {
	for w.inits[name] || w.used[name] || w.isValue(name) {
		w.seq++
		name = fmt.Sprintf("%s_%d", name, w.seq)
	}
	w.inits[name] = true
	w.og.Initializer = append(w.og.Initializer, onnx.NewTensor(name, d))
	return name
}

// scale and zp add the (per-tensor or per-axis) parameters of q.
func (w *qdqWriter) scale(base string, q *graph.Quant) string {
	d := &graph.Data{DType: graph.Float32, F: append([]float32(nil), q.Scale...)}
	if len(q.Scale) > 1 {
		d.Shape = []int{len(q.Scale)}
	}
	return w.init(base+"_scale", d)
}

func (w *qdqWriter) zp(base string, q *graph.Quant) string {
	return w.zpOf(base, q, graph.Int8)
}

func (w *qdqWriter) zpOf(base string, q *graph.Quant, dt graph.DType) string {
	n := len(q.Scale)
	d := &graph.Data{DType: dt, I: make([]int64, n)}
	for i := range d.I {
		_, z := q.At(i)
		d.I[i] = int64(z)
	}
	if n > 1 {
		d.Shape = []int{n}
	}
	return w.init(base+"_zero_point", d)
}

// floatOf returns the float ONNX value of IR tensor t in NCHW (nchw) or in
// the IR's own layout, dequantizing and transposing as needed.
func (w *qdqWriter) floatOf(t string, nchw bool) string {
	key := fmt.Sprintf("%s/%v", t, nchw)
	if v, ok := w.float[key]; ok {
		return v
	}
	tt := w.g.Tensors[t]
	v := t
	if tt.IsConst() {
		d := tt.Data
		if nchw && len(d.Shape) == 4 {
			d = transposeData(d, []int{0, 3, 1, 2})
		}
		if tt.DType.IsInt() && tt.Quant != nil {
			cn := w.init(t, d)
			dq := w.fresh(cn + "_dequant")
			attrs := []*onnx.Attribute{}
			if tt.Quant.PerAxis() {
				attrs = append(attrs, intAttr("axis", tt.Quant.Axis))
			}
			w.node("DequantizeLinear", []string{cn, w.scale(t, tt.Quant), w.zpOf(t, tt.Quant, tt.DType)}, []string{dq}, attrs...)
			v = dq
		} else {
			v = w.init(t+fmt.Sprintf("_%v", nchw), d)
		}
		w.float[key] = v
		return v
	}
	if tt.DType.IsInt() && tt.Quant != nil {
		base := t + "_dequant"
		dq, ok := w.float[t+"/dq"]
		if !ok {
			dq = w.fresh(base)
			w.node("DequantizeLinear", []string{t, w.scale(base, tt.Quant), w.zp(base, tt.Quant)}, []string{dq})
			w.float[t+"/dq"] = dq
		}
		v = dq
	}
	if len(tt.Shape) == 4 && w.nchw[t] != nchw {
		perm := []int{0, 3, 1, 2}
		suffix := "_nchw"
		if !nchw {
			perm, suffix = []int{0, 2, 3, 1}, "_nhwc"
		}
		out := w.fresh(v + suffix)
		w.node("Transpose", []string{v}, []string{out}, ints("perm", perm...))
		v = out
	}
	w.float[key] = v
	return v
}

// finish quantizes the float result f of node n into its output tensor.
func (w *qdqWriter) finish(n *graph.Node, f string, nchw bool) {
	out := n.Outputs[0]
	t := w.g.Tensors[out]
	if a, ok := actOf(n); ok && a != graph.ActNone {
		lo, hi, _ := a.Bounds()
		r := w.fresh(f + "_act")
		if a == graph.ActRelu {
			w.node("Relu", []string{f}, []string{r})
		} else {
			w.node("Clip", []string{f, w.init(r+"_min", &graph.Data{DType: graph.Float32, F: []float32{float32(lo)}}),
				w.init(r+"_max", &graph.Data{DType: graph.Float32, F: []float32{float32(hi)}})}, []string{r})
		}
		f = r
	}
	w.nchw[out] = nchw
	if t.DType == graph.Int8 && t.Quant != nil {
		w.node("QuantizeLinear", []string{f, w.scale(out, t.Quant), w.zp(out, t.Quant)}, []string{out})
	} else {
		w.node("Identity", []string{f}, []string{out})
	}
}

func (w *qdqWriter) emit(n *graph.Node) error {
	g := w.g
	out := n.Outputs[0]
	fo := w.fresh(out + "_f")
	in := func(i int, nchw bool) string { return w.floatOf(n.Inputs[i], nchw) }
	switch n.Op {
	case graph.Quantize:
		t := g.Tensors[out]
		w.main(n, "QuantizeLinear", []string{in(0, false), w.scale(out, t.Quant), w.zp(out, t.Quant)}, []string{out})
		w.nchw[out] = false
		return nil
	case graph.Dequantize:
		src := g.Tensors[n.Inputs[0]]
		w.main(n, "DequantizeLinear", []string{n.Inputs[0], w.scale(out, src.Quant), w.zp(out, src.Quant)}, []string{out})
		w.nchw[out] = w.nchw[n.Inputs[0]]
		return nil
	case graph.Conv2D:
		a, ok := n.Attrs.(*graph.Conv2DAttrs)
		if !ok {
			return fmt.Errorf("no Conv2DAttrs")
		}
		ws := g.Tensors[n.Inputs[1]].Shape
		ins := []string{in(0, true), in(1, true)}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			ins = append(ins, in(2, false))
		}
		w.main(n, "Conv", ins, []string{fo}, ints("kernel_shape", ws[1], ws[2]), ints("strides", max(a.Stride[0], 1), max(a.Stride[1], 1)),
			ints("dilations", max(a.Dilation[0], 1), max(a.Dilation[1], 1)), ints("pads", a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right),
			intAttr("group", max(a.Group, 1)))
		w.finish(n, fo, true)
	case graph.ConvTranspose2D:
		a, ok := n.Attrs.(*graph.ConvTransposeAttrs)
		if !ok || a == nil {
			return fmt.Errorf("no ConvTransposeAttrs")
		}
		if max(a.Group, 1) != 1 {
			// ONNX's [Cin, Cout/g, KH, KW] regroups the channels: not a transpose.
			return fmt.Errorf("grouped ConvTranspose %w", ErrQDQUnsupported)
		}
		// The [Cout, KH, KW, Cin] weights dequantized as they are, then
		// transposed to ONNX's [Cin, Cout, KH, KW] (the importer's
		// transpose back and FoldQDQ's folding of layout moves undo it).
		ws := g.Tensors[n.Inputs[1]].Shape
		wt := w.fresh(fo + "_w_iohw")
		w.node("Transpose", []string{in(1, false)}, []string{wt}, ints("perm", 3, 0, 1, 2))
		ins := []string{in(0, true), wt}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			ins = append(ins, in(2, false))
		}
		w.main(n, "ConvTranspose", ins, []string{fo}, ints("kernel_shape", ws[1], ws[2]), ints("strides", max(a.Stride[0], 1), max(a.Stride[1], 1)),
			ints("dilations", max(a.Dilation[0], 1), max(a.Dilation[1], 1)), ints("pads", a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right),
			ints("output_padding", a.OutPad[0], a.OutPad[1]))
		w.finish(n, fo, true)
	case graph.MaxPool2D, graph.AvgPool2D:
		a, ok := n.Attrs.(*graph.PoolAttrs)
		if !ok {
			return fmt.Errorf("no PoolAttrs")
		}
		attrs := []*onnx.Attribute{ints("kernel_shape", a.Kernel[0], a.Kernel[1]), ints("strides", max(a.Stride[0], 1), max(a.Stride[1], 1)),
			ints("pads", a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right)}
		op := "MaxPool"
		if n.Op == graph.AvgPool2D {
			op = "AveragePool"
			if a.CountIncludePad {
				attrs = append(attrs, intAttr("count_include_pad", 1))
			}
		}
		w.main(n, op, []string{in(0, true)}, []string{fo}, attrs...)
		w.finish(n, fo, true)
	case graph.FullyConnected:
		x := in(0, false)
		ws := g.Tensors[n.Inputs[1]].Shape
		if xs := g.Tensors[n.Inputs[0]].Shape; len(xs) != 2 {
			r := w.fresh(x + "_2d")
			w.node("Reshape", []string{x, w.init(r+"_shape", &graph.Data{DType: graph.Int64, Shape: []int{2}, I: []int64{-1, int64(ws[1])}})}, []string{r})
			x = r
		}
		ins := []string{x, in(1, false)}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			ins = append(ins, in(2, false))
		}
		w.main(n, "Gemm", ins, []string{fo}, intAttr("transB", 1))
		if os := g.Tensors[out].Shape; len(os) != 2 {
			r := w.fresh(fo + "_nd")
			w.node("Reshape", []string{fo, w.shapeInit(r, os)}, []string{r})
			fo = r
		}
		w.finish(n, fo, false)
	case graph.BatchMatMul:
		a, _ := n.Attrs.(*graph.BatchMatMulAttrs)
		ins := []string{in(0, false), in(1, false)}
		for i, adj := range []bool{a != nil && a.AdjX, a != nil && a.AdjY} {
			t := g.In(n, i)
			if !adj || t == nil || len(t.Shape) < 2 {
				continue
			}
			perm := make([]int64, len(t.Shape))
			for k := range perm {
				perm[k] = int64(k)
			}
			r := len(perm)
			perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
			tr := w.fresh(fo + "_adj")
			w.node("Transpose", []string{ins[i]}, []string{tr}, &onnx.Attribute{Name: "perm", Type: onnx.AttrInts, Ints: perm})
			ins[i] = tr
		}
		w.main(n, "MatMul", ins, []string{fo})
		w.finish(n, fo, false)
	case graph.Add, graph.Sub, graph.Mul, graph.Div, graph.Maximum, graph.Minimum:
		op := map[graph.Op]string{graph.Add: "Add", graph.Sub: "Sub", graph.Mul: "Mul", graph.Div: "Div", graph.Maximum: "Max", graph.Minimum: "Min"}[n.Op]
		w.main(n, op, []string{in(0, false), in(1, false)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Reshape:
		w.main(n, "Reshape", []string{in(0, false), w.shapeInit(fo, g.Tensors[out].Shape)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Softmax:
		a, ok := n.Attrs.(*graph.SoftmaxAttrs)
		if !ok {
			return fmt.Errorf("no SoftmaxAttrs")
		}
		if a.Beta != 0 && a.Beta != 1 {
			return fmt.Errorf("softmax beta %v", a.Beta)
		}
		// The mode is the op (review finding: LogSoftmax and Hardmax
		// were written as Softmax, and their QDQ models computed it).
		op, ok := map[graph.SoftmaxMode]string{graph.SoftmaxPlain: "Softmax", graph.SoftmaxLog: "LogSoftmax", graph.SoftmaxHard: "Hardmax"}[a.Mode]
		if !ok {
			return fmt.Errorf("softmax mode %q %w", a.Mode, ErrQDQUnsupported)
		}
		w.main(n, op, []string{in(0, false)}, []string{fo}, intAttr("axis", a.Axis))
		w.finish(n, fo, false)
	case graph.Sigmoid, graph.Tanh, graph.Relu, graph.HardSwish:
		w.main(n, string(n.Op), []string{in(0, false)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Resize:
		a, ok := n.Attrs.(*graph.ResizeAttrs)
		if !ok || a == nil {
			return fmt.Errorf("no ResizeAttrs")
		}
		mode := map[string]string{"nearest": "nearest", "bilinear": "linear", "cubic": "cubic"}[a.Mode]
		if mode == "" {
			return fmt.Errorf("resize mode %q %w", a.Mode, ErrQDQUnsupported)
		}
		str := func(name, v string) *onnx.Attribute {
			return &onnx.Attribute{Name: name, Type: onnx.AttrString, S: []byte(v)}
		}
		attrs := []*onnx.Attribute{str("mode", mode), str("coordinate_transformation_mode", a.Coord)}
		if a.Nearest != "" {
			attrs = append(attrs, str("nearest_mode", a.Nearest))
		}
		if mode == "cubic" {
			attrs = append(attrs, &onnx.Attribute{Name: "cubic_coeff_a", Type: onnx.AttrFloat, F: a.CubicA})
			if a.ExcludeOutside {
				attrs = append(attrs, intAttr("exclude_outside", 1))
			}
		}
		// The model's scales where it gave them (they set the sampling
		// positions), else the output's sizes; NCHW.
		ys := g.Tensors[out].Shape
		ins := []string{in(0, true), ""}
		if a.Scale[0] != 0 && a.Scale[1] != 0 {
			ins = append(ins, w.init(fo+"_scales", &graph.Data{DType: graph.Float32, Shape: []int{4}, F: []float32{1, 1, a.Scale[0], a.Scale[1]}}))
		} else {
			ins = append(ins, "", w.init(fo+"_sizes", &graph.Data{DType: graph.Int64, Shape: []int{4}, I: []int64{int64(ys[0]), int64(ys[3]), int64(ys[1]), int64(ys[2])}}))
		}
		w.main(n, "Resize", ins, []string{fo}, attrs...)
		w.finish(n, fo, true)
	case graph.Pow:
		w.main(n, "Pow", []string{in(0, false), in(1, false)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Math:
		a, ok := n.Attrs.(*graph.MathAttrs)
		if !ok || a == nil {
			return fmt.Errorf("no MathAttrs")
		}
		switch {
		case qdqMath[a.Fn]:
			// Functions ONNX has under the same name (a TFLite int8
			// table's function too: it is the float function there).
			w.main(n, string(a.Fn), []string{in(0, false)}, []string{fo})
		case a.Fn == graph.MathRsqrt:
			r := fo + "_sqrt"
			w.node("Sqrt", []string{in(0, false)}, []string{r})
			w.main(n, "Reciprocal", []string{r}, []string{fo})
		case a.Fn == graph.MathSquare:
			x := in(0, false)
			w.main(n, "Mul", []string{x, x}, []string{fo})
		case a.Fn == graph.MathElu || a.Fn == graph.MathCelu || a.Fn == graph.MathThresholdedRelu:
			w.main(n, string(a.Fn), []string{in(0, false)}, []string{fo}, &onnx.Attribute{Name: "alpha", Type: onnx.AttrFloat, F: a.Alpha})
		default:
			return fmt.Errorf("math function %s %w", a.Fn, ErrQDQUnsupported)
		}
		w.finish(n, fo, false)
	case graph.Concat:
		a, ok := n.Attrs.(*graph.ConcatAttrs)
		if !ok {
			return fmt.Errorf("no ConcatAttrs")
		}
		var ins []string
		for i := range n.Inputs {
			ins = append(ins, in(i, false))
		}
		w.main(n, "Concat", ins, []string{fo}, intAttr("axis", a.Axis))
		w.finish(n, fo, false)
	case graph.Mean:
		a, ok := n.Attrs.(*graph.MeanAttrs)
		if !ok {
			return fmt.Errorf("no MeanAttrs")
		}
		keep := 0
		if a.KeepDims {
			keep = 1
		}
		w.main(n, "ReduceMean", []string{in(0, false)}, []string{fo}, ints("axes", a.Axes...), intAttr("keepdims", keep))
		w.finish(n, fo, false)
	case graph.Transpose:
		a, ok := n.Attrs.(*graph.TransposeAttrs)
		if !ok {
			return fmt.Errorf("no TransposeAttrs")
		}
		w.main(n, "Transpose", []string{in(0, false)}, []string{fo}, ints("perm", a.Perm...))
		w.finish(n, fo, false)
	case graph.Pad:
		a, ok := n.Attrs.(*graph.PadAttrs)
		if !ok {
			return fmt.Errorf("no PadAttrs")
		}
		pads := &graph.Data{DType: graph.Int64, Shape: []int{len(a.Pads)}}
		for _, p := range a.Pads {
			pads.I = append(pads.I, int64(p))
		}
		v := float32(a.Value)
		if xt := g.Tensors[n.Inputs[0]]; xt.DType.IsInt() && xt.Quant != nil {
			s, z := xt.Quant.At(0)
			v = s * float32(int64(a.Value)-int64(z)) // the stored integer, dequantized
		}
		mode := a.Mode
		if mode == "" {
			mode = "constant"
		}
		w.main(n, "Pad", []string{in(0, false), w.init(fo+"_pads", pads), w.init(fo+"_value", &graph.Data{DType: graph.Float32, F: []float32{v}})},
			[]string{fo}, &onnx.Attribute{Name: "mode", Type: onnx.AttrString, S: []byte(mode)})
		w.finish(n, fo, false)
	case graph.LeakyRelu:
		a, ok := n.Attrs.(*graph.LeakyReluAttrs)
		if !ok {
			return fmt.Errorf("no LeakyReluAttrs")
		}
		w.main(n, "LeakyRelu", []string{in(0, false)}, []string{fo}, &onnx.Attribute{Name: "alpha", Type: onnx.AttrFloat, F: a.Alpha})
		w.finish(n, fo, false)
	case graph.HardSigmoid:
		a, ok := n.Attrs.(*graph.HardSigmoidAttrs)
		if !ok {
			return fmt.Errorf("no HardSigmoidAttrs")
		}
		w.main(n, "HardSigmoid", []string{in(0, false)}, []string{fo}, &onnx.Attribute{Name: "alpha", Type: onnx.AttrFloat, F: a.Alpha},
			&onnx.Attribute{Name: "beta", Type: onnx.AttrFloat, F: a.Beta})
		w.finish(n, fo, false)
	case graph.Slice:
		a, ok := n.Attrs.(*graph.SliceAttrs)
		if !ok {
			return fmt.Errorf("no SliceAttrs")
		}
		vec := func(name string, v []int) string {
			d := &graph.Data{DType: graph.Int64, Shape: []int{len(v)}}
			for _, x := range v {
				d.I = append(d.I, int64(x))
			}
			return w.init(fo+"_"+name, d)
		}
		axes := make([]int, len(a.Begin))
		for i := range axes {
			axes[i] = i
		}
		steps := a.Stride
		if steps == nil {
			steps = make([]int, len(a.Begin))
			for i := range steps {
				steps[i] = 1
			}
		}
		// The IR's End of -1 with a negative stride runs through index 0;
		// ONNX reads -1 as the last index, so it gets INT64_MIN instead.
		ends := &graph.Data{DType: graph.Int64, Shape: []int{len(a.End)}}
		for i, e := range a.End {
			v := int64(e)
			if steps[i] < 0 && e < 0 {
				v = math.MinInt64
			}
			ends.I = append(ends.I, v)
		}
		w.main(n, "Slice", []string{in(0, false), vec("starts", a.Begin), w.init(fo+"_ends", ends), vec("axes", axes), vec("steps", steps)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Clip:
		a, ok := n.Attrs.(*graph.ClipAttrs)
		if !ok {
			return fmt.Errorf("no ClipAttrs")
		}
		w.main(n, "Clip", []string{in(0, false), w.init(fo+"_min", &graph.Data{DType: graph.Float32, F: []float32{a.Min}}),
			w.init(fo+"_max", &graph.Data{DType: graph.Float32, F: []float32{a.Max}})}, []string{fo})
		w.finish(n, fo, false)
	case graph.Where:
		w.main(n, "Where", []string{in(0, false), in(1, false), in(2, false)}, []string{fo})
		w.finish(n, fo, false)
	case graph.Gather:
		// The data in the IR's layout, as its axis counts; the integer
		// indices pass as they are (a review finding: an embedding table's
		// Gather stopped quantize -o).
		a, ok := n.Attrs.(*graph.GatherAttrs)
		if !ok {
			return fmt.Errorf("no GatherAttrs")
		}
		op := "Gather"
		if a.Elements {
			op = "GatherElements"
		}
		w.main(n, op, []string{in(0, false), in(1, false)}, []string{fo}, intAttr("axis", a.Axis))
		w.finish(n, fo, false)
	default:
		return fmt.Errorf("op %w", ErrQDQUnsupported)
	}
	return nil
}

func (w *qdqWriter) shapeInit(base string, shape []int) string {
	d := &graph.Data{DType: graph.Int64, Shape: []int{len(shape)}}
	for _, s := range shape {
		d.I = append(d.I, int64(s))
	}
	return w.init(base+"_shape", d)
}

// qdqMath are the Math functions ONNX (opset 13) has as operators of the
// same name and one input.
var qdqMath = map[graph.MathFn]bool{
	graph.MathExp: true, graph.MathLog: true, graph.MathSqrt: true, graph.MathAbs: true, graph.MathNeg: true,
	graph.MathReciprocal: true, graph.MathFloor: true, graph.MathCeil: true, graph.MathSign: true, graph.MathErf: true,
	graph.MathSin: true, graph.MathCos: true, graph.MathTan: true, graph.MathAsin: true, graph.MathAcos: true,
	graph.MathAtan: true, graph.MathSinh: true, graph.MathCosh: true, graph.MathAsinh: true, graph.MathAcosh: true,
	graph.MathAtanh: true, graph.MathSoftplus: true, graph.MathSoftsign: true, graph.MathSigmoid: true, graph.MathTanh: true,
}
