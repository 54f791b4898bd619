package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/quant"
)

// runningSum is a stateful graph: y = x + s, and the state s takes y's
// value for the next inference (through a copy, since a state's next value
// is its own tensor). From s = init, the outputs are the running sums
// init + x1 + ... + xk. With int8 all tensors share one scale and zero
// point 0, so the Add is exact while the sums stay in range. The tricky
// form names its input "state", lists the state first and adds a zero
// constant named like the state's static buffer: the generated names must
// keep apart.
func runningSum(dt graph.DType, init *graph.Data, tricky bool) *graph.Graph {
	g := graph.New("running_sum", "tflite")
	var q *graph.Quant
	if dt == graph.Int8 {
		q = &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}
	}
	x := "x"
	if tricky {
		x = "state"
	}
	for _, n := range []string{x, "s", "y", "s_next"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: dt, Shape: []int{1, 4}, Quant: q})
	}
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{x, "s"}, Outputs: []string{"y"}})
	g.Inputs = []string{x, "s"}
	if tricky {
		g.Tensors["y"].Name = "y0"
		g.Tensors["y0"], g.Tensors["y"] = g.Tensors["y"], &graph.Tensor{Name: "y", DType: dt, Shape: []int{1, 4}, Quant: q}
		g.Nodes[0].Outputs[0] = "y0"
		zero := g.AddConst("running_sum_state0", graph.NewData(dt, []int{1, 4}))
		zero.Quant = q
		g.AddNode(&graph.Node{Name: "add0", Op: graph.Add, Inputs: []string{"y0", zero.Name}, Outputs: []string{"y"}})
		g.Inputs = []string{"s", x}
	}
	g.AddNode(&graph.Node{Name: "keep", Op: graph.Reshape, Inputs: []string{"y"}, Outputs: []string{"s_next"}})
	g.Outputs = []string{"y", "s_next"}
	g.States = []graph.State{{In: "s", Out: "s_next", Init: init}}
	return g
}

func TestStateValidation(t *testing.T) {
	g := runningSum(graph.Float32, nil, false)
	if err := graph.Validate(g); err != nil {
		t.Fatal(err)
	}
	if u := g.UserInputs(); len(u) != 1 || u[0] != "x" {
		t.Errorf("user inputs %v, want [x]", u)
	}
	if u := g.UserOutputs(); len(u) != 1 || u[0] != "y" {
		t.Errorf("user outputs %v, want [y]", u)
	}
	bad := runningSum(graph.Float32, nil, false)
	bad.States[0].Out = "y"
	bad.States = append(bad.States, graph.State{In: "x", Out: "y"})
	if err := graph.Validate(bad); err == nil {
		t.Error("two states sharing an output passed validation")
	}
	// A state's next value that is also the application's input.
	shared := runningSum(graph.Float32, nil, false)
	shared.States[0].Out = "x"
	shared.Outputs = []string{"y", "x"}
	if err := graph.Validate(shared); err == nil || !strings.Contains(err.Error(), "also an application input or output") {
		t.Errorf("a state whose next value is the application's input: %v", err)
	}
	wrong := runningSum(graph.Float32, graph.NewData(graph.Float32, []int{3}), false)
	if err := graph.Validate(wrong); err == nil {
		t.Error("an initial value of 3 elements for a 4-element state passed validation")
	}
}

// The generated code carries the state from one run to the next, as the
// reference session does, and starts from the initial value: each output
// is checked against running sums worked out here, not by the code under
// test, on the host (both I/O placements) and under QEMU.
func TestStatefulRunningSum(t *testing.T) {
	xs := [][]int64{{1, -2, 3, 0}, {4, 4, -4, 10}, {-1, 0, 2, -20}, {0, 1, 1, 1}}
	init := []int64{5, 0, -5, 1}
	type run struct {
		board                     string
		dt                        graph.DType
		inArena, withInit, tricky bool
	}
	var runs []run
	for _, board := range []string{"host", "mps2-an386"} {
		for _, dt := range []graph.DType{graph.Float32, graph.Int8} {
			for _, inArena := range []bool{false, true} {
				runs = append(runs, run{board, dt, inArena, dt == graph.Int8 == inArena, board == "host" && inArena})
			}
		}
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s/%s/inarena=%v/init=%v/tricky=%v", r.board, r.dt, r.inArena, r.withInit, r.tricky), func(t *testing.T) {
			t.Parallel()
			var b = hostOrQEMU(t, r.board)
			var initData *graph.Data
			sum := make([]int64, 4)
			if r.withInit {
				initData = graph.NewData(r.dt, []int{1, 4})
				for i, v := range init {
					setNum(initData, i, v)
					sum[i] = v
				}
			}
			g := runningSum(r.dt, initData, r.tricky)
			in := g.UserInputs()[0]
			s, err := CompileGraph(g, "running_sum", Options{Board: b, IOInArena: r.inArena, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Report.Inputs) != 1 || len(s.Report.Outputs) != 1 || len(s.Report.States) != 1 {
				t.Fatalf("report: inputs %v outputs %v states %v; want one of each", s.Report.Inputs, s.Report.Outputs, s.Report.States)
			}
			h := s.Files["running_sum.h"]
			if !bytes.Contains(h, []byte("void running_sum_reset(void);")) || !bytes.Contains(h, []byte("#define RUNNING_SUM_STATE_SIZE")) {
				t.Errorf("the header declares no reset or state size:\n%s", h)
			}
			var vecs []map[string]*graph.Data
			for _, x := range xs {
				d := graph.NewData(r.dt, []int{1, 4})
				for i, v := range x {
					setNum(d, i, v)
				}
				vecs = append(vecs, map[string]*graph.Data{in: d})
			}
			x, err := s.Execute(vecs, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for v := range xs {
				for i := range sum {
					sum[i] += xs[v][i]
				}
				got := x.Outputs[v][0]
				for i, want := range sum {
					if got.Float(i) != float64(want) {
						t.Fatalf("run %d: output %v, want the running sum %v", v+1, got, sum)
					}
				}
			}
			if !x.AllMatch() {
				t.Errorf("the firmware disagrees with the reference session: %v", x.Match)
			}
		})
	}
}

// hostOrQEMU loads a board for a test that runs firmware: the host board
// needs only a C compiler; the others are skipped in -short and without
// their tools.
func hostOrQEMU(t *testing.T, name string) *boards.Board {
	t.Helper()
	if name != "host" {
		return qemuBoard(t, name)
	}
	needTools(t, name)
	b, err := LoadBoard(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func setNum(d *graph.Data, i int, v int64) {
	if d.DType == graph.Float32 {
		d.F[i] = float32(v)
	} else {
		d.I[i] = v
	}
}

// TFLite stateful models under QEMU: TFLite's float rank-2 SVDF test
// model, its integer one (int16 state), an int8-state variant, and
// resource-variable accumulators (float, with a CALL_ONCE initializer;
// int8, from the zero point). The firmware runs a sequence of inputs, its
// state carried from each inference to the next, and agrees with the
// reference session (which the importer's tests hold to TFLite's golden
// outputs and to hand-worked sequences).
func TestStatefulModelsUnderQEMU(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		model      string
		stateBytes int
	}{{"op_float_svdf_golden", 2 * 10 * 8 * 4}, {"op_int8_svdf", 2 * 10 * 4 * 2}, {"op_int8_svdf_int8_state", 2 * 10 * 4},
		{"op_float_var_acc", 16}, {"op_int8_var_acc", 4}} {
		for _, io := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inarena=%v", c.model, io), func(t *testing.T) {
				t.Parallel()
				s, err := Compile("../testdata/tflite/"+c.model+".tflite", Options{Board: b, IOInArena: io, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Report.States) != 1 || s.Report.States[0].Size != c.stateBytes {
					t.Fatalf("states %+v, want one of %d bytes", s.Report.States, c.stateBytes)
				}
				vecs := append(RandomInputs(s.Graph, 12, 5), ExtremeInputs(s.Graph)...)
				x, err := s.Execute(vecs, t.TempDir(), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("the firmware disagrees with the reference session: %v (max abs diff %g)", x.Match, x.MaxAbsDiff)
				}
			})
		}
	}
}

// mcugen quantizes a stateful float model: calibration runs the samples
// as a sequence, a state's two tensors share one set of parameters, and
// an int8 state starts at its zero point (the float zeros). The int8
// firmware agrees with the reference session over a sequence.
//
// On the host, op_float_svdf_state's int8 build was miscompiled by gcc 12.2
// (x86-64) until the kernels were noipa there: it is one of the models.
func TestStatefulQuantized(t *testing.T) {
	for _, run := range []struct{ board, model string }{
		{"mps2-an386", "op_float_svdf_golden"}, {"mps2-an386", "op_float_var_acc"}, {"host", "op_float_svdf_state"}, {"host", "op_float_svdf_golden"},
	} {
		model := run.model
		t.Run(run.board+"/"+model, func(t *testing.T) {
			t.Parallel()
			b := hostOrQEMU(t, run.board)
			s, err := Compile("../testdata/tflite/"+model+".tflite", Options{Board: b, Quantize: "int8", CalibRandom: 8, Version: "test", Warn: func(string) {}})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Graph.States) != 1 {
				t.Fatalf("states %+v, want one", s.Graph.States)
			}
			st := s.Graph.States[0]
			in := s.Graph.Tensors[st.In]
			if in.DType != graph.Int8 || !in.Quant.Equal(s.Graph.Tensors[st.Out].Quant) {
				t.Fatalf("state %q: %s, quantized %+v and %+v", st.In, in.DType, in.Quant, s.Graph.Tensors[st.Out].Quant)
			}
			if model == "op_float_svdf_golden" {
				_, zp := in.Quant.At(0)
				if st.Init == nil || st.Init.I[0] != int64(zp) {
					t.Errorf("initial state %v, want the zero point %d", st.Init, zp)
				}
			}
			// An ONNX QDQ model cannot say it (mcugen quantize refuses).
			if _, err := quant.QDQModel(s.Graph); err == nil || !strings.Contains(err.Error(), "carried from one inference to the next") {
				t.Errorf("QDQ model of a stateful graph: %v", err)
			}
			x, err := s.Execute(RandomInputs(s.Graph, 10, 8), t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Errorf("the int8 firmware disagrees with the reference session: %v", x.Match)
			}
		})
	}
}

// A state whose next value has another size is refused before any C is
// written (the static buffers are sized by the state).
func TestStateSizeMismatchRefused(t *testing.T) {
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	g := runningSum(graph.Float32, nil, false)
	g.Tensors["s_next"].DType = graph.Int32
	if _, err := CompileGraph(g, "bad", Options{Board: b, Version: "test"}); err == nil {
		t.Error("a float32 state with an int32 next value compiled")
	}
}

// With float I/O (quant.Options.FloatIO) the application's inputs and
// outputs become float32, the states stay int8 and their initial value is
// quantized (zeros: the zero point).
func TestStatefulFloatIOQuantized(t *testing.T) {
	g := runningSum(graph.Float32, nil, false)
	samples := RandomInputs(g, 4, 3)
	q, _, err := quant.PTQ(g, samples, quant.Options{FloatIO: true}, quant.CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.States) != 1 {
		t.Fatalf("states %+v", q.States)
	}
	st := q.States[0]
	in := q.Tensors[st.In]
	if x := q.Tensors[q.UserInputs()[0]]; x.DType != graph.Float32 || in.DType != graph.Int8 {
		t.Fatalf("input %s, state %s: want float32 and int8", x.DType, in.DType)
	}
	if _, zp := in.Quant.At(0); st.Init == nil || st.Init.I[0] != int64(zp) {
		t.Errorf("initial state %v, want the zero point %d", st.Init, zp)
	}
}
