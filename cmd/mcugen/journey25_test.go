package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bazelbuild/buildtools/build"

	"github.com/mcugen/mcugen/tune/measure"
)

// The Bazel targets measure what tune measures: they name the board as the
// user did, with a copy of its board file, so a soft-float board without an
// emulator is built with its own flags on its QEMU twin (review finding:
// the targets named the twin, mps2-an386, and counted its hard-float build),
// and they pass the flags that change the build (here --prefix and
// --flash-budget). A target's command, run from the Bazel directory with
// only the copied inputs, measures the candidate.
func TestBazelTargetsNameTheUsersBoard(t *testing.T) {
	dir := t.TempDir()
	boardFile := filepath.Join(dir, "my_boards.star")
	if err := os.WriteFile(boardFile, []byte(`board(
    name = "m4-soft",
    description = "a Cortex-M4 built soft-float, no emulator of its own",
    inherits = ["cortex-m4f"],
    fpu = "",
    float_abi = "soft",
    features = ["dsp"],
    memory = [
        region(name = "FLASH", origin = 0x08000000, length = 1024 * KiB, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 256 * KiB, holds = ["data", "arena"]),
    ],
)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip(err)
	}
	bz := filepath.Join(dir, "bz")
	code, stdout, stderr := mcugen(t, "tune", model, "--board", "m4-soft", "--boards", boardFile, "--bazel", bz,
		"--trials", "2", "--prefix", "kw", "--flash-budget", "900K", "-o", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Fatalf("tune --bazel: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "measurement targets") {
		t.Fatalf("stdout %q", stdout)
	}
	data, err := os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := build.ParseBuild("BUILD.bazel", data)
	if err != nil {
		t.Fatalf("BUILD.bazel does not parse: %v", err)
	}
	tests := f.Rules("sh_test")
	if len(tests) == 0 {
		t.Fatal("no sh_test targets")
	}
	copied := "boards-my_boards.star"
	if _, err := os.Stat(filepath.Join(bz, copied)); err != nil {
		t.Fatalf("the board file was not copied: %v", err)
	}
	args := tests[0].AttrStrings("args")
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			return ""
		}
		return args[i+1]
	}
	if flag("--board") != "m4-soft" || flag("--boards") != copied || flag("--prefix") != "kw" || flag("--flash-budget") != "900000" {
		t.Fatalf("target args %v: want --board m4-soft --boards %s --prefix kw --flash-budget 900000", args, copied)
	}
	if !strings.Contains(string(data), `"`+copied+`"`) || !strings.Contains(string(data), "data = [") {
		t.Fatalf("the board file is not among the targets' data:\n%s", data)
	}
	// Bazel's timeout is above mcugen's (60 s and the build: moderate), and
	// the directory is a module of its own.
	if got := tests[0].AttrString("timeout"); got != "moderate" {
		t.Errorf("timeout %q, want moderate", got)
	}
	if _, err := os.Stat(filepath.Join(bz, "MODULE.bazel")); err != nil {
		t.Error(err)
	}
	// measure.sh runs from its own directory wherever Bazel starts it (a
	// package inside a repository): a stand-in mcugen records where it
	// ran and what it was given.
	stub := filepath.Join(dir, "stub")
	os.Mkdir(stub, 0o755)
	for _, f := range []string{"measure.sh", "mcugen"} {
		data, _ := os.ReadFile(filepath.Join(bz, f))
		if f == "mcugen" {
			data = []byte("#!/bin/sh\necho \"$PWD $*\" > \"$STUB_LOG\"\n")
		}
		if err := os.WriteFile(filepath.Join(stub, f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log, outs := filepath.Join(dir, "stub.log"), filepath.Join(dir, "outs")
	sh := exec.Command("sh", append([]string{filepath.Join(stub, "measure.sh")}, args...)...)
	sh.Dir = t.TempDir()
	sh.Env = append(os.Environ(), "STUB_LOG="+log, "TEST_UNDECLARED_OUTPUTS_DIR="+outs)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("measure.sh: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(log)
	want := stub + " tune " + args[0] + " --measure " + args[1] + " --result " + outs + "/result.json " + strings.Join(args[2:], " ")
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("measure.sh ran\n%s\nwant\n%s", got, want)
	}
	// Run the first target's command from the Bazel directory, as the test
	// runner would (relative paths, inputs only from there).
	if testing.Short() {
		return
	}
	needQEMU(t)
	wd, _ := os.Getwd()
	if err := os.Chdir(bz); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	result := filepath.Join(dir, "result.json")
	cmd := append([]string{"tune", args[0], "--measure", args[1], "--result", result}, args[2:]...)
	code, _, stderr = mcugen(t, cmd...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
	}
	var r measure.Result
	raw, _ := os.ReadFile(result)
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != "" || r.Instructions <= 0 || r.Core != "cortex-m4 soft-float" { // its own key: a soft-float M4 (session 41)
		t.Fatalf("result %+v", r)
	}
}

// tune's flags that would be ignored or mean something odd are refused
// before any work (user-journey findings): --result without --measure (a
// whole tuning run followed), and --timeout 0 (no timeout at all).
func TestTuneRefusesIdleFlags(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--result", "r.json")
	oneErrorLine(t, "--result alone", code, errs, 2, "--result ", "r.json: it is where --measure writes", "give --measure CANDIDATE too")
	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--timeout", "0s")
	oneErrorLine(t, "--timeout 0s", code, errs, 2, "--timeout 0s", "want a positive duration")
}
