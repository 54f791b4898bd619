package tflite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

const (
	opCallOnce, opVarHandle, opReadVariable, opAssignVariable = 129, 142, 143, 144
	optCallOnce, optVarHandle                                 = 103, 111
	ttResource                                                = 13
)

func varHandle(m *tg.Model, name string) int32 {
	h := m.AddTensor(tg.Tensor{Name: "h_" + name, Type: ttResource, Shape: []int32{1}})
	m.AddOp(opVarHandle, &tg.Options{Type: optVarHandle, Fields: []tg.Field{tg.Str(0, ""), tg.Str(1, name)}}, nil, h)
	return h
}

// accumulatorModel keeps a running sum in the variable "acc": y = acc + x,
// then acc = y. With init, CALL_ONCE's subgraph 1 assigns it init first.
func accumulatorModel(init []float32) *tg.Model {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}})
	if init != nil {
		m.AddOp(opCallOnce, &tg.Options{Type: optCallOnce, Fields: []tg.Field{tg.I32(0, 1)}}, nil)
		s := &tg.Model{}
		c := s.AddTensor(tg.Tensor{Name: "init", Type: tg.Float32, Shape: []int32{1, 4}, Data: tg.F32Bytes(init...)})
		h := varHandle(s, "acc")
		s.AddOp(opAssignVariable, nil, []int32{h, c})
		m.Subgraphs = []*tg.Model{s}
	}
	h := varHandle(m, "acc")
	v := m.AddTensor(tg.Tensor{Name: "v", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(opReadVariable, nil, []int32{h}, v)
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	m.AddOp(tg.OpAdd, &tg.Options{Type: tg.OptAdd}, []int32{v, x}, y)
	m.AddOp(opAssignVariable, nil, []int32{h, y})
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	return m
}

// The variable carries the running sum from one inference to the next,
// from the initializer's value or TFLite Micro's default (0), worked by
// hand; a reset starts it again.
func TestResourceVariableAccumulates(t *testing.T) {
	xs := [][]float32{{1, 2, 3, 4}, {0.5, 0, -1, 2}, {-4, 1, 1, 0}}
	for _, c := range []struct {
		name string
		init []float32
		want [][]float32
	}{
		{"default", nil, [][]float32{{1, 2, 3, 4}, {1.5, 2, 2, 6}, {-2.5, 3, 3, 6}}},
		{"call_once", []float32{10, 20, 30, 40}, [][]float32{{11, 22, 33, 44}, {11.5, 22, 32, 46}, {7.5, 23, 33, 46}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := tflite.Decode("acc", accumulatorModel(c.init).Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if u := g.UserInputs(); len(u) != 1 || len(g.States) != 1 || len(g.UserOutputs()) != 1 {
				t.Fatalf("inputs %v, outputs %v, states %+v: want x, y and one state", u, g.UserOutputs(), g.States)
			}
			s := interp.NewSession(g)
			for round := 0; round < 2; round++ {
				for k, x := range xs {
					out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 4}, F: x}})
					if err != nil {
						t.Fatal(err)
					}
					if got := out["y"].F; !slices.Equal(got, c.want[k]) {
						t.Fatalf("round %d, inference %d: %v, want %v", round, k+1, got, c.want[k])
					}
				}
				s.Reset()
			}
		})
	}
}

// A variable the main graph only reads is a constant (the initializer's
// value); one it assigns before reading needs no state.
func TestResourceVariableWithoutState(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(opCallOnce, &tg.Options{Type: optCallOnce, Fields: []tg.Field{tg.I32(0, 1)}}, nil)
	s := &tg.Model{}
	c := s.AddTensor(tg.Tensor{Name: "k", Type: tg.Float32, Shape: []int32{1, 2}, Data: tg.F32Bytes(3, -1)})
	s.AddOp(opAssignVariable, nil, []int32{varHandle(s, "k"), c})
	m.Subgraphs = []*tg.Model{s}
	hk, ht := varHandle(m, "k"), varHandle(m, "tmp")
	k := m.AddTensor(tg.Tensor{Name: "kv", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(opReadVariable, nil, []int32{hk}, k)
	// tmp = x · k, read back, plus k.
	p := m.AddTensor(tg.Tensor{Name: "p", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(tg.OpMul, &tg.Options{Type: tg.OptMul}, []int32{x, k}, p)
	m.AddOp(opAssignVariable, nil, []int32{ht, p})
	r := m.AddTensor(tg.Tensor{Name: "r", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(opReadVariable, nil, []int32{ht}, r)
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(tg.OpAdd, &tg.Options{Type: tg.OptAdd}, []int32{r, k}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	g, err := tflite.Decode("vars", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.States) != 0 || len(g.Inputs) != 1 {
		t.Fatalf("states %+v, inputs %v: want none and x", g.States, g.Inputs)
	}
	out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 2}, F: []float32{2, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	// (2·3 + 3, 5·(−1) − 1)
	if got := out["y"].F; !slices.Equal(got, []float32{9, -6}) {
		t.Errorf("%v, want [9 -6]", got)
	}
}

func TestResourceVariableRefusals(t *testing.T) {
	// An initializer computing its value.
	m := accumulatorModel([]float32{1, 2, 3, 4})
	s := m.Subgraphs[0]
	sum := s.AddTensor(tg.Tensor{Name: "sum", Type: tg.Float32, Shape: []int32{1, 4}})
	s.Ops = append([]tg.Operator{{Code: tg.OpAdd, Inputs: []int32{0, 0}, Outputs: []int32{sum}, Options: &tg.Options{Type: tg.OptAdd}}}, s.Ops...)
	decodeErr(t, "computed init", m, "CALL_ONCE", "ADD is not supported in an initializer")
	// A value of another size.
	m = accumulatorModel(nil)
	m.Tensors[0].Shape = []int32{1, 2}
	m.Tensors[3].Shape = []int32{1, 2}
	if _, err := tflite.Decode("size", m.Bytes()); err == nil || !strings.Contains(err.Error(), `variable "acc"`) {
		t.Errorf("a variable assigned a value of another size: %v", err)
	}
	// A read of something that is not a handle.
	m = accumulatorModel(nil)
	m.Ops[1].Inputs = []int32{0}
	decodeErr(t, "no handle", m, "READ_VARIABLE", "not the output of a VAR_HANDLE")
	// An initializer subgraph that does not exist.
	m = accumulatorModel([]float32{1, 2, 3, 4})
	m.Ops[0].Options.Fields[0] = tg.I32(0, 5)
	decodeErr(t, "no subgraph", m, "CALL_ONCE", "init subgraph 5")
}

// accumulatorInt8Model is accumulatorModel in int8 (scale 0.5, zero point
// 2 everywhere), with no initializer: the variable starts at its value
// tensor's zero point, as TFLite Micro fills it.
func accumulatorInt8Model() *tg.Model {
	m := accumulatorModel(nil)
	for i := range m.Tensors {
		if m.Tensors[i].Type == tg.Float32 {
			m.Tensors[i].Type, m.Tensors[i].Scale, m.Tensors[i].ZeroPoint = tg.Int8, []float32{0.5}, []int64{2}
		}
	}
	return m
}

func TestResourceVariableInt8Default(t *testing.T) {
	g, err := tflite.Decode("acc8", accumulatorInt8Model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.States) != 1 || g.States[0].Init == nil || g.States[0].Init.I[0] != 2 {
		t.Fatalf("states %+v: want one starting at the zero point 2", g.States)
	}
	// x = 4 (real 1) twice: 0 + 1 = 1 (stored 4), then 2 (stored 6).
	s := interp.NewSession(g)
	for _, want := range []int64{4, 6} {
		out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Int8, Shape: []int{1, 4}, I: []int64{4, 4, 4, 4}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := out["y"].I; got[0] != want || got[3] != want {
			t.Fatalf("%v, want %d", got, want)
		}
	}
}
