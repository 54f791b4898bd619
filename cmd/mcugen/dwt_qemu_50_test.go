package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user's board run under QEMU whose counter is the DWT's (the stm32
// family's) read no instructions, "n/a" in silence: only tune said why
// (docs review). run says it now, once, and a catalog QEMU board does not.
func TestDWTBoardUnderQEMUSaysWhy50(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a firmware")
	}
	needQEMU(t)
	dir := t.TempDir()
	star := filepath.Join(dir, "np2dwt.star")
	if err := os.WriteFile(star, []byte(`board(
    name = "np2-dwt",
    inherits = ["netduinoplus2"],
    counter = counter(kind = "dwt", addr = 0xE0001004, hz = 168000000),
)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join("..", "..", "testdata", "onnx", "mlp.onnx")
	code, out, errs := mcugen(t, "run", model, "--boards", star, "--board", "np2-dwt")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "n/a instructions") {
		t.Errorf("stdout %q: want n/a instructions", out)
	}
	if strings.Count(errs, "QEMU does not model") != 1 || !strings.Contains(errs, "board np2-dwt counts with the DWT") {
		t.Errorf("stderr %q: want one line saying QEMU does not model the DWT", errs)
	}
	// A board with counter = "none" under QEMU: said too (the kind is
	// "none" there, which the first check missed: review).
	none := filepath.Join(dir, "np2none.star")
	if err := os.WriteFile(none, []byte("board(name = \"np2-none\", inherits = [\"netduinoplus2\"], counter = \"none\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = mcugen(t, "run", model, "--boards", none, "--board", "np2-none")
	if code != 0 || !strings.Contains(errs, "board np2-none has no counter: no instruction count under QEMU") {
		t.Errorf("counter none: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "run", model, "--board", "netduinoplus2")
	if code != 0 || strings.Contains(errs, "QEMU does not model") {
		t.Errorf("netduinoplus2: exit %d, stderr %q", code, errs)
	}
}
