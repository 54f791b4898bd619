package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// TestBazelArgQuotes: an args entry is left alone when Bazel's Make
// substitution and shell splitting leave it as it is, and otherwise
// single-quoted with its $ doubled, so sh receives it whole.
func TestBazelArgQuotes(t *testing.T) {
	for in, want := range map[string]string{
		"model.tflite":         "model.tflite",
		"--board":              "--board",
		"1m0s":                 "1m0s",
		"model/block_1/*":      "'model/block_1/*'",
		"my model$x.tflite":    "'my model$$x.tflite'",
		"it's":                 `'it'\''s'`,
		"":                     "''",
		"a;b/Relu;c/BiasAdd":   "'a;b/Relu;c/BiasAdd'",
		"cortex-m4,mps2-an386": "cortex-m4,mps2-an386",
	} {
		if got := bazelArg(in); got != want {
			t.Errorf("bazelArg(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriteBazelRefusesForeignDirectory: a directory that holds a BUILD
// file mcugen did not write, or files without one, is left as it was; a
// directory an earlier --bazel run wrote is written again; the model is
// copied under a name a label takes.
func TestWriteBazelRefusesForeignDirectory(t *testing.T) {
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{Opt: opt, Core: b.CPU, Trials: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(string) {}}

	mine := filepath.Join(dir, "mine")
	os.MkdirAll(filepath.Join(mine, "candidates"), 0o755)
	os.WriteFile(filepath.Join(mine, "candidates", "mine.txt"), []byte("precious"), 0o644)
	os.WriteFile(filepath.Join(mine, "BUILD.bazel"), []byte(`cc_library(name = "mine")`+"\n"), 0o644)
	if _, err := WriteBazel(s, cfg, testModel, mine, BazelInputs{}); err == nil || !strings.Contains(err.Error(), "a BUILD.bazel mcugen did not write") {
		t.Errorf("a user's BUILD file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "candidates", "mine.txt")); err != nil || string(b) != "precious" {
		t.Errorf("the user's candidates/ was touched: %q, %v", b, err)
	}
	loose := filepath.Join(dir, "loose")
	os.MkdirAll(loose, 0o755)
	os.WriteFile(filepath.Join(loose, "notes.txt"), []byte("x"), 0o644)
	if _, err := WriteBazel(s, cfg, testModel, loose, BazelInputs{}); err == nil || !strings.Contains(err.Error(), "no BUILD.bazel written by mcugen tune --bazel") {
		t.Errorf("files without a BUILD file: %v", err)
	}

	odd := filepath.Join(dir, "my model$x.tflite")
	data, err := os.ReadFile(testModel)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(odd, data, 0o644)
	bz := filepath.Join(dir, "bz")
	for run := 0; run < 2; run++ { // the second over the first's output
		if _, err := WriteBazel(s, cfg, odd, bz, BazelInputs{}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	build, err := os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bz, "my_model_x.tflite")); err != nil || !strings.Contains(string(build), `"my_model_x.tflite"`) || strings.Contains(string(build), "my model") {
		t.Errorf("the model's copy: %v\n%s", err, build)
	}
}

// TestMergeNeedsTheDefaults: a kernel whose batch lacks the default
// candidate's result is not recorded (its best could be slower than the
// defaults); an unreadable result.json (a dangling link) is skipped with a
// note, not the end of the merge.
func TestMergeNeedsTheDefaults(t *testing.T) {
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
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	put := func(name string, r Result) {
		p := filepath.Join(res, name, "result.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := writeJSON(p, r); err != nil {
			t.Fatal(err)
		}
	}
	k0, k1 := kernels[0], kernels[1]
	put("k0_def", Result{Candidate: Candidate{Kernel: k0.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: k0.Defaults.Clone(), Default: true}, Board: b.Name, Instructions: 1000})
	// k1: only a non-default candidate.
	other := k1.Defaults.Clone()
	for i := 0; i < k1.Space.Size(); i++ {
		if i != k1.Space.Index(k1.Defaults) {
			other = k1.Space.At(i)
			break
		}
	}
	put("k1_c001", Result{Candidate: Candidate{Kernel: k1.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: other}, Board: b.Name, Instructions: 900})
	os.MkdirAll(filepath.Join(res, "broken"), 0o755)
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(res, "broken", "result.json")); err != nil {
		t.Fatal(err)
	}
	var notes []string
	cfg := Config{Opt: opt, Core: b.CPU, Out: filepath.Join(dir, "r.json"), Note: func(n string) { notes = append(notes, n) }, Version: "test"}
	n, err := Merge(s, cfg, res)
	if err != nil || n != 1 {
		t.Fatalf("merged %d (%v), want 1; notes %q", n, err, notes)
	}
	recs, _, err := tune.Load(cfg.Out)
	if err != nil || recs.Len() != 1 || recs.Records[0].Kernel != k0.Signature {
		t.Fatalf("records %v (%v): want k0's alone", recs, err)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "kernel "+k1.Signature+": no result for its default knobs") || !strings.Contains(joined, "broken/result.json") {
		t.Errorf("notes %q", notes)
	}
}
