// Package tflitegen writes TensorFlow Lite flatbuffer models for mcugen's
// tests: a small description of tensors (float32 or quantized, per tensor or
// per axis), operators with their builtin options, and the subgraph's inputs
// and outputs, serialized with the flatbuffers Go builder following the public
// TFLite schema. Constant data can live inside the flatbuffer or after it
// (the offset/size buffers large models use).
package tflitegen

import (
	"encoding/binary"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"
)

// TFLite tensor types.
const (
	Float32 int8 = 0
	Float16 int8 = 1
	Int32   int8 = 2
	UInt8   int8 = 3
	Int64   int8 = 4
	BoolT   int8 = 6 // one byte a value, 0 or 1
	Int16   int8 = 7
	Int8    int8 = 9
	Int4    int8 = 17 // packed two to a byte, element 2i in the low nibble
)

// Tensor describes one tensor of subgraph 0.
type Tensor struct {
	Name      string
	Type      int8
	Shape     []int32
	Signature []int32 // shape_signature (e.g. -1 for a dynamic batch)
	Data      []byte  // constant contents, little-endian; nil for activations
	Scale     []float32
	ZeroPoint []int64
	QuantDim  int32
	Variable  bool // is_variable: state a stateful operator keeps (an LSTM's)
}

// Field is one field of a builtin options table: a scalar, or a string.
type Field struct {
	ID    int
	Kind  byte // 'b' int8/bool, 'i' int32, 'f' float32, 's' string
	Value float64
	Str   string
}

// Str is a string field.
func Str(id int, v string) Field { return Field{ID: id, Kind: 's', Str: v} }

// I8 is an int8 (or enum, or bool) field.
func I8(id int, v int) Field { return Field{ID: id, Kind: 'b', Value: float64(v)} }

// I32 is an int32 field.
func I32(id int, v int) Field { return Field{ID: id, Kind: 'i', Value: float64(v)} }

// F32 is a float32 field.
func F32(id int, v float32) Field { return Field{ID: id, Kind: 'f', Value: float64(v)} }

// Bool is a bool field.
func Bool(id int, v bool) Field {
	if v {
		return I8(id, 1)
	}
	return I8(id, 0)
}

// Options is a builtin options table: its BuiltinOptions union type and its
// scalar fields.
type Options struct {
	Type   uint8
	Fields []Field
}

// Operator is one operator: a builtin code (or CUSTOM with a custom code).
type Operator struct {
	Code    int32
	Custom  string
	Inputs  []int32 // -1 for an absent optional input
	Outputs []int32
	Options *Options
	// CustomOptions are a custom operator's options (FlexBuffers: FlexMap).
	CustomOptions []byte
}

// Model is subgraph 0 of a TFLite model.
type Model struct {
	Tensors []Tensor
	Ops     []Operator
	Inputs  []int32
	Outputs []int32
	// Subgraphs are subgraphs 1, 2, ... (their own tensors and operators;
	// a CALL_ONCE's initializer); their External and Subgraphs are unused.
	Subgraphs []*Model
	External  bool // store constant data after the flatbuffer (offset/size buffers)
	// OldOpCodes writes only the deprecated int8 builtin code, as files from
	// before schema 3a do.
	OldOpCodes bool
}

// AddTensor appends t and returns its index.
func (m *Model) AddTensor(t Tensor) int32 {
	m.Tensors = append(m.Tensors, t)
	return int32(len(m.Tensors) - 1)
}

// AddOp appends an operator.
func (m *Model) AddOp(code int32, opts *Options, ins []int32, outs ...int32) {
	m.Ops = append(m.Ops, Operator{Code: code, Inputs: ins, Outputs: outs, Options: opts})
}

// Bytes serializes the model. With External set the constant data follows
// the flatbuffer, 16-byte aligned, and buffers hold its offset and size.
func (m *Model) Bytes() []byte {
	if !m.External {
		return m.build(nil)
	}
	// The flatbuffer's size does not depend on the offset values (fixed-width
	// scalars), so build once to learn it, then again with real offsets.
	offs := make([]uint64, len(m.Tensors))
	for i := range offs {
		offs[i] = 2
	}
	fb := m.build(offs)
	pos := uint64(align16(len(fb)))
	for i, t := range m.Tensors {
		if t.Data != nil {
			offs[i] = pos
			pos += uint64(align16(len(t.Data)))
		}
	}
	fb = m.build(offs)
	out := append([]byte(nil), fb...)
	for i, t := range m.Tensors {
		if t.Data != nil {
			out = append(out, make([]byte, int(offs[i])-len(out))...)
			out = append(out, t.Data...)
		}
	}
	return append(out, make([]byte, align16(len(out))-len(out))...)
}

func align16(n int) int { return (n + 15) &^ 15 }

func (m *Model) build(extOffsets []uint64) []byte {
	b := flatbuffers.NewBuilder(1024)
	all := append([]*Model{m}, m.Subgraphs...)
	// Buffers: 0 is the empty sentinel, then one per constant tensor of
	// every subgraph (subgraph 0's stored after the flatbuffer when
	// extOffsets is given).
	bufIndex := make([][]uint32, len(all))
	var buffers []flatbuffers.UOffsetT
	b.StartObject(3)
	buffers = append(buffers, b.EndObject())
	for s, sm := range all {
		bufIndex[s] = make([]uint32, len(sm.Tensors))
		for i, t := range sm.Tensors {
			if t.Data == nil {
				continue
			}
			ext := extOffsets != nil && s == 0
			var data flatbuffers.UOffsetT
			if !ext {
				data = b.CreateByteVector(t.Data)
			}
			b.StartObject(3)
			if !ext {
				b.PrependUOffsetTSlot(0, data, 0)
			} else {
				b.PrependUint64Slot(1, extOffsets[i], 0)
				b.PrependUint64Slot(2, uint64(len(t.Data)), 0)
			}
			bufIndex[s][i] = uint32(len(buffers))
			buffers = append(buffers, b.EndObject())
		}
	}
	buffersVec := b.CreateVectorOfTables(buffers)
	// Subgraph 0's tensors come before the operator codes (the byte layout
	// of the files written before there were other subgraphs).
	tensors0 := m.tensors(b, bufIndex[0])

	// Operator codes, one per distinct (code, custom) pair in first-use order.
	type key struct {
		code   int32
		custom string
	}
	codeIndex := map[key]uint32{}
	var codes []flatbuffers.UOffsetT
	for _, sm := range all {
		for _, op := range sm.Ops {
			k := key{op.Code, op.Custom}
			if _, ok := codeIndex[k]; ok {
				continue
			}
			var custom flatbuffers.UOffsetT
			if op.Custom != "" {
				custom = b.CreateString(op.Custom)
			}
			b.StartObject(4)
			b.PrependInt8Slot(0, int8(min(op.Code, 127)), 0)
			if custom != 0 {
				b.PrependUOffsetTSlot(1, custom, 0)
			}
			b.PrependInt32Slot(2, 1, 1)
			if !m.OldOpCodes {
				b.PrependInt32Slot(3, op.Code, 0)
			}
			codeIndex[k] = uint32(len(codes))
			codes = append(codes, b.EndObject())
		}
	}
	codesVec := b.CreateVectorOfTables(codes)

	opIndex := func(op Operator) uint32 { return codeIndex[key{op.Code, op.Custom}] }
	sgs := []flatbuffers.UOffsetT{m.subgraph(b, tensors0, opIndex)}
	for s, sm := range all[1:] {
		sgs = append(sgs, sm.subgraph(b, sm.tensors(b, bufIndex[s+1]), opIndex))
	}
	sgVec := b.CreateVectorOfTables(sgs)
	desc := b.CreateString("mcugen test model")

	b.StartObject(8)
	b.PrependUint32Slot(0, 3, 0)
	b.PrependUOffsetTSlot(1, codesVec, 0)
	b.PrependUOffsetTSlot(2, sgVec, 0)
	b.PrependUOffsetTSlot(3, desc, 0)
	b.PrependUOffsetTSlot(4, buffersVec, 0)
	root := b.EndObject()
	b.FinishWithFileIdentifier(root, []byte("TFL3"))
	return append([]byte(nil), b.FinishedBytes()...)
}

// tensors writes m's tensors and returns their vector.
func (m *Model) tensors(b *flatbuffers.Builder, bufIndex []uint32) flatbuffers.UOffsetT {
	var tensors []flatbuffers.UOffsetT
	for i, t := range m.Tensors {
		name := b.CreateString(t.Name)
		shape := int32Vector(b, t.Shape)
		var sig flatbuffers.UOffsetT
		if t.Signature != nil {
			sig = int32Vector(b, t.Signature)
		}
		var quant flatbuffers.UOffsetT
		if len(t.Scale) > 0 {
			b.StartVector(4, len(t.Scale), 4)
			for k := len(t.Scale) - 1; k >= 0; k-- {
				b.PrependFloat32(t.Scale[k])
			}
			scales := b.EndVector(len(t.Scale))
			b.StartVector(8, len(t.ZeroPoint), 8)
			for k := len(t.ZeroPoint) - 1; k >= 0; k-- {
				b.PrependInt64(t.ZeroPoint[k])
			}
			zps := b.EndVector(len(t.ZeroPoint))
			b.StartObject(7)
			b.PrependUOffsetTSlot(2, scales, 0)
			b.PrependUOffsetTSlot(3, zps, 0)
			b.PrependInt32Slot(6, t.QuantDim, 0)
			quant = b.EndObject()
		}
		b.StartObject(10)
		b.PrependUOffsetTSlot(0, shape, 0)
		b.PrependInt8Slot(1, t.Type, 0)
		b.PrependUint32Slot(2, bufIndex[i], 0)
		b.PrependUOffsetTSlot(3, name, 0)
		if quant != 0 {
			b.PrependUOffsetTSlot(4, quant, 0)
		}
		if sig != 0 {
			b.PrependUOffsetTSlot(7, sig, 0)
		}
		b.PrependBoolSlot(5, t.Variable, false)
		tensors = append(tensors, b.EndObject())
	}
	return b.CreateVectorOfTables(tensors)
}

// subgraph writes m's operators and the subgraph table over tensorsVec.
func (m *Model) subgraph(b *flatbuffers.Builder, tensorsVec flatbuffers.UOffsetT, opIndex func(Operator) uint32) flatbuffers.UOffsetT {
	var ops []flatbuffers.UOffsetT
	for _, op := range m.Ops {
		ins := int32Vector(b, op.Inputs)
		outs := int32Vector(b, op.Outputs)
		var opts flatbuffers.UOffsetT
		if op.Options != nil {
			strs := map[int]flatbuffers.UOffsetT{}
			maxID := 0
			for _, f := range op.Options.Fields {
				maxID = max(maxID, f.ID+1)
				if f.Kind == 's' {
					strs[f.ID] = b.CreateString(f.Str)
				}
			}
			b.StartObject(maxID)
			for _, f := range op.Options.Fields {
				switch f.Kind {
				case 'b':
					b.PrependInt8Slot(f.ID, int8(f.Value), 0)
				case 'i':
					b.PrependInt32Slot(f.ID, int32(f.Value), -1<<31)
				case 'f':
					b.PrependFloat32Slot(f.ID, float32(f.Value), float32(math.NaN()))
				case 's':
					b.PrependUOffsetTSlot(f.ID, strs[f.ID], 0)
				}
			}
			opts = b.EndObject()
		}
		var custom flatbuffers.UOffsetT
		if op.CustomOptions != nil {
			custom = b.CreateByteVector(op.CustomOptions)
		}
		b.StartObject(13)
		if custom != 0 {
			b.PrependUOffsetTSlot(5, custom, 0)
		}
		b.PrependUint32Slot(0, opIndex(op), 0)
		b.PrependUOffsetTSlot(1, ins, 0)
		b.PrependUOffsetTSlot(2, outs, 0)
		if op.Options != nil {
			b.PrependUint8Slot(3, op.Options.Type, 0)
			b.PrependUOffsetTSlot(4, opts, 0)
		}
		ops = append(ops, b.EndObject())
	}
	opsVec := b.CreateVectorOfTables(ops)
	inVec := int32Vector(b, m.Inputs)
	outVec := int32Vector(b, m.Outputs)
	sgName := b.CreateString("main")
	b.StartObject(5)
	b.PrependUOffsetTSlot(0, tensorsVec, 0)
	b.PrependUOffsetTSlot(1, inVec, 0)
	b.PrependUOffsetTSlot(2, outVec, 0)
	b.PrependUOffsetTSlot(3, opsVec, 0)
	b.PrependUOffsetTSlot(4, sgName, 0)
	return b.EndObject()
}

func int32Vector(b *flatbuffers.Builder, v []int32) flatbuffers.UOffsetT {
	b.StartVector(4, len(v), 4)
	for k := len(v) - 1; k >= 0; k-- {
		b.PrependInt32(v[k])
	}
	return b.EndVector(len(v))
}

// F32Bytes encodes float32 values.
func F32Bytes(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// I8Bytes encodes int8 values.
// I4Bytes packs int4 values two to a byte, element 2i in the low nibble
// (TFLite's layout; an odd count leaves the last high nibble zero).
func I4Bytes(v ...int8) []byte {
	b := make([]byte, (len(v)+1)/2)
	for i, x := range v {
		b[i/2] |= byte(x&0xf) << (4 * (i % 2))
	}
	return b
}

func I8Bytes(v ...int8) []byte {
	out := make([]byte, len(v))
	for i, x := range v {
		out[i] = byte(x)
	}
	return out
}

// I16Bytes encodes int16 values.
func I16Bytes(v ...int16) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
	}
	return out
}

// I32Bytes encodes int32 values.
func I32Bytes(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// I64Bytes encodes int64 values (the biases of TFLite's 16x8 layers).
func I64Bytes(v ...int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

// Rand is a small deterministic generator (64-bit LCG) for test weights.
type Rand struct{ s uint64 }

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{s: seed*6364136223846793005 + 1442695040888963407} }

func (r *Rand) next() uint32 {
	r.s = r.s*6364136223846793005 + 1442695040888963407
	return uint32(r.s >> 33)
}

// Float returns a float32 in [-1, 1).
func (r *Rand) Float() float32 { return float32(r.next()%2000000)/1000000 - 1 }

// Int8 returns an int8 in [lo, hi].
func (r *Rand) Int8(lo, hi int) int8 { return int8(lo + int(r.next()%uint32(hi-lo+1))) }

// Builtin operator codes (BuiltinOperator in schema.fbs).
const (
	OpAdd                   = 0
	OpAveragePool2D         = 1
	OpConcatenation         = 2
	OpConv2D                = 3
	OpDepthwiseConv2D       = 4
	OpDequantize            = 6
	OpFullyConnected        = 9
	OpLogistic              = 14
	OpMaxPool2D             = 17
	OpMul                   = 18
	OpRelu                  = 19
	OpRelu6                 = 21
	OpReshape               = 22
	OpSoftmax               = 25
	OpTanh                  = 28
	OpCustom                = 32
	OpPad                   = 34
	OpTranspose             = 39
	OpMean                  = 40
	OpSub                   = 41
	OpSqueeze               = 43
	OpStridedSlice          = 45
	OpSplit                 = 49
	OpMaximum               = 55
	OpMinimum               = 57
	OpPadV2                 = 60
	OpExpandDims            = 70
	OpResizeNearestNeighbor = 97
	OpLeakyRelu             = 98
	OpQuantize              = 114
	OpHardSwish             = 117
	OpBatchMatMul           = 126
	OpFloor                 = 8
	OpExp                   = 47
	OpArgMax                = 56
	OpNeg                   = 59
	OpSin                   = 66
	OpLog                   = 73
	OpSum                   = 74
	OpSqrt                  = 75
	OpRsqrt                 = 76
	OpArgMin                = 79
	OpReduceProd            = 81
	OpReduceMax             = 82
	OpReduceMin             = 89
	OpSquare                = 92
	OpAbs                   = 101
	OpCeil                  = 104
	OpCos                   = 108
	OpElu                   = 111
	OpRound                 = 116
	OpTransposeConv         = 67

	OpCast                       = 53
	OpUnidirectionalSequenceRNN  = 35
	OpUnidirectionalSequenceLSTM = 44
)

// BuiltinOptions union types.
const (
	OptConv2D                = 1
	OptDepthwiseConv2D       = 2
	OptPool2D                = 5
	OptFullyConnected        = 8
	OptSoftmax               = 9
	OptConcatenation         = 10
	OptAdd                   = 11
	OptReshape               = 17
	OptMul                   = 21
	OptPad                   = 22
	OptTranspose             = 26
	OptReducer               = 27
	OptSub                   = 28
	OptSqueeze               = 30
	OptStridedSlice          = 32
	OptMaximumMinimum        = 39
	OptPadV2                 = 43
	OptExpandDims            = 52
	OptResizeNearestNeighbor = 74
	OptLeakyRelu             = 75
	OptHardSwish             = 91
	OptBatchMatMul           = 101
	OptTransposeConv         = 49

	OptSequenceRNN                = 31
	OptUnidirectionalSequenceLSTM = 71
)

// Padding and activation enums.
const (
	Same  = 0
	Valid = 1

	ActNone      = 0
	ActRelu      = 1
	ActReluN1To1 = 2
	ActRelu6     = 3
	ActTanh      = 4
)

// Conv2DOptions: padding, strides (H, W), fused activation, dilation (H, W).
func Conv2DOptions(pad, sh, sw, act, dh, dw int) *Options {
	return &Options{OptConv2D, []Field{I8(0, pad), I32(1, sw), I32(2, sh), I8(3, act), I32(4, dw), I32(5, dh)}}
}

// DepthwiseOptions: padding, strides, depth multiplier, activation, dilation.
func DepthwiseOptions(pad, sh, sw, mult, act, dh, dw int) *Options {
	return &Options{OptDepthwiseConv2D, []Field{I8(0, pad), I32(1, sw), I32(2, sh), I32(3, mult), I8(4, act), I32(5, dw), I32(6, dh)}}
}

// Pool2DOptions: padding, strides, filter size (H, W), activation.
func Pool2DOptions(pad, sh, sw, fh, fw, act int) *Options {
	return &Options{OptPool2D, []Field{I8(0, pad), I32(1, sw), I32(2, sh), I32(3, fw), I32(4, fh), I8(5, act)}}
}

// FullyConnectedOptions: activation and keep_num_dims.
func FullyConnectedOptions(act int, keepDims bool) *Options {
	return &Options{OptFullyConnected, []Field{I8(0, act), Bool(2, keepDims)}}
}

// ActOptions is the options table of ADD, SUB, MUL (typ selects which).
func ActOptions(typ uint8, act int) *Options { return &Options{typ, []Field{I8(0, act)}} }
