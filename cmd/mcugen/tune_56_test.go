package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A record whose search found nothing faster than the defaults holds that
// mcugen's defaults, and compile applies this version's (tune.Overrides,
// session 55). tune's table says "defaults" for such a kernel rather than
// listing values that will not be pinned (its re-run printed the knobs),
// and compile's line says how many of the layers that took their knobs
// from the file took the defaults (it counted them without a word). The
// counts come from the records file, not from the code under test: a row
// is a default one exactly when its record's instructions are not below
// its default_instructions.
func TestTuneTableSaysDefaults56(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes under QEMU")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ad", "ad01_int8.tflite")
	dir := t.TempDir()
	recs := filepath.Join(dir, "r.json")
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "-o", recs); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	var f struct {
		Records []struct {
			Kernel       string `json:"kernel"`
			Instructions int64  `json:"instructions"`
			Default      int64  `json:"default_instructions"`
		} `json:"records"`
	}
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Records) == 0 {
		t.Fatalf("records: %v, %d records", err, len(f.Records))
	}
	// The re-run measures nothing and prints the table from the records.
	code, out, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "-o", recs)
	if code != 0 {
		t.Fatalf("tune again: exit %d: %s", code, errs)
	}
	// Every row's columns line up under the header's, however long its
	// kernel's signature (session 57: the column was 60 wide, and longer
	// signatures pushed their rows out of line).
	lines := strings.Split(out, "\n")
	nodesEnd := -1
	for _, l := range lines {
		if strings.HasPrefix(l, "kernel ") {
			nodesEnd = strings.Index(l, "nodes") + len("nodes")
		}
	}
	if nodesEnd < 0 {
		t.Fatalf("no table header in\n%s", out)
	}
	for _, r := range f.Records {
		for _, l := range lines {
			if strings.HasPrefix(l, r.Kernel+" ") && (len(l) <= nodesEnd || l[nodesEnd-1] < '0' || l[nodesEnd-1] > '9' || l[nodesEnd] != ' ') {
				t.Errorf("row of %q is out of line with the header (nodes ends at column %d):\n%s", r.Kernel, nodesEnd, l)
			}
		}
	}
	defaults := 0
	for _, r := range f.Records {
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, r.Kernel+" ") {
				row = l
			}
		}
		if row == "" {
			t.Fatalf("no table row for %q in\n%s", r.Kernel, out)
		}
		says := strings.Contains(row, "  defaults (from records)")
		if r.Default > 0 && r.Instructions >= r.Default {
			defaults++
			if !says {
				t.Errorf("kernel %q found nothing faster than its defaults (%d ≥ %d), its row does not say defaults:\n%s", r.Kernel, r.Instructions, r.Default, row)
			}
		} else if says {
			t.Errorf("kernel %q beat its defaults (%d < %d), its row says defaults:\n%s", r.Kernel, r.Instructions, r.Default, row)
		}
	}
	if defaults == 0 {
		t.Skip("every AD kernel beat its defaults in two trials: no default record to show")
	}
	// AD's kernels each serve a number of layers; compile names how many of
	// its 10 took the defaults, which the records' kernels decide.
	code, out, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--tuning", recs, "-o", filepath.Join(dir, "c"))
	if code != 0 {
		t.Fatalf("compile --tuning: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "tuning: 10 of 10 layer(s) take their knobs from "+recs+" (") ||
		!strings.Contains(out, " of them the defaults: the search found nothing faster)\n") {
		t.Errorf("compile --tuning with %d default record(s) said:\n%s", defaults, out)
	}
	if defaults == len(f.Records) && !strings.Contains(out, fmt.Sprintf("(%d of them the defaults", 10)) {
		t.Errorf("every record holds the defaults, compile said:\n%s", out)
	}
	// bench says it too, and its JSON counts them.
	code, out, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--tuning", recs, "--json")
	var br struct {
		Results []struct {
			Tuned    int `json:"tuned_kernels"`
			Defaults int `json:"tuned_defaults"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &br); code != 0 || err != nil || len(br.Results) != 1 {
		t.Fatalf("bench --json: exit %d, %v: %s%s", code, err, out, errs)
	}
	if r := br.Results[0]; r.Tuned != 10 || r.Defaults < 1 || r.Defaults > r.Tuned || (defaults == len(f.Records) && r.Defaults != r.Tuned) {
		t.Errorf("bench --json: tuned_kernels %d, tuned_defaults %d (%d of %d records hold the defaults)", r.Tuned, r.Defaults, defaults, len(f.Records))
	}
}
