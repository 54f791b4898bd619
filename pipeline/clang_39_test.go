package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/internal/needtool"
	"github.com/mcugen/mcugen/runner"
)

// needClang fails in CI, and skips elsewhere, without clang.
func needClang(t *testing.T) { needtool.Need(t, "clang", "clang") }

// clangCase is a model and a board the clang tests build it for.
type clangCase struct {
	board string
	m     mlperf
}

// clangCases: the four MLPerf Tiny models on the M4, M55, M3, AArch64 and
// the host; on the ARMv6-M boards (gcc's -masm-syntax-unified, which clang
// does not take) what fits the micro:bit's 16 KiB, and two on the RP2040
// (run on mps2-an385).
func clangCases() []clangCase {
	var cs []clangCase
	for _, board := range []string{"mps2-an386", "mps3-an547", "mps2-an385", "aarch64-linux", "host", "microbit", "rp2040"} {
		for _, m := range mlperfModels {
			if (board == "microbit" && m.name != "kws") || (board == "rp2040" && m.name != "kws" && m.name != "ad") {
				continue
			}
			cs = append(cs, clangCase{board, m})
		}
	}
	return cs
}

// TestMLPerfClangOnBoards39: the four MLPerf Tiny int8 models built by clang
// (the compiler of Keil MDK's armclang and of the LLVM Embedded Toolchain for
// Arm) for the M4 (dsp), the M55 (mve), the M3 (generic C) and AArch64
// (neon), and on the host under ASan and UBSan: bit-exact with TFLite Micro's
// vectors and the reference interpreter on random inputs, within the stack
// compile promised.
func TestMLPerfClangOnBoards39(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	needClang(t)
	shared := sharedDir(t)
	// UBSan stops at its first report through the environment: clang 14's
	// optimizer took over 6 minutes on KWS's C with -fno-sanitize-recover
	// (9 s without).
	t.Setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
	for _, c := range clangCases() {
		board, m := c.board, c.m
		t.Run(board+"/"+m.name, func(t *testing.T) {
			t.Parallel()
			needTools(t, board)
			b, err := LoadBoard(board, "")
			if err != nil {
				t.Fatal(err)
			}
			if board == "rp2040" {
				b = m0plusOnM3(t) // the RP2040's code on the M3 board
			}
			opt := Options{Board: b, Version: "test", Compiler: runner.CompilerClang}
			if board == "host" {
				opt.CFlags = []string{"-fsanitize=address,undefined", "-fno-omit-frame-pointer"}
			}
			s, err := Compile(filepath.Join(shared, m.file), opt)
			if err != nil {
				t.Fatal(err)
			}
			vecs, want := loadVectors(t, s, filepath.Join(shared, m.vectors))
			vecs = append(vecs, RandomInputs(s.Graph, 5, 39)...)
			dir := t.TempDir()
			x, err := s.Execute(vecs, dir, 5*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, x, len(vecs), want)
			checkClangStack(t, s, x)
			script, err := os.ReadFile(filepath.Join(dir, "build", "build.sh"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(script), "clang "); n < 2 {
				t.Errorf("build.sh names clang %d times: the firmware was not built by clang\n%s", n, script)
			}
			t.Logf("%s on %s, clang: %d vectors bit-exact, %d instructions/inference, stack %d B", m.name, board, len(vecs), x.Instructions(), x.StackBytes())
		})
	}
}

// clangFrames is what a clang build's frames may take beyond the kernels'
// local arrays: compile's check allows gcc's (StackFrames, 1 KiB), and
// clang 14's code for the M55 spills more (VWW: 1,440 B beyond the 2,688 B
// planes of its 12x12x64 depthwise layer, where gcc's frames took 184). README and
// docs/ARCHITECTURE.md tell clang users to leave 2 KiB.
const clangFrames = ClangStackFrames

// checkClangStack is checkMeasuredStack with clangFrames for StackFrames,
// logging what passes compile's allowance for gcc's frames.
func checkClangStack(t *testing.T, s *State, x *Execution) {
	t.Helper()
	checkStackFrames(t, s, x, clangFrames)
	if locals, kernel := s.Module.ScratchBytes(); s.Opt.Board.BareMetal() && x.StackBytes() > int64(locals+StackFrames) {
		t.Logf("stack: %d B, %d B past compile's allowance for gcc's frames (%d B over kernel %s's %d B of arrays)", x.StackBytes(), x.StackBytes()-int64(locals+StackFrames), StackFrames, kernel, locals)
	}
}

// TestClangKeepsTheAsmKernels39: clang takes the dsp micro-kernels' asm (the
// immediates MCUGEN_ASM_IMM gives it, no frame pointer, unaligned loads): KWS
// on the M4 built by clang is within 5% of gcc's instructions (2.04 times
// gcc's before: the asm was gcc's only, and clang's code of the C forms spilled
// the pointwise blocks' accumulators), and its pointwise layers run the
// LDM form: an LDMIA of the four weight registers followed by SMLADs.
func TestClangKeepsTheAsmKernels39(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	needClang(t)
	b := qemuBoard(t, "mps2-an386")
	shared := sharedDir(t)
	count := func(cc string) (int64, string) {
		s, err := Compile(filepath.Join(shared, "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test", Compiler: cc})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		x, err := s.Execute(RandomInputs(s.Graph, 1, 5), dir, 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.Match[0] {
			t.Fatalf("%s: the output differs from the reference interpreter's", cc)
		}
		return x.Instructions(), filepath.Join(dir, "build", "firmware.elf")
	}
	gcc, _ := count(runner.CompilerGCC)
	clang, elf := count(runner.CompilerClang)
	t.Logf("KWS on mps2-an386: gcc %d, clang %d instructions (%+.1f%%)", gcc, clang, 100*float64(clang-gcc)/float64(gcc))
	if float64(clang) > 1.05*float64(gcc) {
		t.Errorf("clang's build takes %d instructions, gcc's %d: more than 5%% more", clang, gcc)
	}
	objdump, err := runner.LookTool("arm-none-eabi-objdump")
	if err != nil {
		t.Skip(err)
	}
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", elf).Output()
	if err != nil {
		t.Fatal(err)
	}
	ldm := 0
	lines := strings.Split(string(out), "\n")
	for i, l := range lines {
		if strings.Contains(l, "ldmia") && strings.Contains(l, "{r4, r5, r6, r8}") && i+1 < len(lines) && strings.Contains(lines[i+1], "smlad") {
			ldm++
		}
	}
	if ldm < 16 {
		t.Errorf("%d LDMIA {r4, r5, r6, r8} + SMLAD steps in clang's KWS: the pointwise asm is not compiled in", ldm)
	}
}

// TestMLPerfClangWarningFree39: the C of the four MLPerf Tiny models for each
// board's default target compiles under clang as C99 -pedantic with -Wall
// -Wextra -Wconversion -Wcast-qual -Werror, with the flags mcugen's clang
// builds take and with clang's own defaults for the target (a frame pointer,
// and on the bare-metal boards strict alignment), at every optimization level
// (for VWW and IC off the M4 and M55, at -O2 and -Os).
func TestMLPerfClangWarningFree39(t *testing.T) {
	if testing.Short() {
		t.Skip("long: four models, five boards, up to twelve builds each")
	}
	needClang(t)
	dir := sharedDir(t)
	for _, c := range clangCases() {
		board, m := c.board, c.m
		t.Run(board+"/"+m.name, func(t *testing.T) {
			t.Parallel()
			needTools(t, board)
			b, err := LoadBoard(board, "")
			if err != nil {
				t.Fatal(err)
			}
			ours, err := runner.ClangFlags(b)
			if err != nil {
				t.Fatal(err)
			}
			// clang's defaults: the triple and the C library's headers only.
			var plain []string
			for i := 0; i < len(ours); i++ {
				switch ours[i] {
				case "-fomit-frame-pointer", "-munaligned-access":
				case "-isystem":
					plain = append(plain, ours[i], ours[i+1])
					i++
				default:
					plain = append(plain, ours[i])
				}
			}
			levels := []string{"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz", "-Og"}
			// Every level for every model on the SIMD cores (the M55's IC
			// did not assemble at -O1, -Og and -Oz: review); -O2 and -Os
			// for VWW and IC elsewhere.
			if (m.name == "vww" || m.name == "ic") && board != "mps2-an386" && board != "mps3-an547" {
				levels = []string{"-O2", "-Os"}
			}
			s, err := Compile(filepath.Join(dir, m.file), Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			src := t.TempDir()
			if err := WriteFiles(src, s.Files); err != nil {
				t.Fatal(err)
			}
			// On the host and AArch64 clang's defaults are mcugen's flags:
			// one set (half of this test's builds there were repeats).
			sets := [][]string{ours}
			if !slices.Equal(plain, ours) {
				sets = append(sets, plain)
			}
			for name := range s.Files {
				if filepath.Ext(name) != ".c" {
					continue
				}
				for _, flags := range sets {
					for _, opt := range levels {
						args := append(runner.ClangOnly(b.GCCFlags()), flags...)
						args = append(args, opt, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Wconversion", "-Wcast-qual", "-Werror", "-c",
							"-I", src, "-o", filepath.Join(src, "unit.o"), filepath.Join(src, name))
						if out, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
							t.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
						}
					}
				}
			}
		})
	}
}

// TestClangOptLevels39: KWS on the M4 and ResNet (IC) on the M55, built by
// clang at each optimization level, run bit-exact (TFLite Micro's vectors)
// within the board's stack. At -O0 the helpers are calls, not always_inline
// copies (MCUGEN_ALWAYS_INLINE): inlined, each copy kept its own stack slots
// and KWS's depthwise kernels' frames were 20 KB, past the board's 16 KiB,
// and the run never ended. On the M55 the unrolled GEMV asm took .rept and
// .set, which clang's assembler mishandles (review): IC gave a wrong output
// at -O3 and did not build at -O1, -Og and -Oz.
func TestClangOptLevels39(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	needClang(t)
	shared := sharedDir(t)
	for _, c := range []struct{ board, model, file, vectors string }{
		{"mps2-an386", "kws", "kws/kws_ref_model.tflite", "kws/vectors"},
		{"mps3-an547", "ic", "ic/pretrainedResnet_quant.tflite", "ic/vectors_int8"},
	} {
		b := qemuBoard(t, c.board)
		for _, opt := range []string{"-O0", "-O1", "-O3", "-Os", "-Oz", "-Og"} {
			t.Run(c.board+"/"+c.model+opt, func(t *testing.T) {
				t.Parallel()
				s, err := Compile(filepath.Join(shared, c.file), Options{Board: b, Version: "test", Compiler: runner.CompilerClang, CFlags: []string{opt}})
				if err != nil {
					t.Fatal(err)
				}
				vecs, want := loadVectors(t, s, filepath.Join(shared, c.vectors))
				x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				checkVectors(t, x, len(vecs), want)
				if got := x.StackBytes(); got <= 0 || got > int64(b.StackBytes) {
					t.Errorf("stack %d B, the board has %d B", got, b.StackBytes)
				}
				t.Logf("%s on %s, clang %s: %d vectors bit-exact, %d instructions, stack %d B", c.model, c.board, opt, len(vecs), x.Instructions(), x.StackBytes())
			})
		}
	}
}
