package templates

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
)

// A board whose cflags name an optimization level builds at it in the
// projects too: make's OPT (which came after the core's flags as -O2) and
// the CMake library's options (after the build type's -O2) take the
// board's "-Os"; a board without one keeps -O2 and no extra option.
func TestProjectsTakeTheBoardsOpt(t *testing.T) {
	osb := *board(t, "mps2-an386")
	osb.CFlags = append(slices.Clone(osb.CFlags), "-Os")
	for _, c := range []struct {
		b         *boards.Board
		make      string
		cmakeOpts string
	}{
		{&osb, "OPT       ?= -Os\n", "-ffunction-sections -fdata-sections -Os)"},
		{board(t, "mps2-an386"), "OPT       ?= -O2\n", "-ffunction-sections -fdata-sections)"},
	} {
		mk, err := Files(fakeProject(t, Make, c.b, "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(mk["Makefile"]), c.make) {
			t.Errorf("-O %s: Makefile has no %q", c.b.OptLevel(), c.make)
		}
		cm, err := Files(fakeProject(t, CMake, c.b, "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cm["CMakeLists.txt"]), "target_compile_options(fake PRIVATE "+c.cmakeOpts) {
			t.Errorf("-O %s: CMakeLists.txt has no options ending %q", c.b.OptLevel(), c.cmakeOpts)
		}
	}
}
