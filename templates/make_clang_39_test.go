package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMakeClang39: the make project built with `make COMPILER=clang` (clang
// compiles the model, the runtime and the example; the board's gcc links)
// runs with every vector matching on the M4, the M55, the M3, the M0
// (micro:bit), AArch64 and the host, warning-free under -Werror; the flags stamp records clang. An unknown
// COMPILER stops make with one line naming it.
func TestMakeClang39(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needTool(t, "make", "clang", "arm-none-eabi-gcc", "qemu-system-arm", "aarch64-linux-gnu-gcc", "qemu-aarch64", "gcc")
	for _, bn := range []string{"mps2-an386", "mps3-an547", "mps2-an385", "microbit", "aarch64-linux", "host"} {
		t.Run(bn, func(t *testing.T) {
			t.Parallel()
			p := fakeProject(t, Make, board(t, bn), "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			out := mustRun(t, dir, 2*time.Minute, "make", "-s", "run", "COMPILER=clang", "CFLAGS=-Wall -Wextra -Werror")
			checkExampleOutput(t, out, p)
			stamp, err := os.ReadFile(filepath.Join(dir, "build", "flags"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(stamp), "clang ") {
				t.Errorf("build/flags %q: the objects were not compiled by clang", stamp)
			}
			if bn != "host" && bn != "aarch64-linux" && !strings.Contains(string(stamp), "-isystem ") {
				t.Errorf("build/flags %q: no C library headers for clang", stamp)
			}
			if bn == "mps2-an386" {
				if !strings.Contains(string(stamp), "-munaligned-access") {
					t.Errorf("build/flags %q: the M4 takes unaligned loads, and clang was not told", stamp)
				}
				bad, err := run(t, dir, time.Minute, "make", "-s", "COMPILER=icc")
				if err == nil || !strings.Contains(bad, "COMPILER=icc: want gcc or clang") {
					t.Errorf("make COMPILER=icc: %v\n%s", err, bad)
				}
			}
			if bn == "microbit" && strings.Contains(string(stamp), "-munaligned-access") {
				t.Errorf("build/flags %q: the M0 (v6-M) takes no unaligned loads", stamp)
			}
			if bn == "mps2-an385" || bn == "mps3-an547" {
				// v7-M and v8.1-M take unaligned loads too; only v6-M does not.
				if !strings.Contains(string(stamp), "-munaligned-access") {
					t.Errorf("build/flags %q: no -munaligned-access", stamp)
				}
			}
		})
	}
}
