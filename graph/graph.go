// Package graph is mcugen's high-level IR: tensors with static shapes, dtypes,
// quantization parameters and constant data, and nodes in a small canonical op
// set (NHWC). Importers produce a Graph; every later stage consumes one.
package graph

import (
	"fmt"
	"math"
	"slices"
)

// DType is the element type of a tensor.
type DType uint8

// The element types mcugen understands.
const (
	Invalid DType = iota
	Float32
	Int8
	UInt8
	Int16
	Int32
	Int64
	Bool
)

var dtypeNames = [...]string{"invalid", "float32", "int8", "uint8", "int16", "int32", "int64", "bool"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if n == s && i != 0 {
			return DType(i), true
		}
	}
	return Invalid, false
}

// Size is the size of one element in bytes.
func (d DType) Size() int {
	switch d {
	case Int8, UInt8, Bool:
		return 1
	case Int16:
		return 2
	case Float32, Int32:
		return 4
	case Int64:
		return 8
	}
	return 0
}

// IsInt reports whether d is an integer (or bool) type.
func (d DType) IsInt() bool { return d != Float32 && d != Invalid }

// Range is the representable range of an integer dtype.
func (d DType) Range() (lo, hi int64) {
	switch d {
	case Int8:
		return math.MinInt8, math.MaxInt8
	case UInt8:
		return 0, math.MaxUint8
	case Int16:
		return math.MinInt16, math.MaxInt16
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Bool:
		return 0, 1
	}
	return math.MinInt64, math.MaxInt64
}

// Wrap converts v to the type as a C conversion does on a two's-complement
// target: the low bits for the narrower integers, 0 or 1 for bool; int64
// and float32 keep v.
func (d DType) Wrap(v int64) int64 {
	switch d {
	case Int8:
		return int64(int8(v))
	case UInt8:
		return int64(uint8(v))
	case Int16:
		return int64(int16(v))
	case Int32:
		return int64(int32(v))
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	return v
}

// Quant holds affine quantization parameters: real = Scale * (q - ZeroPoint).
// With one scale the tensor is quantized per tensor; with several, per axis
// along Axis (TFLite's quantized_dimension).
type Quant struct {
	Scale     []float32
	ZeroPoint []int32
	Axis      int
}

// Equal reports whether q and o are the same parameters (both nil, or the
// same scales, zero points and axis).
func (q *Quant) Equal(o *Quant) bool {
	if q == nil || o == nil {
		return q == o
	}
	return slices.Equal(q.Scale, o.Scale) && slices.Equal(q.ZeroPoint, o.ZeroPoint) && (q.Axis == o.Axis || !q.PerAxis())
}

// PerAxis reports whether q has one scale per slice along Axis.
func (q *Quant) PerAxis() bool { return q != nil && len(q.Scale) > 1 }

// At returns the scale and zero point that apply to slice i along Axis.
func (q *Quant) At(i int) (float32, int32) {
	s := q.Scale[0]
	if len(q.Scale) > 1 {
		s = q.Scale[i]
	}
	var z int32
	if len(q.ZeroPoint) > 1 {
		z = q.ZeroPoint[i]
	} else if len(q.ZeroPoint) == 1 {
		z = q.ZeroPoint[0]
	}
	return s, z
}

// Tensor is a value in the graph. Constants carry Data; activations do not.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Quant *Quant
	Data  *Data
	// QuantGroup, when not empty, names the tensors that quantization
	// gives one set of parameters, over the union of their ranges: the
	// same value at every step of an unrolled recurrent layer, so that
	// every step's kernel is the same kernel.
	QuantGroup string
}

// IsConst reports whether the tensor is a compile-time constant.
func (t *Tensor) IsConst() bool { return t.Data != nil }

// NumElements is the product of the shape.
func (t *Tensor) NumElements() int { return NumElements(t.Shape) }

// Bytes is the storage size of the tensor.
func (t *Tensor) Bytes() int { return t.NumElements() * t.DType.Size() }

// Node is one operation. Inputs and Outputs name tensors; an empty input name
// is an absent optional input. Attrs holds the op's typed attribute struct
// (see ops.go); it may be nil for ops without attributes.
type Node struct {
	Name    string
	Op      Op
	Inputs  []string
	Outputs []string
	Attrs   any
}

// Graph is a whole model. Nodes are kept in execution order.
type Graph struct {
	Name    string
	Format  string // "onnx" or "tflite"
	Tensors map[string]*Tensor
	Nodes   []*Node
	Inputs  []string
	Outputs []string
	// States are the tensors carried from one inference to the next (in
	// Inputs and Outputs as pairs; state.go).
	States []State
	// KeepFloat names the nodes kept in float32 on purpose (quantize
	// --float): a QDQ model carries the mark on them, and folding it
	// leaves them float.
	KeepFloat map[string]bool
}

// New returns an empty graph.
func New(name, format string) *Graph {
	return &Graph{Name: name, Format: format, Tensors: map[string]*Tensor{}}
}

// Tensor returns the named tensor or nil.
func (g *Graph) Tensor(name string) *Tensor { return g.Tensors[name] }

// AddTensor adds t, replacing any tensor of the same name.
func (g *Graph) AddTensor(t *Tensor) *Tensor {
	g.Tensors[t.Name] = t
	return t
}

// AddConst adds a constant tensor holding d.
func (g *Graph) AddConst(name string, d *Data) *Tensor {
	return g.AddTensor(&Tensor{Name: name, DType: d.DType, Shape: append([]int(nil), d.Shape...), Data: d})
}

// AddNode appends n to the execution order.
func (g *Graph) AddNode(n *Node) *Node {
	g.Nodes = append(g.Nodes, n)
	return n
}

// UniqueName returns base, or base with a numeric suffix, that names no tensor yet.
func (g *Graph) UniqueName(base string) string {
	if _, ok := g.Tensors[base]; !ok {
		return base
	}
	for i := 1; ; i++ {
		n := fmt.Sprintf("%s_%d", base, i)
		if _, ok := g.Tensors[n]; !ok {
			return n
		}
	}
}

// Producers maps each tensor name to the node that writes it.
func (g *Graph) Producers() map[string]*Node {
	m := make(map[string]*Node, len(g.Nodes))
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			m[o] = n
		}
	}
	return m
}

// Consumers maps each tensor name to the nodes that read it, in order.
func (g *Graph) Consumers() map[string][]*Node {
	m := map[string][]*Node{}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in != "" {
				m[in] = append(m[in], n)
			}
		}
	}
	return m
}

// In returns the tensor of n's i-th input, or nil when absent.
func (g *Graph) In(n *Node, i int) *Tensor {
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return nil
	}
	return g.Tensors[n.Inputs[i]]
}

// Out returns the tensor of n's i-th output.
func (g *Graph) Out(n *Node, i int) *Tensor {
	if i >= len(n.Outputs) {
		return nil
	}
	return g.Tensors[n.Outputs[i]]
}

// WithoutOnes is shape without its axes of 1: two shapes whose elements
// lie in the same order where they differ in such axes only.
func WithoutOnes(shape []int) []int {
	out := []int{}
	for _, d := range shape {
		if d != 1 {
			out = append(out, d)
		}
	}
	return out
}

// NumElements is the product of a shape (1 for a scalar).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Prune removes tensors that no node reads or writes and that are neither
// graph inputs nor outputs.
func (g *Graph) Prune() {
	used := map[string]bool{}
	for _, n := range g.Nodes {
		for _, s := range n.Inputs {
			used[s] = true
		}
		for _, s := range n.Outputs {
			used[s] = true
		}
	}
	for _, s := range g.Inputs {
		used[s] = true
	}
	for _, s := range g.Outputs {
		used[s] = true
	}
	for name := range g.Tensors {
		if !used[name] {
			delete(g.Tensors, name)
		}
	}
}
