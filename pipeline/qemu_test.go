package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/runner"
)

type mlperf struct {
	name, file, vectors string
}

var mlperfModels = []mlperf{
	{"kws", "kws/kws_ref_model.tflite", "kws/vectors"},
	{"vww", "vww/vww_96_int8.tflite", "vww/vectors_int8"},
	{"ic", "ic/pretrainedResnet_quant.tflite", "ic/vectors_int8"},
	{"ad", "ad/ad01_int8.tflite", "ad/vectors_int8"},
}

func sharedDir(t *testing.T) string {
	dir, _ := filepath.Abs("../../shared/models/mlperf_tiny")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny runs skipped")
	}
	return dir
}

// needTools skips (locally) or fails (CI=true) when a board's tools are missing.
func needTools(t *testing.T, board string) {
	b, err := LoadBoard(board, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range runner.Tools(b) {
		if _, err := runner.LookTool(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %v", err)
			}
			t.Skip(err.Error())
		}
	}
}

// qemuBoard is the catalog's board for a test that builds and runs firmware:
// skipped in -short, and (locally) without the board's tools.
func qemuBoard(t *testing.T, name string) *boards.Board {
	t.Helper()
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	needTools(t, name)
	b, err := LoadBoard(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadVectors reads input_NNN.npy/output_NNN.npy pairs: the expected outputs
// were computed by TFLite Micro's reference kernels.
func loadVectors(t *testing.T, s *State, dir string) ([]map[string]*graph.Data, []*graph.Data) {
	ins, _ := filepath.Glob(filepath.Join(dir, "input_*.npy"))
	sort.Strings(ins)
	if len(ins) == 0 {
		t.Fatalf("%s: no vectors", dir)
	}
	var vecs []map[string]*graph.Data
	var outs []*graph.Data
	for _, in := range ins {
		read := func(p string) *graph.Data {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			d, err := npy.Read(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			return d
		}
		x := read(in)
		x.Shape = s.Graph.Tensors[s.Graph.Inputs[0]].Shape
		y := read(filepath.Join(dir, "output_"+in[len(in)-7:]))
		y.Shape = s.Graph.Tensors[s.Graph.Outputs[0]].Shape
		vecs = append(vecs, map[string]*graph.Data{s.Graph.Inputs[0]: x})
		outs = append(outs, y)
	}
	return vecs, outs
}

// TestMLPerfOnBoards runs the four MLPerf Tiny int8 models on every QEMU
// board with generic C (all provided vectors plus 10 random inputs) and with
// the board's SIMD schedules where it has them (dsp, mve, neon: all vectors
// plus 20 random inputs, and on mps2-an386, mps3-an547 and aarch64-linux once
// more with the inputs and outputs in the static arena), each compared bit
// for bit with TFLite Micro's vectors and the reference interpreter.
func TestMLPerfOnBoards(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	shared := sharedDir(t)
	type run struct {
		board, target string
		random        int
		inArena       bool
	}
	var runs []run
	for _, board := range []string{"mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "aarch64-linux", "microbit"} {
		// The generic C once per kind of core: the M7 and M33 boards add
		// nothing to the M4's run of it.
		if board != "mps2-an500" && board != "mps2-an505" {
			runs = append(runs, run{board, "generic", 10, false})
		}
		if b, err := LoadBoard(board, ""); err == nil && TargetFor(b) != "generic" {
			runs = append(runs, run{board, TargetFor(b), 20, false})
		}
	}
	// The static arena with the I/O in it (as mcugen tune builds kernels):
	// gcc then knows every address, which once let it drop MVE window
	// stores (TestSIMDStaticArenaUnderQEMU).
	for _, board := range []string{"mps2-an386", "mps3-an547", "aarch64-linux"} {
		if b, err := LoadBoard(board, ""); err == nil {
			runs = append(runs, run{board, TargetFor(b), 5, true})
		}
	}
	for _, r := range runs {
		board := r.board
		for _, m := range mlperfModels {
			name := board + "/" + r.target + "/" + m.name
			if r.inArena {
				name = board + "/" + r.target + "-in-arena/" + m.name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel() // QEMU and gcc processes: the cores share them
				needTools(t, board)
				b, _ := LoadBoard(board, "")
				s, err := Compile(filepath.Join(shared, m.file), Options{Board: b, Target: r.target, IOInArena: r.inArena, Version: "test"})
				var early *FitError
				if board == "microbit" && errors.As(err, &early) {
					t.Logf("does not fit, as expected: %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				vecs, want := loadVectors(t, s, filepath.Join(shared, m.vectors))
				vecs = append(vecs, RandomInputs(s.Graph, r.random, 11)...)
				x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
				var fit *runner.FitError
				if board == "microbit" && errors.As(err, &fit) {
					t.Logf("does not fit, as expected: %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				checkVectors(t, x, len(vecs), want)
				checkMeasuredStack(t, s, x)
				t.Logf("%s on %s (%s): %d vectors bit-exact (%d TFLite Micro vectors), %d instructions/inference, stack %d B, flash %d B, RAM %d B",
					m.name, board, r.target, len(vecs), len(want), x.Instructions(), x.StackBytes(), x.Firmware.FlashBytes(), x.Firmware.RAMBytes())
			})
		}
	}
}

// checkMeasuredStack holds a bare-metal run's measured stack (the painted stack's
// high-water mark) to what compile promised when it checked the build against
// the board's stack: the largest kernel's local arrays plus StackFrames. (Not
// at least the arrays: the paint counts the words written, and an array's
// unwritten end, or one gcc keeps partly in registers, is not; IC's 4,160 B
// array on the M55 measured 3,672 B.)
func checkMeasuredStack(t *testing.T, s *State, x *Execution) {
	t.Helper()
	checkStackFrames(t, s, x, StackFrames)
}

// checkStackFrames is checkMeasuredStack allowing frames bytes of frames
// above the largest kernel's local arrays.
func checkStackFrames(t *testing.T, s *State, x *Execution, frames int) {
	t.Helper()
	got := x.StackBytes()
	if !s.Opt.Board.BareMetal() {
		if got != -1 {
			t.Errorf("hosted build on %s: stack %d measured, want none (-1)", s.Opt.Board.Name, got)
		}
		return
	}
	locals, kernel := s.Module.ScratchBytes()
	if got <= 0 || got > int64(locals+frames) {
		t.Errorf("stack: the run took %d B; kernel %s's local arrays are %d B, and %d B of frames are allowed on top", got, kernel, locals, frames)
	}
	for v, r := range x.Result.Vectors {
		if r.Stack != got {
			t.Errorf("stack: vector %d took %d B, another %d B (the code has no data-dependent calls)", v, r.Stack, got)
		}
	}
}

// compileKWS compiles MLPerf Tiny's KWS for mps2-an386 (skipped in -short,
// without ../shared/models, or locally without the board's tools).
func compileKWS(t *testing.T) *State {
	t.Helper()
	b := qemuBoard(t, "mps2-an386")
	s, err := Compile(filepath.Join(sharedDir(t), "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInstructionCountRepeatable runs one firmware three times: the count of
// every vector must be identical each time.
func TestInstructionCountRepeatable(t *testing.T) {
	s := compileKWS(t)
	x, err := s.Execute(RandomInputs(s.Graph, 3, 5), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	first := fmt.Sprint(counts(x.Result))
	for i := 0; i < 2; i++ {
		res, err := runner.Run(x.Firmware, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(counts(res)); got != first {
			t.Errorf("run %d counted %s, first run %s", i+2, got, first)
		}
	}
	if x.Instructions() <= 0 {
		t.Errorf("no instruction count: %s", first)
	}
	t.Logf("KWS on mps2-an386: %s instructions per vector, identical over 3 runs", first)
}

func counts(r *runner.Result) []int64 {
	var c []int64
	for _, v := range r.Vectors {
		c = append(c, v.Instructions)
	}
	return c
}

// KWS on netduinoplus2 (QEMU's STM32F405: the runtime prints on USART1 and counts with
// TIM2) is bit-exact with TFLite Micro's 16 vectors, and each vector's count equals the
// one mps2-an386's FPGA counter gives for the same Cortex-M4 code: two independent
// counters agreeing.
func TestKWSOnNetduinoPlus2(t *testing.T) {
	t.Parallel()
	nd := qemuBoard(t, "netduinoplus2")
	an386 := qemuBoard(t, "mps2-an386")
	shared := sharedDir(t)
	counts := map[string][]int64{}
	for _, b := range []*boards.Board{nd, an386} {
		s, err := Compile(filepath.Join(shared, "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		vecs, want := loadVectors(t, s, filepath.Join(shared, "kws/vectors"))
		x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		checkVectors(t, x, len(vecs), want)
		for _, v := range x.Result.Vectors {
			counts[b.Name] = append(counts[b.Name], v.Instructions)
		}
	}
	if a, b := counts["netduinoplus2"], counts["mps2-an386"]; !slices.Equal(a, b) || len(a) != 16 || a[0] <= 0 {
		t.Errorf("instructions per vector: netduinoplus2 %v, mps2-an386 %v", a, b)
	}
}
