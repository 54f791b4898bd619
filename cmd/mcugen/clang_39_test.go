package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/internal/needtool"
)

// --cc clang as a user meets it (review of session 39): run and test say
// which compiler built the firmware, in text and JSON; bench's table keeps
// its columns with "dsp/clang"; a --baseline of gcc's cases names the
// compilers when none matches; a --keep directory reused by a gcc build
// loses the clang objects; an unknown --cc is a usage error.
func TestClangCLI39(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware under QEMU")
	}
	needQEMU(t)
	needtool.Need(t, "clang", "clang")
	model := "../../testdata/tflite/mlp_int8.tflite"
	code, out, errs := mcugen(t, "run", model, "--board", "mps2-an386", "--cc", "clang")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "board mps2-an386 (dsp, clang):") {
		t.Errorf("run printed %q: want the compiler beside the target", out)
	}
	code, out, errs = mcugen(t, "test", model, "--board", "mps2-an386", "--cc", "clang", "--random", "2", "--json")
	if code != 0 {
		t.Fatalf("test: exit %d: %s", code, errs)
	}
	var rep struct {
		Results []struct {
			Compiler string `json:"compiler"`
			Failed   int    `json:"failed"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Results) != 1 || rep.Results[0].Compiler != "clang" || rep.Results[0].Failed != 0 {
		t.Errorf("test --json: %v, %+v: want one passing result with compiler clang\n%s", err, rep, out)
	}

	keep := t.TempDir()
	if code, _, errs := mcugen(t, "bench", model, "--board", "mps2-an386", "--cc", "clang", "--target", "generic", "--keep", keep); code != 0 {
		t.Fatalf("bench --cc clang: exit %d: %s", code, errs)
	}
	objs, _ := filepath.Glob(filepath.Join(keep, "build", "clang*.o"))
	if len(objs) == 0 {
		t.Fatalf("no clang objects in the kept build")
	}
	base := filepath.Join(t.TempDir(), "gcc.json")
	code, out, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--keep", keep, "--json")
	if code != 0 {
		t.Fatalf("bench (gcc) into the same --keep: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if objs, _ := filepath.Glob(filepath.Join(keep, "build", "clang*.o")); len(objs) != 0 {
		t.Errorf("gcc's build left clang's objects: %v", objs)
	}

	code, out, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--cc", "clang", "--target", "generic")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || len(strings.Fields(lines[1])) < 4 || strings.Fields(lines[1])[2] != "generic/clang" {
		t.Fatalf("bench table:\n%s", out)
	}
	// The count ends under its heading's end (the columns are right-aligned).
	t2 := strings.Index(lines[1], "generic/clang") + len("generic/clang")
	count := strings.Fields(lines[1][t2:])[0]
	if got, want := t2+strings.Index(lines[1][t2:], count)+len(count), strings.Index(lines[0], "instructions")+len("instructions"); got != want {
		t.Errorf("bench table: the instruction count ends at column %d, its heading at %d:\n%s", got, want, out)
	}

	code, _, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--cc", "clang", "--baseline", base)
	oneErrorLine(t, "--baseline of gcc's cases", code, errs, 1, "no case of this run is in it", "its cases were built by gcc, this run's by clang (--cc)")

	code, _, errs = mcugen(t, "run", model, "--board", "mps2-an386", "--cc", "icc")
	if code != 2 || !strings.Contains(errs, "--cc") {
		t.Errorf("--cc icc: exit %d, %q: want a usage error naming --cc", code, errs)
	}
}
