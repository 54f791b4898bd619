package pipeline

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// fcChain is an int8 model of fully connected layers k[0] -> k[1] -> ...,
// ReLU between them (per-channel weight scales, so the ReLU layers take the
// fused GEMM loop), none after the last, weights -128..127 at random.
func fcChain(seed int64, k ...int) *graph.Graph {
	r := rand.New(rand.NewSource(seed))
	g := graph.New("fcchain", "tflite")
	q := func(s float32, zp int32) *graph.Quant {
		return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{zp}}
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, k[0]}, Quant: q(0.05, 3)})
	in := "x"
	for l := 1; l < len(k); l++ {
		w := graph.NewData(graph.Int8, []int{k[l], k[l-1]})
		for i := range w.I {
			w.I[i] = int64(r.Intn(256) - 128)
		}
		wn, bn, yn := fmt.Sprintf("w%d", l), fmt.Sprintf("b%d", l), fmt.Sprintf("y%d", l)
		wq := &graph.Quant{Scale: make([]float32, k[l]), ZeroPoint: make([]int32, k[l])}
		for i := range wq.Scale {
			wq.Scale[i] = 0.0005 + 0.001*r.Float32()
		}
		g.AddConst(wn, w).Quant = wq
		b := graph.NewData(graph.Int32, []int{k[l]})
		for i := range b.I {
			b.I[i] = int64(r.Intn(4000) - 2000)
		}
		g.AddConst(bn, b)
		act, zp := graph.ActRelu, int32(-128)
		if l == len(k)-1 {
			act, zp = graph.ActNone, 5
		}
		g.AddTensor(&graph.Tensor{Name: yn, DType: graph.Int8, Shape: []int{1, k[l]}, Quant: q(0.08, zp)})
		g.AddNode(&graph.Node{Name: fmt.Sprintf("fc%d", l), Op: graph.FullyConnected, Inputs: []string{in, wn, bn}, Outputs: []string{yn},
			Attrs: &graph.FullyConnectedAttrs{Act: act}})
		in = yn
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{in}
	return g
}

// withFlash is b with its FLASH region n bytes long.
func withFlash(b *boardT, n uint64) *boardT {
	c := *b
	c.Name = fmt.Sprintf("%s-flash%d", b.Name, n)
	c.Memory = slices.Clone(b.Memory)
	for i := range c.Memory {
		if c.Memory[i].Name == "FLASH" {
			c.Memory[i].Length = n
		}
	}
	return &c
}

func usesW8(files map[string][]byte) bool { return cContains(files, w8Kernels...) }

// w8Kernels are the name prefixes of the int8-weight micro-kernels.
var w8Kernels = []string{"dsp_mac_s8w_", "dsp_gemm_s8pr_s8w_"}

// The fit pass: where the lowered constants with int16 weights (plus the
// code headroom) do not fit the board's flash, the largest layers, as few
// as needed, keep int8 weights; a knob forcing weights = 16 loses to it
// (with a warning); where even all-int8 constants do not fit, a FitError
// names the lowered constants, before any C is emitted. With room to spare
// nothing changes.
func TestFitWeightsFallback(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	// K = 250 and 130: padded to 252 and 132 in either layout.
	g := fcChain(3, 250, 160, 130, 10)
	compile := func(b *boardT, knobs map[string]map[string]int) (*State, []string, error) {
		var warns []string
		s, err := CompileGraph(g, "fcchain", Options{Board: b, Version: "test", Knobs: knobs, Warn: func(w string) { warns = append(warns, w) }})
		return s, warns, err
	}
	big, _, err := compile(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if big.Lean != nil || usesW8(big.Files) {
		t.Fatalf("4 MiB of flash: %+v", big.Lean)
	}
	all8, _, err := compile(b, map[string]map[string]int{"fully_connected": {"weights": 8}})
	if err != nil {
		t.Fatal(err)
	}
	c16, c8 := big.Module.ConstBytes(), all8.Module.ConstBytes()
	// The code beside the constants, and the runtime's 4 KiB: as measured
	// with the board's compiler, which the fit pass does before it keeps any
	// layer int8 (the estimate where the compiler is missing).
	headroom := int64(codeHeadroomBase + codeHeadroomKernel*len(big.Module.Funcs))
	if m, err := measureFlash(b, big.Files, ""); err == nil {
		headroom = int64(m) - c16 + codeHeadroomBase
	}
	if int64(big.Report.WeightsBytes) != c16 || c8 >= c16 {
		t.Fatalf("constants %d B int16, %d B int8, report %d B", c16, c8, big.Report.WeightsBytes)
	}
	// fc1's int16 weights are 160·252·2 B: one layer is enough for 1 B short.
	flash := uint64(c16 + headroom - 1)
	s, warns, err := compile(withFlash(b, flash), map[string]map[string]int{"fully_connected": {"weights": 16}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Kernels) != 1 || !strings.Contains(s.Lean.Kernels[0], "fully_connected_0") {
		t.Fatalf("1 B short: %+v", s.Lean)
	}
	// Half of fc1's int16 weights, less 4 B a channel: int8 weights keep the
	// k0 requantization table (four words a channel) where int16 ones take
	// the shared-shift form's three (tir/dsp_gemm_shift.go).
	saved := int64(160*252 - 160*4)
	if s.Lean.SavedBytes != saved || s.Module.ConstBytes() != c16-saved || s.Lean.ConstBytes != s.Module.ConstBytes() {
		t.Errorf("saved %d B, constants %d B (from %d B)", s.Lean.SavedBytes, s.Module.ConstBytes(), c16)
	}
	if !usesW8(s.Files) || !strings.Contains(s.Lean.Summary(), "1 layer kept int8 to fit flash") {
		t.Errorf("summary %q; int8 kernels in the C: %v", s.Lean.Summary(), usesW8(s.Files))
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "fit pass wins") {
		t.Errorf("a knob forcing weights=16: warnings %q", warns)
	}
	for _, f := range s.Module.Funcs {
		if want := map[bool]int{true: 8, false: 16}[f.Name == s.Lean.Kernels[0]]; f.Op == "fully_connected" && f.Knobs["weights"] != want {
			t.Errorf("%s: weights = %d, want %d", f.Name, f.Knobs["weights"], want)
		}
	}
	// Short by more than fc1 saves: fc1 and fc2.
	s, _, err = compile(withFlash(b, uint64(c16+headroom-160*252-1)), nil)
	if err != nil || s.Lean == nil || len(s.Lean.Kernels) != 2 {
		t.Fatalf("two layers short: %v %+v", err, s.Lean)
	}
	// Every layer int8 and still 1 B short: a FitError on the lowered
	// constants (the graph's int8 weights alone would fit).
	if graph.WeightBytes(g) >= c8 {
		t.Fatalf("graph weights %d B, lowered int8 constants %d B", graph.WeightBytes(g), c8)
	}
	s, _, err = compile(withFlash(b, uint64(c8-1)), nil)
	var fit *FitError
	if !errors.As(err, &fit) || fit.Need != c8 || fit.Need-fit.Have != 1 || !strings.Contains(err.Error(), "lowered constants") ||
		!strings.Contains(err.Error(), "needs "+commas(c8)+" B for weights") || s.Files != nil {
		t.Fatalf("all int8 and 1 B short: %v", err)
	}
	t.Logf("%v", err)
	// Exactly the int8 constants: the code estimate does not fit, so the
	// emitted C is compiled and measured (checkCode): refused, with the
	// measured size; given that size and the application's 4 KiB it
	// compiles. Without the compiler, it compiles with a warning.
	if _, err := runner.LookTool("arm-none-eabi-gcc"); err != nil {
		s, warns, err := compile(withFlash(b, uint64(c8)), nil)
		if err != nil || s.Lean == nil || len(s.Lean.Kernels) != 3 || !strings.Contains(strings.Join(warns, "\n"), "could not be measured") {
			t.Fatalf("all int8, no headroom, no compiler: %v %+v %q", err, s.Lean, warns)
		}
		return
	}
	_, _, err = compile(withFlash(b, uint64(c8)), nil)
	if !errors.As(err, &fit) || !strings.Contains(err.Error(), "measured with the board's compiler") || fit.Have != c8 {
		t.Fatalf("all int8, no headroom: %v", err)
	}
	if s, _, err = compile(withFlash(b, uint64(fit.Need)), nil); err != nil || s.Lean == nil || len(s.Lean.Kernels) != 3 {
		t.Fatalf("all int8, with the measured code's room: %v %+v", err, s.Lean)
	}
}

// smallBoards is testdata/boards/small_flash.star: Cortex-M4F parts with
// 512 and 256 KiB of flash, run on QEMU's AN386.
const smallBoards = "../testdata/boards/small_flash.star"

// Convolutions (fused ReLU and not, im2col, odd channel counts) and fully
// connected layers with int8 weights run bit-exact with the reference
// interpreter on the Cortex-M4 board; AD (270 KB of int8 weights, 535 KB
// as int16) on a 512 KiB Cortex-M4 compiles with its largest layer kept
// int8, and the firmware matches TFLite Micro's vectors; on 256 KiB it is
// refused with one FitError line before any build.
func TestWeights8UnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*graph.Graph{}
	for _, c := range cases {
		byName[c.Name] = c.Graph
	}
	w8 := map[string]map[string]int{"conv2d": {"weights": 8}, "fully_connected": {"weights": 8}}
	for _, c := range []struct {
		name string
		g    *graph.Graph
	}{
		{"conv-relu", tirtest.Conv3x3(12, 1, 1, graph.ActRelu, -128)},
		{"conv", tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5)},
		{"conv-stride2-odd", byName["conv_s8"]},
		{"fc", byName["fully_connected_s8"]},
		{"fc-chain", fcChain(5, 250, 160, 130, 10)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.g == nil {
				t.Fatal("no such test graph")
			}
			checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", w8, 6, 9, w8Kernels...)
		})
	}

	shared := sharedDir(t)
	file := smallBoards
	model := filepath.Join(shared, "ad/ad01_int8.tflite")
	b512, err := LoadBoard("m4-512k", file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(model, Options{Board: b512, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Kernels) == 0 || s.Lean.ConstBytes > 512*1024 || !usesW8(s.Files) {
		t.Fatalf("AD on 512 KiB: %+v", s.Lean)
	}
	t.Log(s.Lean.Summary())
	vecs, want := loadVectors(t, s, filepath.Join(shared, "ad/vectors_int8"))
	vecs = append(vecs, RandomInputs(s.Graph, 4, 11)...)
	x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, x, len(vecs), want)
	t.Logf("AD on m4-512k: %d instructions, %d B of flash", x.Instructions(), x.Firmware.FlashBytes())
	b256, err := LoadBoard("m4-256k", file)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Compile(model, Options{Board: b256, Version: "test"})
	var fit *FitError
	if !errors.As(err, &fit) || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "does not fit on m4-256k: needs") || s.Files != nil {
		t.Fatalf("AD on 256 KiB: %v", err)
	}
}

// Every MLPerf model with int8 weights in every dsp conv/FC kernel compiles
// warning-free as C99 -pedantic with -Wall -Wextra -Werror at -O2 and -Os
// for the Cortex-M4, as TestMLPerfCWarningFree does for the defaults.
func TestMLPerfWeights8CWarningFree(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long: four models, two optimization levels")
	}
	dir := sharedDir(t)
	needTools(t, "mps2-an386")
	b, _ := LoadBoard("mps2-an386", "")
	cc, err := runner.LookTool(runner.Tools(b)[0])
	if err != nil {
		t.Fatal(err)
	}
	w8 := map[string]map[string]int{"conv2d": {"weights": 8}, "fully_connected": {"weights": 8}}
	for _, m := range mlperfModels {
		t.Run(m.name, func(t *testing.T) {
			s, err := Compile(filepath.Join(dir, m.file), Options{Board: b, Version: "test", Knobs: w8})
			if err != nil {
				t.Fatal(err)
			}
			if !usesW8(s.Files) {
				t.Fatal("the C calls no int8-weight kernel")
			}
			buildWarningFree(t, b, cc, s.Files)
		})
	}
}
