package pipeline

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
)

// fcChain4 is an int8 model of fully connected layers over rows input
// rows, k[0] -> k[1] -> ..., ReLU between them (per-channel weight scales),
// none after the last, whose weights are int4 values, -8..7 at random (the
// extremes often): a model quantized to four bits as TFLite's INT4 tensors
// import. A layer listed in wide has one weight of 8 (no longer int4).
func fcChain4(seed int64, rows int, wide []int, k ...int) *graph.Graph {
	r := rand.New(rand.NewSource(seed))
	g := graph.New("fcchain4", "tflite")
	q := func(s float32, zp int32) *graph.Quant {
		return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{zp}}
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{rows, k[0]}, Quant: q(0.05, 3)})
	in := "x"
	for l := 1; l < len(k); l++ {
		w := graph.NewData(graph.Int8, []int{k[l], k[l-1]})
		for i := range w.I {
			w.I[i] = []int64{-8, 7, int64(r.Intn(16) - 8)}[r.Intn(3)]
		}
		if slices.Contains(wide, l) {
			w.I[len(w.I)/2] = 8
		}
		wn, bn, yn := fmt.Sprintf("w%d", l), fmt.Sprintf("b%d", l), fmt.Sprintf("y%d", l)
		wq := &graph.Quant{Scale: make([]float32, k[l]), ZeroPoint: make([]int32, k[l])}
		for i := range wq.Scale {
			wq.Scale[i] = (0.008 + 0.016*r.Float32()) * 16 / float32(k[l-1]+16)
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
		g.AddTensor(&graph.Tensor{Name: yn, DType: graph.Int8, Shape: []int{rows, k[l]}, Quant: q(0.02, zp)})
		g.AddNode(&graph.Node{Name: fmt.Sprintf("fc%d", l), Op: graph.FullyConnected, Inputs: []string{in, wn, bn}, Outputs: []string{yn},
			Attrs: &graph.FullyConnectedAttrs{Act: act}})
		in = yn
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{in}
	return g
}

// w4Kernels are the name prefixes of the packed int4 micro-kernels.
var w4Kernels = []string{"dsp_mac_s4w_"}

// fcWeights returns the fully connected kernels' knob weights, by kernel.
func fcWeights(s *State) map[string]int {
	out := map[string]int{}
	for _, f := range s.Module.Funcs {
		if f.Op == "fully_connected" {
			out[f.Name] = f.Knobs["weights"]
		}
	}
	return out
}

// constsWith sums the bytes of the lowered constants whose name ends in
// suffix, per kernel.
func constsWith(s *State, suffix string) map[string]int64 {
	out := map[string]int64{}
	for _, f := range s.Module.Funcs {
		for _, c := range f.Consts() {
			if strings.HasSuffix(c.Name, suffix) {
				out[f.Name] += int64(c.Len() * c.DType.Size())
			}
		}
	}
	return out
}

// Fully connected layers with packed int4 weights (knob weights = 4) run
// bit-exact with the reference interpreter on mps2-an386, the arena
// guarded: one and several rows (the 1x4 and 2x2 blocks, single-row and
// single-channel tails), K a multiple of 8 and not (staged rows), odd
// output counts, the AD autoencoder's 640-wide layers, at the board's -O2
// (the one-row asm), at -Os, -O0, with a frame pointer and with
// MCUGEN_NO_ASM (the C forms).
func TestInt4FCUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name   string
		rows   int
		k      []int
		knobs  map[string]int
		cflags []string
	}{
		{"ad-shapes", 1, []int{640, 128, 8, 128, 640}, nil, nil},
		{"k13-n7-n3", 1, []int{13, 7, 3}, nil, nil},
		{"rows3-k33-n9-n5", 3, []int{33, 9, 5}, nil, nil},
		{"rows2-k40-n11-n1", 2, []int{40, 11, 1}, nil, nil},
		{"k250-n1", 1, []int{250, 1}, nil, nil},
		{"k72-n5-Os", 1, []int{72, 5, 3}, nil, []string{"-Os"}},
		{"rows2-k20-n3-O0", 2, []int{20, 3, 2}, nil, []string{"-O0"}},
		{"k24-n6-fp", 1, []int{24, 6, 9}, nil, []string{"-fno-omit-frame-pointer"}},
		{"k56-n9-C-form", 1, []int{56, 9, 6}, nil, []string{"-DMCUGEN_NO_ASM"}},
		{"rows5-dsp_mac_s4w_2x2_", 5, []int{40, 11, 6}, map[string]int{"block_rows": 2, "block_oc": 2}, nil},
		{"rows3-dsp_mac_s4w_2x4_u4(", 3, []int{32, 9}, map[string]int{"block_rows": 2, "block_oc": 4, "unroll_k": 4}, nil},
		{"rows4-dsp_mac_s4w_1x2_u8(", 4, []int{64, 7}, map[string]int{"block_oc": 2, "unroll_k": 8}, nil},
		{"rows1-dsp_mac_s4w_1x1_", 1, []int{100, 5}, map[string]int{"block_oc": 1}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			kn := map[string]int{"weights": 4}
			for k, v := range c.knobs {
				kn[k] = v
			}
			g := fcChain4(int64(len(c.name)), c.rows, nil, c.k...)
			want := w4Kernels
			if _, call, ok := strings.Cut(c.name, "-"); ok && strings.HasPrefix(call, "dsp_") {
				want = []string{call} // the block the knobs ask for
			}
			checkGraphUnderQEMUFlags(t, b, g, "fc4", "dsp", map[string]map[string]int{"fully_connected": kn}, c.cflags, 6, 35, want...)
		})
	}
}

// The packed int4 micro-kernels (every block shape, several unrolls)
// compile warning-free, C99 -pedantic, under the flag sets
// TestDSPAsmCompilesEverywhere uses for the convolutions' asm, -O0, -O3 and
// MCUGEN_NO_ASM too; at -O2 the one-row asm is taken.
func TestInt4FCCompilesEverywhere(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long: several layers, several sets of flags")
	}
	b, cc := an386Compiler(t)
	dir := t.TempDir()
	var units []string
	i := 0
	for _, c := range []struct {
		rows  int
		k     []int
		knobs map[string]int
	}{
		{1, []int{640, 128, 9}, nil},
		{2, []int{72, 9, 5}, map[string]int{"block_rows": 2, "block_oc": 2}},
		{3, []int{24, 8, 5}, nil},
		{2, []int{64, 8, 4}, map[string]int{"block_rows": 2, "block_oc": 4, "unroll_k": 16}},
		{2, []int{48, 7}, map[string]int{"block_rows": 2, "block_oc": 1, "unroll_k": 4}},
		{3, []int{32, 4}, map[string]int{"block_rows": 3, "block_oc": 2, "unroll_k": 2}},
		{1, []int{128, 6}, map[string]int{"block_oc": 2, "unroll_k": 32}},
		{1, []int{96, 7}, map[string]int{"block_oc": 1, "unroll_k": 24}},
	} {
		kn := map[string]int{"weights": 4}
		for k, v := range c.knobs {
			kn[k] = v
		}
		s, err := CompileGraph(fcChain4(int64(i), c.rows, nil, c.k...), fmt.Sprintf("v%d", i), Options{Board: b, Target: "dsp", Knobs: map[string]map[string]int{"fully_connected": kn}, Version: "test"})
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if !cContains(s.Files, w4Kernels...) {
			t.Fatalf("%v: no int4 kernel", c)
		}
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(sub, s.Files); err != nil {
			t.Fatal(err)
		}
		for name := range s.Files {
			if strings.HasSuffix(name, ".c") {
				units = append(units, filepath.Join(sub, name))
			}
		}
		i++
	}
	// The one-row asm is what an -O2 build runs: its AND with a shifted
	// register.
	asm := filepath.Join(dir, "v0.s")
	if out, err := exec.Command(cc, append(append(b.GCCFlags(), "-O2"), "-std=c99", "-S", "-I", filepath.Dir(units[0]), "-o", asm, units[0])...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	} else if text, err := os.ReadFile(asm); err != nil || !strings.Contains(string(text), ", lsr #12") {
		t.Errorf("-O2: no AND with LSR #12 in the kernels' assembly (%v)", err)
	}
	opts := [][]string{{"-O2"}, {"-Os"}, {"-O0"}, {"-O3"}, {"-O2", "-fno-omit-frame-pointer"}, {"-Os", "-fno-omit-frame-pointer"}, {"-O2", "-fPIC"}, {"-O3", "-fpie"},
		{"-O2", "-fPIC", "-fno-omit-frame-pointer"}, {"-O2", "-DMCUGEN_NO_ASM"}}
	for _, opt := range opts {
		for _, u := range units {
			args := append(append(b.GCCFlags(), opt...), "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", "-I", filepath.Dir(u), "-o", u+".o", u)
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %v: %v\n%s", u, opt, err, firstLines(string(out), 6))
			}
		}
	}
}

// The fit pass: a chain of int4-range fully connected layers under a flash
// budget that all-int8 weights cannot meet takes packed int4 weights for
// its largest layers, as few as needed, says so, runs bit-exact, and its
// weight constants are half the int8 ones (K padded to 8, not 4); a model
// whose weights leave [−8, 7] never gets them: the budget is refused as
// before, and in a mixed model only the int4-range layers take them.
func TestFitWeightsInt4(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	// K = 250, 160 and 130 (250 and 130 pad to 256 and 136 in int4, 252 and
	// 132 in int8).
	dims := []int{250, 160, 130, 10}
	g := fcChain4(4, 1, nil, dims...)
	compile := func(g *graph.Graph, budget int64, knobs map[string]map[string]int) (*State, error) {
		return CompileGraph(g, "fcchain4", Options{Board: b, Version: "test", FlashBudget: budget, Knobs: knobs, Warn: func(string) {}})
	}
	big, err := compile(g, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	all8, err := compile(g, 0, map[string]map[string]int{"fully_connected": {"weights": 8}})
	if err != nil {
		t.Fatal(err)
	}
	all4, err := compile(g, 0, map[string]map[string]int{"fully_connected": {"weights": 4}})
	if err != nil {
		t.Fatal(err)
	}
	c16, c8, c4 := big.Module.ConstBytes(), all8.Module.ConstBytes(), all4.Module.ConstBytes()
	if big.Lean != nil || cContains(big.Files, w4Kernels...) || usesW8(big.Files) {
		t.Fatalf("no budget: %+v", big.Lean)
	}
	// The weights by hand: N·ceil(K/8)·4 B packed int4, N·ceil(K/4)·4 B int8.
	w4, w8 := constsWith(all4, "_weights_s4"), constsWith(all8, "_weights_s8")
	var sum4, sum8 int64
	for l := 1; l < len(dims); l++ {
		name := fmt.Sprintf("fully_connected_%d", l-1)
		K, N := dims[l-1], dims[l]
		var got4, got8 int64 = -1, -1
		for n, v := range w4 {
			if strings.HasPrefix(n, name+"_") {
				got4 = v
			}
		}
		for n, v := range w8 {
			if strings.HasPrefix(n, name+"_") {
				got8 = v
			}
		}
		want4, want8 := int64(N*((K+7)/8)*4), int64(N*((K+3)/4)*4)
		if got4 != want4 || got8 != want8 {
			t.Errorf("layer %d (%d→%d): %d B int4 (want %d), %d B int8 (want %d)", l, K, N, got4, want4, got8, want8)
		}
		sum4, sum8 = sum4+got4, sum8+got8
	}
	// 160·32·4 + 130·20·4 + 10·17·4 = 20,480 + 10,400 + 680 B of int4 weights
	// against 160·252 + 130·160 + 10·132 = 40,320 + 20,800 + 1,320 B int8.
	if sum4 != 31560 || sum8 != 62440 {
		t.Errorf("weights %d B int4, %d B int8", sum4, sum8)
	}
	// The rest of the constants: the int4 layers run unfused, so each ReLU
	// layer keeps its bias, multipliers, k0 and e1 (4 + 4 + 8 + 4 B a
	// channel) where the fused int8 form folds the bias into four words a
	// channel (16 B): 4 B a channel more in the 160 + 130 ReLU channels; the
	// last layer's (per-tensor, no ReLU) are the same either way.
	t.Logf("constants: %d B int16, %d B int8, %d B int4 (weights %d and %d B)", c16, c8, c4, sum8, sum4)
	if c8-c4 != sum8-sum4-4*int64(dims[1]+dims[2]) {
		t.Errorf("constants %d B int4, %d B int8: the weights differ by %d B", c4, c8, sum8-sum4)
	}
	// A budget 500 B short of the int8 constants alone (the measured code
	// of the int8 build would fit beside constants a little smaller): the
	// largest layer alone is packed int4 (its 20 KB saved leave the code
	// headroom the fit pass counts).
	budget := c8 - 500
	s, err := compile(g, budget, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Int4) != 1 || !strings.HasPrefix(s.Lean.Int4[0], "fully_connected_0_") || len(s.Lean.Kernels) != 3 {
		t.Fatalf("all int8 500 B short: %+v", s.Lean)
	}
	ws := fcWeights(s)
	for name, w := range ws {
		if want := map[bool]int{true: 4, false: 8}[name == s.Lean.Int4[0]]; w != want {
			t.Errorf("%s: weights = %d, want %d", name, w, want)
		}
	}
	if sum := s.Lean.Summary(); !strings.Contains(sum, "3 layers kept int8 (1 of them packed int4) to fit the flash budget") {
		t.Errorf("summary %q", sum)
	}
	if !cContains(s.Files, w4Kernels...) || s.Module.ConstBytes() >= c8 {
		t.Errorf("int4 C %v, constants %d B", cContains(s.Files, w4Kernels...), s.Module.ConstBytes())
	}
	t.Log(s.Lean.Summary())

	// Even all-int4 1 B short: a FitError that says so.
	_, err = compile(g, c4-1, nil)
	var fit *FitError
	if !errors.As(err, &fit) || !strings.Contains(err.Error(), "(3 of them packed int4)") {
		t.Errorf("all int4 and short: %v", err)
	}
	// Weights outside [−8, 7]: never int4, and the budget all-int8 misses
	// is refused as it was.
	wide := fcChain4(4, 1, []int{1, 2, 3}, dims...)
	_, err = compile(wide, budget, nil)
	if !errors.As(err, &fit) || strings.Contains(err.Error(), "int4") {
		t.Errorf("int8 weights, 500 B short: %v", err)
	}
	// A mixed model, the first layer's weights int8, the others int4, 500 B
	// over the same budget as all int8 (with the code estimate, so that no
	// measurement is needed): the second layer, though the first is the
	// largest.
	mixed := fcChain4(4, 1, []int{1}, dims...)
	s, err = compile(mixed, budget+1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws = fcWeights(s)
	for name, w := range ws {
		if want := map[bool]int{true: 4, false: 8}[strings.HasPrefix(name, "fully_connected_1_")]; w != want {
			t.Errorf("mixed: %s: weights = %d, want %d", name, w, want)
		}
	}
	if s.Lean == nil || len(s.Lean.Int4) != 1 {
		t.Errorf("mixed: %+v", s.Lean)
	}
	t.Logf("mixed: %s", s.Lean.Summary())
	// Forced by a knob, a layer with a weight of 8 takes int8 weights.
	s, err = compile(wide, 0, map[string]map[string]int{"fully_connected": {"weights": 4}})
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range fcWeights(s) {
		if w != 8 {
			t.Errorf("%s (a weight of 8), knob weights=4: weights = %d", name, w)
		}
	}
	if cContains(s.Files, w4Kernels...) {
		t.Error("int4 kernels in a model with int8 weights")
	}
	// A budget only all-int4 meets (its code and constants as the board's
	// compiler measures them, as the fit pass does): every layer.
	if !needTools2(t, "mps2-an386") {
		return
	}
	m4, err := measureFlash(b, all4.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err = compile(g, int64(m4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Int4) != 3 || s.Module.ConstBytes() != c4 {
		t.Fatalf("all int4: %+v, constants %d B (want %d)", s.Lean, s.Module.ConstBytes(), c4)
	}
	for name, w := range fcWeights(s) {
		if w != 4 {
			t.Errorf("%s: weights = %d, want 4", name, w)
		}
	}
	x, err := s.Execute(append(RandomInputs(s.Graph, 4, 35), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("int4 outputs differ from the reference interpreter")
	}
	t.Logf("all int4 on mps2-an386: %d instructions, %d B of flash", x.Instructions(), x.Firmware.FlashBytes())
}

// needTools2 reports whether the board's tools are present (false under
// -short): the QEMU part of a test that has more to check without them.
func needTools2(t *testing.T, board string) bool {
	if testing.Short() {
		t.Logf("-short: %s runs skipped (package pipeline)", board)
		return false
	}
	b, err := LoadBoard(board, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range runner.Tools(b) {
		if _, err := runner.LookTool(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %s: %v", board, err)
			}
			t.Logf("%s: %v: its runs skipped (package pipeline)", board, err)
			return false
		}
	}
	return true
}

// The MLPerf Tiny AD autoencoder's shapes (640-128-128-128-128-8-128-128-
// 128-128-640, ReLU between) with int4-range weights on mps2-an386, every
// layer's weights int16 (the default), int8 and packed int4: each run
// bit-exact with the reference interpreter, and the figures logged
// (instructions per inference, the lowered constants and the firmware's
// flash), flash falling with each; and on a board with 256 KiB of flash,
// where all-int8 does not fit, the fit pass's choice.
func TestInt4ADShapesFigures(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	g := fcChain4(10, 1, nil, 640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640)
	var last int64
	for _, w := range []int{16, 8, 4} {
		s, err := CompileGraph(g, "ad4", Options{Board: b, Version: "test", Knobs: map[string]map[string]int{"fully_connected": {"weights": w}}})
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range fcWeights(s) {
			if got != w {
				t.Fatalf("weights=%d: %s has %d", w, name, got)
			}
		}
		x, err := s.Execute(append(RandomInputs(s.Graph, 2, 35), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.AllMatch() {
			t.Errorf("weights=%d: outputs differ from the reference interpreter", w)
		}
		flash := x.Firmware.FlashBytes()
		t.Logf("weights=%-2d  %9d instructions  constants %7d B  firmware flash %7d B", w, x.Instructions(), s.Module.ConstBytes(), flash)
		if last != 0 && int64(flash) >= last {
			t.Errorf("weights=%d: flash %d B, not below the wider form's %d B", w, flash, last)
		}
		last = int64(flash)
	}
	// On 256 KiB of flash (int16 weights 551 KB, int8 294 KB): the fit
	// pass packs the largest layers int4, as few as fit, and it runs
	// bit-exact.
	b256, err := LoadBoard("m4-256k", smallBoards)
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileGraph(g, "ad4", Options{Board: b256, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Int4) == 0 || len(s.Lean.Kernels) != 10 || !cContains(s.Files, w4Kernels...) {
		t.Fatalf("AD shapes on 256 KiB: %+v", s.Lean)
	}
	x, err := s.Execute(append(RandomInputs(s.Graph, 2, 36), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("m4-256k: outputs differ from the reference interpreter")
	}
	t.Logf("m4-256k: %s; %d instructions, firmware flash %d B", s.Lean.Summary(), x.Instructions(), x.Firmware.FlashBytes())
}

// TestFitWeightsInt4SkipsNoSaving: the fit pass packed layers by their
// int8 size, one round for as many as the estimate wanted, though a layer
// of K <= 4 saves nothing packed (both forms take four bytes a channel)
// and its unfused epilogue adds tables: on FC 4 → 4000 → 3 → 10 it packed
// the 4 → 4000 layer first, the constants grew, and a budget that packing
// the 4000 → 3 layer alone meets was refused (review finding). Now one
// layer a round, and one whose constants do not shrink goes back to int8.
func TestFitWeightsInt4SkipsNoSaving(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	g := fcChain4(3, 1, nil, 4, 4000, 3, 10)
	compile := func(budget int64, knobs map[string]map[string]int) (*State, error) {
		return CompileGraph(g, "smallk", Options{Board: b, Version: "test", FlashBudget: budget, Knobs: knobs, Warn: func(string) {}})
	}
	all8, err := compile(0, map[string]map[string]int{"fully_connected": {"weights": 8}})
	if err != nil {
		t.Fatal(err)
	}
	one4, err := compile(0, map[string]map[string]int{"fully_connected": {"weights": 8}, "fully_connected_1_s8": {"weights": 4}})
	if err != nil {
		t.Fatal(err)
	}
	c8, c1 := all8.Module.ConstBytes(), one4.Module.ConstBytes()
	if c1 >= c8 {
		t.Fatalf("packing the 4000 → 3 layer: %d B of constants, int8 %d", c1, c8)
	}
	// A budget between the two builds' measured flash (the model's code
	// and constants, as the fit pass measures them).
	if !needTools2(t, "mps2-an386") {
		return
	}
	m8, err := measureFlash(b, all8.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	m1, err := measureFlash(b, one4.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	if m1 >= m8 {
		t.Fatalf("measured flash: %d B with the 4000 → 3 layer packed, %d int8", m1, m8)
	}
	s, err := compile(int64(m1+(m8-m1)/2), nil)
	if err != nil {
		t.Fatalf("a budget the 4000 → 3 layer packed meets: %v", err)
	}
	w := fcWeights(s)
	if w["fully_connected_0_s8"] == 4 || w["fully_connected_1_s8"] != 4 {
		t.Errorf("weights %v: want the 4000 → 3 layer packed and the 4 → 4000 one not", w)
	}
	if s.Module.ConstBytes() > c1 {
		t.Errorf("constants %d B, more than with the one layer packed (%d)", s.Module.ConstBytes(), c1)
	}
}

// TestInt4KeepsItsBlocks: tuning records are tuned with int8 weights, and
// their block shapes overrode the int4 form's 1x4: a record's 2x2 took a
// keyword transformer's 49-row int4 layers to the C form, 29% slower
// (review finding). Knobs asking for 2x2 on the kernels the build keeps
// int4 leave them at 1x4 now.
func TestInt4KeepsItsBlocks(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	g := fcChain4(5, 49, nil, 64, 128, 64)
	ks := []string{"fully_connected_0_s8", "fully_connected_1_s8"}
	knobs := map[string]map[string]int{}
	for _, k := range ks {
		knobs[k] = map[string]int{"block_rows": 2, "block_oc": 2}
	}
	s, err := CompileGraph(g, "blocks4", Options{Board: b, Version: "test", KeepInt4: ks, Knobs: knobs, Warn: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if w := fcWeights(s)[k]; w != 4 {
			t.Errorf("%s: weights %d, want 4", k, w)
		}
	}
	if !cContains(s.Files, "dsp_mac_s4w_1x4") || cContains(s.Files, "dsp_mac_s4w_2x2") {
		t.Errorf("the int4 layers do not run the 1x4 block")
	}
}
