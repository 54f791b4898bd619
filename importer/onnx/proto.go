package onnx

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The Go structs below mirror the subset of onnx.proto that mcugen reads and
// writes. Field numbers are onnx.proto's; unknown fields are skipped on decode.

// Model is ModelProto.
type Model struct {
	IRVersion       int64
	OpsetImport     []OpsetID
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	Graph           *Graph
}

// OpsetID is OperatorSetIdProto.
type OpsetID struct {
	Domain  string
	Version int64
}

// Graph is GraphProto.
type Graph struct {
	Name        string
	Nodes       []*Node
	Initializer []*Tensor
	DocString   string
	Input       []*ValueInfo
	Output      []*ValueInfo
	ValueInfo   []*ValueInfo
	// SparseInitializer counts sparse initializers, which mcugen rejects.
	SparseInitializer int
}

// Node is NodeProto.
type Node struct {
	Input     []string
	Output    []string
	Name      string
	OpType    string
	Domain    string
	Attribute []*Attribute
	DocString string
}

// AttrType is AttributeProto.AttributeType.
type AttrType int32

// Attribute types.
const (
	AttrUndefined AttrType = 0
	AttrFloat     AttrType = 1
	AttrInt       AttrType = 2
	AttrString    AttrType = 3
	AttrTensor    AttrType = 4
	AttrGraph     AttrType = 5
	AttrFloats    AttrType = 6
	AttrInts      AttrType = 7
	AttrStrings   AttrType = 8
	AttrTensors   AttrType = 9
	AttrGraphs    AttrType = 10
)

// Attribute is AttributeProto.
type Attribute struct {
	Name        string
	RefAttrName string
	DocString   string
	Type        AttrType
	F           float32
	I           int64
	S           []byte
	T           *Tensor
	G           *Graph
	Floats      []float32
	Ints        []int64
	Strings     [][]byte
	Tensors     []*Tensor
	Graphs      []*Graph
}

// TensorProto.DataType values.
const (
	TUndefined = 0
	TFloat     = 1
	TUint8     = 2
	TInt8      = 3
	TUint16    = 4
	TInt16     = 5
	TInt32     = 6
	TInt64     = 7
	TString    = 8
	TBool      = 9
	TFloat16   = 10
	TDouble    = 11
	TUint32    = 12
	TUint64    = 13
)

// Tensor is TensorProto.
type Tensor struct {
	Dims         []int64
	DataType     int32
	FloatData    []float32
	Int32Data    []int32
	StringData   [][]byte
	Int64Data    []int64
	Name         string
	DocString    string
	RawData      []byte
	DoubleData   []float64
	Uint64Data   []uint64
	ExternalData []KeyValue
	DataLocation int32 // 1 = EXTERNAL
	// HasSegment is set when the tensor has a segment (chunked tensors are rejected).
	HasSegment bool
}

// KeyValue is StringStringEntryProto.
type KeyValue struct{ Key, Value string }

// ValueInfo is ValueInfoProto.
type ValueInfo struct {
	Name      string
	Type      *TypeProto
	DocString string
}

// TypeProto is TypeProto restricted to tensors. NotTensor is set for
// sequence, map, optional and sparse types.
type TypeProto struct {
	ElemType  int32
	Shape     []Dim // nil with HasShape false means unknown rank
	HasShape  bool
	NotTensor bool
}

// Dim is TensorShapeProto.Dimension: a value, a named parameter, or unknown.
type Dim struct {
	Value    int64
	Param    string
	HasValue bool
}

const maxDepth = 64

// errTooDeep is returned unwrapped through every nesting level, so the
// message stays one short line however deep the model nests.
var errTooDeep = fmt.Errorf("subgraphs nested more than %d deep", maxDepth)

var errTruncated = errors.New("truncated or malformed protobuf")

// reader walks the fields of one message.
type reader struct {
	b     []byte
	num   protowire.Number
	typ   protowire.Type
	depth int
}

func (r *reader) next() (bool, error) {
	if len(r.b) == 0 {
		return false, nil
	}
	num, typ, n := protowire.ConsumeTag(r.b)
	if n < 0 {
		return false, errTruncated
	}
	r.b = r.b[n:]
	r.num, r.typ = num, typ
	return true, nil
}

func (r *reader) skip() error {
	n := protowire.ConsumeFieldValue(r.num, r.typ, r.b)
	if n < 0 {
		return errTruncated
	}
	r.b = r.b[n:]
	return nil
}

func (r *reader) bytes() ([]byte, error) {
	if r.typ != protowire.BytesType {
		return nil, fmt.Errorf("field %d: wire type %d, want bytes", r.num, r.typ)
	}
	v, n := protowire.ConsumeBytes(r.b)
	if n < 0 {
		return nil, errTruncated
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *reader) str() (string, error) {
	b, err := r.bytes()
	return string(b), err
}

func (r *reader) varint() (uint64, error) {
	if r.typ != protowire.VarintType {
		return 0, fmt.Errorf("field %d: wire type %d, want varint", r.num, r.typ)
	}
	v, n := protowire.ConsumeVarint(r.b)
	if n < 0 {
		return 0, errTruncated
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *reader) int64() (int64, error) {
	v, err := r.varint()
	return int64(v), err
}

func (r *reader) fixed32() (uint32, error) {
	if r.typ != protowire.Fixed32Type {
		return 0, fmt.Errorf("field %d: wire type %d, want fixed32", r.num, r.typ)
	}
	v, n := protowire.ConsumeFixed32(r.b)
	if n < 0 {
		return 0, errTruncated
	}
	r.b = r.b[n:]
	return v, nil
}

// packed calls f for every element of a repeated scalar field, packed or not.
func (r *reader) packed(f func(v uint64)) error {
	elem := protowire.VarintType
	switch r.typ {
	case protowire.BytesType:
	default:
		elem = r.typ
		var v uint64
		var n int
		switch elem {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(r.b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(r.b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(r.b)
		default:
			return fmt.Errorf("field %d: unexpected wire type %d", r.num, r.typ)
		}
		if n < 0 {
			return errTruncated
		}
		r.b = r.b[n:]
		f(v)
		return nil
	}
	b, err := r.bytes()
	if err != nil {
		return err
	}
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		f(v)
	}
	return nil
}

// packedFixed is packed for fixed-width element types (width 4 or 8).
func (r *reader) packedFixed(width int, f func(v uint64)) error {
	if r.typ != protowire.BytesType {
		return r.packed(f)
	}
	b, err := r.bytes()
	if err != nil {
		return err
	}
	if len(b)%width != 0 {
		return errTruncated
	}
	for len(b) > 0 {
		if width == 4 {
			v, _ := protowire.ConsumeFixed32(b)
			f(uint64(v))
		} else {
			v, _ := protowire.ConsumeFixed64(b)
			f(v)
		}
		b = b[width:]
	}
	return nil
}

// Unmarshal decodes a ModelProto.
func Unmarshal(b []byte) (*Model, error) {
	m := &Model{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch r.num {
		case 1:
			m.IRVersion, err = r.int64()
		case 2:
			m.ProducerName, err = r.str()
		case 3:
			m.ProducerVersion, err = r.str()
		case 4:
			m.Domain, err = r.str()
		case 5:
			m.ModelVersion, err = r.int64()
		case 6:
			m.DocString, err = r.str()
		case 7:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				m.Graph, err = decodeGraph(sub, 1)
			}
		case 8:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				var o OpsetID
				o, err = decodeOpset(sub)
				m.OpsetImport = append(m.OpsetImport, o)
			}
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("ModelProto: %w", err)
		}
	}
	return m, nil
}

func decodeOpset(b []byte) (OpsetID, error) {
	var o OpsetID
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return o, err
		}
		switch r.num {
		case 1:
			o.Domain, err = r.str()
		case 2:
			o.Version, err = r.int64()
		default:
			err = r.skip()
		}
		if err != nil {
			return o, fmt.Errorf("OperatorSetIdProto: %w", err)
		}
	}
}

func decodeGraph(b []byte, depth int) (*Graph, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	g := &Graph{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			return nil, fmt.Errorf("GraphProto: %w", err)
		}
		if !ok {
			return g, nil
		}
		var sub []byte
		switch r.num {
		case 1, 5, 11, 12, 13:
			if sub, err = r.bytes(); err != nil {
				break
			}
			switch r.num {
			case 1:
				var n *Node
				if n, err = decodeNode(sub, depth); err == nil {
					g.Nodes = append(g.Nodes, n)
				}
			case 5:
				var t *Tensor
				if t, err = DecodeTensor(sub); err == nil {
					g.Initializer = append(g.Initializer, t)
				}
			default:
				var v *ValueInfo
				if v, err = decodeValueInfo(sub); err == nil {
					switch r.num {
					case 11:
						g.Input = append(g.Input, v)
					case 12:
						g.Output = append(g.Output, v)
					default:
						g.ValueInfo = append(g.ValueInfo, v)
					}
				}
			}
		case 2:
			g.Name, err = r.str()
		case 10:
			g.DocString, err = r.str()
		case 15:
			g.SparseInitializer++
			err = r.skip()
		default:
			err = r.skip()
		}
		if err != nil {
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			return nil, fmt.Errorf("GraphProto: %w", err)
		}
	}
}

func decodeNode(b []byte, depth int) (*Node, error) {
	n := &Node{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("NodeProto: %w", err)
		}
		if !ok {
			return n, nil
		}
		var s string
		switch r.num {
		case 1:
			if s, err = r.str(); err == nil {
				n.Input = append(n.Input, s)
			}
		case 2:
			if s, err = r.str(); err == nil {
				n.Output = append(n.Output, s)
			}
		case 3:
			n.Name, err = r.str()
		case 4:
			n.OpType, err = r.str()
		case 7:
			n.Domain, err = r.str()
		case 6:
			n.DocString, err = r.str()
		case 5:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				var a *Attribute
				if a, err = decodeAttr(sub, depth); err == nil {
					n.Attribute = append(n.Attribute, a)
				}
			}
		default:
			err = r.skip()
		}
		if err != nil {
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			return nil, fmt.Errorf("NodeProto %q: %w", n.Name, err)
		}
	}
}

func decodeAttr(b []byte, depth int) (*Attribute, error) {
	a := &Attribute{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("AttributeProto: %w", err)
		}
		if !ok {
			return a, nil
		}
		var sub []byte
		switch r.num {
		case 1:
			a.Name, err = r.str()
		case 21:
			a.RefAttrName, err = r.str()
		case 13:
			a.DocString, err = r.str()
		case 20:
			var v int64
			v, err = r.int64()
			a.Type = AttrType(v)
		case 2:
			var v uint32
			v, err = r.fixed32()
			a.F = math.Float32frombits(v)
		case 3:
			a.I, err = r.int64()
		case 4:
			a.S, err = r.bytes()
		case 5:
			if sub, err = r.bytes(); err == nil {
				a.T, err = DecodeTensor(sub)
			}
		case 6:
			if sub, err = r.bytes(); err == nil {
				a.G, err = decodeGraph(sub, depth+1)
			}
		case 7:
			err = r.packedFixed(4, func(v uint64) { a.Floats = append(a.Floats, math.Float32frombits(uint32(v))) })
		case 8:
			err = r.packed(func(v uint64) { a.Ints = append(a.Ints, int64(v)) })
		case 9:
			if sub, err = r.bytes(); err == nil {
				a.Strings = append(a.Strings, sub)
			}
		case 10:
			if sub, err = r.bytes(); err == nil {
				var t *Tensor
				if t, err = DecodeTensor(sub); err == nil {
					a.Tensors = append(a.Tensors, t)
				}
			}
		case 11:
			if sub, err = r.bytes(); err == nil {
				var g *Graph
				if g, err = decodeGraph(sub, depth+1); err == nil {
					a.Graphs = append(a.Graphs, g)
				}
			}
		default:
			err = r.skip()
		}
		if err != nil {
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			return nil, fmt.Errorf("AttributeProto %q: %w", a.Name, err)
		}
	}
}

// DecodeTensor decodes a TensorProto.
func DecodeTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("TensorProto: %w", err)
		}
		if !ok {
			return t, nil
		}
		switch r.num {
		case 1:
			err = r.packed(func(v uint64) { t.Dims = append(t.Dims, int64(v)) })
		case 2:
			var v int64
			v, err = r.int64()
			t.DataType = int32(v)
		case 3:
			t.HasSegment = true
			err = r.skip()
		case 4:
			err = r.packedFixed(4, func(v uint64) { t.FloatData = append(t.FloatData, math.Float32frombits(uint32(v))) })
		case 5:
			err = r.packed(func(v uint64) { t.Int32Data = append(t.Int32Data, int32(v)) })
		case 6:
			var s []byte
			if s, err = r.bytes(); err == nil {
				t.StringData = append(t.StringData, s)
			}
		case 7:
			err = r.packed(func(v uint64) { t.Int64Data = append(t.Int64Data, int64(v)) })
		case 8:
			t.Name, err = r.str()
		case 12:
			t.DocString, err = r.str()
		case 9:
			t.RawData, err = r.bytes()
		case 10:
			err = r.packedFixed(8, func(v uint64) { t.DoubleData = append(t.DoubleData, math.Float64frombits(v)) })
		case 11:
			err = r.packed(func(v uint64) { t.Uint64Data = append(t.Uint64Data, v) })
		case 13:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				var kv KeyValue
				kv, err = decodeKV(sub)
				t.ExternalData = append(t.ExternalData, kv)
			}
		case 14:
			var v int64
			v, err = r.int64()
			t.DataLocation = int32(v)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("TensorProto %q: %w", t.Name, err)
		}
	}
}

func decodeKV(b []byte) (KeyValue, error) {
	var kv KeyValue
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return kv, err
		}
		switch r.num {
		case 1:
			kv.Key, err = r.str()
		case 2:
			kv.Value, err = r.str()
		default:
			err = r.skip()
		}
		if err != nil {
			return kv, err
		}
	}
}

func decodeValueInfo(b []byte) (*ValueInfo, error) {
	v := &ValueInfo{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil {
			return nil, fmt.Errorf("ValueInfoProto: %w", err)
		}
		if !ok {
			return v, nil
		}
		switch r.num {
		case 1:
			v.Name, err = r.str()
		case 3:
			v.DocString, err = r.str()
		case 2:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				v.Type, err = decodeType(sub)
			}
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("ValueInfoProto %q: %w", v.Name, err)
		}
	}
}

func decodeType(b []byte) (*TypeProto, error) {
	t := &TypeProto{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return t, err
		}
		switch r.num {
		case 1:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				err = decodeTensorType(sub, t)
			}
		case 4, 5, 8, 9:
			t.NotTensor = true
			err = r.skip()
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("TypeProto: %w", err)
		}
	}
}

func decodeTensorType(b []byte, t *TypeProto) error {
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		switch r.num {
		case 1:
			var v int64
			v, err = r.int64()
			t.ElemType = int32(v)
		case 2:
			var sub []byte
			if sub, err = r.bytes(); err == nil {
				t.HasShape = true
				t.Shape, err = decodeShape(sub)
			}
		default:
			err = r.skip()
		}
		if err != nil {
			return err
		}
	}
}

func decodeShape(b []byte) ([]Dim, error) {
	dims := []Dim{}
	r := &reader{b: b}
	for {
		ok, err := r.next()
		if err != nil || !ok {
			return dims, err
		}
		if r.num != 1 {
			if err = r.skip(); err != nil {
				return nil, err
			}
			continue
		}
		sub, err := r.bytes()
		if err != nil {
			return nil, err
		}
		var d Dim
		dr := &reader{b: sub}
		for {
			ok, err := dr.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch dr.num {
			case 1:
				d.Value, err = dr.int64()
				d.HasValue = true
			case 2:
				d.Param, err = dr.str()
			default:
				err = dr.skip()
			}
			if err != nil {
				return nil, err
			}
		}
		dims = append(dims, d)
	}
}

// Attr returns the named attribute of n, or nil.
func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attribute {
		if a.Name == name {
			return a
		}
	}
	return nil
}
