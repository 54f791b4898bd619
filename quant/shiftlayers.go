package quant

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// ShiftUint8Layers returns g with its uint8 layers made int8 (g is not
// changed): TFLite's uint8 models (TF1's quantization-aware training, the
// Coral and TF Hub "quant" models) have uint8 activations and weights
// throughout, which the dsp and Helium kernels do not take, so every
// convolution ran the generic C (a review: mobilenet_v1_0.25_128_quant
// 48.2 million instructions on the M4).
//
// A uint8 value u at zero point z is the int8 value u − 128 at zero point
// z − 128: the same real number, and the same differences u − z that the
// integer layers compute with. Each layer below therefore writes exactly
// 128 less when its uint8 inputs, weights and output are shifted so (its
// fused activation's clamp comes from the output's parameters and range,
// which move by 128 together):
//   - Conv2D (depthwise too) and FullyConnected: Σ (x − zx)(w − zw) + bias,
//     requantized and offset by the output's zero point;
//   - Add, Sub and Mul: TFLite's offsets (x − zx) and the output's zero
//     point;
//   - Softmax (uint8 → uint8 at zero point 0, TFLite's int8 kernel at
//     output zero point 0: interp.SoftmaxUint8OK) reads differences only;
//   - Quantize (a requantization) reads x − zx;
//   - Reshape, Transpose, MaxPool2D, Slice and Concat (its inputs and
//     output at one set of parameters) move values or pick the largest,
//     which the shift keeps; they shift only after a shifted producer.
//
// Dequantize and ArgMax read a shifted tensor's int8 values (through the
// zero point, or for their order), and so does a Quantize into a graph
// output.
//
// Every other reader of a shifted tensor (average pooling, whose uint8
// rounding of negative sums differs; logistic and the rest) reads a uint8
// copy a requantization writes just before it, and a shifted layer that
// reads a uint8 tensor (a graph input, such a reader's output) reads an
// int8 copy: one elementwise pass each, exact (Quantize between the same
// scale and zero points 128 apart adds or takes 128). Graph inputs and
// outputs keep their uint8 type and names. A graph with states is left as
// it is.
func ShiftUint8Layers(g *graph.Graph) *graph.Graph {
	f := cloneGraph(g)
	if len(f.States) > 0 || !hasUint8Layer(f) {
		return f
	}
	// wasU8: the quantized uint8 tensors of g, as they were before any
	// shift.
	wasU8, quant := map[string]bool{}, map[string]*graph.Quant{}
	for name, t := range f.Tensors {
		wasU8[name] = t.DType == graph.UInt8 && t.Quant != nil && len(t.Quant.Scale) > 0
		quant[name] = t.Quant
	}
	isU8 := func(name string) bool { return name != "" && wasU8[name] }
	io := map[string]bool{}
	for _, n := range append(slices.Clone(f.Inputs), f.Outputs...) {
		io[n] = true
	}
	// s8[u]: the int8 tensor holding uint8 tensor u's values less 128;
	// u8[u]: the uint8 tensor holding them as they are. A tensor a shifted
	// layer writes is first only in s8 (under its own name, now int8, or
	// a graph output's copy); one nothing shifted writes, only in u8.
	s8, u8 := map[string]string{}, map[string]string{}
	shiftedConst := map[string]string{}
	var out []*graph.Node
	requant := func(from, to string) {
		out = append(out, &graph.Node{Name: f.UniqueName(to + "_requant"), Op: graph.Quantize, Inputs: []string{from}, Outputs: []string{to}})
	}
	// int8Of returns the int8 version of uint8 activation name, requantized
	// before the node being placed if there is none yet.
	int8Of := func(name string) string {
		if s, ok := s8[name]; ok {
			return s
		}
		s := f.UniqueName(name + "_s8")
		f.AddTensor(shiftedTensor(f.Tensors[name], s))
		requant(name, s)
		s8[name], u8[name] = s, name
		return s
	}
	// uint8Of returns the uint8 version of shifted activation name,
	// requantized before the node being placed if there is none yet (a
	// graph output into itself).
	uint8Of := func(name string) string {
		if u, ok := u8[name]; ok {
			return u
		}
		u := name
		if !io[name] {
			t := *f.Tensors[s8[name]]
			u = f.UniqueName(name + "_u8")
			t.Name, t.DType, t.Quant = u, graph.UInt8, unshiftQuant(t.Quant)
			f.AddTensor(&t)
		}
		requant(s8[name], u)
		u8[name] = u
		return u
	}
	constOf := func(name string) string {
		if s, ok := shiftedConst[name]; ok {
			return s
		}
		s := f.UniqueName(name + "_s8")
		f.AddTensor(shiftedTensor(f.Tensors[name], s))
		shiftedConst[name] = s
		return s
	}
	for _, n := range f.Nodes {
		kind := shiftKind(f, n, isU8, quant, s8, io)
		if kind == shiftNone {
			// Reads the uint8 values.
			for i, in := range n.Inputs {
				if s8[in] != "" {
					n.Inputs[i] = uint8Of(in)
				}
			}
			out = append(out, n)
			continue
		}
		for i, in := range n.Inputs {
			switch {
			case !isU8(in):
			case f.Tensors[in].IsConst():
				n.Inputs[i] = constOf(in)
			default:
				n.Inputs[i] = int8Of(in)
			}
		}
		out = append(out, n)
		if kind == shiftReads {
			continue
		}
		for i, o := range n.Outputs {
			name := o
			if io[o] {
				// The output keeps its name and type: the layer writes
				// an int8 copy, requantized into it (uint8Of).
				name = f.UniqueName(o + "_s8")
				f.AddTensor(shiftedTensor(f.Tensors[o], name))
			} else {
				f.Tensors[o] = shiftedTensor(f.Tensors[o], o)
			}
			n.Outputs[i] = name
			s8[o] = name
		}
	}
	// Graph outputs a shifted layer wrote and nothing read as uint8 yet.
	for _, o := range f.Outputs {
		if s8[o] != "" {
			uint8Of(o)
		}
	}
	f.Nodes = out
	f.Prune()
	return f
}

// How a node takes the shift.
const (
	shiftNone   = iota // reads and writes uint8 as it is
	shiftReads         // reads int8 copies; writes its outputs as they are
	shiftWrites        // reads int8 copies and writes int8 outputs
)

// shiftKind says how n takes the shift (ShiftUint8Layers's list); s8 says
// which activations have int8 versions already, quant the parameters every
// tensor had before the shift.
func shiftKind(f *graph.Graph, n *graph.Node, isU8 func(string) bool, quant map[string]*graph.Quant, s8 map[string]string, io map[string]bool) int {
	sameQuant := func(a, b string) bool { return quant[a].Equal(quant[b]) }
	anyU8 := false
	for _, in := range n.Inputs {
		anyU8 = anyU8 || isU8(in)
	}
	if !anyU8 {
		return shiftNone
	}
	outsU8 := true
	for _, o := range n.Outputs {
		outsU8 = outsU8 && isU8(o)
	}
	switch n.Op {
	case graph.Conv2D, graph.FullyConnected:
		// Activation, weights, optional int32 bias: the activation and
		// weights uint8, the output uint8.
		if len(n.Inputs) < 2 || len(n.Outputs) != 1 || !isU8(n.Inputs[0]) || !isU8(n.Inputs[1]) || !outsU8 ||
			f.Tensors[n.Inputs[0]].IsConst() || !f.Tensors[n.Inputs[1]].IsConst() || n.Inputs[0] == n.Inputs[1] {
			return shiftNone
		}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" && (isU8(n.Inputs[2]) || !f.Tensors[n.Inputs[2]].IsConst()) {
			return shiftNone
		}
		return shiftWrites
	case graph.Add, graph.Sub, graph.Mul:
		if len(n.Inputs) != 2 || len(n.Outputs) != 1 || !outsU8 || !isU8(n.Inputs[0]) || !isU8(n.Inputs[1]) {
			return shiftNone
		}
		return shiftWrites
	case graph.Softmax:
		a, ok := n.Attrs.(*graph.SoftmaxAttrs)
		if !ok || a.Mode != graph.SoftmaxPlain || len(n.Outputs) != 1 || !outsU8 || !isU8(n.Inputs[0]) {
			return shiftNone
		}
		return shiftWrites
	case graph.Quantize:
		// Only behind a shifted producer (a uint8 input's Quantize to
		// int8 is the requantization already). Into a graph output it
		// writes the uint8 output itself (review: an int8 copy, then a
		// flip into the output).
		if s8[n.Inputs[0]] == "" {
			return shiftNone
		}
		if outsU8 && !io[n.Outputs[0]] {
			return shiftWrites
		}
		return shiftReads
	case graph.Dequantize, graph.ArgMax:
		// Read through the zero point, or for the order of the values,
		// which the shift keeps: the int8 tensor where there is one.
		if s8[n.Inputs[0]] == "" || len(n.Inputs) != 1 {
			return shiftNone
		}
		for _, o := range n.Outputs {
			if isU8(o) {
				return shiftNone
			}
		}
		return shiftReads
	case graph.Reshape, graph.Transpose, graph.MaxPool2D, graph.Slice:
		// Only behind a shifted producer: a requantization to move values
		// would be a pass for nothing. Shape inputs are not uint8.
		if len(n.Outputs) != 1 || !outsU8 || io[n.Outputs[0]] || s8[n.Inputs[0]] == "" || !sameQuant(n.Inputs[0], n.Outputs[0]) {
			return shiftNone
		}
		for _, in := range n.Inputs[1:] {
			if isU8(in) {
				return shiftNone
			}
		}
		return shiftWrites
	case graph.Concat:
		if len(n.Outputs) != 1 || !outsU8 || io[n.Outputs[0]] {
			return shiftNone
		}
		some := false
		for _, in := range n.Inputs {
			if !isU8(in) || !sameQuant(in, n.Outputs[0]) {
				return shiftNone
			}
			some = some || s8[in] != ""
		}
		if !some {
			return shiftNone
		}
		return shiftWrites
	}
	return shiftNone
}

// hasUint8Layer reports a Conv2D or FullyConnected with uint8 activation
// and weights: what ShiftUint8Layers is for.
func hasUint8Layer(g *graph.Graph) bool {
	for _, n := range g.Nodes {
		if (n.Op == graph.Conv2D || n.Op == graph.FullyConnected) && len(n.Inputs) > 1 {
			x, w := g.Tensors[n.Inputs[0]], g.Tensors[n.Inputs[1]]
			if x != nil && w != nil && x.DType == graph.UInt8 && w.DType == graph.UInt8 && w.IsConst() {
				return true
			}
		}
	}
	return false
}

// shiftedTensor is t as int8 less 128 (zero points and constant data),
// named name.
func shiftedTensor(t *graph.Tensor, name string) *graph.Tensor {
	c := *t
	c.Name, c.DType = name, graph.Int8
	q := &graph.Quant{Scale: slices.Clone(t.Quant.Scale), ZeroPoint: make([]int32, len(t.Quant.ZeroPoint)), Axis: t.Quant.Axis}
	for i, z := range t.Quant.ZeroPoint {
		q.ZeroPoint[i] = z - 128
	}
	if len(q.ZeroPoint) == 0 {
		q.ZeroPoint = []int32{-128}
	}
	c.Quant = q
	if t.Data != nil {
		d := graph.NewData(graph.Int8, t.Data.Shape)
		for i, v := range t.Data.I {
			d.I[i] = v - 128
		}
		c.Data = d
	}
	return &c
}

// unshiftQuant is q with its zero points 128 up again.
func unshiftQuant(q *graph.Quant) *graph.Quant {
	r := &graph.Quant{Scale: slices.Clone(q.Scale), ZeroPoint: slices.Clone(q.ZeroPoint), Axis: q.Axis}
	for i := range r.ZeroPoint {
		r.ZeroPoint[i] += 128
	}
	return r
}
