package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// linkWarning matches a compiler's or linker's warning line.
var linkWarning = regexp.MustCompile(`(?m)^.*warning:.*$`)

// TestCMakeClang40: the CMake project of a clang build (compile --cc clang)
// follows its README with clang's toolchain file (clang compiles, the
// board's gcc links) and runs with every vector matching on the M4, the
// M55, the M3, the M0 (micro:bit), AArch64 and the host, with no warning
// from compiler or linker; a -DCMAKE_C_FLAGS of the user's own (which
// replaces the toolchain file's flags) still builds for the board, with
// clang, under -Werror; the gcc toolchain file is there beside it.
func TestCMakeClang40(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needTool(t, "cmake", "make", "clang", "arm-none-eabi-gcc", "qemu-system-arm", "aarch64-linux-gnu-gcc", "qemu-aarch64", "gcc")
	for _, bn := range []string{"mps2-an386", "mps3-an547", "mps2-an385", "microbit", "aarch64-linux", "host"} {
		t.Run(bn, func(t *testing.T) {
			t.Parallel()
			p := fakeProject(t, CMake, board(t, bn), "fake", "")
			p.Compiler = "clang"
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			files, _ := Files(p)
			readme := string(files["README.md"])
			cross := bn != "host"
			if cross {
				for _, tc := range []string{"cmake/arm-none-eabi.cmake", "cmake/arm-none-eabi-clang.cmake"} {
					if bn == "aarch64-linux" {
						tc = strings.Replace(tc, "arm-none-eabi", "aarch64-linux-gnu", 1)
					}
					if files[tc] == nil {
						t.Errorf("no %s", tc)
					}
				}
				if !strings.Contains(readme, "-clang.cmake\ncmake --build build") {
					t.Errorf("README's commands do not take clang's toolchain file:\n%s", readme)
				}
			}
			out := runReadme(t, dir, files)
			checkExampleOutput(t, out, p)
			if w := linkWarning.FindAllString(out, -1); len(w) > 0 {
				t.Errorf("the build warned:\n%s", strings.Join(w, "\n"))
			}
			id, _ := filepath.Glob(filepath.Join(dir, "build", "CMakeFiles", "*", "CMakeCCompiler.cmake"))
			if len(id) != 1 {
				t.Fatalf("CMake's compiler file: %v", id)
			}
			if c, _ := os.ReadFile(id[0]); !strings.Contains(string(c), `set(CMAKE_C_COMPILER_ID "Clang")`) {
				t.Errorf("the project did not compile with clang:\n%s", c)
			}

			// The user's own C flags, and no toolchain file named: the
			// project's default (clang's) with its target and headers.
			mustRun(t, dir, time.Minute, "cmake", "-B", "b2", "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
			out = mustRun(t, dir, 2*time.Minute, "cmake", "--build", "b2", "--target", "run")
			checkExampleOutput(t, out, p)
			cc, err := os.ReadFile(filepath.Join(dir, "b2", "compile_commands.json"))
			if err != nil {
				t.Fatal(err)
			}
			cmds := regexp.MustCompile(`"command": "(\S+) [^"]*"`).FindAllSubmatch(cc, -1)
			if len(cmds) == 0 {
				t.Fatalf("no compile commands")
			}
			for _, c := range cmds {
				line := string(c[0])
				if !strings.HasSuffix(string(c[1]), "clang") || !strings.Contains(line, "-Werror") {
					t.Errorf("compiled with %s, or without the user's flags: %s", c[1], line)
				}
				if bn == "aarch64-linux" && !strings.Contains(line, "--target=aarch64-linux-gnu") ||
					cross && bn != "aarch64-linux" && (!strings.Contains(line, "--target=arm-none-eabi") || !strings.Contains(line, "-isystem ")) {
					t.Errorf("no target or C library headers for clang: %s", line)
				}
			}
		})
	}
}

// TestMakeDefaultCompiler40: a make project's COMPILER defaults to the
// project's compiler (compile --cc), and either builds without a warning
// from compiler or linker: clang's objects beside newlib's made ld warn of an
// executable stack.
func TestMakeDefaultCompiler40(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needTool(t, "make", "clang", "arm-none-eabi-gcc", "qemu-system-arm")
	for _, cc := range []string{"gcc", "clang", ""} {
		t.Run("compiler="+cc, func(t *testing.T) {
			t.Parallel()
			p := fakeProject(t, Make, board(t, "mps2-an386"), "fake", "")
			p.Compiler = cc
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			out := mustRun(t, dir, 2*time.Minute, "make", "run")
			checkExampleOutput(t, out, p)
			if w := linkWarning.FindAllString(out, -1); len(w) > 0 {
				t.Errorf("the build warned:\n%s", strings.Join(w, "\n"))
			}
			stamp, err := os.ReadFile(filepath.Join(dir, "build", "flags"))
			if err != nil {
				t.Fatal(err)
			}
			want := "arm-none-eabi-gcc "
			if cc == "clang" {
				want = "clang "
			}
			if !strings.HasPrefix(string(stamp), want) {
				t.Errorf("build/flags %q: want the objects compiled by %q", stamp, want)
			}
		})
	}
	p := fakeProject(t, Make, board(t, "mps2-an386"), "fake", "")
	p.Compiler = "icc"
	if _, err := Files(p); err == nil ||
		!strings.Contains(err.Error(), `compiler "icc": want gcc or clang`) {
		t.Errorf("compiler icc: %v", err)
	}
}
