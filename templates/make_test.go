package templates

import (
	"os"
	"path/filepath"
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
			// Link-time optimization links (user-journey finding: the
			// fault handler, called only from the naked entry's asm, was
			// dropped) and runs the same.
			mustRun(t, dir, time.Minute, "make", "-s", "clean")
			out = mustRun(t, dir, 2*time.Minute, "make", "-s", "run", "CFLAGS=-Wall -Wextra -Werror -flto", "LDFLAGS=-flto -O2")
			checkExampleOutput(t, out, p)
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

// TestMakeMapFileInProject: the make project's link map goes to build/<name>.map inside
// the project, for every bare-metal board; it once expanded $(BUILD) before BUILD was
// set and wrote /<name>.map. `make -n` shows the link command without a toolchain; a
// real build for mps2-an386 then checks where the map lands (tests run as root, who
// could write to /, so the path is checked, not a permission error).
func TestMakeMapFileInProject(t *testing.T) {
	needTool(t, "make")
	bs, err := boards.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	const name = "map_probe"
	for _, b := range bs {
		if !b.BareMetal() {
			continue
		}
		dir := t.TempDir()
		if _, err := Write(dir, fakeProject(t, Make, b, name, "")); err != nil {
			t.Fatal(err)
		}
		var link string
		for _, l := range strings.Split(mustRun(t, dir, time.Minute, "make", "-n"), "\n") {
			if strings.Contains(l, " -o build/"+name+".elf") {
				link = l
			}
		}
		if !strings.Contains(link, " -Wl,-Map=build/"+name+".map ") || strings.Contains(link, "-Map=/") {
			t.Errorf("%s: the link command does not write the map to build/%s.map:\n%s", b.Name, name, link)
		}
	}
	if testing.Short() {
		return
	}
	needTool(t, "arm-none-eabi-gcc")
	_, statErr := os.Stat("/" + name + ".map")
	rootHadMap := statErr == nil
	dir := t.TempDir()
	if _, err := Write(dir, fakeProject(t, Make, board(t, "mps2-an386"), name, "")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, 2*time.Minute, "make", "-s")
	if st, err := os.Stat(filepath.Join(dir, "build", name+".map")); err != nil || st.Size() == 0 {
		t.Errorf("no map file in the project's build directory: %v", err)
	}
	if _, err := os.Stat("/" + name + ".map"); err == nil && !rootHadMap {
		t.Errorf("make wrote /%s.map", name)
	}
	mustRun(t, dir, time.Minute, "make", "-s", "clean")
	if _, err := os.Stat(filepath.Join(dir, "build")); !os.IsNotExist(err) {
		t.Errorf("make clean left build/ (%v)", err)
	}
}

// TestCMakeMapFileInProject: the CMake project's link map is written beside the
// firmware in the build tree, and nothing of the build lands outside the project.
func TestCMakeMapFileInProject(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmake")
	}
	needTool(t, "cmake", "make", "arm-none-eabi-gcc")
	parent := t.TempDir()
	dir := filepath.Join(parent, "proj")
	if _, err := Write(dir, fakeProject(t, CMake, board(t, "mps2-an386"), "fake", "")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, 2*time.Minute, "cmake", "-B", "build", "-DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake")
	mustRun(t, dir, 2*time.Minute, "cmake", "--build", "build")
	if st, err := os.Stat(filepath.Join(dir, "build", "fake_example.elf.map")); err != nil || st.Size() == 0 {
		t.Errorf("no map file beside build/fake_example.elf: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("the build wrote beside the project: %v", entries)
	}
}

// A user's own flags on the command line add to the core's, never replace
// them: `make CFLAGS=...` and `cmake -DCMAKE_C_FLAGS=...` built for the
// wrong core (ARM mode, no DSP), which the model's #error and the runtime's
// Thumb-only instructions stopped (user-journey finding).
func TestUserFlagsKeepTheCoreFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make and cmake")
	}
	needTool(t, "make", "cmake", "arm-none-eabi-gcc")
	const user = "-Wall -Wextra -Werror -DUSER_FLAG=1"
	t.Run("make", func(t *testing.T) {
		p := fakeProject(t, Make, board(t, "mps2-an386"), "fake", "")
		dir := t.TempDir()
		if _, err := Write(dir, p); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, dir, 2*time.Minute, "make", "CFLAGS="+user, "LDFLAGS=-Wl,--print-memory-usage")
		for _, want := range []string{"-mcpu=cortex-m4", "-DUSER_FLAG=1", "-Werror", "--print-memory-usage"} {
			if !strings.Contains(out, want) {
				t.Errorf("make with the user's flags: no %s in\n%s", want, out)
			}
		}
		// Another OPT rebuilds every object; the same flags again build
		// nothing (template journey finding: `make OPT=-Os size` after
		// `make` said "Nothing to be done" and sized the -O2 build).
		out = mustRun(t, dir, 2*time.Minute, "make", "OPT=-Os", "CFLAGS="+user, "LDFLAGS=-Wl,--print-memory-usage")
		if n := strings.Count(out, " -Os "); n < 3 {
			t.Errorf("make OPT=-Os after make: %d compiles with -Os, want every object rebuilt:\n%s", n, out)
		}
		out = mustRun(t, dir, time.Minute, "make", "OPT=-Os", "CFLAGS="+user, "LDFLAGS=-Wl,--print-memory-usage")
		if strings.Contains(out, "-c ") {
			t.Errorf("make with the same flags again rebuilt:\n%s", out)
		}
	})
	t.Run("cmake", func(t *testing.T) {
		p := fakeProject(t, CMake, board(t, "mps2-an386"), "fake", "")
		dir := t.TempDir()
		if _, err := Write(dir, p); err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, 2*time.Minute, "cmake", "-B", "build", "-DCMAKE_C_FLAGS="+user)
		out := mustRun(t, dir, 3*time.Minute, "cmake", "--build", "build", "-v")
		for _, want := range []string{"-mcpu=cortex-m4", "-DUSER_FLAG=1", "-Werror"} {
			if !strings.Contains(out, want) {
				t.Errorf("cmake with the user's CMAKE_C_FLAGS: no %s in\n%s", want, out)
			}
		}
	})
}
