package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/runner"
)

// A board whose cflags build at -O0 is checked with clang's unoptimized
// frames for a clang build (the kernels' #pragma GCC optimize("Og") is
// gcc's alone): KWS on an M4 with a 4 KiB stack (3,072 B of local arrays)
// passed the check and then hung overflowing it, needing 7,240 B (review
// finding). gcc's build still fits.
func TestClangO0StackFrames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "o0.star")
	src := "board(name = \"an386-k-O0\", inherits = \"mps2-an386\", stack_bytes = 4096, cflags = [\"-mthumb\", \"-O0\"])\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBoard("an386-k-O0", file)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(sharedDir(t), mlperfModels[0].file)
	if _, err := Compile(model, Options{Board: b, Version: "test"}); err != nil {
		t.Fatalf("gcc at -O0 (kernels at -Og): %v", err)
	}
	_, err = Compile(model, Options{Board: b, Version: "test", Compiler: runner.CompilerClang})
	var fe *FitError
	if !errors.As(err, &fe) || fe.Need != 3072+ClangO0StackFrames || !strings.Contains(err.Error(), "clang's at -O0") {
		t.Fatalf("clang at -O0: %v; want a stack fit error of %d B naming clang's -O0 frames", err, 3072+ClangO0StackFrames)
	}
}
