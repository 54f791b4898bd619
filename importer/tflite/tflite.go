// Package tflite imports TensorFlow Lite flatbuffer models (.tflite) into
// mcugen's graph IR. It reads subgraph 0 with bounds-checked accessors over
// the public schema (schema.fbs), keeps TFLite's NHWC layout and its
// quantization parameters, and maps each builtin operator to a canonical op:
// depthwise weights are transposed to [Cout,KH,KW,1], SAME padding becomes
// explicit padding, reshape-like ops become Reshape, and so on. Malformed
// input of any kind is an error, never a panic.
package tflite

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/mcugen/mcugen/graph"
)

// recoverPanics turns a panic inside Decode into an error.
var recoverPanics = true

// Load reads and decodes a .tflite file.
func Load(path string) (*graph.Graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tflite: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return Decode(name, b)
}

// Decode decodes a TFLite model held in b. name becomes the graph's name.
func Decode(name string, b []byte) (g *graph.Graph, err error) {
	return DecodeWith(name, b, Options{})
}

// Options are DecodeWith's: Shapes are the shapes the user asks for named
// inputs (--shape), Warn takes the notes on what was bound for them.
type Options struct {
	Shapes map[string][]int
	Warn   func(string)
	// Quantizing says the model will be quantized (--calib): the note on a
	// dynamic-range model says so instead of describing its float run.
	Quantizing bool
}

// DecodeWith is Decode with options. A TFLite file stores every tensor's
// shape, with a value where shape_signature has -1 (a dynamic dimension);
// mcugen compiles the stored shapes, as TFLite runs them. An input with a
// dynamic dimension other than the batch gets a note saying so; a --shape
// for an input must be its stored shape (TFLite's shapes are not inferred
// again), and one for a name that is not an input is an error.
func DecodeWith(name string, b []byte, opt Options) (g *graph.Graph, err error) {
	g, d, err := decode(name, b)
	if err != nil {
		return nil, err
	}
	dyn := d.dynamic
	for in, want := range opt.Shapes {
		t := g.Tensors[in]
		if t == nil || !slices.Contains(g.UserInputs(), in) {
			return nil, fmt.Errorf("--shape %s: the model has no input named %q (its inputs: %s)", in, in, strings.Join(g.UserInputs(), ", "))
		}
		if !slices.Equal(t.Shape, want) {
			return nil, fmt.Errorf("--shape %s=%v: a TFLite model's shapes are fixed in the file (%q is %v); mcugen compiles them as stored", in, want, in, t.Shape)
		}
	}
	if opt.Warn != nil {
		for _, in := range g.UserInputs() {
			if sig, ok := dyn[in]; ok && opt.Shapes[in] == nil {
				// (A --shape for it, its stored shape, is the user's answer.)
				opt.Warn(fmt.Sprintf("input %q has a dynamic dimension (shape signature %v): compiled with the shape the file stores, %v", in, sig, g.Tensors[in].Shape))
			}
		}
		if u := d.unrolled; len(u) > 0 {
			more := ""
			if len(u) > 3 {
				u, more = u[:3], fmt.Sprintf(", and %d more", len(u)-3)
			}
			opt.Warn(fmt.Sprintf("%s: control flow unrolled at compile time: %s%s", name, strings.Join(u, ", "), more))
		}
		if h := d.hybrid; len(h) > 0 {
			more := ""
			if len(h) > 1 {
				more = fmt.Sprintf(" and %d more", len(h)-1)
			}
			what := fmt.Sprintf("%s: a dynamic-range quantized model (integer weights, float activations: %s%s): its weights are read as float32 (scale·q)", name, h[0], more)
			if opt.Quantizing {
				opt.Warn(what + ", and the model is quantized from them as a float model")
			} else {
				opt.Warn(what + " and the model runs in float32, where TFLite's hybrid kernels (but EMBEDDING_LOOKUP's) also round the activations to int8 at run time, so outputs differ from TFLite's by that rounding; --calib DIR (or --calib-random N) quantizes it to int8")
			}
		}
	}
	return g, nil
}

// decode is Decode, and the decoder, whose notes (the inputs' dynamic
// dimensions, the hybrid operators) DecodeWith passes on.
func decode(name string, b []byte) (g *graph.Graph, dec *decoder, err error) {
	defer func() {
		// Every access is checked; this is the last line of defence only
		// (the fuzz test turns it off to see any panic).
		if !recoverPanics {
			return
		}
		if r := recover(); r != nil {
			g, dec, err = nil, nil, fmt.Errorf("tflite: malformed model: %v", r)
		}
	}()
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("tflite: file of %d byte(s) is too short to be a TFLite model", len(b))
	}
	if id := string(b[4:8]); id != "TFL3" {
		return nil, nil, fmt.Errorf("tflite: not a TFLite flatbuffer (file identifier %q, want \"TFL3\")", id)
	}
	d := &decoder{r: &reader{b: b}, g: graph.New(name, "tflite"), dynamic: map[string][]int32{}}
	d.main = d.g
	if err := d.decode(); err != nil {
		return nil, nil, fmt.Errorf("tflite: %w", err)
	}
	return d.g, d, nil
}

type decoder struct {
	r        *reader
	g        *graph.Graph
	dynamic  map[string][]int32 // the inputs' shape signatures with a -1
	codes    []int32            // builtin code per operator code
	customs  []string
	buffers  []table
	tensors  []table
	names    map[int]string // imported tensor index -> graph name
	dwNames  map[int]string // depthwise weights, transposed
	fileSize map[string][]int
	// states are the variable tensors operators update (SVDF's state) and
	// the resource variables read before they are assigned.
	states []graph.State
	// The resource variables (ops_var.go), by container and shared_name,
	// the handle tensors that name them, and every subgraph (CALL_ONCE's
	// initializers).
	vars      map[string]*variable
	varOrder  []string
	handles   map[int]string
	subgraphs []table
	// hybrid names the dynamic-range operators (ops_hybrid.go), and
	// dequantized holds their weights in float32, by tensor index.
	hybrid      []string
	dequantized map[int]string
	// spare are constants kept in case a later operator reads them (the
	// file's layout of depthwise weights); unread, they are dropped.
	spare []string
	// Control flow (ops_control.go): main is the model's graph (d.g is
	// another while a WHILE's condition is evaluated), depth the nesting
	// of IF and WHILE being unrolled, inlined and inlinedOps the nodes
	// unrolling has added and the operators it has imported, subConsts each subgraph's constants shared by its copies, and
	// fileConsts the constants of the subgraph being imported, by index.
	main       *graph.Graph
	depth      int
	inlined    int
	inlinedOps int
	foldBytes  int64
	// unrolled describes the model's IF and WHILE operators as unrolled,
	// for a note.
	unrolled []string
	// prefix starts the names of an unrolled copy's tensors ("h/3/":
	// iteration 3 of the loop whose first output is h), unique by
	// construction so that naming stays linear in the copies.
	prefix     string
	subConsts  map[int]*subgraphConsts
	fileConsts map[int]string
}

func (d *decoder) check() error { return d.r.err }

func (d *decoder) decode() error {
	model := d.r.root()
	if err := d.check(); err != nil {
		return err
	}
	// TFLite and TFLite Micro read schema version 3 only (a review
	// finding: versions 1 and 99 compiled; older files gave several fields
	// other meanings).
	if v := model.u32(modelVersion, 0); v != 3 && d.check() == nil {
		return fmt.Errorf("schema version %d: TFLite reads version 3 only", v)
	}
	for _, oc := range model.tables(modelOperatorCodes, "operator code") {
		code := max(oc.i32(opcodeBuiltin, 0), int32(oc.i8(opcodeDeprecatedBuiltin, 0)))
		d.codes = append(d.codes, code)
		d.customs = append(d.customs, oc.str(opcodeCustom))
	}
	d.buffers = model.tables(modelBuffers, "buffer")
	sgs := model.tables(modelSubgraphs, "subgraph")
	if err := d.check(); err != nil {
		return err
	}
	if len(sgs) == 0 {
		return fmt.Errorf("model has no subgraphs")
	}
	sg := sgs[0]
	d.subgraphs = sgs
	d.tensors = sg.tables(subgraphTensors, "tensor")
	d.names = map[int]string{}
	d.dwNames = map[int]string{}
	d.fileSize = map[string][]int{}
	ins, outs := sg.ints(subgraphInputs), sg.ints(subgraphOutputs)
	ops := sg.tables(subgraphOperators, "operator")
	if err := d.check(); err != nil {
		return err
	}
	// A type code outside the schema's TensorType (0 to 18) is damage,
	// on a tensor no operator reads too (a review's reshape shape tensor
	// of type 99 compiled; the same byte on a read operand was refused).
	for i, t := range d.tensors {
		if tt := t.i8(tensorType, 0); tt < 0 || tt > 18 {
			return fmt.Errorf("tensor %d (%q): unknown tensor type %d", i, t.str(tensorName), tt)
		}
	}
	if err := d.check(); err != nil {
		return err
	}
	for _, i := range ins {
		name, err := d.tensor(int(i))
		if err != nil {
			return fmt.Errorf("subgraph input: %w", err)
		}
		if d.g.Tensors[name].IsConst() {
			return fmt.Errorf("subgraph input %q is a constant", name)
		}
		if err := d.noWideUnsigned(int(i)); err != nil {
			return fmt.Errorf("subgraph input %q: %w", name, err)
		}
		if slices.Contains(d.g.Inputs, name) {
			// Two API members for one tensor (adversarial journey).
			return fmt.Errorf("subgraph input %q is listed twice", name)
		}
		// A dynamic batch (-1 first) is TFLite's default and the file
		// stores 1 there, which TFLite runs too: only another dynamic
		// dimension gets a note.
		if sig := d.tensors[i].ints(tensorSignature); len(sig) > 1 && slices.Contains(sig[1:], -1) {
			d.dynamic[name] = sig
		}
		d.g.Inputs = append(d.g.Inputs, name)
	}
	for i, op := range ops {
		if err := d.operator(i, op); err != nil {
			return err
		}
	}
	d.finishVariables()
	for _, i := range outs {
		name, err := d.tensor(int(i))
		if err != nil {
			return fmt.Errorf("subgraph output: %w", err)
		}
		if err := d.noWideUnsigned(int(i)); err != nil {
			return fmt.Errorf("subgraph output %q: %w", name, err)
		}
		if slices.Contains(d.g.Outputs, name) {
			return fmt.Errorf("subgraph output %q is listed twice", name)
		}
		d.g.Outputs = append(d.g.Outputs, name)
	}
	for _, st := range d.states {
		if slices.Contains(d.g.Outputs, st.In) {
			return fmt.Errorf("variable tensor %q is also a subgraph output: mcugen keeps a model's state to itself", st.In)
		}
		d.g.Inputs = append(d.g.Inputs, st.In)
		d.g.Outputs = append(d.g.Outputs, st.Out)
	}
	d.g.States = d.states
	d.dropDequantizedOriginals()
	// SHAPE, FILL and the like can leave an output constant: a copy gives it a producer.
	graph.MaterializeConstOutputs(d.g)
	if err := graph.InferShapes(d.g); err != nil {
		return err
	}
	// The file's shapes win where they differ only in axes of 1 (a
	// strided slice that shrinks an axis, a squeeze); anything else is a
	// bad model, also with the same number of elements (adversarial
	// journey: a Conv2D output stored as [1,4,8,8] for [1,8,8,4] compiled,
	// its header saying the wrong shape).
	for _, name := range slices.Sorted(maps.Keys(d.fileSize)) {
		s, t := d.fileSize[name], d.g.Tensors[name]
		if !slices.Equal(graph.WithoutOnes(s), graph.WithoutOnes(t.Shape)) {
			return fmt.Errorf("tensor %q: the file says shape %v, the operator computes %v", name, s, t.Shape)
		}
		t.Shape = append([]int(nil), s...)
	}
	if err := graph.Validate(d.g); err != nil {
		return err
	}
	return nil
}

func dtypeOf(tt int8) (graph.DType, error) {
	switch tt {
	case ttFloat32:
		return graph.Float32, nil
	case ttInt32:
		return graph.Int32, nil
	case ttUInt8:
		return graph.UInt8, nil
	case ttInt64:
		return graph.Int64, nil
	case ttBool:
		return graph.Bool, nil
	case ttInt16:
		return graph.Int16, nil
	case ttInt8:
		return graph.Int8, nil
	case ttUInt32, ttUInt64:
		// The TFLM signal library's tensors (energies, filter bank sums):
		// held as int64 inside the graph, uint32 values exactly and uint64
		// ones as their bit pattern; their kernels read them unsigned
		// (ops_signal_*.go). Never an application input or output.
		return graph.Int64, nil
	}
	names := map[int8]string{1: "float16", 5: "string", 8: "complex64", 10: "float64", 11: "complex128", 12: "uint64", 13: "resource", 14: "variant", 15: "uint32", 16: "uint16", 17: "int4"}
	if n, ok := names[tt]; ok {
		return graph.Invalid, fmt.Errorf("tensor type %s not supported", n)
	}
	return graph.Invalid, fmt.Errorf("unknown tensor type %d", tt)
}

// tensor imports tensor i of subgraph 0 (once) and returns its graph name.
func (d *decoder) tensor(i int) (string, error) {
	if name, ok := d.names[i]; ok {
		return name, nil
	}
	if i < 0 || i >= len(d.tensors) {
		return "", fmt.Errorf("tensor index %d out of range (%d tensors)", i, len(d.tensors))
	}
	tt := d.tensors[i]
	name := tt.str(tensorName)
	if name == "" {
		name = fmt.Sprintf("tensor_%d", i)
	}
	name = d.g.UniqueName(d.prefix + name)
	fail := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("tensor %d (%q): %s", i, name, fmt.Sprintf(format, a...))
	}
	ttype := tt.i8(tensorType, 0)
	dt, err := dtypeOf(ttype)
	switch ttype {
	case ttFloat16:
		// float16 constants (weights of "float16 quantized" models) are
		// widened to float32; float16 activations are not supported.
		dt, err = graph.Float32, nil
	case ttInt4:
		// int4 constants (the 4-bit weights TFLite Micro's convolutions
		// and fully connected layers take), two to a byte in the file,
		// are read as the int8 values they stand for; int4 activations
		// are not supported.
		dt, err = graph.Int8, nil
	}
	if err != nil {
		return fail("%v", err)
	}
	raw := tt.ints(tensorShape)
	if tt.sub(tensorSparsity, "sparsity").pos != 0 {
		return fail("sparse tensors are not supported")
	}
	if err := d.check(); err != nil {
		return "", err
	}
	shape := make([]int, len(raw))
	for k, v := range raw {
		switch {
		case v > 0:
			shape[k] = int(v)
		case v == -1 && k == 0:
			shape[k] = 1 // a dynamic batch binds to 1
		default:
			return fail("dimension %d of shape %v is not positive", k, raw)
		}
	}
	if err := graph.CheckShape(shape); err != nil && len(shape) > 0 {
		return fail("%v", err)
	}
	t := &graph.Tensor{Name: name, DType: dt, Shape: shape}
	if t.Quant, err = d.quant(tt.sub(tensorQuantization, "quantization"), shape); err != nil {
		return fail("%v", err)
	}
	if t.Data, err = d.data(int(tt.u32(tensorBuffer, 0)), ttype, dt, shape); err != nil {
		return fail("%v", err)
	}
	if (ttype == ttFloat16 || ttype == ttInt4) && t.Data == nil {
		return fail("%s activations are not supported", map[int8]string{ttFloat16: "float16", ttInt4: "int4"}[ttype])
	}
	if err := d.check(); err != nil {
		return "", err
	}
	d.g.AddTensor(t)
	d.names[i] = name
	if d.fileConsts != nil && t.Data != nil {
		d.fileConsts[i] = name
	}
	return name, nil
}

func (d *decoder) quant(q table, shape []int) (*graph.Quant, error) {
	if q.pos == 0 {
		return nil, nil
	}
	scales := q.floats(quantScale)
	zps := q.int64s(quantZeroPoint)
	axis := int(q.i32(quantDimension, 0))
	if err := d.check(); err != nil {
		return nil, err
	}
	if len(scales) == 0 {
		return nil, nil
	}
	// TFLite Micro reads one zero point for all of a tensor's scales ("as
	// a space-saving optimization, zero point arrays for weights can be
	// reduced to a single value"), and none as 0 (a bias the kernels read
	// raw); any other count is a mistake (LiteRT refuses all three: the
	// second review of session 47 found valid TFLite Micro files refused).
	if len(zps) > 1 && len(zps) != len(scales) {
		return nil, fmt.Errorf("%d zero points for %d scales: TFLite wants one a scale (or one for all)", len(zps), len(scales))
	}
	if len(scales) == 1 {
		// One scale runs along no axis: TFLite Micro ignores the field
		// (old converters wrote 3 on per-tensor tensors of any rank).
		axis = 0
	}
	if len(shape) == 1 && shape[0] == len(scales) && axis != 0 {
		// A 1-D tensor has one axis its scales can run along. Old
		// converters wrote the filter's quantized_dimension (3) on
		// depthwise convolutions' per-channel biases: TFLM's
		// person_detect.tflite, whose 14 biases TFLite Micro reads along
		// their only axis (it checks the filter's quantization alone).
		axis = 0
	}
	if len(scales) > 1 && (axis < 0 || axis >= len(shape) || shape[axis] != len(scales)) {
		return nil, fmt.Errorf("%d scales do not match dimension %d of shape %v", len(scales), axis, shape)
	}
	out := &graph.Quant{Scale: scales, Axis: axis}
	for _, s := range scales {
		if !(s > 0) || math.IsInf(float64(s), 0) {
			return nil, fmt.Errorf("quantization scale %g is not positive and finite", s)
		}
	}
	if len(zps) == 0 {
		zps = []int64{0}
	}
	for _, z := range zps {
		if z < math.MinInt32 || z > math.MaxInt32 {
			return nil, fmt.Errorf("zero point %d out of range", z)
		}
		out.ZeroPoint = append(out.ZeroPoint, int32(z))
	}
	if len(scales) == 1 {
		out.Axis = 0
	}
	return out, nil
}

// data returns the constant value held in buffer bi, or nil for none.
func (d *decoder) data(bi int, ttype int8, dt graph.DType, shape []int) (*graph.Data, error) {
	if bi == 0 {
		return nil, nil
	}
	if bi < 0 || bi >= len(d.buffers) {
		return nil, fmt.Errorf("buffer index %d out of range (%d buffers)", bi, len(d.buffers))
	}
	buf := d.buffers[bi]
	raw := buf.bytes(bufferData)
	if off := buf.u64(bufferOffset, 0); off > 1 {
		size := buf.u64(bufferSize, 0)
		if off > uint64(len(d.r.b)) || size > uint64(len(d.r.b))-off {
			return nil, fmt.Errorf("buffer %d: offset %d + size %d lies outside the %d-byte file", bi, off, size, len(d.r.b))
		}
		raw = d.r.b[off : off+size]
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	n := graph.NumElements(shape)
	size := dt.Size()
	switch ttype {
	case ttFloat16:
		size = 2
	case ttUInt32:
		// Held as int64: 4 bytes an element in the file, zero-extended.
		size = 4
	}
	want := n * size
	if ttype == ttInt4 {
		want = (n + 1) / 2 // packed, as TFLite writes them
	}
	if len(raw) != want {
		packed := ""
		if ttype == ttInt4 {
			packed = " (int4, two a byte)"
		}
		return nil, fmt.Errorf("buffer %d holds %d bytes, shape %v needs %d%s", bi, len(raw), shape, want, packed)
	}
	v := graph.NewData(dt, shape)
	for k := 0; k < n; k++ {
		switch {
		case ttype == ttFloat16:
			v.F[k] = halfToFloat(flatbuffers.GetUint16(raw[2*k:]))
		case ttype == ttUInt32:
			v.I[k] = int64(flatbuffers.GetUint32(raw[4*k:]))
		case ttype == ttInt4:
			// Element 2i in the low nibble of byte i, 2i+1 in the high
			// one, each a two's complement 4-bit value.
			v.I[k] = int64(int8(raw[k/2]<<(4-4*(k%2))) >> 4)
		case dt == graph.Float32:
			v.F[k] = flatbuffers.GetFloat32(raw[4*k:])
		case dt == graph.Int8:
			v.I[k] = int64(int8(raw[k]))
		case dt == graph.UInt8, dt == graph.Bool:
			v.I[k] = int64(raw[k])
		case dt == graph.Int16:
			v.I[k] = int64(flatbuffers.GetInt16(raw[2*k:]))
		case dt == graph.Int32:
			v.I[k] = int64(flatbuffers.GetInt32(raw[4*k:]))
		case dt == graph.Int64:
			v.I[k] = flatbuffers.GetInt64(raw[8*k:])
		}
	}
	if dt == graph.Bool {
		for k := range v.I {
			if v.I[k] > 1 {
				v.I[k] = 1
			}
		}
	}
	return v, nil
}

// halfToFloat widens an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac * 2^-24
		v := float32(math.Ldexp(float64(frac), -24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}
