package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// mergeModel compiles the test model for mps2-an386 and returns its
// kernels (at least two), as the merge tests take them.
func mergeModel(t *testing.T) (*boards.Board, pipeline.Options, *pipeline.State, []*Kernel) {
	t.Helper()
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b, Version: "test"}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) < 2 {
		t.Fatalf("%d kernels, %v", len(kernels), err)
	}
	return b, opt, s, kernels
}

// --merge keeps a record the file already holds where it measured fewer
// instructions than the batch's best, with a note, and takes the batch's
// where it is better (review finding: a 500-instruction record was
// replaced by a batch's 607 in silence, though TUNING.md says existing
// records stay).
func TestMergeKeepsABetterRecord52(t *testing.T) {
	b, opt, s, kernels := mergeModel(t)
	k0, k1 := kernels[0], kernels[1]
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	rs := tune.NewRecords()
	for _, c := range []struct {
		k *Kernel
		n int64
	}{{k0, 500}, {k1, 5000}} {
		rs.Put(&tune.Record{Kernel: c.k.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: c.k.Defaults.Clone(), Instructions: c.n, Default: c.n + 1, Trials: 16, Search: "anneal", Version: "test"})
	}
	if err := rs.Save(out); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	for i, c := range []struct {
		k *Kernel
		n int64
	}{{k0, 607}, {k1, 900}} {
		p := filepath.Join(res, "k"+string(rune('0'+i)), "result.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := writeJSON(p, Result{Candidate: Candidate{Kernel: c.k.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: c.k.Defaults.Clone(), Default: true}, Board: b.Name, Instructions: c.n}); err != nil {
			t.Fatal(err)
		}
	}
	var notes []string
	cfg := Config{Opt: opt, Core: b.CPU, Out: out, Note: func(n string) { notes = append(notes, n) }, Version: "test"}
	n, err := Merge(s, cfg, res)
	if err != nil || n != 1 {
		t.Fatalf("merged %d (%v), want 1 (k1's); notes %q", n, err, notes)
	}
	got, _, err := tune.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	r0 := got.Get(k0.Signature, s.Module.Target, b.CPU, k0.Defaults)
	r1 := got.Get(k1.Signature, s.Module.Target, b.CPU, k1.Defaults)
	if r0 == nil || r0.Instructions != 500 || r0.Search != "anneal" {
		t.Errorf("k0's record %+v: want the file's 500", r0)
	}
	if r1 == nil || r1.Instructions != 900 || r1.Search != "batch" {
		t.Errorf("k1's record %+v: want the batch's 900", r1)
	}
	if j := strings.Join(notes, "\n"); !strings.Contains(j, "kernel "+k0.Signature+": the record in "+out+" measured 500 instructions against this batch's best 607: kept") {
		t.Errorf("notes %q", notes)
	}
	// A batch no better anywhere writes nothing and is no error.
	if n, err := Merge(s, cfg, res); err != nil || n != 0 {
		t.Errorf("second merge: %d, %v; want 0, nil", n, err)
	}
}

// A model named with a leading '-' is copied under a name measure.sh's
// command line cannot take for a flag (review finding: ./-m.tflite made
// every target fail with "unknown flag -m").
func TestBazelModelWithLeadingDash52(t *testing.T) {
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(testModel)
	if err != nil {
		t.Fatal(err)
	}
	dash := filepath.Join(dir, "--m.tflite")
	if err := os.WriteFile(dash, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Opt: opt, Core: b.CPU, Trials: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(string) {}}
	bz := filepath.Join(dir, "bz")
	if _, err := WriteBazel(s, cfg, dash, bz, BazelInputs{}); err != nil {
		t.Fatal(err)
	}
	build, err := os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bz, "_m.tflite")); err != nil || !strings.Contains(string(build), `"_m.tflite"`) || strings.Contains(string(build), "-m.tflite") {
		t.Errorf("the model's copy: %v\n%s", err, build)
	}
}

// A kernel of the model with no result in the batch and no record in the
// file is said, not left untuned in silence (review finding).
func TestMergeNamesKernelsWithoutResults52(t *testing.T) {
	b, opt, s, kernels := mergeModel(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	p := filepath.Join(res, "k0", "result.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	k0 := kernels[0]
	if err := writeJSON(p, Result{Candidate: Candidate{Kernel: k0.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: k0.Defaults.Clone(), Default: true}, Board: b.Name, Instructions: 700}); err != nil {
		t.Fatal(err)
	}
	var notes []string
	out := filepath.Join(dir, "r.json")
	cfg := Config{Opt: opt, Core: b.CPU, Out: out, Note: func(n string) { notes = append(notes, n) }, Version: "test"}
	if n, err := Merge(s, cfg, res); err != nil || n != 1 {
		t.Fatalf("merged %d, %v", n, err)
	}
	j := strings.Join(notes, "\n")
	for _, k := range kernels[1:] {
		if want := "kernel " + k.Signature + ": no result under " + res + " and no record in " + out; !strings.Contains(j, want) {
			t.Errorf("no note %q in %q", want, notes)
		}
	}
	if strings.Contains(j, "kernel "+k0.Signature+": no result") {
		t.Errorf("the measured kernel was named: %q", notes)
	}
}
