package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcugen/mcugen/internal/fileio"
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
	line := "1 kernel(s) take their knobs from " + recs + "\n"
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
	if code != 0 || !strings.Contains(out, "\ntuning: 1 of 1 kernel(s) take their knobs from "+recs+"\n") {
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
	if n := fileio.SweepOrphans(tmp, workPrefixes, 0); n != 0 {
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
	if code != 0 || !strings.Contains(out, "entry int_model_run()") || !strings.Contains(errs, "the C prefix is int_model, not int: is a C or C++ keyword") {
		t.Errorf("int.tflite: exit %d\n%s%s", code, out, errs)
	}
}
