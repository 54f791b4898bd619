package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/internal/needtool"
)

// tune --cc clang measures clang's builds and writes records that say so;
// builds with --cc clang (bench, compile) apply them and gcc builds leave
// them, saying why; a file holding both compilers' records for one kernel
// keeps both; the Bazel targets of a clang batch build with clang; and
// compile --cc clang --project make/cmake defaults the project to clang.
func TestTuneClang40(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes under QEMU")
	}
	needQEMU(t)
	needtool.Need(t, "clang", "clang")
	model := filepath.Join(sharedModels(t), "ad", "ad01_int8.tflite")
	dir := t.TempDir()
	recs := filepath.Join(dir, "r.json")
	code, out, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--cc", "clang", "--trials", "2", "-o", recs, "--json")
	if code != 0 {
		t.Fatalf("tune --cc clang: exit %d: %s", code, errs)
	}
	var rep struct {
		Compiler string `json:"compiler"`
		Kernels  []struct {
			Default int64 `json:"default_instructions"`
		} `json:"best"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Compiler != "clang" || len(rep.Kernels) != 5 {
		t.Fatalf("tune --json: %v, %+v: want compiler clang and AD's 5 kernels\n%s", err, rep, out)
	}
	type record struct {
		Kernel   string `json:"kernel"`
		Compiler string `json:"compiler"`
		Default  int64  `json:"default_instructions"`
	}
	read := func() []record {
		var f struct {
			Records []record `json:"records"`
		}
		b, err := os.ReadFile(recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		return f.Records
	}
	clangDefaults := map[string]int64{}
	for _, r := range read() {
		if r.Compiler != "clang" {
			t.Errorf("record %q: compiler %q, want clang", r.Kernel, r.Compiler)
		}
		clangDefaults[r.Kernel] = r.Default
	}

	// gcc's build leaves clang's records, and says so.
	code, _, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--tuning", recs)
	if code != 0 {
		t.Fatalf("bench (gcc) --tuning: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "5 record(s) tuned with clang ignored (this build compiles with gcc: tune --cc gcc") {
		t.Errorf("bench (gcc) with clang's records said %q", errs)
	}
	// clang's build takes them: every node's kernel.
	code, out, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--cc", "clang", "--tuning", recs, "--json")
	if code != 0 {
		t.Fatalf("bench --cc clang --tuning: exit %d: %s", code, errs)
	}
	var b struct {
		Results []struct {
			Tuned    int    `json:"tuned_kernels"`
			Compiler string `json:"compiler"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil || len(b.Results) != 1 || b.Results[0].Tuned != 10 || b.Results[0].Compiler != "clang" {
		t.Errorf("bench --cc clang --tuning: %v, %+v: want AD's 10 layers tuned by clang's records\n%s", err, b, out)
	}
	// compile --cc clang applies them too.
	code, out, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--cc", "clang", "--tuning", recs, "-o", filepath.Join(dir, "c"))
	if code != 0 || !strings.Contains(out, "tuning: 10 of 10 layer(s) take their knobs from") {
		t.Errorf("compile --cc clang --tuning: exit %d: %s%s", code, out, errs)
	}

	// gcc's run adds its own records beside clang's: one file, both.
	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "-o", recs)
	if code != 0 {
		t.Fatalf("tune (gcc) into clang's file: exit %d: %s", code, errs)
	}
	byCC := map[string]int{}
	for _, r := range read() {
		byCC[r.Compiler]++
		if r.Compiler == "" && r.Default == clangDefaults[r.Kernel] {
			// gcc's AD and clang's differ in every kernel (203,247 against
			// 198,367 for the model): a copy of clang's count is no measurement.
			t.Errorf("gcc's record %q has clang's default count %d", r.Kernel, r.Default)
		}
	}
	if byCC["clang"] != 5 || byCC[""] != 5 {
		t.Errorf("records by compiler %v: want 5 clang and 5 gcc (gcc's written without a compiler)", byCC)
	}
	// A second clang run measures nothing: its records are there.
	code, out, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--cc", "clang", "--trials", "2", "-o", recs)
	if code != 0 || !strings.Contains(out, "0 measurements") || !strings.Contains(out, "5 kernel(s) known from") {
		t.Errorf("tune --cc clang again: exit %d: want nothing measured\n%s%s", code, out, errs)
	}

	// The Bazel batch of a clang run builds with clang.
	bz := filepath.Join(dir, "bazel")
	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--cc", "clang", "--trials", "2", "-o", filepath.Join(dir, "new.json"), "--bazel", bz)
	if code != 0 {
		t.Fatalf("tune --cc clang --bazel: exit %d: %s", code, errs)
	}
	build, err := os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(build), `"--cc",`) || !strings.Contains(string(build), `"clang",`) {
		t.Errorf("BUILD.bazel of a clang batch does not pass --cc clang")
	}
	cands, _ := filepath.Glob(filepath.Join(bz, "candidates", "*.json"))
	if len(cands) == 0 {
		t.Fatal("no candidates written")
	}
	cb, _ := os.ReadFile(cands[0])
	if !strings.Contains(string(cb), `"compiler": "clang"`) && !strings.Contains(string(cb), `"compiler":"clang"`) {
		t.Errorf("candidate %s: no compiler clang:\n%s", cands[0], cb)
	}
	res := filepath.Join(dir, "res.json")
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--measure", cands[0], "--result", res); code == 0 ||
		!strings.Contains(errs, "made for dsp on cortex-m4 with clang, this build is dsp on cortex-m4") {
		t.Errorf("a clang candidate measured by a gcc build: exit %d: %s", code, errs)
	}
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--cc", "clang", "--measure", cands[0], "--result", res); code != 0 {
		t.Errorf("--cc clang --measure: exit %d: %s", code, errs)
	}

	// The projects of compile --cc clang build with clang by default.
	proj := filepath.Join(dir, "mk")
	if code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--cc", "clang", "--project", "make", "-o", proj); code != 0 {
		t.Fatalf("compile --cc clang --project make: exit %d: %s", code, errs)
	}
	mk, _ := os.ReadFile(filepath.Join(proj, "Makefile"))
	if !strings.Contains(string(mk), "COMPILER  ?= clang\n") {
		t.Errorf("Makefile of compile --cc clang does not default to clang")
	}
	code, _, errs = mcugen(t, "compile", model, "--board", "nucleo-l4r5zi", "--cc", "clang", "--project", "zephyr", "-o", filepath.Join(dir, "z"))
	if code != 0 || !strings.Contains(errs, "--cc clang: the zephyr project builds with the compiler its build system picks") {
		t.Errorf("compile --cc clang --project zephyr: exit %d, want a note on the compiler: %s", code, errs)
	}
}

// A clang build for a Helium core allows clang's larger frames on the
// stack (pipeline.ClangStackFrames): VWW on an M55 with a 4 KiB stack,
// where compile had planned for gcc's frames, faulted on the stack limit
// (MSPLIM) under clang; now its schedules leave room and it runs bit-exact
// within the stack. gcc's build of the same board keeps its schedules.
func TestClangStackOnHelium40(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware under QEMU")
	}
	needQEMU(t)
	needtool.Need(t, "clang", "clang")
	model := filepath.Join(sharedModels(t), "vww", "vww_96_int8.tflite")
	bf := filepath.Join(t.TempDir(), "b.star")
	if err := os.WriteFile(bf, []byte(`board(name = "m55-4k-stack", description = "an AN547 with a 4 KiB stack", inherits = ["mps3-an547"], stack_bytes = 4096)`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stack := map[string]int64{}
	for _, cc := range []string{"gcc", "clang"} {
		code, out, errs := mcugen(t, "run", model, "--boards", bf, "--board", "m55-4k-stack", "--cc", cc, "--json")
		if code != 0 {
			t.Fatalf("run --cc %s: exit %d: %s", cc, code, errs)
		}
		var r struct {
			Stack int64 `json:"stack_bytes"`
			Match bool  `json:"match_reference"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("run --json: %v\n%s", err, out)
		}
		if !r.Match {
			t.Errorf("--cc %s: the outputs differ from the reference interpreter", cc)
		}
		if r.Stack <= 0 || r.Stack > 4096 {
			t.Errorf("--cc %s: the run took %d B of stack on a 4,096 B stack", cc, r.Stack)
		}
		stack[cc] = r.Stack
	}
	// gcc's VWW keeps its 2,688 B depthwise planes (frames of a few
	// hundred bytes on top); clang's leaves 2 KiB for its frames.
	if stack["gcc"] < 2688 {
		t.Errorf("gcc's build took %d B of stack: its planes alone are 2,688 B", stack["gcc"])
	}
}
