package runner

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
)

// A region a board file puts where QEMU's machine has no memory is named
// after a hang or a lockup; one inside the memory of the machine's catalog
// boards (mps2-an500's PSRAM at 0x60000000) is not, and neither is one on a
// machine the catalog does not know.
func TestUnmappedHint(t *testing.T) {
	cat, err := boards.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*boards.Board{}
	for _, b := range cat {
		byName[b.Name] = b
	}
	with := func(base string, rs ...boards.Region) *boards.Board {
		b := *byName[base]
		b.Name = base + "-custom"
		b.Memory = rs
		return &b
	}
	flash := boards.Region{Name: "FLASH", Origin: 0, Length: 4 << 20, Holds: []string{boards.HoldsCode, boards.HoldsWeights}}
	ram := func(origin, length uint64) boards.Region {
		return boards.Region{Name: "RAM", Origin: origin, Length: length, Holds: []string{boards.HoldsData, boards.HoldsArena}}
	}
	for _, c := range []struct {
		b    *boards.Board
		want string // "" for no hint
	}{
		{with("mps2-an386", flash, ram(0x20000000, 64<<10)), ""},
		{with("mps2-an386", flash, ram(0x30000000, 64<<10)), "RAM (0x30000000, 65,536 B)"},
		// One byte past the end of the machine's RAM (0x20000000 + 4 MiB).
		{with("mps2-an386", flash, ram(0x20000000, 4<<20+1)), "RAM (0x20000000, 4,194,305 B)"},
		{with("mps2-an386", flash, ram(0x203f0000, 64<<10)), ""},
		{with("mps2-an386", flash, ram(0x60000000, 64<<10)), "RAM (0x60000000"},
		{with("mps2-an500", flash, ram(0x60000000, 64<<10)), ""},
		// A region that holds nothing is not the board's memory in use.
		{with("mps2-an386", flash, ram(0x20000000, 64<<10), boards.Region{Name: "X", Origin: 0x70000000, Length: 16}), ""},
	} {
		got := unmappedHint(c.b)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s %+v: hint %q, want one naming %q", c.b.QEMU.Machine, c.b.Memory, got, c.want)
		}
	}
	other := with("mps2-an386", flash, ram(0x30000000, 64<<10))
	other.QEMU.Machine = "lm3s6965evb"
	if got := unmappedHint(other); got != "" {
		t.Errorf("a machine the catalog lacks: hint %q, want none", got)
	}
}
