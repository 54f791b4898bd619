package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A figure a run could not measure is -1, as README.md says: stack_bytes
// on the host (it was left out), and in a case that stopped with an error
// the sizes too (they were 0, a size). A host report with them is a
// baseline bench takes.
func TestUnmeasuredFiguresAreMinusOne50(t *testing.T) {
	type row struct {
		Instructions *int64 `json:"instructions"`
		Arena        *int64 `json:"arena_bytes"`
		Flash        *int64 `json:"flash_bytes"`
		RAM          *int64 `json:"ram_bytes"`
		Stack        *int64 `json:"stack_bytes"`
		Error        string `json:"error"`
	}
	var rep struct{ Results []row }
	good, bad := "../../testdata/onnx/mlp.onnx", "../../testdata/bad/add_dtype_mismatch.onnx"
	code, out, errs := mcugen(t, "bench", good, bad, "--board", "host", "--json")
	if code != 1 {
		t.Fatalf("exit %d (want 1: one case failed): %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	ok, failed := rep.Results[0], rep.Results[1]
	if ok.Error != "" || ok.Stack == nil || *ok.Stack != -1 || *ok.Instructions != -1 || *ok.Arena <= 0 || *ok.Flash <= 0 {
		t.Errorf("the host row: %+v", ok)
	}
	for name, v := range map[string]*int64{"instructions": failed.Instructions, "arena_bytes": failed.Arena, "flash_bytes": failed.Flash, "ram_bytes": failed.RAM, "stack_bytes": failed.Stack} {
		if failed.Error == "" || v == nil || *v != -1 {
			t.Errorf("the failed row's %s is not -1: %+v", name, failed)
		}
	}
	base := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, "bench", good, "--board", "host", "--baseline", base); code != 0 {
		t.Errorf("its report as a baseline: exit %d: %s", code, errs)
	}
}

// A --baseline that is JSON but not a bench report is said in JSON's
// words: "cannot unmarshal array into Go value of type struct { Results
// *[]json.RawMessage ... }" (CLI review).
func TestBaselineNotAReportInJSONTerms50(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"[1, 2]":           "it is a JSON array, where bench writes an object",
		`{"results": 5}`:   `its "results" is a JSON number, where bench writes a list`,
		`{"results": "x"}`: `its "results" is a JSON string, where bench writes a list`,
	} {
		f := filepath.Join(dir, "b.json")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := mcugen(t, "bench", "../../testdata/onnx/mlp.onnx", "--board", "host", "--baseline", f)
		if code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "Go value") {
			t.Errorf("%s: exit %d, %q", body, code, errs)
		}
	}
}
