package templates

import (
	"strings"
	"testing"
	"time"
)

func TestMakeQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needTool(t, "make", "arm-none-eabi-gcc", "qemu-system-arm")
	for _, bn := range []string{"mps2-an386", "mps3-an547"} {
		t.Run(bn, func(t *testing.T) {
			p := fakeProject(t, Make, board(t, bn), "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			mustRun(t, dir, 2*time.Minute, "make", "-s")
			out := mustRun(t, dir, time.Minute, "make", "-s", "run")
			checkExampleOutput(t, out, p)
			if !strings.Contains(out, "instructions ") {
				t.Errorf("no instruction count printed:\n%s", out)
			}
			size := mustRun(t, dir, time.Minute, "make", "-s", "size")
			if !strings.Contains(size, "text") {
				t.Errorf("make size printed %q", size)
			}
		})
	}
}
