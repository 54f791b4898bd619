package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
)

// tune on the host: it counts no instructions and has no core a QEMU board
// shares, so tune refuses it at once, in one line, exit 1, and writes
// nothing (it used to measure every candidate, fail each, and exit 0).
func TestTuneRefusesHost(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out := filepath.Join(t.TempDir(), "host.json")
	code, stdout, errs := mcugen(t, "tune", cnn, "--board", "host", "--trials", "2", "-o", out)
	oneErrorLine(t, "tune --board host", code, errs, 1)
	want := "mcugen: tune: board host has no instruction counter: tune measures under QEMU; pick a board with an emulator (mcugen boards), or one whose core a QEMU board shares\n"
	if errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}
	if stdout != "" {
		t.Errorf("stdout %q: nothing may be measured", stdout)
	}
	for _, p := range []string{out, out + ".journal"} {
		if fileExists(p) {
			t.Errorf("%s was written", p)
		}
	}
}

// --trials 0 (or less) is bad usage, not the default 16.
func TestTuneTrialsMustBePositive(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out := filepath.Join(t.TempDir(), "r.json")
	for _, arg := range []string{"--trials=0", "--trials=-3"} {
		code, stdout, errs := mcugen(t, "tune", cnn, "--board", "mps2-an386", arg, "-o", out)
		oneErrorLine(t, "tune "+arg, code, errs, 2, "--trials")
		if stdout != "" || fileExists(out) {
			t.Errorf("tune %s: stdout %q, records written: %v", arg, stdout, fileExists(out))
		}
	}
}

// A run whose every measurement fails exits 1 with a one-line error (after
// the notes on each failure) and writes no records: here every firmware
// outlives a 1 ns timeout.
func TestTuneEveryMeasurementFailed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and starts QEMU")
	}
	cat, _ := boards.Load("")
	b, _ := cat.Get("mps2-an386")
	if err := runner.CheckTools(b); err != nil {
		t.Skip(err)
	}
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, errs := mcugen(t, "tune", mlp, "--board", "mps2-an386", "--trials", "1", "--timeout", "1ns", "-o", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "mcugen: tune: all 2 measurement(s) failed; no records written to "+out) {
		t.Errorf("last stderr line %q", last)
	}
	if fileExists(out) {
		t.Errorf("%s was written", out)
	}
}

// compile --tuning with records whose knobs the kernel does not read, or
// whose values the tuner never tries: one note per kernel naming the file,
// the kernel and the knobs; the rest of the record applies; the generated C
// is that of the records without the ignored knobs.
func TestTuningRecordsBadKnobsIgnored(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	cat, _ := boards.Load("")
	b, _ := cat.Get("mps2-an386")
	s, err := pipeline.Compile(cnn, pipeline.Options{Board: b})
	if err != nil {
		t.Fatal(err)
	}
	// A kernel reading block_oc, and another value of it the tuner tries.
	var sig string
	alt := 0
	for _, f := range s.Module.Funcs {
		def, ok := f.Knobs["block_oc"]
		if !ok {
			continue
		}
		for _, v := range tune.SpaceFor(s.Module.Target, f.Op, f.Knobs).Values("block_oc") {
			if v != def {
				alt = v
			}
		}
		node, _, _ := strings.Cut(f.Node, " + ")
		for _, n := range s.Graph.Nodes {
			if n.Name == node {
				sig = tune.Signature(s.Graph, n)
			}
		}
		break
	}
	if sig == "" || alt == 0 {
		t.Fatal("no kernel of cnn_int8 reads block_oc with a second value")
	}
	dir := t.TempDir()
	records := filepath.Join(dir, "records.json")
	compile := func(name string, knobs tune.Knobs) (string, map[string][]byte) {
		t.Helper()
		args := []string{"compile", cnn, "--board", "mps2-an386", "-o", filepath.Join(dir, name)}
		if knobs != nil {
			rs := tune.NewRecords()
			rs.Put(&tune.Record{Kernel: sig, Target: s.Module.Target, Core: b.CPU, Knobs: knobs, Search: "exhaustive"})
			if err := rs.Save(records); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--tuning", records)
		}
		code, _, errs := mcugen(t, args...)
		if code != 0 {
			t.Fatalf("compile %s: exit %d: %s", name, code, errs)
		}
		return errs, readDir(t, filepath.Join(dir, name))
	}
	_, untuned := compile("untuned", nil)
	errs, good := compile("good", tune.Knobs{"block_oc": alt})
	if errs != "" {
		t.Fatalf("valid record: stderr %q", errs)
	}
	if maps.EqualFunc(good, untuned, bytes.Equal) {
		t.Fatalf("block_oc=%d changed nothing: the test would show nothing", alt)
	}
	// compile says how many kernels the records tuned (it said nothing:
	// user-journey finding), in its text and in --json.
	code, out, _ := mcugen(t, "compile", cnn, "--board", "mps2-an386", "--tuning", records, "-o", filepath.Join(dir, "said"))
	if want := fmt.Sprintf("\ntuning: 1 of %d layer(s) take their knobs from %s\n", len(s.Module.Funcs), records); code != 0 || !strings.Contains(out, want) {
		t.Errorf("compile --tuning: exit %d, stdout lacks %q:\n%s", code, want, out)
	}
	code, out, _ = mcugen(t, "compile", cnn, "--board", "mps2-an386", "--tuning", records, "-o", filepath.Join(dir, "saidjson"), "--json")
	if code != 0 || !strings.Contains(out, `"tuned_kernels": 1,`) {
		t.Errorf("compile --tuning --json: exit %d\n%s", code, out)
	}
	errs, mixed := compile("mixed", tune.Knobs{"block_oc": alt, "bogus": 3, "unroll_k": -5})
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("want one note for the kernel, got %q", errs)
	}
	for _, frag := range []string{"tuning records " + records + ": ", sig, "knob bogus=3 (its schedule does not read it)", "knob unroll_k=-5 (not one of "} {
		if !strings.Contains(errs, frag) {
			t.Errorf("note %q lacks %q", errs, frag)
		}
	}
	if strings.Contains(errs, "block_oc") {
		t.Errorf("note %q names the valid knob", errs)
	}
	if !maps.EqualFunc(mixed, good, bytes.Equal) {
		t.Error("the ignored knobs changed the generated C")
	}
	errs, bad := compile("bad", tune.Knobs{"block_oc": 1000, "bogus": 3})
	if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "knob block_oc=1000 (not one of ") || !strings.Contains(errs, "knob bogus=3 ") {
		t.Errorf("want one note naming block_oc=1000 and bogus, got %q", errs)
	}
	if !maps.EqualFunc(bad, untuned, bytes.Equal) {
		t.Error("a record of ignored knobs changed the generated C")
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = data
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("%s: %v (%d files)", dir, err, len(out))
	}
	return out
}
