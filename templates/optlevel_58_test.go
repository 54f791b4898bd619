package templates

import (
	"slices"
	"strings"
	"testing"
)

// The projects' own words about the optimization level follow the board's:
// at -Os the Makefile's header, the CMakeLists.txt comment and the Bazel
// README name -Os where they said -O2 whatever the board (review); at the
// default they say -O2 (the Makefile's help has OPT=-Os as an example).
func TestProjectsSayTheBoardsOpt58(t *testing.T) {
	osb := *board(t, "mps2-an386")
	osb.CFlags = append(slices.Clone(osb.CFlags), "-Os")
	for _, c := range []struct {
		opt  string
		kind Kind
		file string
		want string
	}{
		{"-Os", Make, "Makefile", "optimization level, -Os by default"},
		{"-Os", CMake, "CMakeLists.txt", "# the board's -Os, the level mcugen measures"},
		{"-Os", Bazel, "README.md", "and the model's library then at the board's `-Os`, the level mcugen measures at"},
		{"-O2", Make, "Makefile", "optimization level, -O2 by default"},
		{"-O2", CMake, "CMakeLists.txt", "# RelWithDebInfo: -O2 (with -g), the level mcugen measures"},
		{"-O2", Bazel, "README.md", "`-c opt` builds at `-O2`, the level mcugen measures at"},
	} {
		b := board(t, "mps2-an386")
		if c.opt == "-Os" {
			b = &osb
		}
		files, err := Files(fakeProject(t, c.kind, b, "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		text := string(files[c.file])
		if !strings.Contains(text, c.want) {
			t.Errorf("%s %s: %s lacks %q", c.opt, c.kind, c.file, c.want)
		}
		if c.opt == "-O2" && c.kind != Make && strings.Contains(text, "-Os") { // the Makefile's OPT=-Os is an example
			t.Errorf("-O2 %s: %s names -Os", c.kind, c.file)
		}
	}
}
