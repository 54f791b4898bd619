package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// Records whose flash the build does not have go back to the defaults
// (fitTuned): IC's Winograd records under a 250 KB flash budget, where the
// fit pass would keep the largest Winograd kernel int8 and run its direct
// form with knobs chosen for Winograd (a user journey: one layer 58%
// slower than untuned). After fitTuned the fit pass overrides no record
// that asks for more than the defaults, and the untuned build's own fit
// (its int8 kernels) is left alone.
func TestFitTunedDropsRecordsThatDoNotFit(t *testing.T) {
	shared, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	model := filepath.Join(shared, "ic/pretrainedResnet_quant.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny checks skipped")
	}
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b, FlashBudget: 250_000, Version: "test", Warn: func(string) {}}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	kernels, err := Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	// The committed records hold Winograd for IC's four stride-1 layers.
	data, err := os.ReadFile(mlperfRecords)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	recs, _, err := tune.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*job
	wino := 0
	for _, k := range kernels {
		jobs = append(jobs, &job{k: k})
		if r := recs.Get(k.Signature, "dsp", b.CPU); r != nil && r.Knobs["winograd"] == 1 {
			wino++
		}
	}
	if wino != 4 {
		t.Fatalf("%d Winograd records for IC in %s, want 4", wino, mlperfRecords)
	}
	var notes []string
	cfg := Config{Opt: opt, Core: b.CPU, Out: out, Note: func(n string) { notes = append(notes, n) }}
	if err := fitTuned(s, cfg, recs, jobs, "dsp", &Report{}); err != nil {
		t.Fatal(err)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "need more flash than the flash budget leaves") {
		t.Fatalf("notes %q: want one saying a record does not fit the budget", notes)
	}
	var warns []string
	o := opt
	o.Tuning, o.Warn = out, func(w string) { warns = append(warns, w) }
	tuned, err := pipeline.Compile(model, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if strings.Contains(w, "asked for int16 weights") {
			t.Errorf("after fitTuned the fit pass still overrides a record: %s", w)
		}
	}
	left := 0
	for _, k := range kernels {
		if r := recs.Get(k.Signature, "dsp", b.CPU); r != nil && r.Knobs["winograd"] == 1 {
			left++
		}
	}
	if left == 0 || left == 4 || tuned.Module.ConstBytes() > 250_000 {
		t.Errorf("%d Winograd records left of 4, constants %d B: want some dropped, some kept, within the budget", left, tuned.Module.ConstBytes())
	}
}

// --merge follows a symbolic link to the results (bazel-testlogs is one),
// keeps only results that tune could have made for this model and build
// (its kernels, its target and core, knob values in the kernel's space),
// and finding no result at all is an error, not an empty records file
// (user-journey findings).
func TestMergeChecksResults(t *testing.T) {
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b, Version: "test"}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) == 0 {
		t.Fatal(err)
	}
	k := kernels[0]
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	put := func(name string, r Result) {
		p := filepath.Join(res, name, "result.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := writeJSON(p, r); err != nil {
			t.Fatal(err)
		}
	}
	good := Result{Candidate: Candidate{Kernel: k.Signature, Target: s.Module.Target, Core: b.CPU, Knobs: k.Defaults.Clone(), Default: true}, Board: b.Name, Instructions: 1000}
	put("good", good)
	bad := good
	bad.Knobs = k.Defaults.Clone()
	bad.Knobs["bogus"] = 1
	bad.Default, bad.Instructions = false, 10
	put("bogus", bad)
	other := good
	other.Core, other.Instructions = "cortex-m7", 5
	put("m7", other)
	unknown := good
	unknown.Kernel, unknown.Instructions = "FullyConnected int8 1x999 #deadbeef", 5
	put("unknown", unknown)
	link := filepath.Join(dir, "bazel-testlogs")
	if err := os.Symlink(res, link); err != nil {
		t.Fatal(err)
	}
	var notes []string
	cfg := Config{Opt: opt, Core: b.CPU, Out: filepath.Join(dir, "r.json"), Note: func(n string) { notes = append(notes, n) }, Version: "test"}
	n, err := Merge(s, cfg, link)
	if err != nil || n != 1 {
		t.Fatalf("merged %d (%v), want 1", n, err)
	}
	recs, _, err := tune.Load(cfg.Out)
	if err != nil || recs.Len() != 1 || recs.Records[0].Instructions != 1000 {
		t.Fatalf("records %v (%v): want the one valid result", recs, err)
	}
	skipped := 0
	for _, n := range notes {
		if strings.HasSuffix(n, "; skipped") {
			skipped++
		}
	}
	if skipped != 3 {
		t.Errorf("notes %q: want 3 results skipped", notes)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Merge(s, cfg, empty); err == nil || !strings.Contains(err.Error(), "no result.json") {
		t.Errorf("merging an empty directory: %v, want an error", err)
	}
}
