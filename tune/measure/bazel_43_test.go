package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Writing a batch again into a directory replaces its copy of a --calib
// directory (the targets glob it: old and new samples were quantized
// together, a review finding), and a --timeout past Bazel's longest test
// timeout (eternal, 3600 s) says which --test_timeout to give (the BUILD
// file's eternal would kill a run mcugen still allowed).
func TestWriteBazelAgain(t *testing.T) {
	opt, s := compiledOn(t, testModel, "mps2-an386")
	dir := t.TempDir()
	var notes []string
	cfg := Config{Opt: opt, Core: opt.Board.CPU, Trials: 2, Out: filepath.Join(dir, "r.json"), Timeout: 30 * time.Second, Note: func(n string) { notes = append(notes, n) }}
	bz := filepath.Join(dir, "bz")
	for i, sample := range []string{"first.npy", "second.npy"} {
		calib := filepath.Join(dir, "calib", sample)
		os.MkdirAll(calib, 0o755)
		if err := os.WriteFile(filepath.Join(calib, sample), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			cfg.Timeout = 2 * time.Hour
		}
		if _, err := WriteBazel(s, cfg, testModel, bz, BazelInputs{Files: map[string]string{"calib": calib}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := filepath.Glob(filepath.Join(bz, "calib", "*"))
	if len(got) != 1 || filepath.Base(got[0]) != "second.npy" {
		t.Errorf("calib/ holds %v; want the second batch's second.npy alone", got)
	}
	if n := strings.Join(notes, "\n"); !strings.Contains(n, "--timeout 2h0m0s: a run and its build can take longer than Bazel's longest test timeout (eternal, 3600 s): give bazel test --test_timeout=7230") {
		t.Errorf("no note on the timeout:\n%s", n)
	}
}
