package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/runner"
)

// A board file whose RAM origin is mistyped (0x30000000 on mps2-an386, where
// QEMU maps nothing) locks the core up at its first fault. That was reported
// as QEMU's register dump ("killed by signal aborted", review finding); now
// it is a LockupError naming the region and the machine's memory.
func TestMistypedRAMOriginNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	b := starBoard(t, "an386-typo", `board(name = "an386-typo", inherits = "mps2-an386", memory = [
    region(name = "FLASH", origin = 0x00000000, length = 4 * MiB, holds = ["code", "weights"]),
    region(name = "RAM", origin = 0x30000000, length = 64 * KiB, holds = ["data", "arena"]),
])`)
	s, err := Compile(filepath.Join("..", "testdata", "tflite", "cnn_int8.tflite"), Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Execute(RandomInputs(s.Graph, 1, 45), t.TempDir(), time.Minute)
	var le *runner.LockupError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "region RAM (0x30000000, 65,536 B) lies outside the memory") || !strings.Contains(err.Error(), "mps2-an386") {
		t.Fatalf("err = %v; want a lockup naming the RAM region at 0x30000000 and the machine", err)
	}
}
