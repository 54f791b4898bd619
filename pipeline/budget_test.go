package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// AD, worked by hand from its ten fully connected layers (640-128-128-128-
// 128-8-128-128-128-128-640): 264,192 weights (one a MAC) and 1,672 int32
// biases, so 270,880 B of constants with int8 weights and more than
// 2 × 264,192 = 528,384 B with the dsp target's int16 ones.
const (
	adInt8Bytes     = 264192 + 4*1672
	adInt16Weights  = 2 * 264192
	kwsArenaOnM4    = 8064 // KWS's arena on mps2-an386 with separate I/O (docs/PERFORMANCE.md)
	adArenaAnyBoard = 2 * 128
)

// A flash budget below AD's int16 weights on the 4 MiB Cortex-M4 binds as
// a small board's flash does: the largest layers keep int8 weights, not
// all of them, and the constants with the code headroom fit the budget;
// the summary and LeanWeights say it was the budget. Below AD's all-int8
// constants the build is refused with one FitError line naming
// --flash-budget, before any C is emitted. Where the board's region is the
// tighter limit, its messages are the usual ones.
func TestFlashBudgetAD(t *testing.T) {
	model := filepath.Join(sharedDir(t), "ad/ad01_int8.tflite")
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	const budget = 400000
	if budget >= adInt16Weights || budget <= adInt8Bytes+codeHeadroomBase {
		t.Fatal("the budget must fall between the all-int8 and the int16 sizes")
	}
	s, err := Compile(model, Options{Board: b, Version: "test", FlashBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Lean
	if l == nil || !l.Budget || l.FlashBytes != budget || len(l.Kernels) == 0 || len(l.Kernels) >= 10 || !usesW8(s.Files) {
		t.Fatalf("budget %d B: %+v", budget, l)
	}
	c := s.Module.ConstBytes()
	if l.ConstBytes != c || int64(s.Report.WeightsBytes) != c || c < adInt8Bytes || c+codeHeadroomBase > budget {
		t.Errorf("constants %d B (lean %d B, report %d B) for a budget of %d B", c, l.ConstBytes, s.Report.WeightsBytes, budget)
	}
	// AD's layers share no weights: every kernel kept int8 is one the C
	// defines (a transformer's 141 layers shared 26, and the report named
	// them all: user-journey finding).
	if !slices.Equal(l.CKernels, l.Kernels) {
		t.Errorf("kernels in the C %v, kept int8 %v", l.CKernels, l.Kernels)
	}
	if !strings.Contains(l.Summary(), "kept int8 to fit the flash budget (") || !strings.HasSuffix(l.Summary(), " B of 400,000 B)") {
		t.Errorf("summary %q", l.Summary())
	}
	// The code estimate (4,096 B + 2,048 B for each of the ten kernels)
	// leaves the constants within twice itself of the budget's end: the
	// emitted C is measured, and the line gives the measurement, more than
	// the constants and less than the estimate with them.
	if m := s.codeMeasured; m <= c || m > c+24576 || m > budget {
		t.Errorf("measured %d B for constants of %d B", m, c)
	}
	if got, want := s.BudgetSummary(), "budget: flash 400,000 B (code and constants "+commas(s.codeMeasured)+" B used, measured with the board's compiler)"; got != want {
		t.Errorf("budget line %q, want %q", got, want)
	}
	t.Log(l.Summary())

	// 256 KiB: even all-int8 (270,880 B) does not fit.
	s, err = Compile(model, Options{Board: b, Version: "test", FlashBudget: 256 << 10})
	var fit *FitError
	if !errors.As(err, &fit) || fit.Budget != "flash" || fit.Region != "" || fit.Have != 262144 || fit.Need < adInt8Bytes || s.Files != nil {
		t.Fatalf("256 KiB budget: %v", err)
	}
	// The graph's int8 weights (270,880 B) and the least code (4,096 B)
	// are over it: refused before lowering, as a region too small is.
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "ad01_int8 does not fit the flash budget: needs 274,976 B for weights (int8, 270,880 B) and code (at least 4,096 B); --flash-budget is 262,144 B (12,832 B short)") {
		t.Errorf("message %q", msg)
	}
	t.Log(err)

	// The 512 KiB board's region is tighter than a 600,000 B budget: the
	// region binds and says so as without a budget.
	b512, err := LoadBoard("m4-512k", smallBoards)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Compile(model, Options{Board: b512, Version: "test", FlashBudget: 600000})
	if err != nil || s.Lean == nil || s.Lean.Budget || s.Lean.FlashBytes != 512<<10 || !strings.Contains(s.Lean.Summary(), "kept int8 to fit flash (") {
		t.Fatalf("512 KiB board, 600,000 B budget: %v %+v", err, s.Lean)
	}
	b256, err := LoadBoard("m4-256k", smallBoards)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(model, Options{Board: b256, Version: "test", FlashBudget: 1 << 20})
	if !errors.As(err, &fit) || fit.Budget != "" || !strings.Contains(err.Error(), "does not fit on m4-256k: needs") {
		t.Fatalf("256 KiB board, 1 MiB budget: %v", err)
	}
}

// The flash budget's mechanics on a small hand-made model: 1 B short of
// the int16 constants with their code (as measured), one layer keeps int8
// weights, and a knob forcing int16 loses to the budget with a warning
// naming it; on a board whose region is as tight as the budget the region
// binds (a tie), and the tighter of the two binds otherwise.
func TestFlashBudgetFallback(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	g := fcChain(3, 250, 160, 130, 10)
	compile := func(b *boardT, budget int64, knobs map[string]map[string]int) (*State, []string, error) {
		var warns []string
		s, err := CompileGraph(g, "fcchain", Options{Board: b, Version: "test", Knobs: knobs, FlashBudget: budget,
			Warn: func(w string) { warns = append(warns, w) }})
		return s, warns, err
	}
	big, _, err := compile(b, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	c16 := big.Module.ConstBytes()
	// What the code takes beside the constants: as measured with the
	// board's compiler, which the fit pass does before it keeps any layer
	// int8 (the estimate where the compiler is missing).
	headroom := int64(codeHeadroomBase + codeHeadroomKernel*len(big.Module.Funcs))
	if m, err := measureFlash(b, big.Files, ""); err == nil {
		headroom = int64(m) - c16
	}
	s, warns, err := compile(b, c16+headroom-1, map[string]map[string]int{"fully_connected": {"weights": 16}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || !s.Lean.Budget || len(s.Lean.Kernels) != 1 || s.Lean.FlashBytes != c16+headroom-1 ||
		!strings.Contains(s.Lean.Summary(), "weights: 1 layer kept int8 to fit the flash budget (") {
		t.Fatalf("1 B short of the budget: %+v", s.Lean)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "the flash budget needs them (the fit pass wins)") {
		t.Errorf("a knob forcing weights=16: warnings %q", warns)
	}
	// The same budget with the region as tight: the region binds.
	s, _, err = compile(withFlash(b, uint64(c16+headroom-1)), c16+headroom-1, nil)
	if err != nil || s.Lean == nil || s.Lean.Budget || !strings.Contains(s.Lean.Summary(), "to fit flash (") {
		t.Fatalf("a tie: %v %+v", err, s.Lean)
	}
	// A budget looser than the region: the region binds; tighter: the budget.
	s, _, err = compile(withFlash(b, uint64(c16+headroom-1)), c16+headroom+100000, nil)
	if err != nil || s.Lean == nil || s.Lean.Budget {
		t.Fatalf("a looser budget: %v %+v", err, s.Lean)
	}
	s, _, err = compile(withFlash(b, uint64(c16+headroom+100000)), c16+headroom-1, nil)
	if err != nil || s.Lean == nil || !s.Lean.Budget {
		t.Fatalf("a tighter budget: %v %+v", err, s.Lean)
	}
	// Room to spare: nothing changes.
	if s, _, err = compile(b, c16+headroom, nil); err != nil || s.Lean != nil {
		t.Fatalf("exactly enough: %v %+v", err, s.Lean)
	}
}

// A RAM budget below KWS's arena on the Cortex-M4 (8,064 B) is refused with
// one FitError line naming --ram-budget and the bytes short; at exactly
// the arena it compiles, and the budget line says what the model uses.
func TestRAMBudgetKWS(t *testing.T) {
	model := filepath.Join(sharedDir(t), "kws/kws_ref_model.tflite")
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(model, Options{Board: b, Version: "test", RAMBudget: kwsArenaOnM4 - 1})
	var fit *FitError
	if !errors.As(err, &fit) || fit.Budget != "RAM" || fit.Need != kwsArenaOnM4 || fit.Have != kwsArenaOnM4-1 || s.Files != nil {
		t.Fatalf("budget 8,063 B: %v", err)
	}
	want := model + ": kws_ref_model does not fit the RAM budget: needs 8,064 B for activations (the arena); --ram-budget is 8,063 B (1 B short)"
	if err.Error() != want {
		t.Errorf("message\n%q\nwant\n%q", err.Error(), want)
	}
	s, err = Compile(model, Options{Board: b, Version: "test", RAMBudget: kwsArenaOnM4})
	if err != nil {
		t.Fatalf("budget 8,064 B: %v", err)
	}
	if got, want := s.BudgetSummary(), "budget: RAM 8,064 B (arena 8,064 B used; the kernels' 3,072 B of stack scratch is not counted)"; got != want {
		t.Errorf("budget line %q, want %q", got, want)
	}
}

// Budgets apply off bare metal too, where no region does: on the host AD's
// constants are its int8 weights and biases, 270,880 B, and its arena two
// 128-value activations (the 640-value input and output are the caller's).
// 1 B less of either budget is refused; a flash budget that holds the
// constants but not the code estimate is refused too (no linker checks a
// budget), and one that holds both compiles.
func TestBudgetsOnHost(t *testing.T) {
	model := filepath.Join(sharedDir(t), "ad/ad01_int8.tflite")
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(flash, ram int64) (*State, []string, error) {
		var warns []string
		s, err := Compile(model, Options{Board: b, Version: "test", FlashBudget: flash, RAMBudget: ram,
			Warn: func(w string) { warns = append(warns, w) }})
		return s, warns, err
	}
	s, warns, err := compile(0, 0)
	if err != nil || s.Lean != nil || len(warns) != 0 || s.BudgetSummary() != "" {
		t.Fatalf("no budgets: %v %+v %q", err, s.Lean, warns)
	}
	// The int8 weights and the least code (4,096 B) are checked before
	// lowering: 1 B short of both.
	_, _, err = compile(adInt8Bytes+4096-1, 0)
	want := model + ": ad01_int8 does not fit the flash budget: needs 274,976 B for weights (int8, 270,880 B) and code (at least 4,096 B); --flash-budget is 274,975 B (1 B short)"
	if err == nil || err.Error() != want {
		t.Errorf("flash 1 B short: %v\nwant %s", err, want)
	}
	// The constants and the least code fit, the code estimate does not: the
	// budget covers both, no linker checks it, and mcugen does not build
	// the host's code for a board, so the estimate (4,096 B + 2,048 B for
	// each of the ten distinct kernels = 24,576 B) decides.
	_, _, err = compile(adInt8Bytes+4096, 0)
	want = model + ": ad01_int8 does not fit the flash budget: needs 295,456 B for weights (the lowered constants, 270,880 B) and code (estimated at 24,576 B; it could not be measured: mcugen does not build for this board); --flash-budget is 274,976 B (20,480 B short)"
	if err == nil || err.Error() != want {
		t.Fatalf("flash exactly the constants: %v\nwant %s", err, want)
	}
	s, warns, err = compile(adInt8Bytes+24576, 0)
	if err != nil || s.Lean != nil || len(warns) != 0 {
		t.Fatalf("flash for the constants and the code estimate: %v %+v %q", err, s.Lean, warns)
	}
	_, _, err = compile(0, adArenaAnyBoard-1)
	var fit *FitError
	if !errors.As(err, &fit) || fit.Budget != "RAM" || fit.Need != adArenaAnyBoard || !strings.HasSuffix(err.Error(), "--ram-budget is 255 B (1 B short)") {
		t.Errorf("RAM 1 B short: %v", err)
	}
	s, _, err = compile(1<<20, adArenaAnyBoard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.BudgetSummary(), "budget: flash 1,048,576 B (weights 270,880 B and code estimated at 24,576 B used), RAM 256 B (arena 256 B used)"; got != want {
		t.Errorf("budget line %q, want %q", got, want)
	}
}

// A RAM region that holds the stack too must hold the board's stack beside
// the arena: KWS on the micro:bit (Cortex-M0, generic schedules) with no
// convolution in place has the live-set arena 16,000 B, and with the
// board's 2 KiB stack 18,048 B does not fit its 16,384 B of RAM (the
// firmware mcugen links would not either).
func TestArenaAndStackFitRAM(t *testing.T) {
	model := filepath.Join(sharedDir(t), "kws/kws_ref_model.tflite")
	b, err := LoadBoard("microbit", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(model, Options{Board: b, Version: "test", NoInPlace: true})
	var fit *FitError
	if !errors.As(err, &fit) || fit.Need != 16000+2048 || fit.Have != 16384 || fit.Region == "" {
		t.Fatalf("KWS on microbit: %v", err)
	}
	if !strings.Contains(err.Error(), "needs 18,048 B for activations (the arena, 16,000 B) and the board's 2,048 B stack; region RAM has 16,384 B (1,664 B short)") {
		t.Errorf("message %q", err)
	}
}

// The Go API may leave out the board: a flash budget with tuning knobs that
// ask for int16 weights then keeps the largest layers int8 with a warning
// naming the budget (it dereferenced the missing board).
func TestFlashBudgetWithoutBoard(t *testing.T) {
	model := filepath.Join(sharedDir(t), "ad/ad01_int8.tflite")
	var warns []string
	s, err := Compile(model, Options{Target: "dsp", Version: "test", FlashBudget: 420000,
		Knobs: map[string]map[string]int{"fully_connected": {"weights": 16}}, Warn: func(w string) { warns = append(warns, w) }})
	if err != nil || s.Lean == nil || len(s.Lean.Kernels) == 0 {
		t.Fatalf("%v %+v", err, s)
	}
	found := false
	for _, w := range warns {
		found = found || strings.Contains(w, "keep int8 weights: the flash budget needs them")
	}
	if !found {
		t.Errorf("no warning naming the budget: %q", warns)
	}
}

// With separate I/O the caller's input and output buffers are outside the
// arena, but they still need the board's memory: a micro:bit (16 KiB RAM,
// 256 KiB flash) cannot hold a 16,900 B output, nor a 360,000 B input even
// in flash. Refused at the plan, before lowering (a fuzzed model with a 2 GB
// output kept compile busy for minutes).
func TestIOBuffersFitTheBoard(t *testing.T) {
	b, err := LoadBoard("microbit", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		h, k int
		want string
	}{
		{130, 1, `needs 16,900 B for its output "y" (the caller's buffer); region RAM has 16,384 B (516 B short)`},
		{600, 600, `needs 360,000 B for its input "x" (the caller's buffer); region FLASH has 262,144 B (97,856 B short)`},
	} {
		_, err := CompileGraph(avgPoolGraph(c.h, c.h, 1, c.k, c.k, 1), "io", Options{Board: b, Version: "test"})
		var fit *FitError
		if !errors.As(err, &fit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%dx%d: %v, want %q", c.h, c.h, err, c.want)
		}
	}
	// 128×128 is 16,384 B: it fits.
	if _, err := CompileGraph(avgPoolGraph(128, 128, 1, 1, 1, 1), "io", Options{Board: b, Version: "test"}); err != nil {
		t.Errorf("128x128: %v", err)
	}
}

// Where the code estimate refuses a budget the constants fit, the emitted
// C is measured with the board's compiler, and the measurement decides (the
// estimate, a flat 2,048 B a kernel, refused a 14-layer gesture model whose
// code was 6 KB: user-journey finding). AD with int8 weights on the
// Cortex-M4 (its code measures about 11,000 B, under the 14,336 B estimate
// for its five kernel functions, the six 128→128 layers one since session
// 48; with a function a layer it measured 23,752 B against 24,576 B): a
// budget of exactly the measured code and constants is accepted though the
// estimate is over it; one byte less is refused with the measured figures.
func TestFlashBudgetMeasuresCode(t *testing.T) {
	t.Parallel()
	needTools(t, "mps2-an386")
	model := filepath.Join(sharedDir(t), "ad/ad01_int8.tflite")
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	int8W := map[string]map[string]int{"fully_connected": {"weights": 8}}
	compile := func(budget int64) (*State, error) {
		return Compile(model, Options{Board: b, Version: "test", FlashBudget: budget, Knobs: int8W})
	}
	const estimate = 4096 + 5*2048
	// Within twice the estimate of the budget's end: measured.
	s, err := compile(adInt8Bytes + 2*estimate - 1)
	if err != nil {
		t.Fatal(err)
	}
	m := s.codeMeasured
	c := s.Module.ConstBytes()
	if c < adInt8Bytes || m <= c || m >= c+estimate {
		t.Fatalf("constants %d B, measured %d B: want at least the weights' %d B and less than %d B of code", c, m, adInt8Bytes, estimate)
	}
	if _, err := compile(m); err != nil {
		t.Errorf("a budget of the measured %d B: %v", m, err)
	}
	_, err = compile(m - 1)
	var fit *FitError
	want := fmt.Sprintf("ad01_int8 does not fit the flash budget: needs %s B for the model's code and constants (measured with the board's compiler at -O2; constants %s B); --flash-budget is %s B (1 B short)", commas(m), commas(c), commas(m-1))
	if !errors.As(err, &fit) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("1 B short: %v\nwant ...%s", err, want)
	}
	// With int16 weights (the default) the fit pass measures before it
	// keeps any layer int8: a budget of exactly the int16 build's measured
	// code and constants keeps every layer int16 (the estimate, over it,
	// made one int8: review finding); a byte less keeps some int8.
	s16, err := Compile(model, Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m16, err := measureFlash(b, s16.Files, "")
	if err != nil {
		t.Fatal(err)
	}
	if c16 := s16.Module.ConstBytes(); int64(m16) >= c16+estimate {
		t.Fatalf("int16 build measured %d B, constants %d B: the estimate is not over it, the case shows nothing", m16, c16)
	}
	if s, err := Compile(model, Options{Board: b, Version: "test", FlashBudget: int64(m16)}); err != nil || s.Lean != nil || s.codeMeasured != int64(m16) {
		t.Errorf("budget %d B, the int16 build's measure: %v, %+v, measured %d", m16, err, s.Lean, s.codeMeasured)
	}
	if s, err := Compile(model, Options{Board: b, Version: "test", FlashBudget: int64(m16) - 1}); err != nil || s.Lean == nil {
		t.Errorf("budget %d B: %v, %+v", m16-1, err, s.Lean)
	}
}
