package main

import (
	"strings"
	"testing"
)

// mcugen boards shows the Zephyr board name and the Arduino FQBN that
// --project zephyr and --project arduino take from the catalog, as README
// and their error messages say (review finding: only --json had them).
func TestBoardsTableShowsProjects(t *testing.T) {
	code, out, stderr := mcugen(t, "boards")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "zephyr") || !strings.Contains(lines[0], "arduino (fqbn)") {
		t.Errorf("header %q", lines[0])
	}
	found := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "arduino-nano-33-ble" {
			found = true
			if !strings.Contains(l, "arduino_nano_33_ble") || !strings.HasSuffix(l, "arduino:mbed_nano:nano33ble") {
				t.Errorf("row %q", l)
			}
		}
	}
	if !found {
		t.Error("no arduino-nano-33-ble row")
	}
}
