package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Tune review (session 49): --result replaced any JSON file (a records
// file, a package.json) with a measurement, exit 0; a records file with a
// second hard link took two locks and the rename that writes it parted the
// names; "-o dir/" wrote a file named dir and "-o -" a file named "-".
func TestTuneOutputChecks49(t *testing.T) {
	dir, model, cand, _ := tuneCheckFiles(t)
	records := `{"format": "mcugen-tuning-records", "version": 3, "records": []}`
	for name, body := range map[string]string{"records.json": records, "package.json": `{"name": "x", "version": "1.0.0"}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--measure", cand, "--result", p)
		oneErrorLine(t, "--result "+name, code, errs, 1, "exists and is not a measurement result (a tune --measure output)")
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Errorf("%s became %q", name, b)
		}
	}
	// A result file of an earlier measurement is replaced (the check
	// passes; the candidate then fails to parse, which is another error).
	res := filepath.Join(dir, "result.json")
	os.WriteFile(res, []byte(`{"kernel": "k", "target": "dsp", "core": "cortex-m4", "knobs": {}, "default": true, "space": 1, "board": "mps2-an386", "instructions": 5, "seconds": 1}`), 0o644)
	if _, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--measure", cand, "--result", res); strings.Contains(errs, "is not a measurement result") {
		t.Errorf("an earlier result was refused: %q", errs)
	}

	if runtime.GOOS != "windows" {
		r := filepath.Join(dir, "r.json")
		os.WriteFile(r, []byte(records), 0o644)
		if err := os.Link(r, filepath.Join(dir, "h.json")); err == nil {
			code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "h.json"))
			oneErrorLine(t, "-o a hard link", code, errs, 1, "the file has 2 hard links")
		}
	}
	code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "newdir")+"/")
	oneErrorLine(t, "-o dir/", code, errs, 2, "names a directory")
	if _, err := os.Stat(filepath.Join(dir, "newdir")); err == nil {
		t.Errorf("-o newdir/ made newdir")
	}
	code, _, errs = mcugen(t, "tune", model, "--board", "mps2-an386", "-o", "-")
	oneErrorLine(t, "-o -", code, errs, 2, "not standard output")
	code, _, errs = mcugen(t, "quantize", model, "-o", filepath.Join(dir, "q")+"/")
	oneErrorLine(t, "quantize -o dir/", code, errs, 2, "names a directory")
}

// --jobs 1000 ran 13 QEMUs on 2 cores without a word (tune review): far
// above the CPUs it is said (the run goes on; a missing model stops it
// here, after the note).
func TestTuneJobsAboveCPUs49(t *testing.T) {
	_, _, errs := mcugen(t, "tune", filepath.Join(t.TempDir(), "missing.tflite"), "--board", "mps2-an386", "--jobs", "100000")
	if !strings.Contains(errs, "--jobs 100000: this machine has") {
		t.Errorf("no note on --jobs:\n%s", errs)
	}
}
