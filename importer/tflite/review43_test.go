package tflite_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// one is a model of one operator: inputs ins, output out (tensor indices).
func one(m *tg.Model, code int32, opts *tg.Options, ins []int32, out int32) *tg.Model {
	m.AddOp(code, opts, ins, out)
	for _, i := range ins {
		if i >= 0 && m.Tensors[i].Data == nil && !slices.Contains(m.Inputs, i) {
			m.Inputs = append(m.Inputs, i)
		}
	}
	m.Outputs = []int32{out}
	return m
}

// Files a TFLite adversary wrote, each compiled into C that read past a
// buffer, converted a value wrongly or differed from TFLite (review
// findings); each is now one line naming the operator or node and why.
func TestReviewedFilesRefused(t *testing.T) {
	q := func(name string, typ int8, shape []int32, scale float32, zp int64) tg.Tensor {
		return tg.Tensor{Name: name, Type: typ, Shape: shape, Scale: []float32{scale}, ZeroPoint: []int64{zp}}
	}
	cases := []struct {
		name, want string
		model      func() *tg.Model
	}{
		{"reshape count", `output "y" [3 3] has 9 elements, input "x" [1 8] has 8`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 8}})
			s := m.AddTensor(tg.Tensor{Name: "s", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(3, 3)})
			y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{3, 3}})
			return one(m, tg.OpReshape, nil, []int32{x, s}, y)
		}},
		{"concat of int8 and float", `input "z" is float32 and output "y" is int8: the op keeps its input's type`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(q("x", tg.Int8, []int32{1, 4}, 0.1, 0))
			z := m.AddTensor(tg.Tensor{Name: "z", Type: tg.Float32, Shape: []int32{1, 4}})
			y := m.AddTensor(q("y", tg.Int8, []int32{1, 8}, 0.1, 0))
			return one(m, tg.OpConcatenation, &tg.Options{Type: tg.OptConcatenation, Fields: []tg.Field{tg.I32(0, 1)}}, []int32{x, z}, y)
		}},
		{"conv weights zero point", `int8 weights "w" have zero point 9: TFLite's int8 convolutions take symmetric weights`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(q("x", tg.Int8, []int32{1, 1, 1, 1}, 1, 0))
			w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Int8, Shape: []int32{1, 1, 1, 1}, Data: tg.I8Bytes(1), Scale: []float32{1}, ZeroPoint: []int64{9}})
			y := m.AddTensor(q("y", tg.Int8, []int32{1, 1, 1, 1}, 1, 0))
			return one(m, tg.OpConv2D, tg.Conv2DOptions(0, 1, 1, 0, 1, 1), []int32{x, w, -1}, y)
		}},
		{"per-channel activation", `activation "x" is quantized per channel (3 scales)`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, 3}, Scale: []float32{0.1, 0.2, 0.3}, ZeroPoint: []int64{0, 1, 2}, QuantDim: 1})
			y := m.AddTensor(q("y", tg.Int8, []int32{1, 3}, 0.1, 0))
			return one(m, tg.OpRelu, nil, []int32{x}, y)
		}},
		{"int8 add without quantization", `int8 tensor "x" has no quantization parameters`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, 4}})
			y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4}})
			return one(m, tg.OpAdd, &tg.Options{Type: tg.OptAdd}, []int32{x, x}, y)
		}},
		{"int16 add with a zero point", `int16 tensor "x" has zero point 17: TFLite's 16x8 scheme wants 0`, func() *tg.Model {
			m := &tg.Model{}
			x := m.AddTensor(q("x", tg.Int16, []int32{1, 4}, 0.01, 17))
			y := m.AddTensor(q("y", tg.Int16, []int32{1, 4}, 0.02, 0))
			return one(m, tg.OpAdd, &tg.Options{Type: tg.OptAdd}, []int32{x, x}, y)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { mustErr(t, c.name, c.model().Bytes(), c.want) })
	}
	// The Model table's version: TFLite reads 3 only.
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	b := one(m, tg.OpRelu, nil, []int32{x}, y).Bytes()
	if _, err := tflite.Decode("v3", b); err != nil {
		t.Fatalf("version 3: %v", err)
	}
	root := binary.LittleEndian.Uint32(b)
	vtable := int64(root) - int64(int32(binary.LittleEndian.Uint32(b[root:])))
	field := binary.LittleEndian.Uint16(b[vtable+4:]) // field 0: version
	binary.LittleEndian.PutUint32(b[root+uint32(field):], 99)
	mustErr(t, "v99", b, "schema version 99: TFLite reads version 3 only")
}

// STRIDED_SLICE with offset adds the start as computed (after begin_mask)
// to the end, as TFLite does; the raw begin made valid files fail.
// Hand-worked: x = 0..7 [1, 8], begin (0, 5), end (1, 2), begin_mask on
// axis 1, offset: axis 1 starts at 0 and ends at 0 + 2, so y = (0, 1).
func TestStridedSliceOffset(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 8}})
	bg := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(0, 5)})
	en := m.AddTensor(tg.Tensor{Name: "e", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(1, 2)})
	st := m.AddTensor(tg.Tensor{Name: "s", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(1, 1)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 2}})
	opts := &tg.Options{Type: tg.OptStridedSlice, Fields: []tg.Field{tg.I32(0, 2), tg.Bool(5, true)}}
	g, err := tflite.Decode("offset", one(m, tg.OpStridedSlice, opts, []int32{x, bg, en, st}, y).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	in := graph.NewData(graph.Float32, []int{1, 8})
	for i := range in.F {
		in.F[i] = float32(i)
	}
	out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[g.Outputs[0]].F; len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("y = %v, want [0 1]", got)
	}
}
