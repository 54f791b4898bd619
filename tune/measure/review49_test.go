package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
)

func journalBytes(t *testing.T, lines ...journalLine) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		js, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(js, '\n'))
	}
	return b.Bytes()
}

// A line over 1 MiB stopped the journal's reader in silence, every line
// after it ignored; a last line cut short (an interruption, a full disk)
// had the next run's first measurement appended to it (tune review).
func TestJournalLinesOfAnyLength49(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json.journal")
	a := journalLine{Key: "a", Knobs: tune.Knobs{"x": 1}, Instructions: 10}
	b := journalLine{Key: "b", Knobs: tune.Knobs{"x": 2}, Instructions: 20}
	var data []byte
	data = append(data, bytes.Repeat([]byte("x"), 2<<20)...)
	data = append(data, '\n')
	data = append(data, journalBytes(t, a, b)...)
	data = append(data, []byte(`{"key":"c","kno`)...)
	os.WriteFile(path, data, 0o644)
	lines, bad, err := readJournal(path)
	if err != nil || len(lines) != 2 || lines[0].Key != "a" || lines[1].Key != "b" || bad != 2 {
		t.Fatalf("read %d lines (%v), %d bad, %v; want a and b, 2 bad", len(lines), lines, bad, err)
	}
	if err := keepJournal(path, func(journalLine) bool { return true }); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := journalBytes(t, a, b); !bytes.Equal(got, want) {
		t.Errorf("journal rewritten as %q, want %q", got, want)
	}
}

// A run of another model on the same records file deleted the journal of
// an interrupted one (its --resume started over); a run now starts its
// own kernels over and keeps the other run's lines, and at its end drops
// only its own.
func TestJournalKeepsAnotherRunsLines49(t *testing.T) {
	opt, s := compiledOn(t, testModel, "mps2-an386")
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) == 0 {
		t.Fatal(err)
	}
	k := kernels[0]
	key := tune.KeyFor(k.Signature, "dsp", opt.Board.CPU, k.Defaults)
	mine := journalLine{Key: key, Knobs: k.Space.At(0), Instructions: 1000}
	theirs := journalLine{Key: "Conv2D int8 another model's kernel|dsp|cortex-m4", Knobs: tune.Knobs{"block_oc": 2}, Instructions: 500}
	var notes []string
	cfg := Config{Opt: opt, Out: filepath.Join(t.TempDir(), "r.json"), Note: func(n string) { notes = append(notes, n) }}
	path := JournalPath(cfg.Out)
	os.WriteFile(path, journalBytes(t, mine, theirs), 0o644)
	known := map[string]bool{key: true}
	if err := replayJournal(cfg, map[string]*job{key: newJob(k, 4)}, known, &Report{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, journalBytes(t, theirs)) {
		t.Errorf("after starting over the journal holds %q; want the other run's line alone", got)
	}
	n := strings.Join(notes, "\n")
	if !strings.Contains(n, "1 measurement(s) of kernels this run does not tune (another model, core or board) are kept") || !strings.Contains(n, "starting over") {
		t.Errorf("notes %q", n)
	}
	os.WriteFile(path, journalBytes(t, mine, theirs), 0o644)
	dropJournalOf(path, known)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, journalBytes(t, theirs)) {
		t.Errorf("a finished run left %q; want the other run's line alone", got)
	}
	dropJournalOf(path, map[string]bool{theirs.Key: true})
	if _, err := os.Stat(path); err == nil {
		t.Errorf("an emptied journal is left")
	}
}

// An interrupted tune --bazel left candidates and no BUILD file (the next
// run refused the directory as not its own), or an old batch's BUILD file
// over half its candidates. Its BUILD file now says it is incomplete from
// the start (bazel fails on it), and the next run takes the directory over.
func TestBazelInterruptedDirTakenOver49(t *testing.T) {
	opt, s := compiledOn(t, testModel, "mps2-an386")
	dir := t.TempDir()
	cfg := Config{Opt: opt, Core: opt.Board.CPU, Trials: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(string) {}}
	bz := filepath.Join(dir, "bz")
	if _, err := WriteBazel(s, cfg, filepath.Join(dir, "missing.tflite"), bz, BazelInputs{}); err == nil {
		t.Fatal("a missing model was copied")
	}
	b, _ := os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if !bytes.HasPrefix(b, []byte(bazelHeader)) || !bytes.Contains(b, []byte("fail(")) {
		t.Fatalf("the stopped run's BUILD.bazel: %q", b)
	}
	if err := checkBazelDir(bz); err != nil {
		t.Fatalf("the stopped run's directory is refused: %v", err)
	}
	n, err := WriteBazel(s, cfg, testModel, bz, BazelInputs{})
	if err != nil || n == 0 {
		t.Fatalf("%d targets, %v", n, err)
	}
	b, _ = os.ReadFile(filepath.Join(bz, "BUILD.bazel"))
	if bytes.Contains(b, []byte("fail(")) || !bytes.Contains(b, []byte("sh_test(")) {
		t.Errorf("the finished BUILD.bazel:\n%s", b)
	}
}

// A records file that cannot be written (a read-only checkout) was refused
// even when every kernel had its record and nothing was to be written; now
// such a run returns at once, and fails with the reason only where it
// would write.
func TestReadOnlyRecords49(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	opt, s := compiledOn(t, testModel, "mps2-an386")
	if err := runner.CheckTools(opt.Board); err != nil {
		t.Skip(err)
	}
	cfg := Config{Opt: opt, Trials: 1, Jobs: 2, Out: filepath.Join(t.TempDir(), "r.json"), Timeout: 30 * time.Second, Version: "test", Note: func(string) {}}
	if _, err := Run(s, cfg); err != nil {
		t.Fatal(err)
	}
	ro := errors.New("-o r.json: cannot write it (permission denied)")
	cfg.ReadOnly = ro
	rep, err := Run(s, cfg)
	if err != nil || rep.Trials != 0 || rep.Skipped == 0 {
		t.Fatalf("every record there, read-only: %+v, %v", rep, err)
	}
	recs, _, err := tune.Load(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	recs.Records = recs.Records[1:]
	if err := recs.Save(cfg.Out); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(s, cfg); !errors.Is(err, ro) {
		t.Errorf("a record missing, read-only: %v; want %v", err, ro)
	}
}

// "my model (1).tflite" was copied as my_model__1_.tflite, and every
// measurement warned about the "__" in its C prefix.
func TestBazelModelNameOneUnderscore49(t *testing.T) {
	opt, s := compiledOn(t, testModel, "mps2-an386")
	dir := t.TempDir()
	cfg := Config{Opt: opt, Core: opt.Board.CPU, Trials: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(string) {}}
	odd := filepath.Join(dir, "my model (1).tflite")
	data, err := os.ReadFile(testModel)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(odd, data, 0o644)
	bz := filepath.Join(dir, "bz")
	if _, err := WriteBazel(s, cfg, odd, bz, BazelInputs{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bz, "my_model_1.tflite")); err != nil {
		entries, _ := os.ReadDir(bz)
		t.Errorf("no my_model_1.tflite: %v (%v)", err, entries)
	}
}

// A --resume with a smaller --trials replayed more measurements than its
// budget and recorded "trials 15, budget 3" (tune review): the budget is
// now at least the runs the search made.
func TestResumeSmallerTrialsBudget49(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	opt, s := compiledOn(t, testModel, "mps2-an386")
	if err := runner.CheckTools(opt.Board); err != nil {
		t.Skip(err)
	}
	cfg := Config{Opt: opt, Trials: 4, Jobs: 1, Out: filepath.Join(t.TempDir(), "r.json"), Timeout: 30 * time.Second, Version: "test", Note: func(string) {}, stopAfter: 3}
	if _, err := Run(s, cfg); err != errInterrupted {
		t.Fatalf("want the interruption, got %v", err)
	}
	cfg.stopAfter, cfg.Resume, cfg.Trials = 0, true, 1
	if _, err := Run(s, cfg); err != nil {
		t.Fatal(err)
	}
	recs, _, err := tune.Load(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	more := false
	for _, r := range recs.Records {
		more = more || r.Trials > 1
		if r.Budget < r.Trials {
			t.Errorf("%s: trials %d, budget %d", r.Kernel, r.Trials, r.Budget)
		}
	}
	if !more {
		t.Fatal("no record took the journal's runs: the case did not happen")
	}
}
