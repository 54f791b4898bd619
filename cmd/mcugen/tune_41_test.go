package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneOutputChecks41: --result may not replace the model or a file
// that is not a result (it replaced the model, exit 0); -o naming a device
// is refused before a lock file is made beside it; tune's "given twice"
// for --board gives no a,b hint (tune takes one board).
func TestTuneOutputChecks41(t *testing.T) {
	dir, model, cand, data := tuneCheckFiles(t)
	code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--measure", cand, "--result", model)
	oneErrorLine(t, "--result the model", code, errs, 2, "is an input of this command")
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine"), 0o644)
	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--measure", cand, "--result", notes)
	oneErrorLine(t, "--result a text file", code, errs, 1, "exists and is not a measurement result (JSON)")
	if b, _ := os.ReadFile(notes); string(b) != "mine" {
		t.Errorf("notes.txt became %q", b)
	}
	if after, _ := os.ReadFile(model); len(after) != len(data) {
		t.Errorf("the model changed: %d bytes, was %d", len(after), len(data))
	}

	if _, err := os.Stat("/dev/null"); err == nil {
		os.Remove("/dev/null.lock") // not ours if it is there; a left one would hide the check
		code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "-o", "/dev/null")
		oneErrorLine(t, "-o /dev/null", code, errs, 1, "is not a regular file")
		if _, err := os.Stat("/dev/null.lock"); err == nil {
			t.Errorf("/dev/null.lock was made")
			os.Remove("/dev/null.lock")
		}
	}

	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "--board", "mps2-an500")
	oneErrorLine(t, "tune --board twice", code, errs, 2, "--board is given twice")
	if strings.Contains(errs, "a,b") {
		t.Errorf("tune's message suggests several boards: %q", errs)
	}
}

// TestSoftFloatRecordsNotApplied: records tuned on a Cortex-M4 without an
// FPU ("cortex-m4 soft-float") do not apply to mps2-an386's hard-float
// build, and a note says they were ignored (they applied in full and made
// the build 23% slower).
func TestSoftFloatRecordsNotApplied(t *testing.T) {
	src, err := os.ReadFile("../../tune/measure/testdata/mlperf_an386.json")
	if err != nil {
		t.Fatal(err)
	}
	soft := strings.ReplaceAll(string(src), `"core": "cortex-m4"`, `"core": "cortex-m4 soft-float"`)
	if soft == string(src) {
		t.Fatal("the records file names no cortex-m4 core")
	}
	dir := t.TempDir()
	recs := filepath.Join(dir, "soft.json")
	os.WriteFile(recs, []byte(soft), 0o644)
	model := "../../../shared/models/mlperf_tiny/ad/ad01_int8.tflite"
	if _, err := os.Stat(model); err != nil {
		model = "../../testdata/tflite/cnn_int8.tflite"
	}
	code, out, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--tuning", recs, "-o", filepath.Join(dir, "out"))
	if code != 0 || !strings.Contains(errs, "for another core or target ignored") || strings.Contains(out+errs, "take their knobs") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// tuneCheckFiles makes a directory holding a copy of cnn_int8.tflite (its
// bytes returned too) and an empty candidate file, for the tests of tune's
// checks on the files it writes.
func tuneCheckFiles(t *testing.T) (dir, model, cand string, data []byte) {
	t.Helper()
	dir = t.TempDir()
	model = filepath.Join(dir, "m.tflite")
	data, err := os.ReadFile("../../testdata/tflite/cnn_int8.tflite")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(model, data, 0o644)
	cand = filepath.Join(dir, "cand.json")
	os.WriteFile(cand, []byte("{}"), 0o644)
	return dir, model, cand, data
}
