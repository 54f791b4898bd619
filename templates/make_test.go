package templates

import (
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
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
			files, _ := Files(p)
			out := runReadme(t, dir, files) // the README's own commands: make run
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

// TestMakeEveryBoard builds the make project for every bare-metal board in the catalog
// and runs it on every one QEMU emulates (hosted boards are covered elsewhere).
func TestMakeEveryBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware for every board")
	}
	needTool(t, "make", "arm-none-eabi-gcc", "qemu-system-arm")
	bs, err := boards.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if !b.BareMetal() {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			p := fakeProject(t, Make, b, "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			mustRun(t, dir, 2*time.Minute, "make", "-s")
			if b.QEMU.Machine == "" {
				return
			}
			checkExampleOutput(t, mustRun(t, dir, time.Minute, "make", "-s", "run"), p)
		})
	}
}

// TestMakeCMakeHosted: the host (native gcc) and aarch64-linux (static, qemu-aarch64)
// boards, through both build systems.
func TestMakeCMakeHosted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs programs")
	}
	needTool(t, "make", "cmake", "gcc", "aarch64-linux-gnu-gcc", "qemu-aarch64")
	for _, bn := range []string{"host", "aarch64-linux"} {
		b := board(t, bn)
		t.Run("make/"+bn, func(t *testing.T) {
			p := fakeProject(t, Make, b, "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			checkExampleOutput(t, mustRun(t, dir, 2*time.Minute, "make", "-s", "run"), p)
		})
		t.Run("cmake/"+bn, func(t *testing.T) {
			p := fakeProject(t, CMake, b, "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			args := []string{"-B", "build"}
			if bn != "host" {
				args = append(args, "-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake")
			}
			mustRun(t, dir, 2*time.Minute, "cmake", args...)
			checkExampleOutput(t, mustRun(t, dir, 2*time.Minute, "cmake", "--build", "build", "--target", "run"), p)
		})
	}
}
