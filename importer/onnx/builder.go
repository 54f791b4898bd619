package onnx

import (
	"fmt"
	"math/rand/v2"

	"github.com/mcugen/mcugen/graph"
)

// Builder writes ONNX models from Go: test models with deterministic random
// weights, and quantized (QDQ) models written by mcugen itself.
type Builder struct {
	m   *Model
	rng *rand.Rand
	seq int
}

// NewBuilder starts a model for ai.onnx opset; seed fixes the random weights.
func NewBuilder(name string, opset int64, seed uint64) *Builder {
	return &Builder{
		m: &Model{
			IRVersion:    8,
			OpsetImport:  []OpsetID{{Domain: "", Version: opset}},
			ProducerName: "mcugen",
			Graph:        &Graph{Name: name},
		},
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Model returns the model built so far.
func (b *Builder) Model() *Model { return b.m }

// Input declares a graph input.
func (b *Builder) Input(name string, dt graph.DType, shape ...int) string {
	b.m.Graph.Input = append(b.m.Graph.Input, valueInfo(name, dt, shape))
	return name
}

// Output declares value name as a graph output (shape optional).
func (b *Builder) Output(name string, dt graph.DType, shape ...int) {
	vi := valueInfo(name, dt, shape)
	if shape == nil {
		vi.Type.HasShape = false
	}
	b.m.Graph.Output = append(b.m.Graph.Output, vi)
}

func valueInfo(name string, dt graph.DType, shape []int) *ValueInfo {
	t := &TypeProto{ElemType: onnxDType(dt), HasShape: true, Shape: []Dim{}}
	for _, d := range shape {
		if d < 0 {
			t.Shape = append(t.Shape, Dim{Param: "N"})
		} else {
			t.Shape = append(t.Shape, Dim{Value: int64(d), HasValue: true})
		}
	}
	return &ValueInfo{Name: name, Type: t}
}

// Init adds an initializer holding d.
func (b *Builder) Init(name string, d *graph.Data) string {
	b.m.Graph.Initializer = append(b.m.Graph.Initializer, NewTensor(name, d))
	return name
}

// Rand adds a float initializer with values uniform in [-scale, scale).
func (b *Builder) Rand(name string, scale float32, shape ...int) string {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = (2*b.rng.Float32() - 1) * scale
	}
	return b.Init(name, d)
}

// Ints adds an int64 initializer (shapes, axes, pads).
func (b *Builder) Ints(name string, v ...int) string { return b.Init(name, intsData(v)) }

// Floats adds a 1-D float initializer.
func (b *Builder) Floats(name string, v ...float32) string {
	return b.Init(name, &graph.Data{DType: graph.Float32, Shape: []int{len(v)}, F: append([]float32(nil), v...)})
}

// Scalar adds a rank-0 initializer of dtype dt.
func (b *Builder) Scalar(name string, dt graph.DType, v float64) string {
	d := graph.NewData(dt, []int{})
	if dt == graph.Float32 {
		d.F[0] = float32(v)
	} else {
		d.I[0] = int64(v)
	}
	return b.Init(name, d)
}

// Node adds a one-output node and returns its output's name.
func (b *Builder) Node(op string, inputs []string, attrs ...*Attribute) string {
	return b.NodeN(op, inputs, 1, attrs...)[0]
}

// NodeN adds a node with n outputs.
func (b *Builder) NodeN(op string, inputs []string, n int, attrs ...*Attribute) []string {
	b.seq++
	name := fmt.Sprintf("%s_%d", op, b.seq)
	outs := make([]string, n)
	for i := range outs {
		outs[i] = fmt.Sprintf("%s_out%d", name, i)
	}
	b.m.Graph.Nodes = append(b.m.Graph.Nodes, &Node{Name: name, OpType: op, Input: inputs, Output: outs, Attribute: attrs})
	return outs
}

// IntAttr is an INT attribute.
func IntAttr(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }

// FloatAttr is a FLOAT attribute.
func FloatAttr(name string, v float32) *Attribute {
	return &Attribute{Name: name, Type: AttrFloat, F: v}
}

// StringAttr is a STRING attribute.
func StringAttr(name, v string) *Attribute {
	return &Attribute{Name: name, Type: AttrString, S: []byte(v)}
}

// IntsAttr is an INTS attribute.
func IntsAttr(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}

// TensorAttr is a TENSOR attribute.
func TensorAttr(name string, d *graph.Data) *Attribute {
	return &Attribute{Name: name, Type: AttrTensor, T: NewTensor("", d)}
}
