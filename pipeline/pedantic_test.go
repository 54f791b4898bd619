package pipeline

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The C generated for the MLPerf Tiny models with each board's default
// target (dsp, mve, generic, neon) compiles warning-free as C99 -pedantic
// with -Wall -Wextra -Wconversion -Werror, at -O2 and at -Os: the optimizer's inlining
// decides some warnings (-Waggressive-loop-optimizations once drew one from
// a helper's tail loop), so both levels are built, each model in one unit.
func TestMLPerfCWarningFree(t *testing.T) {
	if testing.Short() {
		t.Skip("long: four models, four targets, two optimization levels")
	}
	dir := sharedDir(t)
	for _, board := range []string{"mps2-an386", "mps3-an547", "mps2-an385", "aarch64-linux"} {
		needTools(t, board)
		b, err := LoadBoard(board, "")
		if err != nil {
			t.Fatal(err)
		}
		cc, err := runner.LookTool(runner.Tools(b)[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mlperfModels {
			t.Run(board+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				s, err := Compile(filepath.Join(dir, m.file), Options{Board: b, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				buildWarningFree(t, b, cc, s.Files)
			})
		}
	}
}

// buildWarningFree compiles each C file of files for b with cc as C99
// -pedantic -Wall -Wextra -Wconversion -Werror at -O2 and at -Os
// (-Wconversion: firmware projects build with it, and gcc 12's __ssat
// returned unsigned: user-journey finding; -Wcast-qual: the DSP loads'
// memory operands cast const words to an array type, thousands of
// warnings in a strict project: bare-metal journey).
func buildWarningFree(t *testing.T, b *boards.Board, cc string, files map[string][]byte) {
	t.Helper()
	src := t.TempDir()
	if err := WriteFiles(src, files); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if filepath.Ext(name) != ".c" {
			continue
		}
		for _, opt := range []string{"-O2", "-Os"} {
			args := append(b.GCCFlags(), opt, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Wconversion", "-Wcast-qual", "-Werror", "-c",
				"-I", src, "-o", filepath.Join(src, name+opt+".o"), filepath.Join(src, name))
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", name, opt, err, out)
			}
		}
	}
}

// A model whose inputs all fold into constants still gets a header C99
// takes: its inputs struct has a placeholder member (an empty struct is
// not C99), and the unit builds warning-free under -pedantic.
func TestNoInputModelWarningFree(t *testing.T) {
	needTools(t, "host")
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile("../testdata/tflite/op_float_dequantize_per_axis.tflite", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Graph.UserInputs()) != 0 {
		t.Fatalf("the model has inputs %v: the test wants one without", s.Graph.UserInputs())
	}
	cc, err := runner.LookTool(runner.Tools(b)[0])
	if err != nil {
		t.Fatal(err)
	}
	buildWarningFree(t, b, cc, s.Files)
}

// A Debug (-O0) build of KWS on the Cortex-M4 runs, bit-exact with TFLite
// Micro's vectors (review finding: the depthwise kernels' frames grew to
// 25 KB unoptimized and overran the stack; the model's C now asks gcc for
// -Og when the build does not optimize).
func TestKWSDebugBuildRuns(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	shared := sharedDir(t)
	s, err := Compile(filepath.Join(shared, "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test", CFlags: []string{"-O0", "-g"}})
	if err != nil {
		t.Fatal(err)
	}
	vecs, want := loadVectors(t, s, filepath.Join(shared, "kws/vectors"))
	vecs = vecs[:3]
	x, err := s.Execute(vecs, t.TempDir(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, x, len(vecs), want[:3])
}

// The dsp target's C stops a big-endian build with an #error saying what
// to do: its weight words are packed for little-endian loads, and a
// big-endian build gave wrong outputs without a word (audit finding).
func TestDSPRefusesBigEndian(t *testing.T) {
	b, cc := an386Compiler(t)
	s, err := CompileGraph(tirtest.Conv1x1(1, 5, 8, 8, graph.ActRelu, 3), "be", Options{Board: b, Target: "dsp", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := WriteFiles(src, s.Files); err != nil {
		t.Fatal(err)
	}
	for _, endian := range []string{"-mlittle-endian", "-mbig-endian"} {
		args := append(b.GCCFlags(), endian, "-O2", "-std=c99", "-c", "-I", src, "-o", filepath.Join(src, "be.o"), filepath.Join(src, "be.c"))
		out, err := exec.Command(cc, args...).CombinedOutput()
		switch {
		case endian == "-mlittle-endian" && err != nil:
			t.Errorf("little-endian build: %v\n%s", err, out)
		case endian == "-mbig-endian" && (err == nil || !strings.Contains(string(out), "recompile the model with --target generic for a big-endian build")):
			t.Errorf("big-endian build: %v, want the #error\n%s", err, out)
		}
	}
}

// an386Compiler is mps2-an386 and its C compiler (the test skips, or in
// CI fails, without the toolchain).
func an386Compiler(t *testing.T) (*boards.Board, string) {
	t.Helper()
	needTools(t, "mps2-an386")
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := runner.LookTool(runner.Tools(b)[0])
	if err != nil {
		t.Fatal(err)
	}
	return b, cc
}
