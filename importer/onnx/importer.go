// Package onnx imports ONNX models into mcugen's graph IR. It holds a
// protobuf decoder and encoder for the ONNX messages mcugen needs (plain Go
// structs over protowire, no generated code), the mapping of ONNX operators
// (opsets 1 to 21) onto graph's canonical NHWC op set, constant folding of
// shape arithmetic and BatchNormalization, ReadTensorProto for .pb tensor
// files, and a Builder that writes ONNX models (test models, QDQ output).
//
// Layout: every ONNX value is held in the graph in its ONNX layout, in NHWC
// (rank 4 only), or both. Conv, pools, GlobalAveragePool, BatchNorm and
// Resize read and write NHWC; element-wise ops, Concat, Softmax, ReduceMean,
// Pad, Slice, Quantize/Dequantize keep their input's layout (remapping axes
// and permuting constant operands); everything else reads the ONNX layout. A
// Transpose is inserted only where a reader wants the other layout, and one
// that moves only size-1 dimensions is a Reshape. Graph inputs and outputs
// keep their ONNX names and shapes; constants are transposed at import.
package onnx

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// Options control an import.
type Options struct {
	// Shapes binds the shape of graph inputs by name (dynamic dimensions
	// included); a free dimension not bound here becomes 1 with a warning.
	Shapes map[string][]int
	// Consts binds graph inputs to constant values: the input leaves the
	// graph and its value is folded in (the ONNX backend tests feed weights,
	// scales and shapes as inputs; an ahead-of-time compiler wants them
	// constant).
	Consts map[string]*graph.Data
	// Warn receives warnings (nil: discarded).
	Warn func(string)
}

// UnsupportedError reports an op, attribute or type the importer does not
// handle, as opposed to a malformed model.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

func unsupportedf(format string, a ...any) error {
	return &UnsupportedError{Msg: fmt.Sprintf(format, a...)}
}

// Load reads and imports the ONNX model at path.
func Load(path string, opts Options) (*graph.Graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("importer: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return Decode(name, b, opts)
}

// Decode imports a serialized ONNX model.
func Decode(name string, b []byte, opts Options) (*graph.Graph, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("importer: %s: not an ONNX model: the file is empty", name)
	}
	m, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("importer: %s: not a valid ONNX model: %w", name, err)
	}
	return Import(name, m, opts)
}

// initMatchesInput checks an initializer against the graph input of its
// name: the element type, and the rank and each fixed dimension, where the
// input declares them.
func initMatchesInput(vi *ValueInfo, dt int32, shape []int) error {
	if vi.Type == nil || vi.Type.NotTensor {
		return nil
	}
	if et := vi.Type.ElemType; et != TUndefined && et != dt {
		return fmt.Errorf("input %q is declared %s, but its initializer is %s", vi.Name, DTypeName(et), DTypeName(dt))
	}
	if vi.Type.HasShape && !declaredFits(vi.Type.Shape, shape) {
		return fmt.Errorf("input %q is declared of shape %s, but its initializer is %v", vi.Name, declaredShape(vi.Type.Shape), shape)
	}
	return nil
}

// declaredFits reports whether shape has the declared rank and every
// fixed dimension the declaration gives.
func declaredFits(ds []Dim, shape []int) bool {
	if len(ds) != len(shape) {
		return false
	}
	for i, d := range ds {
		if d.HasValue && d.Value != int64(shape[i]) {
			return false
		}
	}
	return true
}

func declaredShape(ds []Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		switch {
		case d.HasValue:
			parts[i] = fmt.Sprint(d.Value)
		case d.Param != "":
			parts[i] = d.Param
		default:
			parts[i] = "?"
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Import maps a decoded ONNX model onto the graph IR.
func Import(name string, m *Model, opts Options) (g *graph.Graph, err error) {
	if m.Graph == nil || (len(m.Graph.Nodes) == 0 && len(m.Graph.Output) == 0) {
		return nil, fmt.Errorf("importer: %s: not an ONNX model (no graph)", name)
	}
	opset := int64(-1)
	found := false
	for _, o := range m.OpsetImport {
		if o.Domain == "" || o.Domain == "ai.onnx" {
			// Two imports of one domain: which version the nodes mean is
			// not said (review: the last won, and a Clip's min and max
			// attributes were dropped in silence).
			if found && o.Version != opset {
				return nil, fmt.Errorf("importer: %s: the ai.onnx opset is imported twice (versions %d and %d)", name, opset, o.Version)
			}
			opset, found = o.Version, true
		}
	}
	if !found {
		// A model of other domains' operators alone (com.microsoft's
		// QLinearAdd, say) needs no ai.onnx import: its nodes are what it
		// holds, and the converters say which of them mcugen takes (the
		// message blamed the missing import: onnx2c journey).
		standard := false
		for _, n := range m.Graph.Nodes {
			standard = standard || n.Domain == "" || n.Domain == "ai.onnx"
		}
		if !standard && len(m.OpsetImport) > 0 {
			opset = 21
		}
	}
	if !found && opset == -1 {
		if len(m.OpsetImport) > 0 || m.IRVersion > 2 {
			var doms []string
			for _, o := range m.OpsetImport {
				doms = append(doms, fmt.Sprintf("%s v%d", o.Domain, o.Version))
			}
			return nil, fmt.Errorf("importer: %s: %w", name, unsupportedf("no ai.onnx opset import (only %s)", strings.Join(doms, ", ")))
		}
		opset = 1
	}
	// Opset 22 (ONNX 1.17, which writes it by default) added bfloat16 to
	// the operators' types and changed no float or integer semantics, so
	// its models read as opset 21's (onnx2c's Gather and MatMul tests were
	// refused). Later opsets change operators and are refused.
	if opset < 1 || opset > 22 {
		return nil, fmt.Errorf("importer: %s: %w", name, unsupportedf("opset %d (supported: 1 to 22)", opset))
	}
	if err := expandMicrosoftQOps(m.Graph, opset); err != nil {
		return nil, fmt.Errorf("importer: %w", err)
	}
	im := &importer{
		g:         graph.New(name, "onnx"),
		vals:      map[string]*value{},
		opset:     opset,
		opts:      opts,
		uses:      map[string]int{},
		nodeNames: map[string]bool{},
		held:      map[any]bool{},
	}
	defer func() {
		// Every converter checks its inputs; this is the last line of defence
		// so that a missed case is an error, never a crash of the caller.
		if p := recover(); p != nil {
			where := ""
			if im.node != nil {
				where = fmt.Sprintf(" at node %q (%s)", im.node.Name, im.node.OpType)
			}
			g, err = nil, fmt.Errorf("importer: %s: internal error%s: %v", name, where, p)
		}
	}()
	if err := im.run(m.Graph); err != nil {
		return nil, fmt.Errorf("importer: %w", err)
	}
	if u := im.ctl.notes; len(u) > 0 {
		more := ""
		if len(u) > 3 {
			u, more = u[:3], fmt.Sprintf(", and %d more", len(u)-3)
		}
		im.warn("%s: control flow unrolled at compile time: %s%s", name, strings.Join(u, ", "), more)
	}
	quantizedInputs(im.g)
	return im.g, nil
}

// topoOrder returns nodes in an order where every node comes after the
// nodes whose outputs it reads, keeping the file's order wherever it
// already is one. ONNX asks for the nodes in that order, but exporters and
// hand-edited files put a Constant after its reader (onnx2c's
// test_nodes_out_of_order and its Pad and Resize tests: "input "pads" is
// not defined before use", user journey). defined says which values exist
// before any node (inputs and initializers). An input that no node writes
// keeps the error it had; nodes that need each other's outputs are a cycle.
func topoOrder(nodes []*Node, defined func(string) bool) ([]*Node, error) {
	writer := map[string]*Node{}
	for _, n := range nodes {
		for _, o := range n.Output {
			if o != "" {
				writer[o] = n
			}
		}
	}
	have := map[string]bool{}
	// A node's subgraphs (If, Loop, Scan) read values of its scope by
	// name: they come first too.
	deps := make(map[*Node][]string, len(nodes))
	for _, n := range nodes {
		deps[n] = n.Input
		if caps := nodeCaptures(n); len(caps) > 0 {
			deps[n] = append(slices.Clone(n.Input), caps...)
		}
	}
	ready := func(n *Node) bool {
		for _, in := range deps[n] {
			if in != "" && !defined(in) && !have[in] {
				return false
			}
		}
		return true
	}
	out := make([]*Node, 0, len(nodes))
	done := make([]bool, len(nodes))
	for len(out) < len(nodes) {
		progress := false
		for i, n := range nodes {
			if done[i] || !ready(n) {
				continue
			}
			done[i], progress = true, true
			out = append(out, n)
			for _, o := range n.Output {
				if o != "" {
					have[o] = true
				}
			}
		}
		if progress {
			continue
		}
		// Stuck: an input no node writes, or else a cycle.
		var cycle error
		for i, n := range nodes {
			if done[i] {
				continue
			}
			for _, in := range deps[n] {
				if in == "" || defined(in) || have[in] {
					continue
				}
				if w := writer[in]; w == nil {
					return nil, fmt.Errorf("node %q (%s): input %q is not defined before use", n.Name, n.OpType, in)
				} else if cycle == nil {
					cycle = fmt.Errorf("node %q (%s): input %q comes from node %q, which cannot run first: the nodes form a cycle", n.Name, n.OpType, in, w.Name)
				}
			}
		}
		return nil, cycle
	}
	return out, nil
}

// quantizedInputs gives an integer graph input without quantization
// parameters those of the layout moves that read it (a QLinearConv's x
// comes with its scale and zero point as the node's inputs, which the
// Transpose to NHWC carries): the header then gives the input's SCALE and
// ZERO_POINT, as it does for a TFLite model's (microTVM journey finding: a
// uint8 QLinear model's input had none).
func quantizedInputs(g *graph.Graph) {
	cons := g.Consumers()
	for _, name := range g.Inputs {
		t := g.Tensors[name]
		if t == nil || t.Quant != nil || !t.DType.IsInt() {
			continue
		}
		var q *graph.Quant
		for _, n := range cons[name] {
			out := g.Tensors[n.Outputs[0]]
			if n.Op != graph.Transpose && n.Op != graph.Reshape || out == nil || out.Quant == nil || out.DType != t.DType || q != nil && !q.Equal(out.Quant) {
				q = nil
				break
			}
			q = out.Quant
		}
		if q != nil && len(q.Scale) == 1 {
			t.Quant = q
		}
	}
}

type layout uint8

const (
	asIs layout = iota // the ONNX layout
	nhwc               // rank 4, NCHW permuted to NHWC
)

var (
	toNHWC   = []int{0, 2, 3, 1}
	fromNHWC = []int{0, 3, 1, 2}
)

// value is one ONNX value: a constant (c, ONNX layout) or an activation
// held in the graph in one or both layouts.
type value struct {
	name    string
	dt      graph.DType
	shape   []int // ONNX shape
	c       *graph.Data
	tensors [2]string // graph tensor per layout; "" when not made yet
	primary layout
	prod    *graph.Node // the node that wrote the primary tensor
	// lazy makes the tensor of a layout on demand (dequantized constants).
	lazy func(l layout) string
	// pending counts the reads of this value by nodes not converted yet,
	// over every ONNX name that refers to it (Identity, Dropout, folds).
	pending int
}

type importer struct {
	g *graph.Graph
	// params holds the sizes --shape gave named dimensions (bindParams).
	params map[string]paramBinding
	vals   map[string]*value
	opset  int64
	opts   Options
	uses   map[string]int // ONNX consumers per value (graph outputs count)
	node   *Node
	seq    int
	// nodeNames holds the names of the graph nodes made so far.
	nodeNames map[string]bool
	// aux > 0 while emitting helper nodes (layout changes, dequantized
	// constants), which are named after their output tensor.
	aux int
	// recurrent counts the recurrent layers unrolled so far.
	recurrent int
	// held holds the backing arrays of the constant data made or read so
	// far; folded counts the bytes of those computed at import (account).
	held   map[any]bool
	folded int64
	// ctl is the unrolling of control flow (control.go).
	ctl ctlState
}

func (im *importer) warn(format string, a ...any) {
	if im.opts.Warn != nil {
		im.opts.Warn(fmt.Sprintf(format, a...))
	}
}

func (im *importer) run(og *Graph) error {
	if og.SparseInitializer > 0 {
		return unsupportedf("sparse initializers")
	}
	var unsupported []string
	byOp := map[string][]string{}
	for i, n := range og.Nodes {
		op := n.OpType
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "::" + n.OpType
		} else if _, ok := converters[n.OpType]; ok {
			continue
		}
		if _, seen := byOp[op]; !seen {
			unsupported = append(unsupported, op)
		}
		nm := n.Name
		if nm == "" {
			nm = fmt.Sprintf("%s_%d", n.OpType, i)
		}
		byOp[op] = append(byOp[op], nm)
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		parts := make([]string, len(unsupported))
		for i, op := range unsupported {
			names := byOp[op]
			if len(names) > 5 {
				names = append(names[:5:5], fmt.Sprintf("and %d more", len(byOp[op])-5))
			}
			label := op
			switch {
			case op == "":
				label = `empty op_type ""`
			case strconv.Quote(op) != `"`+op+`"`:
				// Bytes that are not printable text (a corrupt file):
				// quoted, as the node names are.
				label = strconv.Quote(op)
			}
			parts[i] = fmt.Sprintf("%s (nodes %s)", label, strings.Join(quoteAll(names), ", "))
		}
		return unsupportedf("unsupported ops: %s", strings.Join(parts, "; "))
	}
	seen := map[string]string{}
	for _, list := range []struct {
		what string
		vis  []*ValueInfo
	}{{"graph input", og.Input}, {"graph output", og.Output}} {
		for _, vi := range list.vis {
			if vi.Name == "" {
				return fmt.Errorf("a %s has an empty name", list.what)
			}
			if seen[vi.Name] == list.what {
				return fmt.Errorf("%s %q is listed twice", list.what, vi.Name)
			}
			seen[vi.Name] = list.what
		}
	}
	inits := map[string]bool{}
	initType := map[string]int32{} // as the file stores it (ToData narrows DOUBLE and FLOAT16)
	for _, t := range og.Initializer {
		if t.Name == "" {
			return fmt.Errorf("an initializer has an empty name")
		}
		// ONNX's checker refuses this; the last one silently won here
		// (adversarial journey).
		if inits[t.Name] {
			return fmt.Errorf("initializer %q is given twice", t.Name)
		}
		inits[t.Name] = true
		initType[t.Name] = t.DataType
		d, err := t.ToData()
		if err != nil {
			return fmt.Errorf("initializer %q%s: %w", t.Name, consumerOf(og, t.Name), err)
		}
		im.hold(d)
		im.vals[t.Name] = &value{name: t.Name, dt: d.DType, shape: d.Shape, c: d}
	}
	im.bindParams(og.Input)
	for _, vi := range og.Input {
		if v, isInit := im.vals[vi.Name]; isInit {
			// An input with an initializer is that constant here; one
			// whose declared type or shape the initializer contradicts is
			// a broken model, not a default value (review: a float
			// [1,4] input became an int8 [2,2] constant in silence).
			if err := initMatchesInput(vi, initType[vi.Name], v.shape); err != nil {
				return err
			}
			continue
		}
		if err := im.addInput(vi); err != nil {
			return err
		}
	}
	// --shape names an input; a user who names a dynamic dimension
	// (--shape batch=1) is told which input holds it.
	// Any other name is an error here, before the nodes: the shapes they
	// infer from the unbound dimensions would fail first with a message
	// that hides the misspelling (user-journey finding).
	var inputs []string
	for _, vi := range og.Input {
		if v, ok := im.vals[vi.Name]; ok && v.c == nil {
			inputs = append(inputs, vi.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(im.opts.Shapes)) {
		if slices.Contains(inputs, name) {
			continue
		}
		if v, ok := im.vals[name]; ok && v.c != nil {
			return fmt.Errorf("--shape %s: %q is an initializer of the model (a constant), not an input: its shape is stored (its inputs: %s)", name, name, strings.Join(inputs, ", "))
		}
		for _, vi := range og.Input {
			for i, d := range vi.Type.Shape {
				if d.Param == name && !d.HasValue {
					return fmt.Errorf("--shape %s: %q is a dimension (axis %d) of input %q, not an input: give that input's whole shape, as %s",
						name, name, i, vi.Name, shapeFlag(vi.Name, exampleShape(vi, i, im.opts.Shapes[name])))
				}
			}
		}
		return fmt.Errorf("--shape %s: the model has no input named %q (its inputs: %s)", name, name, strings.Join(inputs, ", "))
	}
	writer := map[string]string{}
	for i, n := range og.Nodes {
		for _, in := range n.Input {
			im.uses[in]++
		}
		im.countCaptures(n)
		name := n.Name
		if name == "" {
			name = fmt.Sprintf("%s_%d", n.OpType, i)
		}
		for _, o := range n.Output {
			if o == "" {
				continue
			}
			if prev, dup := writer[o]; dup {
				return fmt.Errorf("node %q (%s): output %q is already written by node %q", name, n.OpType, o, prev)
			}
			if _, isVal := im.vals[o]; isVal {
				return fmt.Errorf("node %q (%s): output %q is also a graph input or initializer", name, n.OpType, o)
			}
			writer[o] = name
		}
	}
	for _, o := range og.Output {
		im.uses[o.Name]++
	}
	for i, n := range og.Nodes {
		if n.Name == "" {
			n.Name = fmt.Sprintf("%s_%d", n.OpType, i)
		}
	}
	nodes, err := topoOrder(og.Nodes, func(v string) bool { return im.vals[v] != nil })
	if err != nil {
		return err
	}
	for _, n := range nodes {
		im.node = n
		for _, in := range n.Input {
			if in != "" && im.vals[in] == nil {
				return fmt.Errorf("node %q (%s): input %q is not defined before use", n.Name, n.OpType, in)
			}
		}
		if err := convertNode(im, n, converters[n.OpType]); err != nil {
			var ue *UnsupportedError
			if errors.As(err, &ue) {
				msg := ue.Msg
				if !strings.Contains(msg, "support") {
					// Said, so that a user can tell a model mcugen
					// cannot take from a broken one (user-journey finding).
					msg = "not supported: " + msg
				}
				return &UnsupportedError{Msg: fmt.Sprintf("node %q (%s): %s", n.Name, n.OpType, msg)}
			}
			return fmt.Errorf("node %q (%s): %w", n.Name, n.OpType, err)
		}
		for _, o := range n.Output {
			if o == "" {
				continue
			}
			v := im.vals[o]
			if v == nil {
				return fmt.Errorf("node %q (%s): output %q was not produced", n.Name, n.OpType, o)
			}
			// Every converter bounds the shapes it makes; this catches
			// any that did not, before a later node computes with them.
			if err := checkShape(v.shape); err != nil {
				return fmt.Errorf("node %q (%s): output %q: %w", n.Name, n.OpType, o, err)
			}
		}
	}
	im.node = nil
	if len(og.Output) == 0 {
		return errors.New("the graph has no outputs")
	}
	for _, o := range og.Output {
		v := im.vals[o.Name]
		if v == nil {
			return fmt.Errorf("graph output %q is not produced by any node", o.Name)
		}
		if slices.Contains(v.shape, 0) {
			return unsupportedf("graph output %q of zero-size shape %v", o.Name, v.shape)
		}
		if err := im.checkDeclaredOutput(o, v); err != nil {
			return err
		}
		name := im.get(v, asIs)
		if name != o.Name {
			if _, taken := im.g.Tensors[o.Name]; !taken {
				t := im.g.Tensors[name]
				out := im.g.AddTensor(&graph.Tensor{Name: o.Name, DType: t.DType, Shape: slices.Clone(t.Shape), Quant: t.Quant})
				im.g.AddNode(&graph.Node{Name: o.Name + "/output", Op: graph.Reshape, Inputs: []string{name}, Outputs: []string{out.Name}})
				name = o.Name
			}
		}
		im.g.Outputs = append(im.g.Outputs, name)
	}
	im.g.Prune()
	// The importer's contract: a graph it returns is valid (finite
	// constants, usable quantization, positive shapes, ...).
	if err := graph.Validate(im.g); err != nil {
		return fmt.Errorf("the imported graph is not valid: %w", err)
	}
	return nil
}

// checkDeclaredOutput compares what the model declares of a graph output
// with what its nodes compute (review: an output declared STRING, or
// [2^40, 2^40], compiled without a word). Another element type is an
// error: the caller's buffer would be of the declared one. Other fixed
// dimensions are a warning: the computed shape is what the firmware
// writes, and exporters do leave stale shapes behind.
func (im *importer) checkDeclaredOutput(o *ValueInfo, v *value) error {
	if o.Type == nil || o.Type.NotTensor {
		return nil
	}
	// DOUBLE, FLOAT16 and BFLOAT16 are computed as float32, as mcugen
	// reads them everywhere (a second review: a DOUBLE Constant's output
	// was refused).
	et := o.Type.ElemType
	narrowed := v.dt == graph.Float32 && (et == TDouble || et == TFloat16 || et == tBFloat16)
	if et != TUndefined && et != onnxDType(v.dt) && !narrowed {
		return fmt.Errorf("graph output %q is declared %s, but its nodes compute %s", o.Name, DTypeName(et), v.dt)
	}
	// An empty shape is read as unknown: writers (mcugen's own test
	// models among them) leave it so.
	if o.Type.HasShape && len(o.Type.Shape) > 0 && !declaredFits(o.Type.Shape, v.shape) {
		im.warn("graph output %q is declared of shape %s, but its nodes compute %v; the firmware writes %v", o.Name, declaredShape(o.Type.Shape), v.shape, v.shape)
	}
	return nil
}

// tBFloat16 is onnx.proto's BFLOAT16.
const tBFloat16 = 16

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		if strings.HasPrefix(x, "and ") {
			out[i] = x
		} else {
			out[i] = fmt.Sprintf("%q", x)
		}
	}
	return out
}

// shapeFlag is the --shape flag binding input name to dims as a shell
// takes it: quoted where the name holds a space or another character the
// shell reads ("2nd input" split into two arguments).
func shapeFlag(name, dims string) string {
	arg := name + "=" + dims
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:+@%,", r)) {
			return "--shape '" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		}
	}
	return "--shape " + arg
}

// paramBinding is the size --shape gave a named (dim_param) dimension;
// ambiguous when two flags gave it two sizes.
type paramBinding struct {
	size      int
	ambiguous bool
}

// bindParams reads the sizes the --shape flags give the inputs' named
// dimensions (ONNX's dim_param: one name, one size across the graph), so
// that an input without a --shape of its own takes them (a review found b's
// N left at 1 while a's N was bound to 3). A name the flags give two sizes
// (an exporter that writes one name for every free dimension) binds
// nothing: those inputs take their own --shape, or 1 with the warning.
func (im *importer) bindParams(inputs []*ValueInfo) {
	im.params = map[string]paramBinding{}
	for _, vi := range inputs {
		s, ok := im.opts.Shapes[vi.Name]
		if !ok || vi.Type == nil || !vi.Type.HasShape || len(s) != len(vi.Type.Shape) {
			continue
		}
		for i, d := range vi.Type.Shape {
			if d.Param == "" || d.HasValue && d.Value > 0 {
				continue
			}
			if b, ok := im.params[d.Param]; ok && b.size != s[i] {
				im.params[d.Param] = paramBinding{ambiguous: true}
				continue
			}
			im.params[d.Param] = paramBinding{size: s[i]}
		}
	}
}

func (im *importer) addInput(vi *ValueInfo) error {
	if vi.Type == nil || vi.Type.NotTensor {
		return unsupportedf("graph input %q is not a tensor", vi.Name)
	}
	dt, ok := graphDType(vi.Type.ElemType)
	if !ok {
		return unsupportedf("graph input %q has data type %s, which mcugen does not support (float32, int8/16/32/64, uint8 and bool are; export the input as one of those, float64 as float32)", vi.Name, DTypeName(vi.Type.ElemType))
	}
	if d, ok := im.opts.Consts[vi.Name]; ok {
		if d.DType != dt {
			return fmt.Errorf("constant for input %q is %s, model wants %s", vi.Name, d.DType, dt)
		}
		if err := checkShape(d.Shape); err != nil {
			return fmt.Errorf("constant for input %q: %w", vi.Name, err)
		}
		if err := d.Check(); err != nil {
			return fmt.Errorf("constant for input %q: %w", vi.Name, err)
		}
		im.hold(d)
		im.vals[vi.Name] = &value{name: vi.Name, dt: dt, shape: slices.Clone(d.Shape), c: d}
		return nil
	}
	var shape []int
	if s, ok := im.opts.Shapes[vi.Name]; ok {
		if vi.Type.HasShape && len(s) != len(vi.Type.Shape) {
			return fmt.Errorf("--shape %s: %d dimensions given, the model's input has %d", vi.Name, len(s), len(vi.Type.Shape))
		}
		for i, d := range s {
			if d == 0 {
				return unsupportedf("--shape %s: zero-size dimension %d", vi.Name, i)
			}
			if d < 0 {
				return fmt.Errorf("--shape %s: dimension %d is %d", vi.Name, i, d)
			}
			// A fixed 0 is read as free (below), so any size binds it.
			if i < len(vi.Type.Shape) && vi.Type.Shape[i].HasValue && vi.Type.Shape[i].Value > 0 && vi.Type.Shape[i].Value != int64(d) {
				return fmt.Errorf("--shape %s: dimension %d is %d, the model fixes it to %d", vi.Name, i, d, vi.Type.Shape[i].Value)
			}
		}
		shape = slices.Clone(s)
	} else {
		if !vi.Type.HasShape {
			return fmt.Errorf("graph input %q has no shape; give one with %s", vi.Name, shapeFlag(vi.Name, "d0,d1,..."))
		}
		for i, d := range vi.Type.Shape {
			if d.HasValue && d.Value > 0 {
				if d.Value > maxElements {
					return fmt.Errorf("graph input %q: dimension %d is %d", vi.Name, i, d.Value)
				}
				shape = append(shape, int(d.Value))
				continue
			}
			if d.HasValue && d.Value == 0 {
				// A zero-size input computes nothing: exporters write 0
				// for a size they did not know. Any --shape binds it.
				im.warn("input %q: axis %d has size 0, read as a free dimension: set to 1; bind it with %s", vi.Name, i, shapeFlag(vi.Name, "..."))
				shape = append(shape, 1)
				continue
			}
			if v, ok := im.params[d.Param]; ok && d.Param != "" && !v.ambiguous {
				// The same symbol is the same size: bound through another
				// input's --shape (a review found b's N left at 1 while a's
				// N was bound to 3).
				shape = append(shape, v.size)
				continue
			}
			what := "a free dimension"
			if d.Param != "" {
				what = fmt.Sprintf("dimension %q", d.Param)
			}
			im.warn("input %q: %s (axis %d) set to 1; bind it with %s", vi.Name, what, i, shapeFlag(vi.Name, "..."))
			shape = append(shape, 1)
		}
	}
	if err := checkShape(shape); err != nil {
		return fmt.Errorf("graph input %q: %w", vi.Name, err)
	}
	t := im.g.AddTensor(&graph.Tensor{Name: vi.Name, DType: dt, Shape: shape})
	im.g.Inputs = append(im.g.Inputs, t.Name)
	im.vals[vi.Name] = &value{name: vi.Name, dt: dt, shape: slices.Clone(shape), tensors: [2]string{t.Name, ""}}
	return nil
}

// get returns the graph tensor of v in layout l, making it (a constant, or
// a Transpose/Reshape of the other layout) when needed.
func (im *importer) get(v *value, l layout) string {
	if v.tensors[l] != "" {
		return v.tensors[l]
	}
	im.aux++
	defer func() { im.aux-- }()
	if v.lazy != nil {
		v.tensors[l] = v.lazy(l)
		return v.tensors[l]
	}
	if v.c != nil {
		d := v.c
		base := v.name
		if l == nhwc {
			d = transposeData(reshapeData(d, lift4(d.Shape)), toNHWC)
			base += "_nhwc"
		}
		t := im.g.AddConst(im.g.UniqueName(base), d)
		v.tensors[l] = t.Name
		return t.Name
	}
	other := v.tensors[1-l]
	if len(v.shape) == 3 {
		// A 1-D value [N,C,L] whose NHWC tensor is the 2-D [N,1,L,C] of
		// the conv or pool that made it (lift1D).
		if l == asIs {
			v.tensors[l] = im.reshapeTo(im.transpose(other, fromNHWC, v.name+"_2d"), v.shape, v.name)
		} else {
			v.tensors[l] = im.transpose(im.reshapeTo(other, lift4(v.shape), v.name+"_2d"), toNHWC, v.name+"_nhwc")
		}
		return v.tensors[l]
	}
	perm := toNHWC
	base := v.name + "_nhwc"
	if l == asIs {
		perm = fromNHWC
		base = v.name
	}
	v.tensors[l] = im.transpose(other, perm, base)
	return v.tensors[l]
}

// lift4 is a 1-D shape [N,C,L] viewed as 2-D, [N,C,1,L] (lift1D's view);
// other shapes are returned as they are.
func lift4(s []int) []int {
	if len(s) == 3 {
		return []int{s[0], s[1], 1, s[2]}
	}
	return s
}

// reshapeTo emits a Reshape of tensor src to shape (keeping its
// quantization) and returns the new tensor's name.
func (im *importer) reshapeTo(src string, shape []int, base string) string {
	t := im.g.Tensors[src]
	out := im.newTensor(base, t.DType, shape)
	if t.Quant != nil && len(t.Quant.Scale) <= 1 {
		q := *t.Quant
		out.Quant = &q
	}
	im.emit(graph.Reshape, []string{src}, nil, out)
	return out.Name
}

// memOrder returns a tensor whose memory holds v in ONNX (row-major)
// order: the ONNX-layout tensor, or an NHWC one whose permutation moves
// only size-1 dimensions. Reshape-like readers use it to skip a copy.
func (im *importer) memOrder(v *value) string {
	if v.tensors[asIs] == "" && v.tensors[nhwc] != "" && v.lazy == nil {
		if t := im.g.Tensors[v.tensors[nhwc]]; onlyUnitMoves(t.Shape, fromNHWC) {
			return t.Name
		}
	}
	return im.get(v, asIs)
}

// transpose emits a Transpose of tensor src (a Reshape when only size-1
// dimensions move) and returns the new tensor's name.
func (im *importer) transpose(src string, perm []int, base string) string {
	t := im.g.Tensors[src]
	out := im.newTensor(base, t.DType, permuteShape(t.Shape, perm))
	if t.Quant != nil {
		q := *t.Quant
		q.Axis = slices.Index(perm, t.Quant.Axis)
		out.Quant = &q
	}
	if onlyUnitMoves(t.Shape, perm) {
		im.emit(graph.Reshape, []string{src}, nil, out)
	} else {
		im.emit(graph.Transpose, []string{src}, &graph.TransposeAttrs{Perm: slices.Clone(perm)}, out)
	}
	return out.Name
}

// onlyUnitMoves reports whether a transpose keeps the order of every
// dimension larger than one (so it is a reshape in memory).
func onlyUnitMoves(shape, perm []int) bool {
	last := -1
	for _, p := range perm {
		if shape[p] == 1 {
			continue
		}
		if p < last {
			return false
		}
		last = p
	}
	return true
}

func (im *importer) newTensor(base string, dt graph.DType, shape []int) *graph.Tensor {
	return im.g.AddTensor(&graph.Tensor{Name: im.g.UniqueName(base), DType: dt, Shape: slices.Clone(shape)})
}

// KeepFloatMark is the doc_string of a node that mcugen quantize kept in
// float32 (--float): importing it marks the graph's nodes for it
// (graph.Graph.KeepFloat), and QDQ folding leaves them float.
const KeepFloatMark = "mcugen: kept in float32 (quantize --float)"

func (im *importer) emit(op graph.Op, ins []string, attrs any, outs ...*graph.Tensor) *graph.Node {
	name := outs[0].Name
	if im.node != nil {
		name = im.node.Name
		if im.aux > 0 {
			name += "/" + outs[0].Name
		}
	}
	for im.nodeNames[name] {
		im.seq++
		name = fmt.Sprintf("%s/%s_%d", name, op, im.seq)
	}
	im.nodeNames[name] = true
	if im.node != nil && im.node.DocString == KeepFloatMark {
		// Kept in float32 when the model was quantized (quantize
		// --float): every node this ONNX node maps to stays float when
		// the model is folded.
		if im.g.KeepFloat == nil {
			im.g.KeepFloat = map[string]bool{}
		}
		im.g.KeepFloat[name] = true
	}
	n := &graph.Node{Name: name, Op: op, Inputs: ins, Attrs: attrs}
	for _, o := range outs {
		n.Outputs = append(n.Outputs, o.Name)
	}
	return im.g.AddNode(n)
}

// withQuant returns a tensor holding src's values with quantization q: src
// itself when it has no parameters yet or the same ones, else a copy.
func (im *importer) withQuant(src string, q *graph.Quant) string {
	t := im.g.Tensors[src]
	if t.Quant == nil && (t.Data != nil || !im.castOutput(src)) {
		t.Quant = q
		return src
	}
	if t.Quant != nil && quantEqual(t.Quant, q) {
		return src
	}
	if t.Data != nil {
		c := im.g.AddTensor(&graph.Tensor{Name: im.g.UniqueName(src + "_q"), DType: t.DType, Shape: slices.Clone(t.Shape), Data: t.Data, Quant: q})
		return c.Name
	}
	return im.quantCopy(src, q)
}

// castOutput reports whether a Cast, or integer arithmetic on unquantized
// values, writes tensor name: such an output stays unquantized (a cast
// converts stored values; raw Add and Mul compute on them), so
// quantization goes on a copy (DynamicQuantizeLinear's uint8 result
// feeding MatMulInteger, ConvInteger's border at a run-time zero point).
func (im *importer) castOutput(name string) bool {
	for i := len(im.g.Nodes) - 1; i >= 0; i-- {
		n := im.g.Nodes[i]
		if !slices.Contains(n.Outputs, name) {
			continue
		}
		switch n.Op {
		case graph.Cast:
			return true
		case graph.Add, graph.Sub, graph.Mul:
			for _, in := range n.Inputs {
				if t := im.g.Tensors[in]; t == nil || t.Quant != nil {
					return false
				}
			}
			return true
		}
		return false
	}
	return false
}

// quantCopy is a copy of activation src (a same-shape Reshape) carrying
// quantization q.
func (im *importer) quantCopy(src string, q *graph.Quant) string {
	t := im.g.Tensors[src]
	out := im.newTensor(src+"_q", t.DType, t.Shape)
	out.Quant = q
	im.aux++
	im.emit(graph.Reshape, []string{src}, nil, out)
	im.aux--
	return out.Name
}

func quantEqual(a, b *graph.Quant) bool {
	return slices.Equal(a.Scale, b.Scale) && slices.Equal(a.ZeroPoint, b.ZeroPoint) && (a.Axis == b.Axis || len(a.Scale) <= 1)
}

// nodeCtx gives converters access to the current ONNX node.
type nodeCtx struct {
	im *importer
	n  *Node
	// bad is the first attribute a converter read whose stored type is
	// not the one it asked for; convertNode fails the node with it.
	bad error
}

// convertNode runs conv on n, refusing an attribute named twice and any
// attribute read as a type other than the one the model stores (review:
// a FLOAT axis was read as 0 and a Concat joined the wrong axis; an INT
// alpha was read as 0.0). An attribute of type UNDEFINED is read as
// asked, as the oldest exporters wrote them.
func convertNode(im *importer, n *Node, conv func(*importer, *nodeCtx) error) error {
	seen := make(map[string]bool, len(n.Attribute))
	for _, a := range n.Attribute {
		if a == nil {
			continue
		}
		if seen[a.Name] {
			return fmt.Errorf("attribute %q is given twice", a.Name)
		}
		seen[a.Name] = true
	}
	if err := checkArity(n, im.opset); err != nil {
		return err
	}
	return convertCtx(im, n, conv)
}

// convertCtx runs conv on n (or on a node a converter made from n, as a
// 1-D op lifted to 2-D) and fails it on an attribute read as another type
// than the model stores, that error first: a converter that went on with
// the default may fail for that default's sake ("axis 1 out of range"
// for a Concat whose axis was a STRING).
func convertCtx(im *importer, n *Node, conv func(*importer, *nodeCtx) error) error {
	c := &nodeCtx{im: im, n: n}
	err := conv(im, c)
	if c.bad != nil {
		return c.bad
	}
	return err
}

// typed reports whether attribute a may be read as type want, noting in
// c.bad the first that may not.
func (c *nodeCtx) typed(a *Attribute, want AttrType) bool {
	if a.Type == want || a.Type == AttrUndefined {
		return true
	}
	if c.bad == nil {
		c.bad = fmt.Errorf("attribute %q is %s, where %s wants %s", a.Name, attrTypeName(a.Type), c.n.OpType, attrTypeName(want))
	}
	return false
}

func attrTypeName(t AttrType) string {
	switch t {
	case AttrFloat:
		return "FLOAT"
	case AttrInt:
		return "INT"
	case AttrString:
		return "STRING"
	case AttrTensor:
		return "TENSOR"
	case AttrGraph:
		return "GRAPH"
	case AttrFloats:
		return "FLOATS"
	case AttrInts:
		return "INTS"
	}
	return fmt.Sprintf("of type %d", int(t))
}

func (c *nodeCtx) in(i int) *value {
	if i >= len(c.n.Input) || c.n.Input[i] == "" {
		return nil
	}
	return c.im.vals[c.n.Input[i]]
}

func (c *nodeCtx) nIn() int { return len(c.n.Input) }

// need returns input i or an error when it is absent.
func (c *nodeCtx) need(i int) (*value, error) {
	v := c.in(i)
	if v == nil {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	return v, nil
}

// constIn returns the constant value of input i (nil when absent) or an
// unsupported error when the input is computed at run time.
func (c *nodeCtx) constIn(i int, what string) (*graph.Data, error) {
	v := c.in(i)
	if v == nil {
		return nil, nil
	}
	if v.c == nil {
		return nil, unsupportedf("%s (input %q) must be a constant", what, v.name)
	}
	return v.c, nil
}

func (c *nodeCtx) attr(name string) *Attribute { return c.n.Attr(name) }

func (c *nodeCtx) int(name string, def int64) int64 {
	if a := c.attr(name); a != nil && c.typed(a, AttrInt) {
		return a.I
	}
	return def
}

func (c *nodeCtx) float(name string, def float32) float32 {
	if a := c.attr(name); a != nil && c.typed(a, AttrFloat) {
		return a.F
	}
	return def
}

func (c *nodeCtx) str(name, def string) string {
	if a := c.attr(name); a != nil && c.typed(a, AttrString) {
		return string(a.S)
	}
	return def
}

func (c *nodeCtx) ints(name string) ([]int, bool) {
	a := c.attr(name)
	if a == nil || !c.typed(a, AttrInts) {
		return nil, false
	}
	out := make([]int, len(a.Ints))
	for i, v := range a.Ints {
		out[i] = int(v)
	}
	return out, true
}

func (c *nodeCtx) out(i int) string {
	if i >= len(c.n.Output) {
		return ""
	}
	return c.n.Output[i]
}

// setConst records output i as a constant.
func (c *nodeCtx) setConst(i int, d *graph.Data) error {
	if err := checkShape(d.Shape); err != nil {
		return err
	}
	if err := d.Check(); err != nil {
		return err
	}
	if err := c.im.account(d); err != nil {
		return err
	}
	name := c.out(i)
	if name == "" {
		return nil
	}
	c.im.vals[name] = &value{name: name, dt: d.DType, shape: slices.Clone(d.Shape), c: d}
	return nil
}

// alias makes output i the same value as v (Identity, folded BatchNorm).
func (c *nodeCtx) alias(i int, v *value) {
	if name := c.out(i); name != "" {
		c.im.vals[name] = v
		// The aliasing node's own read is used up; the new name's readers join.
		v.pending += c.im.uses[name] - 1
	}
}

// newOut makes the graph tensor for output i in layout l. shape is the
// ONNX shape; the tensor gets the NHWC permutation of it when l is nhwc.
func (c *nodeCtx) newOut(i int, dt graph.DType, shape []int, l layout) (*graph.Tensor, *value) {
	name := c.out(i)
	if name == "" {
		name = fmt.Sprintf("%s_out%d", c.n.Name, i)
	}
	ts, base := shape, name
	if l == nhwc {
		ts, base = permuteShape(lift4(shape), toNHWC), name+"_nhwc"
	}
	t := c.im.newTensor(base, dt, ts)
	v := &value{name: name, dt: dt, shape: slices.Clone(shape), primary: l}
	v.tensors[l] = t.Name
	if c.out(i) != "" {
		c.im.vals[name] = v
		v.pending = c.im.uses[name]
	}
	return t, v
}

// emit1 emits a one-output canonical node for output 0 and records it.
func (c *nodeCtx) emit1(op graph.Op, ins []string, attrs any, dt graph.DType, shape []int, l layout) (*graph.Node, *graph.Tensor) {
	t, v := c.newOut(0, dt, shape, l)
	n := c.im.emit(op, ins, attrs, t)
	v.prod = n
	if in := c.im.g.Tensors[ins[0]]; dt.IsInt() && in != nil && in.DType == dt && in.Quant != nil && len(in.Quant.Scale) == 1 {
		switch op {
		case graph.Reshape, graph.Transpose, graph.MaxPool2D, graph.Pad, graph.Slice:
			// Data movement keeps the input's per-tensor parameters (as TFLite's do).
			q := *in.Quant
			t.Quant = &q
		}
	}
	return n, t
}

func normAxis(a, rank int) (int, error) {
	if a < -rank || a >= rank || (rank == 0 && a != 0) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += rank
	}
	return a, nil
}

// nhwcAxis maps an NCHW axis to its NHWC position.
func nhwcAxis(a int) int { return slices.Index(toNHWC, a) }

// exampleShape is vi's shape with axis at bound (its first value) and
// other free dimensions at 1, as --shape takes it (d0,d1,...).
func exampleShape(vi *ValueInfo, axis int, bound []int) string {
	parts := make([]string, len(vi.Type.Shape))
	for i, d := range vi.Type.Shape {
		switch {
		case i == axis && len(bound) > 0:
			parts[i] = strconv.Itoa(bound[0])
		case d.HasValue && d.Value > 0:
			parts[i] = strconv.FormatInt(d.Value, 10)
		default:
			parts[i] = "1"
		}
	}
	return strings.Join(parts, ",")
}

// consumerOf names the first node of og that reads the tensor name, as
// " (input of node "N", Op)", or "" for none: an initializer's error then
// names the node it belongs to.
func consumerOf(og *Graph, name string) string {
	for i, n := range og.Nodes {
		if slices.Contains(n.Input, name) {
			nn := n.Name
			if nn == "" {
				nn = fmt.Sprintf("%s_%d", n.OpType, i)
			}
			return fmt.Sprintf(" (input of node %q, %s)", nn, n.OpType)
		}
	}
	return ""
}
