package measure

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
)

// A float FullyConnected reads fast_requant (an int8 knob) without using
// it: both values generate the same files, so the second is a copy; its
// block_oc changes the code.
func TestCodeKeyOfKnobsWithoutEffect(t *testing.T) {
	opt := pipeline.Options{Board: board(t, "mps2-an386")}
	s, err := pipeline.Compile("../../testdata/tflite/mlp_float.tflite", opt)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := Kernels(s, opt)
	if err != nil || len(ks) == 0 {
		t.Fatalf("kernels: %v", err)
	}
	k := ks[0]
	if k.Space.Values("fast_requant") == nil || len(k.Space.Values("block_oc")) < 2 {
		t.Skipf("space %v has no fast_requant or one block_oc", k.Space)
	}
	compile := func(change map[string]int) *pipeline.State {
		kn := k.Defaults.Clone()
		for n, v := range change {
			kn[n] = v
		}
		st, err := compileCandidate(k, kn, opt)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	same := func(a, b *pipeline.State) bool {
		if len(a.Files) != len(b.Files) {
			return false
		}
		for n, f := range a.Files {
			if !bytes.Equal(f, b.Files[n]) {
				return false
			}
		}
		return true
	}
	a, b := compile(map[string]int{"fast_requant": 0}), compile(map[string]int{"fast_requant": 1})
	if !same(a, b) || codeKey(a) != codeKey(b) {
		t.Errorf("fast_requant 0 and 1: same files %v, keys %s and %s", same(a, b), codeKey(a), codeKey(b))
	}
	var other int
	for _, v := range k.Space.Values("block_oc") {
		if v != k.Defaults["block_oc"] {
			other = v
		}
	}
	c := compile(map[string]int{"block_oc": other})
	if same(a, c) || codeKey(a) == codeKey(c) {
		t.Errorf("block_oc %d: the same code as the default's", other)
	}
}

// Copies take none of the budget: a search of budget 2 over four points,
// one of them known as a copy, runs two more.
func TestSearchCopiesAreFree(t *testing.T) {
	sp := tune.Space{Dims: []tune.Dim{{Name: "a", Values: []int{0, 1}}, {Name: "b", Values: []int{0, 1}}}}
	s := tune.NewSearch(sp, tune.Knobs{"a": 0, "b": 0}, 2, 1)
	s.ReportCopy(tune.Knobs{"a": 1, "b": 1}, 101, true)
	ran := 0
	for !s.Done() {
		c := s.Next(1)
		if len(c) == 0 {
			t.Fatalf("not done, nothing proposed: %v", s.Measured)
		}
		ran++
		s.Report(c[0], 100+int64(c[0]["a"]), true)
	}
	if ran != 2 || len(s.Measured) != 3 || s.Copies() != 1 {
		t.Errorf("ran %d, knows %d, copies %d: want 2, 3, 1", ran, len(s.Measured), s.Copies())
	}
}

// End to end: tuning the float MLP copies candidates rather than running
// them, and its records still measure as they say.
func TestTuneCopiesUnchangedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	b := board(t, "mps2-an386")
	if err := runner.CheckTools(b); err != nil {
		t.Skip(err)
	}
	opt := pipeline.Options{Board: b}
	s, err := pipeline.Compile("../../testdata/tflite/mlp_float.tflite", opt)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Opt: opt, Trials: 6, Jobs: 2, Out: filepath.Join(t.TempDir(), "r.json"), Timeout: 30 * time.Second, Version: "test"}
	rep, err := Run(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Copies == 0 {
		t.Errorf("no copies: %+v", rep)
	}
	ks, _ := Kernels(s, opt)
	for _, r := range rep.Kernels {
		if r.Trials > cfg.Trials {
			t.Errorf("%s: %d trials run, budget %d", r.Kernel, r.Trials, cfg.Trials)
		}
		for _, k := range ks {
			if k.Signature == r.Kernel {
				if m := Measure(k, r.Knobs, opt, t.TempDir(), cfg.Timeout); m.Err != nil || m.Instructions != r.Instructions {
					t.Errorf("%s %s: measures %d (%v), the record says %d", r.Kernel, r.Knobs, m.Instructions, m.Err, r.Instructions)
				}
			}
		}
	}
}

// The Bazel targets are one per distinct program: no two candidates of a
// kernel generate the same files (tuning journey finding: 19 of AD's 80
// targets measured a program another target measured), and each kernel
// keeps its defaults.
func TestBazelCandidatesDiffer(t *testing.T) {
	opt := pipeline.Options{Board: board(t, "mps2-an386")}
	model := "../../testdata/tflite/mlp_float.tflite"
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var notes []string
	cfg := Config{Opt: opt, Core: "cortex-m4", Trials: 16, Out: filepath.Join(dir, "r.json"), Note: func(n string) { notes = append(notes, n) }}
	if _, err := WriteBazel(s, cfg, model, filepath.Join(dir, "bz"), BazelInputs{}); err != nil {
		t.Fatal(err)
	}
	ks, _ := Kernels(s, opt)
	files, _ := filepath.Glob(filepath.Join(dir, "bz", "candidates", "*.json"))
	seen := map[string][]map[string][]byte{}
	defaults := map[string]bool{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var c Candidate
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		defaults[c.Kernel] = defaults[c.Kernel] || c.Default
		for _, k := range ks {
			if k.Signature != c.Kernel {
				continue
			}
			st, err := compileCandidate(k, c.Knobs, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, other := range seen[c.Kernel] {
				if reflect.DeepEqual(other, st.Files) {
					t.Errorf("%s: %s generates the code of another candidate", c.Kernel, c.Knobs)
				}
			}
			seen[c.Kernel] = append(seen[c.Kernel], st.Files)
		}
	}
	for _, k := range ks {
		if !defaults[k.Signature] {
			t.Errorf("%s: no candidate with the defaults", k.Signature)
		}
		// Copies left out make room for others: a large space fills the
		// budget (it came out short).
		if n := len(seen[k.Signature]); k.Space.Size() >= 8*cfg.Trials && n != cfg.Trials {
			t.Errorf("%s: %d candidates over a space of %d, want the budget's %d", k.Signature, n, k.Space.Size(), cfg.Trials)
		}
	}
	if len(notes) == 0 {
		t.Errorf("no note of the candidates left out (%d written)", len(files))
	}
}
