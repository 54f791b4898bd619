package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// A FILL whose dims the graph computes from a static shape, as TF2's
// converter builds a GRU's zero state (SHAPE, STRIDED_SLICE, then PACK or
// CONCATENATION, FILL): the output's recorded shape. x [1,3,4] gives the
// batch 1 and the constant 4 the width; FILL(0.5) + y is y + 0.5. It was
// refused ("dims (input 0) must be a constant integer tensor"), which in
// models with Flex ops named FILL instead of the Flex op (review finding).
// Dims a graph input reaches stay refused: they are run-time values (a
// first version made such a FILL a constant of the recorded shape).
func TestFillOfComputedDims60(t *testing.T) {
	const opShape, opFill = 77, 94
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 3, 4}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	shape := m.AddTensor(tg.Tensor{Name: "shape", Type: tg.Int32, Shape: []int32{3}})
	m.AddOp(opShape, nil, []int32{x}, shape)
	i32 := func(name string, v ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int32, Shape: []int32{int32(len(v))}, Data: tg.I32Bytes(v...)})
	}
	batch := m.AddTensor(tg.Tensor{Name: "batch", Type: tg.Int32, Shape: []int32{1}})
	m.AddOp(tg.OpStridedSlice, &tg.Options{Type: tg.OptStridedSlice}, []int32{shape, i32("b", 0), i32("e", 1), i32("s", 1)}, batch)
	dims := m.AddTensor(tg.Tensor{Name: "dims", Type: tg.Int32, Shape: []int32{2}})
	m.AddOp(tg.OpConcatenation, &tg.Options{Type: tg.OptConcatenation, Fields: []tg.Field{tg.I32(0, 0)}}, []int32{batch, i32("w", 4)}, dims)
	half := m.AddTensor(tg.Tensor{Name: "half", Type: tg.Float32, Shape: []int32{}, Data: tg.F32Bytes(0.5)})
	zero := m.AddTensor(tg.Tensor{Name: "zero_state", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(opFill, nil, []int32{dims, half}, zero)
	out := m.AddTensor(tg.Tensor{Name: "out", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(tg.OpAdd, tg.ActOptions(tg.OptAdd, tg.ActNone), []int32{zero, y}, out)
	m.Inputs, m.Outputs = []int32{x, y}, []int32{out}
	g, err := tflite.Decode("fill60", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	res, err := interp.Run(g, map[string]*graph.Data{
		"x": graph.NewData(graph.Float32, []int{1, 3, 4}),
		"y": {DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, -2, 0, 3.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1.5, -1.5, 0.5, 3.75}
	for i, v := range res["out"].F {
		if v != want[i] {
			t.Fatalf("out %v, want %v", res["out"].F, want)
		}
	}
}

func TestFillOfInputDimsRefused60(t *testing.T) {
	const opFill = 94
	m := &tg.Model{}
	dims := m.AddTensor(tg.Tensor{Name: "dims", Type: tg.Int32, Shape: []int32{2}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	half := m.AddTensor(tg.Tensor{Name: "half", Type: tg.Float32, Shape: []int32{}, Data: tg.F32Bytes(0.5)})
	f := m.AddTensor(tg.Tensor{Name: "f", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(opFill, nil, []int32{dims, half}, f)
	out := m.AddTensor(tg.Tensor{Name: "out", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(tg.OpAdd, tg.ActOptions(tg.OptAdd, tg.ActNone), []int32{f, y}, out)
	m.Inputs, m.Outputs = []int32{dims, y}, []int32{out}
	if _, err := tflite.Decode("fill60in", m.Bytes()); err == nil || !strings.Contains(err.Error(), "dims (input 0) must be a constant integer tensor") {
		t.Fatalf("error %v, want the dims refused as not constant", err)
	}
}
