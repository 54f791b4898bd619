package pipeline

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// VWW on an M4 with a 3 KiB stack: its in-place plan (36,864 B) needs more
// kernel stack than that, so the plan out of place (46,080 B) is the one
// the board must hold. With 1 B less RAM than the in-place plan and the
// stack the message said "1 B short", and with that byte added "9,216 B
// short" (review finding). Both now give the plan the build would use,
// and say why the in-place one is out. (The test had a 4 KiB stack until
// session 53, when the depthwise planes learned to run in slices of their
// channels: a 4 KiB stack now holds VWW's in-place forms, and 40,960 B of
// RAM fits it.)
func TestFitErrorOfThePlanKept(t *testing.T) {
	const stack = 3072
	model := filepath.Join(sharedDir(t), mlperfModels[1].file)
	for _, ram := range []int{36864 + stack - 1, 36864 + stack} {
		name := "an386-r" + strconv.Itoa(ram)
		b := starBoard(t, name, an386Regions(name, stack, `"code", "weights"`, strconv.Itoa(ram), `"data", "arena"`))
		_, err := Compile(model, Options{Board: b, Version: "test"})
		var fe *FitError
		if !errors.As(err, &fe) || fe.Need != 46080+stack || fe.Have != int64(ram) ||
			!strings.Contains(err.Error(), "in place the arena would be 36,864 B, but in-place forms need more stack than the board's 3,072 B") {
			t.Errorf("RAM %d B: %v; want the 46,080 B plan and the stack 49,152 B against %d B, and why not in place", ram, err, ram)
		}
	}
	// A 4 KiB stack holds the in-place forms: 40,960 B of RAM is enough.
	b4 := starBoard(t, "an386-r40960", an386Regions("an386-r40960", 4096, `"code", "weights"`, "40960", `"data", "arena"`))
	if s, err := Compile(model, Options{Board: b4, Version: "test"}); err != nil || s.Plan.ArenaBytes != 36864 {
		t.Errorf("4 KiB stack, 40,960 B RAM: %v; want the 36,864 B in-place plan to fit", err)
	}
	// With the stack for the in-place forms it fits at the in-place bound.
	b := starBoard(t, "an386-r8k", an386Regions("an386-r8k", 8192, `"code", "weights"`, "45056", `"data", "arena"`))
	s, err := Compile(model, Options{Board: b, Version: "test"})
	if err != nil || s.Plan.ArenaBytes != 36864 {
		t.Errorf("8 KiB stack, 45,056 B RAM: %v; want the 36,864 B in-place plan to fit", err)
	}
}
