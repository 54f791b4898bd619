package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// writeTFLite writes m to a temporary .tflite file named name.
func writeTFLite(t *testing.T, m *tg.Model, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".tflite")
	if err := os.WriteFile(p, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An int8 ADD or SUB whose output multiplier 2·max(s1, s2) / (2^20 · sy)
// is not below 1 has no TFLite form: TFLite and TFLite Micro quantize it
// with QuantizeMultiplierSmallerThanOneExp, which fails. mcugen ran it,
// saturating (round-3 fuzzer). Inputs of scales 1 and 0.5: an output scale
// of 2^-19 gives exactly 1 and is refused, naming the node and the
// multiplier; 2^-18 gives 0.5 and compiles, bit-exact.
func TestAddSubOutputMultiplierBelowOne(t *testing.T) {
	for _, c := range []struct {
		op   int32
		opt  uint8
		name string
	}{{tg.OpAdd, tg.OptAdd, "ADD"}, {tg.OpSub, tg.OptSub, "SUB"}} {
		write := func(sy float32) string {
			m := &tg.Model{}
			a := m.AddTensor(tg.Tensor{Name: "a", Type: tg.Int8, Shape: []int32{1, 4}, Scale: []float32{1}, ZeroPoint: []int64{0}})
			b := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Int8, Shape: []int32{1, 4}, Scale: []float32{0.5}, ZeroPoint: []int64{3}})
			y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4}, Scale: []float32{sy}, ZeroPoint: []int64{-1}})
			m.AddOp(c.op, &tg.Options{Type: c.opt}, []int32{a, b}, y)
			m.Inputs, m.Outputs = []int32{a, b}, []int32{y}
			return writeTFLite(t, m, strings.ToLower(c.name))
		}
		out := filepath.Join(t.TempDir(), "o")
		code, _, errs := mcugen(t, "compile", write(1.0/(1<<19)), "--board", "host", "-o", out)
		oneErrorLine(t, c.name+" of output multiplier 1", code, errs, 1, `node "y"`, c.name+"'s output scale 1.9073486e-06", "output multiplier 1)", "TFLite needs the multiplier below 1")
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s refused: the output directory exists (%v)", c.name, err)
		}
		code, stdout, errs := mcugen(t, "test", write(1.0/(1<<18)), "--board", "host", "--random", "3")
		if code != 0 || !strings.Contains(stdout, "bit-exact") {
			t.Errorf("%s of output multiplier 0.5: exit %d\n%s%s", c.name, code, stdout, errs)
		}
	}
}

// A CONCATENATION with a fused activation is refused at import, naming the
// operator and the activation: TFLite's and TFLite Micro's Prepare refuse
// it, so there is no reference to be bit-exact with (round-3 fuzzer: mcugen
// applied it).
func TestConcatenationFusedActivationRefused(t *testing.T) {
	m := &tg.Model{}
	a := m.AddTensor(tg.Tensor{Name: "a", Type: tg.Int8, Shape: []int32{1, 2}, Scale: []float32{0.1}, ZeroPoint: []int64{0}})
	b := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Int8, Shape: []int32{1, 2}, Scale: []float32{0.1}, ZeroPoint: []int64{0}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4}, Scale: []float32{0.1}, ZeroPoint: []int64{0}})
	m.AddOp(tg.OpConcatenation, &tg.Options{Type: tg.OptConcatenation, Fields: []tg.Field{tg.I32(0, 1), tg.I8(1, 3)}}, []int32{a, b}, y)
	m.Inputs, m.Outputs = []int32{a, b}, []int32{y}
	p := writeTFLite(t, m, "cat")
	code, _, errs := mcugen(t, "compile", p, "--board", "host", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "CONCATENATION with RELU6", code, errs, 1, p, "CONCATENATION", "fused activation RELU6: TFLite refuses a fused activation on CONCATENATION")
}

// test, run and bench say which cases took knobs from --tuning records, as
// compile does (tuning journey: only compile and bench's JSON said so).
func TestTuningAppliedIsSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tunes under QEMU")
	}
	needQEMU(t)
	recs := filepath.Join(t.TempDir(), "r.json")
	model := "../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite"
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "--jobs", "2", "-o", recs); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	// The line ends there, or says the search found nothing faster than
	// the defaults (session 56), which the two trials may or may not beat.
	line := "1 layer(s) take their knobs from " + recs
	for _, args := range [][]string{
		{"test", model, "--random", "1"},
		{"bench", model},
	} {
		code, out, errs := mcugen(t, append(args, "--board", "mps2-an386", "--tuning", recs)...)
		if code != 0 || !strings.Contains(out, "\ntuning: "+filepath.Base(model)+" on mps2-an386: "+line) {
			t.Errorf("%s --tuning: exit %d\nstdout %s\nstderr %s", args[0], code, out, errs)
		}
		if code, out, _ = mcugen(t, append(args, "--board", "mps2-an386")...); code != 0 || strings.Contains(out, "tuning") {
			t.Errorf("%s without --tuning: exit %d\nstdout %s", args[0], code, out)
		}
	}
	code, out, errs := mcugen(t, "run", model, "--board", "mps2-an386", "--tuning", recs)
	if code != 0 || !strings.Contains(out, "\ntuning: 1 of 1 layer(s) take their knobs from "+recs) {
		t.Errorf("run --tuning: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// A run's work directory is locked while the run lives, so a later run
// removes only the ones a killed run left (tuning journey: kill -9 left
// /tmp/mcugen-tune-* behind for good).
func TestKilledRunsWorkDirsAreSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sweepOnce = sync.Once{}
	stale := filepath.Join(tmp, "mcugen-tune-12345")
	if err := os.MkdirAll(filepath.Join(stale, "cand-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	dir, done, err := tempWorkDir("mcugen-run-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed run's %s: %v, want removed", stale, err)
	}
	if n := fileio.SweepOrphans(tmp, workPrefixes, keepMarker, 0); n != 0 {
		t.Errorf("a sweep removed %d directories while %s was in use", n, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the live run's %s: %v", dir, err)
	}
	done()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after done: %v", dir, err)
	}
}

// Prefixes (multi-model journey): a trailing _ is refused however the rest
// reads (int_, the form a keyword was told to take, made int__run), a
// keyword's suggestion is <name>_model, a model file named after a keyword
// gets that prefix with a warning naming the file's own name, and CMSIS's
// headers are protected as the C library's are (a generated arm_cmse.h
// hides gcc's on a TrustZone build).
func TestPrefixesJourney32(t *testing.T) {
	src := "../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for p, want := range map[string][]string{
		"int_":      {`"int_model" would do`, "int__run"},
		"int":       {"keyword", `"int_model" would do`},
		"cmsis_gcc": {"cmsis_gcc.h, the generated header, would hide the system's <cmsis_gcc.h>"},
		"core_cm33": {"would hide the system's <core_cm33.h>"},
		"arm_cmse":  {"would hide the system's <arm_cmse.h>"},
	} {
		code, _, errs := mcugen(t, "compile", src, "--board", "host", "--prefix", p, "-o", filepath.Join(dir, p))
		oneErrorLine(t, "--prefix "+p, code, errs, 2, want...)
	}
	model := filepath.Join(dir, "int.tflite")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "compile", model, "--board", "host", "-o", filepath.Join(dir, "o"))
	if code != 0 || !strings.Contains(out, "entry int_model_run()") || !strings.Contains(errs, "the C prefix is int_model, not int: int is a C or C++ keyword") {
		t.Errorf("int.tflite: exit %d\n%s%s", code, out, errs)
	}
}

// writeConvModel writes an int8 k×k convolution (SAME, stride 1) of an
// hw×hw×cin input to cout channels, with fixed pseudo-random weights.
func writeConvModel(t *testing.T, k, cin, cout, hw int) string {
	t.Helper()
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, int32(hw), int32(hw), int32(cin)}, Scale: []float32{0.05}, ZeroPoint: []int64{-3}})
	wb := make([]byte, k*k*cin*cout)
	for i := range wb {
		wb[i] = byte(int8((i*37)%200 - 100))
	}
	ws, wz := make([]float32, cout), make([]int64, cout)
	for i := range ws {
		ws[i] = 0.01
	}
	w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Int8, Shape: []int32{int32(cout), int32(k), int32(k), int32(cin)}, Scale: ws, ZeroPoint: wz, Data: wb})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, int32(hw), int32(hw), int32(cout)}, Scale: []float32{0.5}, ZeroPoint: []int64{1}})
	m.AddOp(tg.OpConv2D, tg.Conv2DOptions(tg.Same, 1, 1, tg.ActNone, 1, 1), []int32{x, w, -1}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	return writeTFLite(t, m, "conv")
}

// <PREFIX>_STACK_SIZE (what compile checks against the board's stack, with
// pipeline.StackFrames for the frames) bounds the frame gcc gives the
// kernel at every optimization level, for convolutions whose border
// regions each declare their own im2col arrays. A session-32 estimate that
// followed the C's scopes was below gcc's -Og frame by 7 KB on the 3×3,
// 65-channel one (review), and was reverted.
func TestStackSizeBoundsGCC(t *testing.T) {
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: arm-none-eabi-gcc missing (Debian package gcc-arm-none-eabi)")
		}
		t.Skip("arm-none-eabi-gcc not installed (Debian package gcc-arm-none-eabi)")
	}
	for _, c := range []struct{ k, cin, cout, hw int }{{3, 65, 8, 12}, {7, 9, 1, 16}} {
		dir := t.TempDir()
		code, _, errs := mcugen(t, "compile", writeConvModel(t, c.k, c.cin, c.cout, c.hw), "--board", "host", "--target", "dsp", "-o", dir)
		if code != 0 {
			t.Fatalf("compile: %s", errs)
		}
		h, err := os.ReadFile(filepath.Join(dir, "conv.h"))
		if err != nil {
			t.Fatal(err)
		}
		var stack int
		for _, line := range strings.Split(string(h), "\n") {
			if v, ok := strings.CutPrefix(line, "#define CONV_STACK_SIZE "); ok {
				stack, _ = strconv.Atoi(v)
			}
		}
		if stack == 0 {
			t.Fatalf("%v: no CONV_STACK_SIZE in the header", c)
		}
		for _, o := range []string{"-O0", "-Og", "-O1", "-O2", "-Os"} {
			cmd := exec.Command("arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", o, "-std=c99",
				"-fstack-usage", "-c", "conv.c", "-o", "conv.o")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v %s: %v\n%s", c, o, err, out)
			}
			su, err := os.ReadFile(filepath.Join(dir, "conv.su"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(su)), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 || !strings.Contains(f[0], "conv2d") {
					continue
				}
				if n, _ := strconv.Atoi(f[1]); n > stack+pipeline.StackFrames {
					t.Errorf("%d×%d conv over %d channels at %s: gcc's frame %d B, CONV_STACK_SIZE %d + %d", c.k, c.k, c.cin, o, n, stack, pipeline.StackFrames)
				}
			}
		}
	}
}

// <PREFIX>_WEIGHTS_BYTES is the size of the weights section gcc makes of
// the C (multi-model journey: a firmware splitting its flash between
// models found the figure only in compile --json).
func TestWeightsBytesMacro(t *testing.T) {
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: arm-none-eabi-gcc missing (Debian package gcc-arm-none-eabi)")
		}
		t.Skip("arm-none-eabi-gcc not installed (Debian package gcc-arm-none-eabi)")
	}
	dir := t.TempDir()
	if code, _, errs := mcugen(t, "compile", "../../testdata/tflite/cnn_int8.tflite", "--board", "mps2-an386", "--prefix", "cnn", "-o", dir); code != 0 {
		t.Fatal(errs)
	}
	h, err := os.ReadFile(filepath.Join(dir, "cnn.h"))
	if err != nil {
		t.Fatal(err)
	}
	macro := -1
	for _, line := range strings.Split(string(h), "\n") {
		if v, ok := strings.CutPrefix(line, "#define CNN_WEIGHTS_BYTES "); ok {
			macro, _ = strconv.Atoi(v)
		}
	}
	cmd := exec.Command("arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2", "-std=c99", "-c", "cnn.c", "-o", "cnn.o")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command("arm-none-eabi-size", "-A", filepath.Join(dir, "cnn.o")).Output()
	if err != nil {
		t.Fatal(err)
	}
	section := -2
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == ".mcugen.weights" {
			section, _ = strconv.Atoi(f[1])
		}
	}
	if macro <= 0 || macro != section {
		t.Errorf("CNN_WEIGHTS_BYTES %d, the object's .mcugen.weights %d B", macro, section)
	}
}

// With --io in-arena the header gives each input's and output's offset in
// the arena as a macro (multi-model journey: only the _ptr functions said
// where), and it is where those functions point, with the arena static
// or the caller's.
func TestInArenaOffsetMacros(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed (Debian package gcc)")
	}
	for _, arena := range []string{"static", "external"} {
		dir := t.TempDir()
		if code, _, errs := mcugen(t, "compile", "../../testdata/tflite/op_int8_batch_matmul.tflite", "--board", "host", "--io", "in-arena", "--arena", arena, "--prefix", "m", "-o", dir); code != 0 {
			t.Fatal(errs)
		}
		main := `#include <stdio.h>
#include "m.h"
int main(void) {
    static uint8_t a[M_ARENA_SIZE + 16];
    uint8_t *arena = (uint8_t *)(((uintptr_t)a + 15) & ~(uintptr_t)15);
    ARENA_FIX
    printf("%d %d %d\n", (int)((uint8_t *)m_input_ptr(ARG) - arena) == M_IN0_OFFSET,
        (int)((uint8_t *)m_input1_ptr(ARG) - arena) == M_IN1_OFFSET, (int)((uint8_t *)m_output_ptr(ARG) - arena) == M_OUT_OFFSET);
    return M_IN1_OFFSET == M_IN0_OFFSET;
}
`
		if arena == "static" {
			// The static arena: the input's own address is its base.
			main = strings.ReplaceAll(main, "ARENA_FIX", "arena = (uint8_t *)m_input_ptr() - M_IN0_OFFSET; (void)a;")
			main = strings.ReplaceAll(main, "ARG", "")
		} else {
			main = strings.ReplaceAll(main, "ARENA_FIX", "")
			main = strings.ReplaceAll(main, "ARG", "arena")
		}
		if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "main.c", "m.c", "-o", "main")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", arena, err, out)
		}
		out, err := exec.Command(filepath.Join(dir, "main")).Output()
		if err != nil || string(out) != "1 1 1\n" {
			t.Errorf("%s arena: %q (%v), want the three offsets equal to the macros, the inputs apart", arena, out, err)
		}
	}
}
