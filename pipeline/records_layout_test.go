package pipeline

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tune"
)

// layoutRecords writes, for every fully connected node of s's graph, one
// record tuned with int16 weights (block_oc=2) and one with int8 weights
// (block_oc=1): both layouts of each kernel, as one file holds them after a
// run with a flash budget and one without.
func layoutRecords(t *testing.T, s *State) string {
	t.Helper()
	rs := tune.NewRecords()
	for _, n := range s.Graph.Nodes {
		if n.Op != graph.FullyConnected {
			continue
		}
		sig := tune.Signature(s.Graph, n)
		for _, r := range []tune.Knobs{{"weights": 16, "block_oc": 2}, {"weights": 8, "block_oc": 1}} {
			rs.Put(&tune.Record{Kernel: sig, Target: "dsp", Core: "cortex-m4", Knobs: r, Instructions: 1, Default: 2, Search: "none", Version: "test"})
		}
	}
	if rs.Len() == 0 {
		t.Fatal("no fully connected node")
	}
	path := filepath.Join(t.TempDir(), "records.json")
	if err := rs.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A kernel kept int8 takes the record tuned with int8 weights and one with
// int16 weights the other: an int8 record applied to an int16 build made AD
// 69% slower (user-journey finding). Shown with Options.KeepInt8 and with
// the fit pass under a flash budget (AD: its two 640-wide layers int8).
func TestRecordsFollowTheWeightsLayout(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	knobs := func(s *State) map[string]map[string]int {
		out := map[string]map[string]int{}
		for _, f := range s.Module.Funcs {
			if f.Op == "fully_connected" {
				out[f.Name] = map[string]int{"weights": f.Knobs["weights"], "block_oc": f.Knobs["block_oc"]}
			}
		}
		return out
	}
	check := func(t *testing.T, s *State, lean []string) {
		t.Helper()
		for name, k := range knobs(s) {
			want := map[string]int{"weights": 16, "block_oc": 2}
			if slices.Contains(lean, name) {
				want = map[string]int{"weights": 8, "block_oc": 1}
			}
			if k["weights"] != want["weights"] || k["block_oc"] != want["block_oc"] {
				t.Errorf("kernel %s: knobs %v, want %v (kept int8: %v)", name, k, want, slices.Contains(lean, name))
			}
		}
	}

	model := filepath.Join("..", "testdata", "tflite", "mlp_int8.tflite")
	plain, err := Compile(model, Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	recs := layoutRecords(t, plain)
	var warns []string
	s, err := Compile(model, Options{Board: b, Version: "test", Tuning: recs, Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		t.Fatal(err)
	}
	check(t, s, nil)
	// Every kernel took a record: the file's other layout is no news
	// (review finding: the note, with its advice to tune again, came with
	// every build of a file holding both layouts).
	if len(warns) != 0 {
		t.Errorf("warnings %q, want none: every kernel took its own layout's record", warns)
	}
	// A file of int8 records alone, for an int16 build: the note says why
	// none applies.
	only8 := tune.NewRecords()
	all, _, err := tune.Load(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all.Records {
		if r.Knobs["weights"] == 8 {
			only8.Put(r)
		}
	}
	recs8 := filepath.Join(t.TempDir(), "int8.json")
	if err := only8.Save(recs8); err != nil {
		t.Fatal(err)
	}
	warns = nil
	if _, err := Compile(model, Options{Board: b, Version: "test", Tuning: recs8, Warn: func(m string) { warns = append(warns, m) }}); err != nil {
		t.Fatal(err)
	}
	if len(warns) == 0 || !strings.Contains(warns[0], "record(s) tuned with the other layout of a kernel's weights ignored") {
		t.Errorf("warnings %q, want the note on the int8 records", warns)
	}
	first := ""
	for name := range knobs(s) {
		if first == "" || name < first {
			first = name
		}
	}
	s, err = Compile(model, Options{Board: b, Version: "test", Tuning: recs, KeepInt8: []string{first}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, s, []string{first})

	// The fit pass: AD under a 310 KB budget keeps its largest layers int8,
	// each then with its int8 record, the others with their int16 one. The
	// records' notes come once, after the fit pass's second lowering.
	ad := filepath.Join(sharedDir(t), "ad", "ad01_int8.tflite")
	plain, err = Compile(ad, Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	recs = layoutRecords(t, plain)
	warns = nil
	s, err = Compile(ad, Options{Board: b, Version: "test", Tuning: recs, FlashBudget: 310 << 10, Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean == nil || len(s.Lean.Kernels) == 0 || len(s.Lean.Kernels) == len(knobs(s)) {
		t.Fatalf("the budget kept %v int8, want some kernels", s.Lean)
	}
	check(t, s, s.Lean.Kernels)
	seen := map[string]bool{}
	for _, w := range warns {
		if seen[w] {
			t.Errorf("warning given twice: %q", w)
		}
		seen[w] = true
	}
	t.Logf("AD under 310 KB: %d kernels int8 (%v), %d tuned; warnings %q", len(s.Lean.Kernels), s.Lean.Kernels, s.Tuned, warns)
}
