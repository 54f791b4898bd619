package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeBaseline(t *testing.T, dir string, results ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"results": results})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "base.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func benchCase(model, board string, instr int64, arena, flash, ram int) map[string]any {
	return map[string]any{"model": model, "board": board, "instructions": instr, "arena_bytes": arena, "flash_bytes": flash, "ram_bytes": ram}
}

// Hand-worked comparisons: which figures count as grown, by how much, and
// which baseline case a result is held to.
func TestBaselineCompare(t *testing.T) {
	dir := t.TempDir()
	p := writeBaseline(t, dir,
		benchCase("/ci/a/kws.tflite", "mps2-an386", 1000, 256, 2000, 300),
		benchCase("/ci/a/vww.tflite", "mps2-an386", 5000, 100, 100, 100),
		benchCase("/ci/b/vww.tflite", "mps2-an386", 9000, 100, 100, 100),
		benchCase("/ci/a/ad.tflite", "host", -1, 64, 0, 0),
		map[string]any{"model": "/ci/a/ic.tflite", "board": "mps2-an386", "instructions": -1, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0, "error": "too big"},
	)
	bl, err := loadBaseline(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(bl.cases) != 4 {
		t.Fatalf("%d cases kept, want 4 (the failed one has no figures)", len(bl.cases))
	}

	// One more instruction than 1,000 is +0.1%: a regression with no
	// allowance, none with 0.5%. A smaller arena never is; flash 2,000 ->
	// 2,210 is +10.5%, past a 10% allowance. Matched by file name: the
	// checkout moved.
	r := benchResult{Model: "/home/me/kws.tflite", Board: "mps2-an386", Instructions: 1001, ArenaBytes: 200, FlashBytes: 2210, RAMBytes: 300}
	got := bl.compare(&r, 0)
	if len(got) != 2 || got[0].Metric != "instructions" || got[0].Baseline != 1000 || got[0].Current != 1001 ||
		got[0].Percent < 0.0999 || got[0].Percent > 0.1001 || got[1].Metric != "flash_bytes" || got[1].Percent < 10.49 || got[1].Percent > 10.51 {
		t.Errorf("no allowance: %+v", got)
	}
	if s := got[0].String(); s != "kws.tflite on mps2-an386: instructions 1,000 -> 1,001 (+0.10%; any growth fails; against the baseline's /ci/a/kws.tflite)" {
		t.Errorf("message %q", s)
	}
	if c := r.change(); c != "+0.10% (arena -56 B, flash +210 B)" {
		t.Errorf("change cell %q", c)
	}
	r.Regressions = nil
	if got := bl.compare(&r, 10); len(got) != 1 || got[0].Metric != "flash_bytes" || !strings.Contains(got[0].String(), "allowed +10%") {
		t.Errorf("10%% allowance: %+v", got)
	}
	if got := bl.compare(&r, 11); len(got) != 0 {
		t.Errorf("11%% allowance: %+v", got)
	}

	// The same path wins over a file-name match; two cases sharing only
	// the file name match neither.
	r = benchResult{Model: "/ci/b/vww.tflite", Board: "mps2-an386", Instructions: 9000, ArenaBytes: 100, FlashBytes: 100, RAMBytes: 100}
	if got := bl.compare(&r, 0); len(got) != 0 || r.Baseline == nil || r.Baseline.Instructions != 9000 || r.change() != "=" {
		t.Errorf("exact path: %+v %+v", got, r.Baseline)
	}
	r = benchResult{Model: "/elsewhere/vww.tflite", Board: "mps2-an386", Instructions: 9999}
	if got := bl.compare(&r, 0); len(got) != 0 || r.Baseline != nil || r.change() != "new" {
		t.Errorf("ambiguous name: %+v %+v", got, r.Baseline)
	}
	// Another board is another case.
	r = benchResult{Model: "/ci/a/kws.tflite", Board: "mps2-an500", Instructions: 99999}
	if bl.compare(&r, 0); r.Baseline != nil {
		t.Errorf("matched across boards: %+v", r.Baseline)
	}
	// No instruction count on the host: the sizes are still held.
	r = benchResult{Model: "/ci/a/ad.tflite", Board: "host", Instructions: -1, ArenaBytes: 65}
	if got := bl.compare(&r, 0); len(got) != 1 || got[0].Metric != "arena_bytes" || r.change() != "- (arena +1 B)" {
		t.Errorf("host: %+v, %q", got, r.change())
	}
	if u := bl.unmeasured(); len(u) != 1 || u[0] != "vww.tflite on mps2-an386" {
		t.Errorf("unmeasured %v (the /ci/a vww case was never matched)", u)
	}
}

// The measured stack is held like the sizes, but only against a baseline that
// has it: reports from before bench measured it (no stack_bytes) and boards
// that cannot measure it (0) compare nothing.
func TestBaselineStack(t *testing.T) {
	withStack := benchCase("/ci/kws.tflite", "mps2-an386", 1000, 256, 2000, 300)
	withStack["stack_bytes"] = 3000
	p := writeBaseline(t, t.TempDir(), withStack, benchCase("/ci/ad.tflite", "mps2-an386", 500, 64, 100, 100))
	bl, err := loadBaseline(p)
	if err != nil {
		t.Fatal(err)
	}
	r := benchResult{Model: "/ci/kws.tflite", Board: "mps2-an386", Instructions: 1000, ArenaBytes: 256, FlashBytes: 2000, RAMBytes: 300, StackBytes: 3030}
	got := bl.compare(&r, 0)
	if len(got) != 1 || got[0].Metric != "stack_bytes" || got[0].Baseline != 3000 || got[0].Current != 3030 || got[0].Percent < 0.999 || got[0].Percent > 1.001 {
		t.Errorf("stack 3,000 -> 3,030: %+v", got)
	}
	if c := r.change(); c != "= (stack +30 B)" {
		t.Errorf("change cell %q", c)
	}
	if got := bl.compare(&r, 1.5); len(got) != 0 {
		t.Errorf("+1%% within a 1.5%% allowance: %+v", got)
	}
	r = benchResult{Model: "/ci/ad.tflite", Board: "mps2-an386", Instructions: 500, ArenaBytes: 64, FlashBytes: 100, RAMBytes: 100, StackBytes: 9999}
	if got := bl.compare(&r, 0); len(got) != 0 || r.change() != "=" {
		t.Errorf("a baseline without stack_bytes: %+v, %q", got, r.change())
	}
}

// Matched by file name only, a regression names the baseline case it was
// held to, and says when the two files' SHA-256 differ; the same path
// names nothing more.
func TestBaselineNamesItsCase(t *testing.T) {
	c := benchCase("/ci/a/model.tflite", "mps2-an386", 946, 64, 100, 100)
	c["model_sha256"] = "aaaa"
	bl, err := loadBaseline(writeBaseline(t, t.TempDir(), c))
	if err != nil {
		t.Fatal(err)
	}
	r := benchResult{Model: "/pr/b/model.tflite", ModelSHA256: "bbbb", Board: "mps2-an386", Instructions: 12965, ArenaBytes: 64, FlashBytes: 100, RAMBytes: 100}
	got := bl.compare(&r, 0)
	if len(got) != 1 || !strings.HasSuffix(got[0].String(), "; against the baseline's /ci/a/model.tflite, whose SHA-256 differs)") {
		t.Errorf("%v", got)
	}
	r = benchResult{Model: "/ci/a/model.tflite", ModelSHA256: "bbbb", Board: "mps2-an386", Instructions: 12965, ArenaBytes: 64, FlashBytes: 100, RAMBytes: 100}
	if got := bl.compare(&r, 0); len(got) != 1 || strings.Contains(got[0].String(), "against") {
		t.Errorf("same path: %v", got)
	}
}

// Files that are not bench reports are refused with the file named.
func TestBaselineRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ name, body, want string }{
		{"trunc.json", `{"results": [{"model": "a"`, "not a `mcugen bench --json` report: unexpected EOF"},
		{"other.json", `{"trials": 3}`, `it has no "results" list`},
		{"test.json", `{"cases": 1, "results": [{"model": "a", "board": "b", "vectors": 1, "instructions": 5}]}`, `result 0 has no "arena_bytes"`},
		{"failed.json", `{"results": [{"model": "a", "board": "b", "instructions": -1, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0, "error": "x"}]}`, "no measured case"},
		{"types.json", `{"results": [{"model": "a", "board": "b", "instructions": "many", "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, `result 0: "instructions" is a string, where bench writes a whole number`},
		{"half.json", `{"results": [{"model": "a", "board": "b", "instructions": 2501370.5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, `result 0: "instructions" is a number 2501370.5, where bench writes a whole number`},
		{"huge.json", `{"results": [{"model": "a", "board": "b", "instructions": 1e30, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, `result 0: "instructions" is a number 1e30, where bench writes a whole number`},
		{"board.json", `{"results": [{"model": "a", "board": 4, "instructions": 5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, `result 0: "board" is a number, where bench writes text`},
		{"neg.json", `{"results": [{"model": "a", "board": "b", "instructions": 1, "arena_bytes": -4, "flash_bytes": 0, "ram_bytes": 0}]}`, "negative size"},
		// Values that would turn a gate off (user-journey findings).
		{"null.json", `{"results": [{"model": "a", "board": "b", "instructions": 5, "arena_bytes": 0, "flash_bytes": null, "ram_bytes": 0}]}`, `result 0 has no "flash_bytes"`},
		{"zero.json", `{"results": [{"model": "a", "board": "b", "instructions": 0, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, "has instructions 0: want a count, or -1"},
		{"minus5.json", `{"results": [{"model": "a", "board": "b", "instructions": -5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, "has instructions -5"},
		{"twice.json", `{"results": [{"model": "a", "board": "b", "instructions": 5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}, {"model": "a", "board": "b", "instructions": 6, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`, "a on b is there twice"},
		{"tail.json", `{"results": [{"model": "a", "board": "b", "instructions": 5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}` + "\n{garbage", "data after the JSON object"},
	} {
		p := write(c.name, c.body)
		_, err := loadBaseline(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A BOM is read past, as in a records file.
	if _, err := loadBaseline(write("bom.json", "\xef\xbb\xbf"+`{"results": [{"model": "a", "board": "b", "instructions": 5, "arena_bytes": 0, "flash_bytes": 0, "ram_bytes": 0}]}`)); err != nil {
		t.Errorf("with a BOM: %v", err)
	}
	// Through the CLI: refused before anything is built.
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "bench", mlp, "--board", "host", "--baseline", filepath.Join(dir, "other.json"))
	if code != 1 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "other.json: not a `mcugen bench --json` report") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if code, _, stderr := mcugen(t, "bench", mlp, "--board", "host", "--max-increase", "2"); code != 2 || !strings.Contains(stderr, "--max-increase needs --baseline") {
		t.Errorf("--max-increase alone: exit %d, %q", code, stderr)
	}
}

// The gate end to end under QEMU: the run holds to its own report, and a
// baseline one instruction cheaper fails it with one line naming the model,
// the figure and both counts.
func TestBenchBaselineGate(t *testing.T) {
	needQEMU(t)
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "bench", mlp, "--board", "mps2-an386", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d, %s", code, stderr)
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = mcugen(t, "bench", mlp, "--board", "mps2-an386", "--baseline", base)
	if code != 0 || stderr != "" || !strings.Contains(out, "vs baseline") || !strings.HasSuffix(strings.TrimSpace(out), "=") {
		t.Errorf("same build: exit %d, stderr %q\n%s", code, stderr, out)
	}

	var rep map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, base)), &rep); err != nil {
		t.Fatal(err)
	}
	res := rep["results"].([]any)[0].(map[string]any)
	n := int64(res["instructions"].(float64))
	res["instructions"] = n - 1
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = mcugen(t, "bench", mlp, "--board", "mps2-an386", "--baseline", base)
	want := "instructions " + comma(n-1) + " -> " + comma(n) + " (+"
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "mlp_int8.tflite on mps2-an386: "+want) {
		t.Errorf("one instruction more: exit %d, stderr %q (want %q)", code, stderr, want)
	}
	code, out, _ = mcugen(t, "bench", mlp, "--board", "mps2-an386", "--baseline", base, "--max-increase", "5", "--json")
	var got struct {
		Regressions int `json:"regressions"`
		Results     []struct {
			Baseline struct {
				Instructions int64 `json:"instructions"`
			} `json:"baseline"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Regressions != 0 || got.Results[0].Baseline.Instructions != n-1 {
		t.Errorf("5%% allowed: exit %d, %v\n%s", code, err, out)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A case the baseline holds as an error (bench failed there: a tool missing
// on main) is neither "new" nor absent: the cell says it failed there, and a
// run whose only case that is says so (it said "no case of this run is in
// it", a review finding).
func TestBaselineFailedThere(t *testing.T) {
	failed := benchCase("/ci/kws.tflite", "mps2-an386", -1, 0, 0, 0)
	failed["error"] = "qemu-system-arm: not found"
	bl, err := loadBaseline(writeBaseline(t, t.TempDir(), failed, benchCase("/ci/ad.tflite", "mps2-an386", 500, 64, 100, 100)))
	if err != nil {
		t.Fatal(err)
	}
	r := benchResult{Model: "/pr/kws.tflite", Board: "mps2-an386", Instructions: 1000, ArenaBytes: 256, FlashBytes: 2000, RAMBytes: 300}
	if got := bl.compare(&r, 0); len(got) != 0 || r.Baseline != nil || r.BaselineError != "qemu-system-arm: not found" || r.change() != "failed there" {
		t.Errorf("regressions %v, baseline %+v, error %q, cell %q; want none, none, the baseline's error, \"failed there\"", got, r.Baseline, r.BaselineError, r.change())
	}
	r = benchResult{Model: "/pr/ic.tflite", Board: "mps2-an386", Instructions: 1000}
	if bl.compare(&r, 0); r.change() != "new" {
		t.Errorf("a case in neither list: %q, want new", r.change())
	}
}

// Through the CLI: a run whose one case the baseline holds as an error
// exits 1 naming that error, not "no case of this run is in it".
func TestBaselineFailedThereCLI(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	failed := benchCase(mlp, "host", -1, 0, 0, 0)
	failed["error"] = "gcc: not found"
	p := writeBaseline(t, t.TempDir(), failed, benchCase("/ci/ad.tflite", "host", 500, 64, 100, 100))
	code, _, stderr := mcugen(t, "bench", mlp, "--board", "host", "--baseline", p)
	if code != 1 || !strings.Contains(stderr, "no case of this run is measured in it: it holds mlp_int8.tflite on host (gcc: not found) as an error, nothing to compare with") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
