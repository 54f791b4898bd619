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
