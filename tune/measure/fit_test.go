package measure

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/internal/fileio"
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
//
// The same on a board of 256 KiB flash measured on a QEMU stand-in
// (Config.FitBoard): the board's flash decides, not the stand-in's 4 MiB
// (review finding: a small board without an emulator kept every Winograd
// record, and compile then overrode one).
func TestFitTunedDropsRecordsThatDoNotFit(t *testing.T) {
	cat, err := boards.Load("../../testdata/boards/small_flash.star")
	if err != nil {
		t.Fatal(err)
	}
	small, err := cat.Get("m4-256k")
	if err != nil {
		t.Fatal(err)
	}
	b := board(t, "mps2-an386")
	t.Run("budget", func(t *testing.T) {
		fitTunedCase(t, pipeline.Options{Board: b, FlashBudget: 250_000, Version: "test", Warn: func(string) {}}, nil, "the flash budget")
	})
	t.Run("stand-in", func(t *testing.T) {
		fitTunedCase(t, pipeline.Options{Board: b, Version: "test", Warn: func(string) {}}, small, "m4-256k's flash")
	})
}

func fitTunedCase(t *testing.T, opt pipeline.Options, fitBoard *boards.Board, limit string) {
	shared, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	model := filepath.Join(shared, "ic/pretrainedResnet_quant.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny checks skipped")
	}
	b := opt.Board
	fitOpt := opt
	if fitBoard != nil {
		fitOpt.Board = fitBoard
	}
	s, err := pipeline.Compile(model, fitOpt)
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
		if r := recs.Get(k.Signature, "dsp", b.CPU, k.Defaults); r != nil && r.Knobs["winograd"] == 1 {
			wino++
		}
	}
	if wino != 4 {
		t.Fatalf("%d Winograd records for IC in %s, want 4", wino, mlperfRecords)
	}
	var notes []string
	cfg := Config{Opt: opt, FitBoard: fitBoard, Core: b.CPU, Out: out, Note: func(n string) { notes = append(notes, n) }}
	if err := fitTuned(s, cfg, recs, jobs, "dsp", &Report{}); err != nil {
		t.Fatal(err)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "winograd=1") || !strings.Contains(notes[0], "need more flash than "+limit+" leaves") {
		t.Fatalf("notes %q: want one saying a Winograd record does not fit %s", notes, limit)
	}
	o := fitOpt
	o.Tuning = out
	tuned, err := pipeline.Compile(model, o)
	if err != nil {
		t.Fatal(err)
	}
	// No kernel the budget keeps int8 has a Winograd record left for its
	// int16 layout: fitTuned dropped those (kept, the kernel would run
	// int8 with its defaults in the budgeted build).
	byName := map[string]*graph.Node{}
	for _, n := range tuned.Graph.Nodes {
		byName[n.Name] = n
	}
	for _, f := range tuned.Module.Funcs {
		node, _, _ := strings.Cut(f.Node, " + ")
		if n := byName[node]; n != nil && f.Knobs["weights"] == 8 {
			if r := recs.Get(tune.Signature(tuned.Graph, n), "dsp", b.CPU, tune.Knobs{"weights": 16}); r != nil && r.Knobs["winograd"] == 1 {
				t.Errorf("after fitTuned kernel %s is kept int8 and its Winograd record stays: %v", f.Name, r.Knobs)
			}
		}
	}
	left := 0
	for _, k := range kernels {
		if r := recs.Get(k.Signature, "dsp", b.CPU, k.Defaults); r != nil && r.Knobs["winograd"] == 1 {
			left++
		}
	}
	if left == 0 || left == 4 || tuned.Module.ConstBytes() > 256_000 {
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
	// A merge waits for a tune run (or merge) holding the records' lock,
	// and says so: it took no lock, and the last to write lost the other's
	// records (tuning journey).
	unlock, err := fileio.Lock(cfg.Out+".lock", func() { t.Error("the test's lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	waiting, merged := make(chan string, 1), make(chan error, 1)
	cfg.Note = func(n string) {
		if strings.Contains(n, "waiting") {
			waiting <- n
		}
	}
	go func() { _, err := Merge(s, cfg, link); merged <- err }()
	select {
	case n := <-waiting:
		if !strings.Contains(n, cfg.Out+": another mcugen tune is writing these records") {
			t.Errorf("note %q", n)
		}
	case err := <-merged:
		t.Fatalf("merged (%v) while the records were locked", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the merge neither waited nor finished")
	}
	// A directory without results is said at once, lock or no lock.
	go func() { _, err := Merge(s, cfg, empty); merged <- err }()
	select {
	case err := <-merged:
		if err == nil || !strings.Contains(err.Error(), "no result.json") {
			t.Errorf("merging an empty directory under the lock: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("merging an empty directory waited for the lock")
	}
	unlock()
	if err := <-merged; err != nil {
		t.Errorf("merge after the lock was released: %v", err)
	}
}

// A run interrupted in its whole-model checks leaves its journal (the
// records are all written by then); the next run, with nothing left to
// measure, finishes those checks for the journal's kernels and removes it,
// where it used to return at once and leave records nobody had checked
// (review finding).
func TestRerunFinishesInterruptedChecks(t *testing.T) {
	b, opt, s := qemuModel(t)
	dir := t.TempDir()
	var notes []string
	cfg := Config{Opt: opt, Trials: 2, Jobs: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Version: "test",
		Note: func(n string) { notes = append(notes, n) }}
	if _, err := Run(s, cfg); err != nil {
		t.Fatal(err)
	}
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) == 0 {
		t.Fatal(err)
	}
	// As an interruption in the checks leaves it: a line for one kernel.
	line := fmt.Sprintf(`{"key":%q,"knobs":{},"instructions":1}`+"\n", tune.Key(kernels[0].Signature, s.Module.Target, b.CPU))
	if err := os.WriteFile(JournalPath(cfg.Out), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	notes = nil
	rep, err := Run(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trials != 0 || rep.ModelUntuned <= 0 || rep.ModelTuned > rep.ModelUntuned {
		t.Errorf("re-run: %d measurements, model %d untuned, %d tuned: want no measurement and the whole-model check", rep.Trials, rep.ModelUntuned, rep.ModelTuned)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "and the records hold all its kernels: checking its 1 kernel(s) in the whole model now") {
		t.Errorf("notes %q", notes)
	}
	if _, err := os.Stat(JournalPath(cfg.Out)); err == nil {
		t.Error("the journal is still there")
	}
	// With no journal a re-run measures and checks nothing.
	rep, err = Run(s, cfg)
	if err != nil || rep.Trials != 0 || rep.ModelUntuned != 0 {
		t.Errorf("third run: %v, %d measurements, model %d: want neither", err, rep.Trials, rep.ModelUntuned)
	}
}

// copyDir follows a symbolic link as the root and as a file (review
// finding: a linked calibration directory, or one of linked .npy files,
// was copied as nothing, and every Bazel target then lacked its inputs).
func TestCopyDirFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(filepath.Join(real, "sub"), 0o755)
	os.WriteFile(filepath.Join(real, "a.npy"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(real, "sub", "b.npy"), []byte("b"), 0o644)
	links := filepath.Join(dir, "links")
	os.Mkdir(links, 0o755)
	if err := os.Symlink(filepath.Join(real, "a.npy"), filepath.Join(links, "a.npy")); err != nil {
		t.Skip(err)
	}
	os.Symlink(real, filepath.Join(dir, "linked"))
	for _, c := range []struct {
		src  string
		want []string
	}{{filepath.Join(dir, "linked"), []string{"a.npy", "sub/b.npy"}}, {links, []string{"a.npy"}}} {
		dst := filepath.Join(t.TempDir(), "calib")
		if err := copyDir(c.src, dst); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if b, err := os.ReadFile(filepath.Join(dst, w)); err != nil || len(b) != 1 {
				t.Errorf("%s: %s not copied (%v)", c.src, w, err)
			}
		}
	}
}

// Options.KeepInt8 wins over tuning records, as the fit pass does: a QEMU
// stand-in running a board's build holds the board's int8 kernels so (as
// knobs, IC's Winograd record won, and test refused the tuned build on a
// board without an emulator: user-journey finding).
func TestKeepInt8WinsOverRecords(t *testing.T) {
	shared, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	model := filepath.Join(shared, "ic/pretrainedResnet_quant.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny checks skipped")
	}
	opt := pipeline.Options{Board: board(t, "mps2-an386"), Tuning: mlperfRecords, Version: "test", Warn: func(string) {}}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	var wino string
	for _, f := range s.Module.Funcs {
		if f.Knobs["winograd"] == 1 {
			wino = f.Name
		}
	}
	if wino == "" {
		t.Fatal("no Winograd kernel in the tuned IC")
	}
	opt.KeepInt8 = []string{wino}
	if s, err = pipeline.Compile(model, opt); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Module.Funcs {
		if f.Name == wino && f.Knobs["weights"] != 8 {
			t.Errorf("%s: weights=%d winograd=%d, want int8 weights (KeepInt8) over the record", wino, f.Knobs["weights"], f.Knobs["winograd"])
		}
	}
}

// --resume takes a journal's measurements only for the kernel as this run
// builds it: a kernel kept int8 by --flash-budget is another kernel than
// the same one with int16 weights, so an unbudgeted run's journal lines for
// it are not its measurements (they were taken as such, and the record
// said weights=8 with the int16 count: user-journey finding).
func TestResumeKeepsTheWeightsLayout(t *testing.T) {
	ad := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny", "ad", "ad01_int8.tflite")
	if _, err := os.Stat(ad); err != nil {
		t.Skip("../shared/models is absent")
	}
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b, Version: "test", FlashBudget: 310_000}
	s, err := pipeline.Compile(ad, opt)
	if err != nil {
		t.Fatal(err)
	}
	kernels, err := Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	var lean *Kernel
	for _, k := range kernels {
		if k.Defaults["weights"] == 8 {
			lean = k
			break
		}
	}
	if lean == nil {
		t.Fatal("no kernel kept int8 under 310,000 B")
	}
	knobs := lean.Space.At(0)
	byKey := map[string]*job{tune.KeyFor(lean.Signature, "dsp", b.CPU, lean.Defaults): newJob(lean, 4)}
	int16 := maps.Clone(knobs)
	int16["weights"] = 16
	dir := t.TempDir()
	cfg := Config{Opt: opt, Out: filepath.Join(dir, "r.json"), Resume: true, Note: func(string) {}}
	code := candidateCode(t, lean, knobs, opt)
	for _, c := range []struct {
		key  string
		want int
	}{
		{tune.KeyFor(lean.Signature, "dsp", b.CPU, int16), 0},         // the unbudgeted run's
		{tune.KeyFor(lean.Signature, "dsp", b.CPU, lean.Defaults), 1}, // this run's
	} {
		line, _ := json.Marshal(journalLine{Key: c.key, Knobs: knobs, Instructions: 1000, Code: code})
		if err := os.WriteFile(JournalPath(cfg.Out), append(line, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := &Report{}
		if err := replayJournal(cfg, byKey, nil, rep); err != nil {
			t.Fatal(err)
		}
		if rep.Resumed != c.want {
			t.Errorf("journal line keyed %q: %d resumed, want %d", c.key, rep.Resumed, c.want)
		}
	}
}

// A kernel whose tuned knobs make the whole model slower goes back to its
// defaults in the records and in the report too: the table and --json
// showed the discarded choice (tuning journey finding). The forged record
// gives the 1x1 convolution one pixel and one channel a block, no fused
// helper and a short unroll (14,383 instructions for the model where its
// defaults give 12,965), and claims them faster.
func TestSlowerModelRevertsReport(t *testing.T) {
	b, opt, s := qemuModel(t)
	kernels, err := Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	var conv *Kernel
	for _, k := range kernels {
		if strings.HasPrefix(k.Signature, "Conv2D int8 1x4x4x8,cp8x1x1x8") {
			conv = k
		}
	}
	if conv == nil {
		t.Fatalf("no 1x1 convolution among %d kernels", len(kernels))
	}
	dir := t.TempDir()
	cfg := Config{Opt: opt, Core: b.CPU, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Version: "test", Note: func(n string) { t.Log(n) }}
	slow := conv.Defaults.Clone()
	for k, v := range map[string]int{"block_oc": 1, "block_px": 1, "gemm_fuse": 0, "requant_shift": 0, "small_k": 0, "unroll_k": 4} {
		if _, ok := slow[k]; !ok {
			t.Fatalf("knob %s: not among the kernel's %s", k, conv.Defaults)
		}
		slow[k] = v
	}
	recs := tune.NewRecords()
	recs.Put(&tune.Record{Kernel: conv.Signature, Target: s.Module.Target, Core: b.CPU, Board: b.Name, Knobs: slow, Instructions: 100, Default: 1668})
	if err := recs.Save(cfg.Out); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Kernels: []KernelResult{{Kernel: conv.Signature, Knobs: slow.Clone(), Instructions: 100, Default: 1668}}}
	if err := keepModelNoSlower(s, cfg, recs, []*job{{k: conv}}, s.Module.Target, rep); err != nil {
		t.Fatal(err)
	}
	k := rep.Kernels[0]
	if k.Reverted != "the whole model" || k.Knobs.String() != conv.Defaults.String() || k.Instructions != 1668 {
		t.Errorf("report: reverted %q, knobs %s, %d instructions; want the defaults %s and 1668", k.Reverted, k.Knobs, k.Instructions, conv.Defaults)
	}
	if r := recs.Get(conv.Signature, s.Module.Target, b.CPU, conv.Defaults); r == nil || r.Knobs.String() != conv.Defaults.String() {
		t.Errorf("record: %+v, want the defaults", r)
	}
	if rep.ModelTuned > rep.ModelUntuned {
		t.Errorf("model %d tuned > %d untuned", rep.ModelTuned, rep.ModelUntuned)
	}
}
