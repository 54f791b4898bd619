package pipeline

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// VWW on an M4 with a 4 KiB stack: its in-place plan (36,864 B) needs more
// kernel stack than that, so the plan out of place (46,080 B) is the one
// the board must hold. With 40,959 B of RAM the message said "1 B short" (of
// the in-place plan and the stack), and with that byte added "9,216 B
// short" (review finding). Both now give the plan the build would use,
// and say why the in-place one is out.
func TestFitErrorOfThePlanKept(t *testing.T) {
	ram40k := map[int]string{}
	for _, n := range []int{40959, 40960} {
		ram40k[n] = an386Regions("an386-r"+strconv.Itoa(n), 4096, `"code", "weights"`, strconv.Itoa(n), `"data", "arena"`)
	}
	model := filepath.Join(sharedDir(t), mlperfModels[1].file)
	for _, ram := range []int{40959, 40960} {
		b := starBoard(t, "an386-r"+strconv.Itoa(ram), ram40k[ram])
		_, err := Compile(model, Options{Board: b, Version: "test"})
		var fe *FitError
		if !errors.As(err, &fe) || fe.Need != 46080+4096 || fe.Have != int64(ram) ||
			!strings.Contains(err.Error(), "in place the arena would be 36,864 B, but in-place forms need more stack than the board's 4,096 B") {
			t.Errorf("RAM %d B: %v; want the 46,080 B plan and the stack 50,176 B against %d B, and why not in place", ram, err, ram)
		}
	}
	// With the stack for the in-place forms it fits at the in-place bound.
	b := starBoard(t, "an386-r8k", an386Regions("an386-r8k", 8192, `"code", "weights"`, "45056", `"data", "arena"`))
	s, err := Compile(model, Options{Board: b, Version: "test"})
	if err != nil || s.Plan.ArenaBytes != 36864 {
		t.Errorf("8 KiB stack, 45,056 B RAM: %v; want the 36,864 B in-place plan to fit", err)
	}
}
