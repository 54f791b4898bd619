package pipeline

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Weights a board file places in its RAM region are loaded into RAM, not
// flash: the same model on two boards that differ only in which region holds
// the weights must move the weights' bytes from the flash figure to the RAM
// figure, by the same amount (review finding: run's size line counted them
// as flash on both).
func TestRAMWeightsCountedAsRAM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two firmwares")
	}
	model := filepath.Join("..", "testdata", "tflite", "cnn_int8.tflite")
	// run builds and runs the model on the board file src's board name.
	run := func(name, src string) (flash, ram int) {
		b := starBoard(t, name, src)
		s, err := Compile(model, Options{Board: b, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Execute(RandomInputs(s.Graph, 1, 45), t.TempDir(), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.AllMatch() {
			t.Errorf("%s: outputs differ from the reference interpreter", name)
		}
		return x.Firmware.FlashBytes(), x.Firmware.RAMBytes()
	}
	build := func(name, flashHolds, ramHolds string) (flash, ram int) {
		return run(name, an386Regions(name, 0, flashHolds, "64 * KiB", ramHolds))
	}
	flashA, ramA := build("an386-wflash", `"code", "weights"`, `"data", "arena"`)
	flashB, ramB := build("an386-wram", `"code"`, `"data", "arena", "weights"`)
	t.Logf("flash %d → %d B, RAM %d → %d B", flashA, flashB, ramA, ramB)
	// cnn_int8's constants are 5,368 B as int8; int16 weights take more.
	moved := flashA - flashB
	if moved < 5000 {
		t.Errorf("flash %d B with the weights in FLASH, %d B with them in RAM: want at least the weights' 5,000 B less", flashA, flashB)
	}
	if grew := ramB - ramA; grew < moved-32 || grew > moved+32 {
		t.Errorf("RAM %d B → %d B (+%d) while flash lost %d B: want the same bytes, within alignment", ramA, ramB, grew, moved)
	}
	// Weights in a second flash region of their own (not marked readonly,
	// as the catalog's FLASH regions are not) stay flash.
	name := "an386-wflash2"
	f, r := run(name, fmt.Sprintf(`board(name = %q, inherits = "mps2-an386", memory = [
    region(name = "FLASH", origin = 0x00000000, length = 2 * MiB, holds = ["code"]),
    region(name = "WFLASH", origin = 0x00200000, length = 2 * MiB, holds = ["weights"]),
    region(name = "RAM", origin = 0x20000000, length = 64 * KiB, holds = ["data", "arena"]),
])`, name))
	if f < flashA-64 || r != ramA {
		t.Errorf("weights in a flash region of their own: flash %d B, RAM %d B; want about %d B and %d B, as with them beside the code", f, r, flashA, ramA)
	}
}
