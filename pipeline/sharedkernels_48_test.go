package pipeline

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// sameShapeChain is an int8 model of n fully connected k→k layers with ReLU
// that differ only in their weights and biases (the same per-channel weight
// scales and activation scales, the input's too, so one requantization
// table serves all).
func sameShapeChain(seed int64, k, n int) *graph.Graph {
	r := rand.New(rand.NewSource(seed))
	g := graph.New("samechain", "tflite")
	q := func(s float32, zp int32) *graph.Quant {
		return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{zp}}
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, k}, Quant: q(0.08, -128)})
	scales := make([]float32, k)
	for i := range scales {
		scales[i] = 0.0005 + 0.001*r.Float32()
	}
	in := "x"
	for l := 1; l <= n; l++ {
		w := graph.NewData(graph.Int8, []int{k, k})
		for i := range w.I {
			w.I[i] = int64(r.Intn(256) - 128)
		}
		wn, bn, yn := fmt.Sprintf("w%d", l), fmt.Sprintf("b%d", l), fmt.Sprintf("y%d", l)
		g.AddConst(wn, w).Quant = &graph.Quant{Scale: append([]float32(nil), scales...), ZeroPoint: make([]int32, k)}
		b := graph.NewData(graph.Int32, []int{k})
		for i := range b.I {
			b.I[i] = int64(r.Intn(4000) - 2000)
		}
		g.AddConst(bn, b)
		g.AddTensor(&graph.Tensor{Name: yn, DType: graph.Int8, Shape: []int{1, k}, Quant: q(0.08, -128)})
		g.AddNode(&graph.Node{Name: fmt.Sprintf("fc%d", l), Op: graph.FullyConnected, Inputs: []string{in, wn, bn}, Outputs: []string{yn},
			Attrs: &graph.FullyConnectedAttrs{Act: graph.ActRelu}})
		in = yn
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{in}
	return g
}

var kernelDefRE = regexp.MustCompile(`(?m)^static \w+_KERNEL void (\w+)\(([^)]*)\)`)

// Layers whose C differs only in the constant arrays they read are one
// function in the C, each call passing its layer's arrays (session 48):
// four 48→48 layers of one shape define one kernel on every target, take
// their arrays as restrict parameters, and stay bit-exact under QEMU on
// the M4 (dsp), the M55 (mve) and the M3 (generic).
func TestSameShapeLayersShareCode48(t *testing.T) {
	for _, c := range []struct{ board, target string }{
		{"mps2-an386", "dsp"}, {"mps3-an547", "mve"}, {"mps2-an385", "generic"},
	} {
		t.Run(c.board, func(t *testing.T) {
			b := qemuBoard(t, c.board)
			g := sameShapeChain(3, 48, 4)
			s, err := CompileGraph(g, "samechain", Options{Board: b, Target: c.target, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			src := string(s.Files["samechain.c"])
			defs := kernelDefRE.FindAllStringSubmatch(src, -1)
			if len(defs) != 1 {
				t.Fatalf("%d kernel definitions for four layers of one shape, want 1:\n%v", len(defs), defs)
			}
			if !strings.Contains(defs[0][2], "*restrict const0") {
				t.Errorf("the shared kernel's parameters %q take no restrict array", defs[0][2])
			}
			calls := regexp.MustCompile(`(?m)^    `+defs[0][1]+`\((.*)\);$`).FindAllStringSubmatch(src, -1)
			if len(calls) != 4 {
				t.Fatalf("%d calls of %s, want 4", len(calls), defs[0][1])
			}
			// Each call passes its own weights: four different argument lists.
			seen := map[string]bool{}
			for _, cl := range calls {
				seen[cl[1]] = true
			}
			if len(seen) != 4 {
				t.Errorf("the calls pass %d different argument lists, want 4: %q", len(seen), calls)
			}
			vecs := append(RandomInputs(s.Graph, 6, 48), ExtremeInputs(s.Graph)...)
			x, err := s.Execute(vecs, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Errorf("outputs differ from the reference interpreter")
			}
		})
	}
}

// AD with int8 weights (--flash-budget 310KB: every layer but the two
// small ones kept int8): its six 128→128 layers are one function, the firmware is bit-exact with
// TFLite Micro's vectors, and the code and constants (the generated C built
// with the board's compiler, as the budget line measures them) are smaller
// than TFLite Micro's text plus the .tflite file it reads (anchors.md:
// 29,696 + 276,976 = 306,672 B). With a function a layer they were 307,016 B.
func TestADInt8WeightsUnderTFLMFlash48(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	shared := sharedDir(t)
	s, err := Compile(filepath.Join(shared, "ad/ad01_int8.tflite"), Options{Board: b, Version: "test", FlashBudget: 310000})
	if err != nil {
		t.Fatal(err)
	}
	int8 := map[string]bool{}
	if s.Lean != nil {
		for _, k := range s.Lean.Kernels {
			int8[k] = true
		}
	}
	for _, l := range []int{0, 1, 2, 3, 6, 7, 8, 9} {
		if k := fmt.Sprintf("fully_connected_%d_s8", l); !int8[k] {
			t.Fatalf("%s is not kept int8: %+v", k, s.Lean)
		}
	}
	defs := kernelDefRE.FindAllStringSubmatch(string(s.Files["ad01_int8.c"]), -1)
	if len(defs) != 5 {
		t.Errorf("%d kernel definitions, want 5 (640→128, the six 128→128 as one, 128→8, 8→128, 128→640)", len(defs))
	}
	// Of the eight layers kept int8, three functions: 640→128, 128→128, 128→640.
	if len(s.Lean.CKernels) != 3 || !strings.Contains(s.Lean.Summary(), ", 3 distinct kernels in the C") {
		t.Errorf("summary %q (C kernels %v)", s.Lean.Summary(), s.Lean.CKernels)
	}
	const tflm = 29696 + 276976
	if m := s.codeMeasured; m <= 0 || m >= tflm {
		t.Errorf("code and constants %d B, TFLite Micro's text and model %d B", m, tflm)
	}
	vecs, want := loadVectors(t, s, filepath.Join(shared, "ad/vectors_int8"))
	x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, x, len(vecs), want)
	t.Logf("AD, int8 weights: code and constants %d B (TFLite Micro %d B), %d instructions", s.codeMeasured, tflm, x.Instructions())
}

// The fit pass's code estimate counts the kernel functions the C will hold
// (tir.Module.DistinctFuncs): it counts the shared ones once, as emitc
// writes them (before session 48 it counted layers of one shape with other
// arrays apart, and emitc wrote them apart).
func TestDistinctFuncsCountsTheCKernels48(t *testing.T) {
	shared := sharedDir(t)
	for _, c := range []struct {
		model  string
		budget int64
	}{
		{"kws/kws_ref_model.tflite", 0}, {"ad/ad01_int8.tflite", 0}, {"ad/ad01_int8.tflite", 310000},
		{"vww/vww_96_int8.tflite", 0}, {"ic/pretrainedResnet_quant.tflite", 0},
	} {
		for _, board := range []string{"mps2-an386", "mps3-an547", "mps2-an385"} {
			if c.budget > 0 && board != "mps2-an386" {
				continue // the int16 layouts the budget takes back are the dsp target's
			}
			b, err := LoadBoard(board, "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(filepath.Join(shared, c.model), Options{Board: b, Version: "test", FlashBudget: c.budget})
			if err != nil {
				t.Fatal(err)
			}
			var defs int
			for name, f := range s.Files {
				if strings.HasSuffix(name, ".c") {
					defs += len(kernelDefRE.FindAllIndex(f, -1))
				}
			}
			if d := s.Module.DistinctFuncs(); d != defs {
				t.Errorf("%s on %s (budget %d): %d kernels in the C, DistinctFuncs %d (of %d layers)", c.model, board, c.budget, defs, d, len(s.Module.Funcs))
			}
		}
	}
}
