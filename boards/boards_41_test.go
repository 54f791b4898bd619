package boards

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTuningCoreSoftFloat: a Cortex-M4 or M33 board without an FPU keys its
// tuning records apart from the FPU boards' ("cortex-m4 soft-float"); the
// M3 and M0, which have no FPU to leave out, and the FPU boards keep the
// CPU alone.
func TestTuningCoreSoftFloat(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.star")
	src := `board(name = "m4soft", description = "M4 without FPU", inherits = "cortex-m", cpu = "cortex-m4", features = ["dsp"],
      memory = [region(name = "FLASH", origin = 0x00000000, length = 2 * MiB, holds = ["code", "weights"]),
                region(name = "RAM", origin = 0x20000000, length = 256 * KiB, holds = ["data", "arena"])])
board(name = "m33soft", description = "M33 without FPU", inherits = "cortex-m", cpu = "cortex-m33", float_abi = "soft", features = ["dsp"],
      memory = [region(name = "FLASH", origin = 0x00000000, length = 2 * MiB, holds = ["code", "weights"]),
                region(name = "RAM", origin = 0x20000000, length = 256 * KiB, holds = ["data", "arena"])])
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"m4soft":        "cortex-m4 soft-float",
		"m33soft":       "cortex-m33 soft-float",
		"mps2-an386":    "cortex-m4",
		"mps2-an505":    "cortex-m33",
		"mps2-an385":    "cortex-m3",
		"microbit":      "cortex-m0",
		"nucleo-f746zg": "cortex-m7",
	} {
		b, err := cat.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.TuningCore(); got != want {
			t.Errorf("%s (float ABI %q): TuningCore() = %q, want %q", name, b.FloatABI, got, want)
		}
	}
}
