package measure

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bazelbuild/buildtools/build"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
)

const testModel = "../../testdata/tflite/cnn_int8.tflite"

func board(t *testing.T, name string) *boards.Board {
	cat, err := boards.Load("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := cat.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// qemuModel is mps2-an386, its options and testModel compiled for it, for
// a test that builds and runs firmware under QEMU (skipped with -short, and
// without the tools but under CI, where that fails).
func qemuModel(t *testing.T) (*boards.Board, pipeline.Options, *pipeline.State) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	b := board(t, "mps2-an386")
	if err := runner.CheckTools(b); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b, opt, s
}

func TestIsolate(t *testing.T) {
	s, err := pipeline.RunUntil(testModel, pipeline.Options{Board: board(t, "mps2-an386")}, "plan")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Graph.Nodes {
		sg, err := Isolate(s.Graph, n)
		if err != nil {
			continue
		}
		if len(sg.Nodes) != 1 || len(sg.Outputs) != len(n.Outputs) {
			t.Fatalf("node %s: %d nodes, %d outputs", n.Name, len(sg.Nodes), len(sg.Outputs))
		}
		if tune.Signature(sg, sg.Nodes[0]) != tune.Signature(s.Graph, n) {
			t.Fatalf("node %s: the one-node graph changed the signature", n.Name)
		}
		for _, in := range sg.Inputs {
			if sg.Tensor(in).IsConst() {
				t.Fatalf("node %s: constant %s became an input", n.Name, in)
			}
		}
	}
}

// TestTuneEndToEnd tunes a small int8 CNN on mps2-an386 under QEMU: every
// record is no worse than the defaults, a second run measures nothing, an
// interrupted run resumes to the same records, the tuned model stays
// bit-exact and costs no more than the untuned one.
func TestTuneEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	b := board(t, "mps2-an386")
	if err := runner.CheckTools(b); err != nil {
		t.Skip(err)
	}
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{Opt: opt, Trials: 4, Jobs: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Version: "test"}
	rep, err := Run(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Kernels) == 0 || rep.Trials == 0 || rep.Failed != 0 {
		t.Fatalf("report %+v", rep)
	}
	recs, notes, err := tune.Load(cfg.Out)
	if err != nil || len(notes) > 0 || recs.Len() != len(rep.Kernels) {
		t.Fatalf("records: %v %v %d", err, notes, recs.Len())
	}
	for _, r := range recs.Records {
		if r.Instructions <= 0 || r.Instructions > r.Default || r.Trials < 1 || r.Core != "cortex-m4" {
			t.Fatalf("record %+v", r)
		}
	}
	if _, err := os.Stat(JournalPath(cfg.Out)); err == nil {
		t.Fatal("a finished run left its journal")
	}

	// Second run: everything is known.
	rep2, err := Run(s, cfg)
	if err != nil || rep2.Trials != 0 || rep2.Skipped != len(rep.Kernels) {
		t.Fatalf("re-run measured %d (skipped %d): %v", rep2.Trials, rep2.Skipped, err)
	}

	// A record whose knobs its kernel cannot take (edited by hand) is tuned again,
	// with a note, and the others are still known.
	edited, _, _ := tune.Load(cfg.Out)
	bad := edited.Records[0]
	bad.Knobs = bad.Knobs.Clone()
	bad.Knobs["bogus"] = 1
	if err := edited.Save(cfg.Out); err != nil {
		t.Fatal(err)
	}
	var notes2 []string
	cfgNotes := cfg
	cfgNotes.Note = func(n string) { notes2 = append(notes2, n) }
	rep4, err := Run(s, cfgNotes)
	if err != nil || rep4.Trials == 0 || rep4.Skipped != len(rep.Kernels)-1 {
		t.Fatalf("edited record: measured %d, skipped %d of %d: %v", rep4.Trials, rep4.Skipped, len(rep.Kernels), err)
	}
	if len(notes2) != 1 || !strings.Contains(notes2[0], "knob bogus=1 (its schedule does not read it): tuning it again") {
		t.Fatalf("notes %q", notes2)
	}
	if again, _, _ := tune.Load(cfg.Out); again.Get(bad.Kernel, bad.Target, bad.Core, bad.Knobs).Knobs["bogus"] != 0 {
		t.Fatal("the edited record's bad knob survived the re-run")
	}

	// Interrupted after 3 measurements, then resumed.
	cfg2 := cfg
	cfg2.Out = filepath.Join(dir, "r2.json")
	cfg2.stopAfter = 3
	if _, err := Run(s, cfg2); err != errInterrupted {
		t.Fatalf("want the interruption, got %v", err)
	}
	if _, err := os.Stat(JournalPath(cfg2.Out)); err != nil {
		t.Fatalf("no journal after an interruption: %v", err)
	}
	// Another core's measurement in the journal is kept for its own run,
	// with a note (it was dropped until a review found another model's
	// interrupted run losing its journal to this one).
	jf, _ := os.OpenFile(JournalPath(cfg2.Out), os.O_APPEND|os.O_WRONLY, 0o644)
	fmt.Fprintln(jf, `{"key":"Conv2D int8 other|dsp|cortex-m7","knobs":{"a":1},"instructions":5}`)
	jf.Close()
	cfg2.stopAfter, cfg2.Resume = 0, true
	var notes3 []string
	cfg2.Note = func(n string) { notes3 = append(notes3, n) }
	rep3, err := Run(s, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes3, "\n"), "1 measurement(s) of kernels this run does not tune (another model, core or board) are kept for that run's --resume") {
		t.Errorf("resume notes %q: no note of the other core's measurement", notes3)
	}
	if left, _, _ := readJournal(JournalPath(cfg2.Out)); len(left) != 1 || left[0].Key != "Conv2D int8 other|dsp|cortex-m7" {
		t.Errorf("the finished run left %v in its journal; want the other core's line alone", left)
	}
	// Which candidates are copies depends on the ones in flight, so the
	// two runs' counts may differ (CI: 3 resumed + 14 new against 18): the
	// resumed measurements are taken, and the records below must match.
	if rep3.Resumed < 1 {
		t.Fatalf("resume: %d resumed + %d new, first run %d", rep3.Resumed, rep3.Trials, rep.Trials)
	}
	recs2, _, _ := tune.Load(cfg2.Out)
	for _, r := range recs.Records {
		r2 := recs2.Get(r.Kernel, r.Target, r.Core, r.Knobs)
		if r2 == nil || r2.Default != r.Default {
			t.Fatalf("resumed records differ for %s: %+v vs %+v", r.Kernel, r2, r)
		}
	}

	// The tuned build: bit-exact and no slower.
	vec := pipeline.RandomInputs(s.Graph, 3, 11)
	base, err := s.Execute(vec, filepath.Join(dir, "base"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	topt := opt
	var warns []string
	topt.Tuning, topt.Warn = cfg.Out, func(w string) { warns = append(warns, w) }
	ts, err := pipeline.Compile(testModel, topt)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Tuned == 0 {
		t.Fatalf("no kernel took tuned knobs (warnings %q)", warns)
	}
	if len(warns) > 0 {
		t.Fatalf("tune's own records applied with notes: %q", warns)
	}
	x, err := ts.Execute(vec, filepath.Join(dir, "tuned"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() || !base.AllMatch() {
		t.Fatalf("not bit-exact: tuned %v, untuned %v", x.Match, base.Match)
	}
	if x.Instructions() > base.Instructions() {
		t.Fatalf("tuned %d > untuned %d instructions", x.Instructions(), base.Instructions())
	}
	t.Logf("cnn_int8 on an386: untuned %d, tuned %d instructions; %d measurements, %.2f s each", base.Instructions(), x.Instructions(), rep.Trials, rep.MeasureSeconds)
}

func TestCorruptRecordsAreAnError(t *testing.T) {
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"garbage.json": "\x00\x01 not json",
		"foreign.json": `{"format": "autotvm-log", "version": 1}`,
		"future.json":  `{"format": "mcugen-tuning-records", "version": 99, "records": []}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(data), 0o644)
		_, err := Run(s, Config{Opt: opt, Out: path})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
		o := opt
		o.Tuning = path
		if _, err := pipeline.Compile(testModel, o); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("compile --tuning %s: want an error naming the file, got %v", name, err)
		}
	}
	// Records for another core apply to nothing and say so.
	other := filepath.Join(dir, "other.json")
	rs := tune.NewRecords()
	for _, n := range s.Graph.Nodes {
		rs.Put(&tune.Record{Kernel: tune.Signature(s.Graph, n), Target: s.Module.Target, Core: "cortex-m55", Knobs: tune.Knobs{"block_oc": 1}})
	}
	rs.Put(&tune.Record{Kernel: "Conv2D int8 9x9->9x9 #0", Target: s.Module.Target, Core: "cortex-m4", Knobs: tune.Knobs{"x": 1}})
	if err := rs.Save(other); err != nil {
		t.Fatal(err)
	}
	var warns []string
	o := opt
	o.Tuning, o.Warn = other, func(w string) { warns = append(warns, w) }
	ts, err := pipeline.Compile(testModel, o)
	if err != nil || ts.Tuned != 0 {
		t.Fatalf("foreign-core records: err %v, %d kernels tuned", err, ts.Tuned)
	}
	all := strings.Join(warns, "\n")
	if !strings.Contains(all, "another core") || !strings.Contains(all, "does not have") {
		t.Fatalf("want notes about the other core and the unknown kernel, got %q", warns)
	}
}

// TestBazelAndMerge: the generated BUILD file parses, has one sh_test per
// candidate file, and measuring two candidate files and merging their
// results gives a record with the better one.
func TestBazelAndMerge(t *testing.T) {
	b := board(t, "mps2-an386")
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile(testModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{Opt: opt, Core: b.CPU, Trials: 3, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(string) {}}
	n, err := WriteBazel(s, cfg, testModel, filepath.Join(dir, "bz"), BazelInputs{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "bz", "BUILD.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := build.ParseBuild("BUILD.bazel", data)
	if err != nil {
		t.Fatalf("generated BUILD does not parse: %v", err)
	}
	// Bazel 9 has no native sh_test: the file loads rules_shell's, and the
	// module depends on it.
	var loads []*build.LoadStmt
	for _, st := range f.Stmt {
		if l, ok := st.(*build.LoadStmt); ok {
			loads = append(loads, l)
		}
	}
	if len(loads) != 1 || loads[0].Module.Value != "@rules_shell//shell:sh_test.bzl" || len(loads[0].To) != 1 || loads[0].To[0].Name != "sh_test" {
		t.Errorf("BUILD.bazel does not load sh_test from rules_shell")
	}
	mod, err := os.ReadFile(filepath.Join(dir, "bz", "MODULE.bazel"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := build.ParseModule("MODULE.bazel", mod)
	if err != nil {
		t.Fatalf("generated MODULE.bazel does not parse: %v", err)
	}
	if deps := mf.Rules("bazel_dep"); len(deps) != 1 || deps[0].AttrString("name") != "rules_shell" || deps[0].AttrString("version") == "" {
		t.Errorf("MODULE.bazel: want one bazel_dep on rules_shell:\n%s", mod)
	}
	// An earlier run's MODULE.bazel (without the dependency) is brought up
	// to date; the user's own is kept.
	modPath := filepath.Join(dir, "bz", "MODULE.bazel")
	for _, c := range []struct{ before, want string }{
		{"# Generated by `mcugen tune --bazel`: this directory as a module of its own\nmodule(name = \"mcugen_tune\")\n", string(mod)},
		{"module(name = \"mine\")\nbazel_dep(name = \"rules_shell\", version = \"0.7.1\")\n", "module(name = \"mine\")\nbazel_dep(name = \"rules_shell\", version = \"0.7.1\")\n"},
	} {
		if err := os.WriteFile(modPath, []byte(c.before), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteBazel(s, cfg, testModel, filepath.Join(dir, "bz"), BazelInputs{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(modPath); string(got) != c.want {
			t.Errorf("MODULE.bazel was\n%s\nis\n%s\nwant\n%s", c.before, got, c.want)
		}
	}
	// The user's own without rules_shell is kept, with a note that the
	// targets need it.
	os.WriteFile(modPath, []byte("module(name = \"mine\")\n"), 0o644)
	var notes []string
	cfgNotes := cfg
	cfgNotes.Note = func(n string) { notes = append(notes, n) }
	if _, err := WriteBazel(s, cfgNotes, testModel, filepath.Join(dir, "bz"), BazelInputs{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(modPath); string(got) != "module(name = \"mine\")\n" || !strings.Contains(strings.Join(notes, "\n"), "it has no rules_shell dependency") {
		t.Errorf("a MODULE.bazel without rules_shell: now %q, notes %q", got, notes)
	}
	tests := f.Rules("sh_test")
	cands, _ := filepath.Glob(filepath.Join(dir, "bz", "candidates", "*.json"))
	if n == 0 || len(tests) != n || len(cands) != n {
		t.Fatalf("%d targets reported, %d sh_test rules, %d candidate files", n, len(tests), len(cands))
	}
	for _, r := range tests {
		args := r.AttrStrings("args")
		if len(args) < 2 || !slicesContains(r.AttrStrings("data"), args[1]) || r.AttrString("size") != "small" {
			t.Fatalf("rule %s: args %v data %v", r.Name(), args, r.AttrStrings("data"))
		}
	}
	if testing.Short() {
		return
	}
	if err := runner.CheckTools(b); err != nil {
		t.Skip(err)
	}
	// Measure the first kernel's candidates as Bazel would, one command each.
	res := filepath.Join(dir, "results")
	var first string
	for i, c := range cands {
		var cand Candidate
		d, _ := os.ReadFile(c)
		if err := json.Unmarshal(d, &cand); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = cand.Kernel
		}
		if cand.Kernel != first {
			continue
		}
		out := filepath.Join(res, fmt.Sprint(i), "result.json")
		os.MkdirAll(filepath.Dir(out), 0o755)
		if err := MeasureCandidateFile(s, cfg, c, out); err != nil {
			t.Fatal(err)
		}
	}
	// A result with a count that is no measurement (-7, no error) is
	// named in a note, not counted as a silent failure.
	var bogus Result
	b0, _ := os.ReadFile(filepath.Join(res, "0", "result.json"))
	json.Unmarshal(b0, &bogus)
	bogus.Instructions, bogus.Error = -7, ""
	bb, _ := json.Marshal(bogus)
	os.MkdirAll(filepath.Join(res, "bogus"), 0o755)
	os.WriteFile(filepath.Join(res, "bogus", "result.json"), bb, 0o644)
	var mergeNotes []string
	cfgM := cfg
	cfgM.Note = func(n string) { mergeNotes = append(mergeNotes, n) }
	if _, err := Merge(s, cfgM, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(mergeNotes, "\n"), "-7 instructions and no error: not a measurement; skipped") {
		t.Errorf("merge notes %q: no note of the -7 result", mergeNotes)
	}
	recs, _, err := tune.Load(cfg.Out)
	if err != nil || recs.Len() != 1 {
		t.Fatalf("merged records: %v %d", err, recs.Len())
	}
	r := recs.Records[0]
	if r.Kernel != first || r.Instructions <= 0 || r.Default <= 0 || r.Instructions > r.Default {
		t.Fatalf("merged record %+v", r)
	}
}

func slicesContains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// Under a flash budget the kernels the model's build keeps int8 are tuned
// with int8 weights, held fixed (the fit pass's choice), so their records
// do not ask for the int16 layout the budget has no room for; the others
// keep the int16 default. AD under 400,000 B keeps three layers int8: the
// 640-wide first and last, and one 128→128.
func TestKernelsUnderFlashBudget(t *testing.T) {
	model := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny", "ad", "ad01_int8.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip("the MLPerf Tiny models are not in ../shared")
	}
	opt := pipeline.Options{Board: board(t, "mps2-an386"), Version: "test", FlashBudget: 400000}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Kernels) == 0 {
		t.Fatal("the budget kept no layer int8")
	}
	ks, err := Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	lean := 0
	for _, k := range ks {
		if k.Op != "fully_connected" {
			continue
		}
		w := k.Defaults["weights"]
		if w == 8 {
			lean++
			if k.Space.Fixed["weights"] != 8 {
				t.Errorf("%s: weights not fixed at 8: %+v", k.Signature, k.Space)
			}
			for _, d := range k.Space.Dims {
				if d.Name == "weights" {
					t.Errorf("%s: weights is a dimension", k.Signature)
				}
			}
		} else if w != 16 {
			t.Errorf("%s: weights %d", k.Signature, w)
		}
	}
	// The 640→128 and 128→640 layers have signatures of their own; the
	// third shares the 128→128 signature with layers that stay int16, so
	// its record keeps the speed default (the fit pass makes it int8).
	if lean != 2 {
		t.Errorf("%d fully connected kernels tuned with int8 weights, want 2 (%v kept int8)", lean, s.Lean.Kernels)
	}
	// Without the budget, every kernel keeps the int16 default.
	opt.FlashBudget = 0
	s, err = pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	ks, err = Kernels(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if w, ok := k.Defaults["weights"]; ok && w != 16 {
			t.Errorf("no budget: %s weights %d", k.Signature, w)
		}
	}
}

// A model quantized by the tuner's own options (--calib-random) is
// quantized once: the kernels cut from it, and every candidate compiled
// from them, are int8 already and compile without a warning each (a
// keyword transformer's tune printed "already an integer model; --calib
// ignored" once per measurement).
func TestKernelCompilesDoNotRequantize(t *testing.T) {
	var warns []string
	opt := pipeline.Options{Board: board(t, "host"), Version: "test", CalibRandom: 4, Warn: func(s string) { warns = append(warns, s) }}
	s, err := pipeline.Compile("../../testdata/tflite/cnn_float.tflite", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "random calibration") {
		t.Fatalf("quantizing the model warned %q, want the random-calibration warning once", warns)
	}
	warns = nil
	ks, err := Kernels(s, opt)
	if err != nil || len(ks) == 0 {
		t.Fatalf("%d kernels, %v", len(ks), err)
	}
	for _, k := range ks {
		if k.Graph.Tensors[k.Graph.Inputs[0]].DType == graph.Float32 {
			t.Fatalf("kernel %s's graph is float", k.Func)
		}
	}
	Measure(ks[0], ks[0].Defaults, opt, t.TempDir(), 30*time.Second) // its count does not matter here
	if len(warns) != 0 {
		t.Errorf("the kernels' compiles warned: %q", warns)
	}
}
