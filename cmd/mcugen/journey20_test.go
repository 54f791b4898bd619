package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// plan on a board the model does not fit still prints the plan (it is the
// answer to "how much RAM?"), then the one-line fit error, exit 1
// (user-journey finding: only the error was printed).
func TestPlanThatDoesNotFitIsShown(t *testing.T) {
	dir := sharedModels(t)
	model := filepath.Join(dir, "vww/vww_96_int8.tflite")
	code, out, errs := mcugen(t, "plan", model, "--board", "microbit")
	oneErrorLine(t, "plan on microbit", code, errs, 1, "does not fit on microbit")
	if !strings.Contains(out, "arena 37,440 B") {
		t.Errorf("no plan printed:\n%s", out)
	}
	code, out, _ = mcugen(t, "plan", model, "--board", "microbit", "--json")
	if code != 1 || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"arena_bytes": 37440`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}
