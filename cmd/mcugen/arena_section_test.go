package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The generated static arena goes where the board's catalog entry puts the
// arena: on the NUCLEO-H743ZI the 512 KiB AXI SRAM, not the 128 KiB DTCM
// that holds .data and .bss. Float VWW's 221,184 B arena (184,320 B since
// session 50 ran its float convolutions in place on dsp, still above the
// DTCM) made the make project's link fail ("region `DTCM' overflowed")
// after compile had checked it against the AXI SRAM.
func TestProjectArenaInArenaRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a firmware")
	}
	m := sharedModels(t)
	for _, tool := range []string{"make", "arm-none-eabi-gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian packages make, gcc-arm-none-eabi)", tool)
		}
	}
	dir := filepath.Join(t.TempDir(), "proj")
	code, _, stderr := mcugen(t, "compile", filepath.Join(m, "vww", "vww_96_float.tflite"), "--board", "nucleo-h743zi", "--project", "make", "-o", dir)
	if code != 0 {
		t.Fatalf("compile: exit %d: %s", code, stderr)
	}
	cmd := exec.Command("make", "-s")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	mapFile, err := os.ReadFile(filepath.Join(dir, "build", "vww_96_float.map"))
	if err != nil {
		t.Fatal(err)
	}
	// The output section at the AXI SRAM's origin, 0x24000000, holding the
	// model's arena (184,320 B = 0x2d000).
	if !regexp.MustCompile(`(?m)^\.mcugen_arena\s+0x0*24000000\s+0x2d000`).Match(mapFile) ||
		!regexp.MustCompile(`(?m)^ \.bss\.mcugen\.arena\s`).Match(mapFile) {
		t.Errorf("the arena is not at 0x24000000 in the map:\n%s", grepLines(string(mapFile), "arena"))
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
