package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A board file's cflags "-Os" is its optimization level: the build's own
// -O2 went after it, so the firmware was built at -O2 whatever the board
// said (a review finding). The compile line of build.sh ends its -O options
// with the board's, and a board without one builds at -O2.
func TestBoardOptLevel(t *testing.T) {
	small := boardFrom(t, `board(name = "my-os", inherits = "mps2-an386", cflags = ["-Os"])`+"\n", "my-os")
	if got := small.OptLevel(); got != "-Os" {
		t.Errorf("OptLevel %q, want -Os", got)
	}
	plain := board(t, "mps2-an386")
	if got := plain.OptLevel(); got != "-O2" {
		t.Errorf("mps2-an386: OptLevel %q, want -O2", got)
	}
	needTools(t, small)
	for _, c := range []struct {
		b    string
		want string
	}{{"my-os", "-Os"}, {"mps2-an386", "-O2"}} {
		b := small
		if c.b == "mps2-an386" {
			b = plain
		}
		dir := t.TempDir()
		if _, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}}, dir, fakeOptions(true)); err != nil {
			t.Fatal(err)
		}
		sh, err := os.ReadFile(filepath.Join(dir, "build.sh"))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, line := range strings.Split(string(sh), "\n") {
			if !strings.Contains(line, "-std=c99") {
				continue
			}
			lines++
			last := ""
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "-O") {
					last = f
				}
			}
			if last != c.want {
				t.Errorf("%s: compile line's last -O is %q, want %s:\n%s", c.b, last, c.want, line)
			}
		}
		if lines == 0 {
			t.Errorf("%s: no compile line in build.sh:\n%s", c.b, sh)
		}
	}
}
