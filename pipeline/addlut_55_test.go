package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// addPairsGraph is y = a ± b over 256×256 elements with the given scales
// and zero points (inputs a, b, output y) and activation act.
func addPairsGraph(op graph.Op, sa, sb, sy float32, za, zb, zy int32, act graph.Activation) *graph.Graph {
	shape := []int{1, 256, 256, 1}
	g := graph.New("addpairs", "tflite")
	for _, t := range []struct {
		name string
		s    float32
		z    int32
	}{{"a", sa, za}, {"b", sb, zb}, {"y", sy, zy}} {
		g.AddTensor(&graph.Tensor{Name: t.name, DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{t.s}, ZeroPoint: []int32{t.z}}})
	}
	g.AddNode(&graph.Node{Name: "op", Op: op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{Act: act}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	return g
}

// everyPair is the input in which element i of a is i / 256 − 128 and of
// b is i % 256 − 128: all 65,536 pairs of int8 values once.
func everyPair() map[string]*graph.Data {
	a, b := graph.NewData(graph.Int8, []int{1, 256, 256, 1}), graph.NewData(graph.Int8, []int{1, 256, 256, 1})
	for i := range a.I {
		a.I[i], b.I[i] = int64(i/256-128), int64(i%256-128)
	}
	return map[string]*graph.Data{"a": a, "b": b}
}

// An int8 ADD or SUB over whole tensors runs as one loop of table lookups
// and one SMMLA an element on the dsp cores (tir/dsp_addlut.go): every one
// of the 65,536 input pairs bit-exact against the reference interpreter
// (TFLite's formula), for ReLU, ReLU6 and no activation, zero points on
// both sides of the range, SUB, scales whose output shift is small and
// large, and so small that the output saturates; on the M4, M7 and M33,
// in at most 0.75 times the instructions of the generic tables (knob
// add_lut 0: 16.7 an element on IC's first Add), 0.6 times under a ReLU
// at zero point -128 (ResNet's: no clamp or sign correction left); on the
// M55 (gathers, mve_addlut_s8) in at most 0.75 times its vector form of
// TFLite's three requantizations.
func TestAddLUT55(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		board      string
		op         graph.Op
		sa, sb, sy float32
		za, zb, zy int32
		act        graph.Activation
		fast       bool
	}{
		{"add-relu", "mps2-an386", graph.Add, 0.05, 0.08, 0.1, -3, 7, -128, graph.ActRelu, true},
		{"add-none", "mps2-an386", graph.Add, 0.05, 0.08, 0.1, -3, 7, 3, graph.ActNone, false},
		{"sub-relu6", "mps2-an386", graph.Sub, 0.05, 0.08, 0.05, 100, -128, -100, graph.ActRelu6, false},
		{"add-equal-scales", "mps2-an386", graph.Add, 0.02, 0.02, 0.04, 0, 0, 0, graph.ActNone, false},
		// The output's scale far above the inputs': a shift of 9 or more.
		{"add-coarse", "mps2-an386", graph.Add, 0.003, 0.25, 1.7, 127, -120, -5, graph.ActNone, false},
		{"sub-none-m7", "mps2-an500", graph.Sub, 0.1, 0.03, 0.07, -20, 30, 12, graph.ActNone, false},
		{"add-relu-m33", "mps2-an505", graph.Add, 0.06, 0.06, 0.11, -128, -128, -128, graph.ActRelu, true},
		{"add-saturating", "mps2-an386", graph.Add, 0.05, 0.08, 0.0001, -3, 7, 0, graph.ActNone, false},
		// The M55's form (mve_addlut_s8) against its vector form of TFLite's
		// three requantizations.
		{"add-relu-m55", "mps3-an547", graph.Add, 0.05, 0.08, 0.1, -3, 7, -128, graph.ActRelu, false},
		{"sub-none-m55", "mps3-an547", graph.Sub, 0.1, 0.03, 0.07, -20, 30, 12, graph.ActNone, false},
		{"add-relu6-m55", "mps3-an547", graph.Add, 0.05, 0.08, 0.05, 100, -128, -100, graph.ActRelu6, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := qemuBoard(t, c.board)
			g := func() *graph.Graph { return addPairsGraph(c.op, c.sa, c.sb, c.sy, c.za, c.zb, c.zy, c.act) }
			run := func(knobs map[string]int, name string) int64 {
				o := Options{Board: b, Version: "test"}
				if knobs != nil {
					o.Knobs = map[string]map[string]int{map[graph.Op]string{graph.Add: "add", graph.Sub: "sub"}[c.op]: knobs}
				}
				s, err := CompileGraph(g(), name, o)
				if err != nil {
					t.Fatal(err)
				}
				call := "dsp_addlut_s8("
				if c.board == "mps3-an547" {
					call = "mve_addlut_s8("
				}
				if knobs == nil && !cContains(s.Files, call) {
					t.Fatalf("%s: the C does not call %s", name, call)
				}
				x, err := s.Execute([]map[string]*graph.Data{everyPair()}, t.TempDir(), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("%s: outputs differ from the reference interpreter", name)
				}
				return x.Instructions()
			}
			lut := run(nil, c.name)
			generic := run(map[string]int{"add_lut": 0}, c.name+"-generic")
			t.Logf("%s on %s: %d instructions (%.2f an element), generic tables %d (%.2f)", c.name, c.board,
				lut, float64(lut)/65536, generic, float64(generic)/65536)
			if bound := map[bool]float64{true: 0.6, false: 0.75}[c.fast]; float64(lut) > bound*float64(generic) {
				t.Errorf("%s: %d instructions, the generic tables %d", c.name, lut, generic)
			}
		})
	}
}
