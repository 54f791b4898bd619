package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A model of several outputs is checked against output_NNN_K.npy, one file
// per output (they were never read: a CI's golden vectors for a detector
// passed unchecked). An output_NNN.npy for such a model is an error that
// names the convention. The values are worked by hand: SPLIT of
// [[1 2 3 4] [5 6 7 8]] in two along axis 1.
func TestVectorsSeveralOutputs(t *testing.T) {
	model := "../../testdata/tflite/op_float_split.tflite"
	dir := t.TempDir()
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), &graph.Data{DType: graph.Float32, Shape: []int{2, 4}, F: []float32{1, 2, 3, 4, 5, 6, 7, 8}})
	first := &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{1, 2, 5, 6}}
	second := &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{3, 4, 7, 8}}
	mustWriteNpy(t, filepath.Join(dir, "output_000_0.npy"), first)
	mustWriteNpy(t, filepath.Join(dir, "output_000_1.npy"), second)
	args := []string{"test", model, "--board", "host", "--vectors", dir, "--random", "0", "--json"}
	code, stdout, errs := mcugen(t, args...)
	var rep struct {
		Results []testResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || len(rep.Results) != 1 || rep.Results[0].MatchExpected == nil || !*rep.Results[0].MatchExpected {
		t.Fatalf("right expected outputs: exit %d, %v\n%s%s", code, err, stdout, errs)
	}
	second.F[3] = 9
	mustWriteNpy(t, filepath.Join(dir, "output_000_1.npy"), second)
	if code, stdout, errs = mcugen(t, args[:len(args)-1]...); code != 1 || !strings.Contains(stdout, "MISMATCH with the vectors' output_NNN.npy") {
		t.Fatalf("a wrong second output: exit %d\n%s%s", code, stdout, errs)
	}
	// One of the two missing: said, and neither is checked.
	os.Remove(filepath.Join(dir, "output_000_1.npy"))
	if code, _, errs = mcugen(t, args[:len(args)-1]...); code != 0 || !strings.Contains(errs, "output_000_1.npy missing: output_000_0.npy not checked either") {
		t.Fatalf("a missing second output: exit %d\n%s", code, errs)
	}
	os.Remove(filepath.Join(dir, "output_000_0.npy"))
	mustWriteNpy(t, filepath.Join(dir, "output_000.npy"), first)
	if code, stdout, _ = mcugen(t, args[:len(args)-1]...); code != 1 || !strings.Contains(stdout, "the model has 2 outputs: name their expected values output_000_0.npy to _1.npy") {
		t.Fatalf("output_000.npy for two outputs: exit %d\n%s", code, stdout)
	}
}

// Expected outputs that cannot be checked are said to be so: for a float
// model mcugen quantizes (its outputs approximate the float model's; they
// used to be skipped silently while the table said bit-exact), a warning;
// one with no input of its number, an error where outputs are compared
// (session 50 review: it was a warning, and the run, its JUnit report too,
// passed), a warning where they are not.
func TestVectorsUncheckedOutputsWarned(t *testing.T) {
	model := "../../testdata/tflite/mlp_float.tflite"
	dir := t.TempDir()
	in := graph.NewData(graph.Float32, []int{1, 16})
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), in)
	mustWriteNpy(t, filepath.Join(dir, "output_000.npy"), graph.NewData(graph.Float32, []int{1, 8}))
	code, _, errs := mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0", "--calib-random", "2")
	if code != 0 || !strings.Contains(errs, "the expected outputs are not compared: mcugen quantized the model") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	// For the model mcugen quantizes nothing is compared: a warning.
	mustWriteNpy(t, filepath.Join(dir, "output_007.npy"), graph.NewData(graph.Float32, []int{1, 8}))
	code, _, errs = mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0", "--calib-random", "2")
	if code != 0 || !strings.Contains(errs, "1 expected output with no input file of the same number: not checked (output_007.npy)") {
		t.Fatalf("an unpaired output of a quantized model: exit %d, stderr:\n%s", code, errs)
	}
	// For an int8 model, whose outputs are compared, an error.
	model, dir = "../../testdata/tflite/mlp_int8.tflite", t.TempDir()
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), graph.NewData(graph.Int8, []int{1, 16}))
	mustWriteNpy(t, filepath.Join(dir, "output_000.npy"), graph.NewData(graph.Int8, []int{1, 8}))
	mustWriteNpy(t, filepath.Join(dir, "output_007.npy"), graph.NewData(graph.Int8, []int{1, 8}))
	junit := filepath.Join(t.TempDir(), "r.xml")
	code, _, errs = mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0", "--junit", junit)
	if code != 1 || strings.Count(errs, "\n")-strings.Count(errs, "mcugen: warning:") != 1 ||
		!strings.Contains(errs, "1 expected output with no input file of the same number (output_007.npy): it cannot be checked; name each vector's input input_NNN.npy") {
		t.Fatalf("an unpaired output: exit %d, stderr:\n%s", code, errs)
	}
	if x, err := os.ReadFile(junit); err != nil || !strings.Contains(string(x), "<error") {
		t.Errorf("the JUnit report does not hold the error: %v\n%s", err, x)
	}
}

// A JUnit report from an earlier run never stands for a run that stopped
// early: such a run writes its error as the one case.
func TestJUnitNotStale(t *testing.T) {
	report := filepath.Join(t.TempDir(), "r.xml")
	model := "../../testdata/tflite/mlp_int8.tflite"
	if code, _, errs := mcugen(t, "test", model, "--board", "host", "--random", "0", "--junit", report); code != 0 {
		t.Fatalf("passing run: %s", errs)
	}
	code, _, _ := mcugen(t, "test", model, "--board", "nope", "--random", "0", "--junit", report)
	var rep junitReport
	if err := xml.Unmarshal([]byte(mustRead(t, report)), &rep); err != nil {
		t.Fatal(err)
	}
	if code != 2 || rep.Errors != 1 || rep.Tests != 1 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 1 ||
		rep.Suites[0].Cases[0].Error == nil || !strings.Contains(rep.Suites[0].Cases[0].Error.Message, `unknown board "nope"`) {
		t.Fatalf("exit %d, report %+v", code, rep)
	}
}

// A baseline taken in another checkout matches by the longest shared tail of
// the path, so two model.tflite in d1/ and d2/ stay apart; names in tables
// and reports are the shortest tails that tell the models apart.
func TestBaselineMovedCheckout(t *testing.T) {
	p := writeBaseline(t, t.TempDir(),
		benchCase("/ws1/d1/model.tflite", "mps2-an386", 1000, 10, 10, 10),
		benchCase("/ws1/d2/model.tflite", "mps2-an386", 2000, 10, 10, 10))
	bl, err := loadBaseline(p)
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]int64{"/ws2/pr/d1/model.tflite": 1000, "/ws2/pr/d2/model.tflite": 2000} {
		r := benchResult{Model: model, Board: "mps2-an386", Instructions: want, ArenaBytes: 10, FlashBytes: 10, RAMBytes: 10}
		if got := bl.compare(&r, 0); len(got) != 0 || r.Baseline == nil || r.Baseline.Instructions != want {
			t.Errorf("%s: regressions %v, baseline %+v, want the case of %d instructions", model, got, r.Baseline, want)
		}
	}
	r := benchResult{Model: "/ws2/pr/d3/model.tflite", Board: "mps2-an386", Instructions: 5}
	if bl.compare(&r, 0); r.Baseline != nil {
		t.Errorf("d3 matched %+v: two cases share only its file name", r.Baseline)
	}
	names := shortNames([]string{"/a/d1/model.tflite", "/a/d2/model.tflite", "/a/kws.tflite", "/b/x/kws.tflite", "/c/ad.tflite"})
	want := map[string]string{"/a/d1/model.tflite": "d1/model.tflite", "/a/d2/model.tflite": "d2/model.tflite",
		"/a/kws.tflite": "a/kws.tflite", "/b/x/kws.tflite": "x/kws.tflite", "/c/ad.tflite": "ad.tflite"}
	for p, w := range want {
		if names[p] != w {
			t.Errorf("short name of %s: %q, want %q", p, names[p], w)
		}
	}
}

// One regression is printed on stdout like several (it was only in the
// error message on stderr, so a filter on stdout missed it).
func TestSingleRegressionOnStdout(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	dir := t.TempDir()
	code, stdout, errs := mcugen(t, "bench", model, "--board", "host", "--json")
	if code != 0 {
		t.Fatalf("bench: %s", errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	res := rep["results"].([]any)[0].(map[string]any)
	res["flash_bytes"] = res["flash_bytes"].(float64) - 10
	b, _ := json.Marshal(rep)
	base := filepath.Join(dir, "base.json")
	os.WriteFile(base, b, 0o644)
	code, stdout, errs = mcugen(t, "bench", model, "--board", "host", "--baseline", base)
	if code != 1 || strings.Count(stdout, "REGRESSION ") != 1 || !strings.Contains(stdout, "REGRESSION mlp_int8.tflite on host: flash_bytes") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
	}
}

// --version names the commit a Makefile build was made from (CI logs must
// say which build produced an artifact); without one it is the version.
func TestVersionLineNamesCommit(t *testing.T) {
	old := commit
	defer func() { commit = old }()
	commit = "0123456789ab, modified"
	if v := versionLine(); v != version+" (commit 0123456789ab, modified)" {
		t.Errorf("with a commit: %q", v)
	}
	commit = ""
	if v := versionLine(); !strings.HasPrefix(v, version) {
		t.Errorf("without: %q", v)
	}
}

// run refuses a misaligned input, output or external arena with -1 (a float
// model's buffer at an odd address hard-faulted the M4; the header said
// nothing), accepts aligned ones, and takes a NULL arena when the model
// needs none. Built with the project's strict flags.
func TestRunRefusesMisalignedBuffers(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	dir := t.TempDir()
	for _, m := range []string{"mlp_float", "op_float_scatter_nd"} {
		if code, _, errs := mcugen(t, "compile", "../../testdata/tflite/"+m+".tflite", "--arena", "external", "-o", filepath.Join(dir, m)); code != 0 {
			t.Fatalf("compile %s: %s", m, errs)
		}
	}
	main := `#include <stdio.h>
#include "mlp_float.h"
#include "op_float_scatter_nd.h"
static float in[16 + 1], out[8 + 1], sin_[4 + 1], sout[8];
static uint8_t arena[MLP_FLOAT_ARENA_SIZE + 2 * MLP_FLOAT_ARENA_ALIGN] __attribute__((aligned(16)));
int main(void)
{
    struct mlp_float_inputs i = {in};
    struct mlp_float_outputs o = {out};
    struct op_float_scatter_nd_inputs si = {sin_};
    struct op_float_scatter_nd_outputs so = {sout};
    printf("%d", (int)mlp_float_run(&i, &o, arena));
    printf(" %d", (int)mlp_float_run(&i, &o, arena + 4));
    i.input = (char *)in + 2;
    printf(" %d", (int)mlp_float_run(&i, &o, arena));
    i.input = in;
    o.act1_fc = (char *)out + 1;
    printf(" %d", (int)mlp_float_run(&i, &o, arena));
    printf(" %d\n", (int)op_float_scatter_nd_run(&si, &so, NULL));
    return 0;
}
`
	src := filepath.Join(dir, "main.c")
	os.WriteFile(src, []byte(main), 0o644)
	exe := filepath.Join(dir, "a.out")
	args := []string{"-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wno-pedantic", "-O1", "-I", filepath.Join(dir, "mlp_float"), "-I", filepath.Join(dir, "op_float_scatter_nd"),
		src, filepath.Join(dir, "mlp_float", "mlp_float.c"), filepath.Join(dir, "op_float_scatter_nd", "op_float_scatter_nd.c"), "-lm", "-o", exe}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil || string(out) != "0 -1 -1 -1 0\n" {
		t.Fatalf("run results %q (%v), want aligned 0, misaligned arena, input and output -1, no arena 0", out, err)
	}
}

// A prefix named after a system header is refused when given and renamed
// when it comes from the file name: stdint.tflite's stdint.h hid the
// system's from its own C and from the user's (firmware journey). So are
// reserved identifiers.
func TestPrefixNotAHeaderName(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	for p, want := range map[string]string{
		"stdint": "stdint.h, the generated header, would hide the system's <stdint.h>",
		"Math":   "math.h, the generated header, would hide the system's <math.h>",
		"__kws":  "starts with _: its macros (__KWS_ARENA_SIZE) would start with _ and a capital",
		"_Kws":   "starts with _: its macros (_KWS_ARENA_SIZE)",
		// Any leading _ (the macros are upper case), and __ anywhere
		// (bare-metal journey: both were taken).
		"_kws":   "starts with _: its macros (_KWS_ARENA_SIZE)",
		"kws__x": `holds __, which C++ reserves to the implementation in every name; "kws_x" would do`,
	} {
		code, _, errs := mcugen(t, "compile", model, "--prefix", p, "-o", filepath.Join(t.TempDir(), "o"))
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("--prefix %s: exit %d, %s", p, code, errs)
		}
	}
	dir := t.TempDir()
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(dir, "string.tflite")
	os.WriteFile(named, b, 0o644)
	out := filepath.Join(dir, "o")
	if code, _, errs := mcugen(t, "compile", named, "-o", out); code != 0 || !strings.Contains(errs, "the C prefix is string_model, not string: string.h, the generated header, would hide") {
		t.Fatalf("compile string.tflite: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "string_model.h")); err != nil {
		t.Errorf("string.tflite's header: %v", err)
	}
	if code, _, errs := mcugen(t, "test", named, "--board", "host", "--random", "1"); code != 0 {
		t.Errorf("test string.tflite: exit %d, %s", code, errs)
	}
}

// C scheduled for the DSP extension, built for a core without it, fails
// first at an #error that says what to do (it was assembler errors about
// sxtab16).
func TestDSPCodeOnWrongCoreSaysSo(t *testing.T) {
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		t.Skip("arm-none-eabi-gcc is not installed (Debian package gcc-arm-none-eabi)")
	}
	out := filepath.Join(t.TempDir(), "o")
	if code, _, errs := mcugen(t, "compile", "../../testdata/tflite/cnn_int8.tflite", "--board", "mps2-an386", "-o", out); code != 0 {
		t.Fatalf("compile: %s", errs)
	}
	msg, err := exec.Command("arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O2", "-c", filepath.Join(out, "cnn_int8.c"), "-o", filepath.Join(out, "x.o")).CombinedOutput()
	// gcc goes on after #error: the first error must be it.
	first := string(msg)
	if i := strings.Index(first, "error:"); i >= 0 {
		first = first[i:]
		if j := strings.IndexByte(first, '\n'); j > 0 {
			first = first[:j]
		}
	}
	if err == nil || !strings.Contains(first, "compiled for the Armv7E-M/Armv8-M DSP extension (target dsp)") {
		t.Fatalf("built for the M3: %v, first error %q\n%s", err, first, msg)
	}
}
