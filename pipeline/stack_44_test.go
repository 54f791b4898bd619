package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/runner"
)

// A board whose cflags build at -O0 is checked with clang's unoptimized
// frames for a clang build (the kernels' #pragma GCC optimize("Og") is
// gcc's alone): KWS on an M4 with a 4 KiB stack (3,072 B of local arrays)
// passed the check and then hung overflowing it, needing 7,240 B (review
// finding). gcc's build still fits.
func TestClangO0StackFrames(t *testing.T) {
	b := starBoard(t, "an386-k-O0", "board(name = \"an386-k-O0\", inherits = \"mps2-an386\", stack_bytes = 4096, cflags = [\"-mthumb\", \"-O0\"])\n")
	model := filepath.Join(sharedDir(t), mlperfModels[0].file)
	if _, err := Compile(model, Options{Board: b, Version: "test"}); err != nil {
		t.Fatalf("gcc at -O0 (kernels at -Og): %v", err)
	}
	_, err := Compile(model, Options{Board: b, Version: "test", Compiler: runner.CompilerClang})
	var fe *FitError
	if !errors.As(err, &fe) || fe.Need != 3072+ClangO0StackFrames || !strings.Contains(err.Error(), "clang's at -O0") {
		t.Fatalf("clang at -O0: %v; want a stack fit error of %d B naming clang's -O0 frames", err, 3072+ClangO0StackFrames)
	}
}

// starBoard loads board name from a board file holding src.
func starBoard(t *testing.T, name, src string) *boards.Board {
	t.Helper()
	file := filepath.Join(t.TempDir(), "boards.star")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBoard(name, file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// an386Regions is a board file line: mps2-an386 with the given stack (0:
// its own) and a FLASH and a RAM region holding flashHolds and ramHolds.
func an386Regions(name string, stack int, flashHolds, ramLength, ramHolds string) string {
	st := ""
	if stack > 0 {
		st = fmt.Sprintf(" stack_bytes = %d,", stack)
	}
	return fmt.Sprintf("board(name = %q, inherits = \"mps2-an386\",%s memory = [\n"+
		"    region(name = \"FLASH\", origin = 0x00000000, length = 4194304, holds = [%s]),\n"+
		"    region(name = \"RAM\", origin = 0x20000000, length = %s, holds = [%s]),\n])\n", name, st, flashHolds, ramLength, ramHolds)
}
