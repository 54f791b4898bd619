package pipeline

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// On ARMv6-M, convolutions and fully connected layers whose channels come
// in fours take the quad form (tir.IntrGenQuad: int32 weights, four
// channels a step, emitc's gen_quad_dot asm with the accumulators in high
// registers): pointwise layers of reductions 32 and 100, a padded 3×3 and
// an RGB window (27 taps padded to 28, the window a local byte array),
// random and extreme inputs, bit-exact against the reference interpreter on
// the M0+ code: with the asm at -O2, at -O0 and at -Os with a frame pointer
// (the asm is a naked function: r7 is its own), and with -DMCUGEN_NO_ASM's C.
func TestQuadOnCortexM0Plus(t *testing.T) {
	b := m0plusOnM3(t)
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"pw-k32", func() *graph.Graph { return tirtest.Conv1x1(3, 5, 32, 8, graph.ActNone, 7) }},
		{"pw-k100-relu", func() *graph.Graph { return tirtest.Conv1x1(2, 3, 100, 12, graph.ActRelu, -128) }},
		{"conv3x3", func() *graph.Graph { return tirtest.ConvK(5, 6, 8, 8, 3, 1, graph.ActNone, 3) }},
		{"rgb-relu6", func() *graph.Graph { return tirtest.ConvRGB(6, 5, 8, 2, graph.ActRelu6, -128) }},
	} {
		for _, v := range []struct {
			suffix string
			flags  []string
		}{{"", nil}, {"-c", []string{"-DMCUGEN_NO_ASM"}}, {"-O0", []string{"-O0"}}, {"-fp-os", []string{"-Os", "-fno-omit-frame-pointer"}}} {
			name, flags := c.name+v.suffix, v.flags
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				m0plusMatches(t, b, c.g(), c.name, flags, "gen_quad_s8(&")
			})
		}
	}
}

// The quads' int32 weights are four times the bytes of int8 ones: under a
// flash budget the fit pass gives the largest quad kernels back their int8
// weights (the blocked form), as it does the dsp target's int16 ones. KWS
// on the M0+ in 90,000 B: some layers kept int8, the rest quads.
func TestQuadWeightsFitTheBudget(t *testing.T) {
	shared := sharedDir(t)
	b := m0plusOnM3(t)
	s, err := Compile(filepath.Join(shared, "kws/kws_ref_model.tflite"), Options{Board: b, FlashBudget: 90000, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Kernels) == 0 {
		t.Fatalf("no layer kept int8 (constants %d B)", s.Module.ConstBytes())
	}
	if !cContains(s.Files, "gen_quad_s8(&") {
		t.Fatal("no quad kernel left")
	}
	if got := s.Module.ConstBytes(); got > 90000 {
		t.Errorf("constants %d B over the budget", got)
	}
}

// A model with state runs its vectors as one sequence, the state carried
// from each to the next; with Options.ResetState (test --reset) each
// vector starts from the initial state, in the firmware (<prefix>_reset()
// before each run) and in the reference alike. TFLM's mnist_lstm example
// resets between images, so its vectors failed from the second on (user
// journey). The running sum y = x + s from s = 0: x = (1,2,3,4),
// (10,20,30,40), (1,1,1,1) give (1,2,3,4), (11,22,33,44), (12,23,34,45)
// as a sequence, and y = x for each vector with the reset.
func TestResetStateEachVector(t *testing.T) {
	b := qemuBoard(t, "host")
	xs := [][]float32{{1, 2, 3, 4}, {10, 20, 30, 40}, {1, 1, 1, 1}}
	for _, reset := range []bool{false, true} {
		t.Run(fmt.Sprint("reset=", reset), func(t *testing.T) {
			s, err := CompileGraph(runningSum(graph.Float32, nil, false), "sum", Options{Board: b, ResetState: reset, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			var vecs []map[string]*graph.Data
			for _, x := range xs {
				d := graph.NewData(graph.Float32, []int{1, 4})
				copy(d.F, x)
				vecs = append(vecs, map[string]*graph.Data{"x": d})
			}
			x, err := s.Execute(vecs, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Fatalf("the firmware disagrees with the reference: %v", x.Match)
			}
			want := [][]float32{{1, 2, 3, 4}, {11, 22, 33, 44}, {12, 23, 34, 45}}
			if reset {
				want = xs
			}
			for v := range want {
				if got := x.Outputs[v][0].F; fmt.Sprint(got) != fmt.Sprint(want[v]) {
					t.Errorf("vector %d: y = %v, want %v", v, got, want[v])
				}
			}
		})
	}
}

// Random calibration says what it assumes: a float input without range
// hints drawn from [-1, 1], whose int8 range becomes that (TFLM's
// hello_world, with inputs to 2π, quantized into a model that saturated at
// 1 with only "real data gives better ranges" said: user journey).
func TestRandomCalibSaysItsRange(t *testing.T) {
	g := graph.New("relu", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddNode(&graph.Node{Name: "relu", Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	var warns []string
	if _, err := CompileGraph(g, "relu", Options{CalibRandom: 4, Warn: func(w string) { warns = append(warns, w) }, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if strings.Contains(w, "uniform in [-1, 1]") && strings.Contains(w, "clipped") {
			return
		}
	}
	t.Errorf("no warning names the random data's range: %q", warns)
}

// A dsp kernel whose local arrays pass the board's stack gives way to the
// generic loops (tir's lowerer), where the whole model was refused: a 3×3
// convolution over 65 channels of 20 columns kept 31,968 B of rows and a
// 7×7 over 33 channels 87,696 B, against the 15,360 B mps2-an386 leaves
// its kernels. Both now compile within the stack and run bit-exact on the
// M4 against the reference interpreter, random and extreme inputs.
func TestWideConvFitsTheStack(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct{ cin, cout, k int }{{65, 4, 3}, {33, 1, 7}} {
		t.Run(fmt.Sprintf("%dx%d-%d-to-%d", c.k, c.k, c.cin, c.cout), func(t *testing.T) {
			t.Parallel()
			s, err := CompileGraph(tirtest.ConvK(20, 20, c.cin, c.cout, c.k, 1, graph.ActRelu, -128), "wide", Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if need, _ := s.Module.ScratchBytes(); need+StackFrames > b.StackBytes {
				t.Fatalf("%d B of local arrays on a %d B stack", need, b.StackBytes)
			}
			vecs := append(RandomInputs(s.Graph, 3, 5), ExtremeInputs(s.Graph)...)
			x, err := s.Execute(vecs, t.TempDir(), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Errorf("outputs differ from the reference interpreter")
			}
		})
	}
}
