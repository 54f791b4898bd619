package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A board whose boot ROM needs what mcugen's runtime does not provide (the
// RP2040's boot2, the i.MX RT's FlexSPI header) gets make and cmake projects
// whose README says the image is for compile and size checks and why, and
// whose `make run` says so, where they told the user to flash it (review
// finding); a board that boots still reads "flash it with your board's
// tool".
func TestNoBootBoardsSaySo(t *testing.T) {
	for _, c := range []struct{ board, why string }{
		{"rp2040", "boot2 stage"},
		{"teensy40", "FlexSPI configuration block"},
		{"nucleo-f746zg", ""},
	} {
		for _, kind := range []Kind{Make, CMake} {
			files, err := Files(fakeProject(t, kind, board(t, c.board), "fake", ""))
			if err != nil {
				t.Fatal(err)
			}
			readme := strings.Join(strings.Fields(string(files["README.md"])), " ")
			if c.why == "" {
				if !strings.Contains(readme, "flash it with your board's tool") || strings.Contains(readme, "does not boot") {
					t.Errorf("%s %s: README does not say to flash the image:\n%s", c.board, kind, readme)
				}
				continue
			}
			if !strings.Contains(readme, "for compile and size checks") || !strings.Contains(readme, "does not boot on it as is") ||
				!strings.Contains(readme, c.why) || strings.Contains(readme, "flash it with your board's tool") {
				t.Errorf("%s %s: README does not say the image does not boot, and why:\n%s", c.board, kind, readme)
			}
		}
	}
	needTool(t, "make", "arm-none-eabi-gcc")
	dir := t.TempDir()
	if _, err := Write(dir, fakeProject(t, Make, board(t, "teensy40"), "fake", "")); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, dir, 2*time.Minute, "make", "-s", "run")
	if err == nil || !strings.Contains(out, "does not boot on it as is") || !strings.Contains(out, "FlexSPI") {
		t.Errorf("make run on teensy40: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "fake.elf")); err != nil {
		t.Errorf("the image for size checks was not built: %v", err)
	}
}
