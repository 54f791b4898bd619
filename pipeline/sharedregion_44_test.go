package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
)

// Weights in a RAM region that also holds the data (the stack) and the arena
// must fit beside them: cnn_int8 on a 20 KiB region with a 16 KiB stack was
// said to fit and failed to link (review finding). Its weights even kept
// int8 (5,368 B), the 256 B arena and the stack need 22,008 B. With 64 KiB
// it fits, int16 weights and all.
func TestWeightsBesideArenaAndStack(t *testing.T) {
	board := func(kib string) *boards.Board {
		name := "an386-shared" + kib + "k"
		return starBoard(t, name, an386Regions(name, 0, `"code"`, kib+" * KiB", `"data", "arena", "weights"`))
	}
	model := filepath.Join("..", "testdata", "tflite", "cnn_int8.tflite")
	_, err := Compile(model, Options{Board: board("20"), Version: "test"})
	var fe *FitError
	if !errors.As(err, &fe) || fe.Have != 20*1024 || fe.Need != 22008 || !strings.Contains(err.Error(), "what shares the region with them") {
		t.Fatalf("20 KiB: %v; want 22,008 B against 20,480 B, naming the arena and stack beside the weights", err)
	}
	s, err := Compile(model, Options{Board: board("64"), Version: "test"})
	if err != nil {
		t.Fatalf("64 KiB: %v", err)
	}
	if s.Lean != nil && len(s.Lean.Kernels) > 0 {
		t.Errorf("64 KiB: %d layers kept int8; they fit int16", len(s.Lean.Kernels))
	}
	if !testing.Short() {
		runCount(t, s)
	}
}
