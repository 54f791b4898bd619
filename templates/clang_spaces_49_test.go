package templates

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A gcc installed under a path with a space (Arm's Windows installer's
// default, "C:\Program Files (x86)\Arm GNU Toolchain ...") reports header
// directories with spaces: the clang builds split them (CMake's configure
// failed, make dropped them in silence; templates review). A wrapper gcc
// here lists one such directory; the make and CMake clang builds keep it
// one argument and build.
func TestClangHeadersUnderSpacedPath49(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware")
	}
	needTool(t, "make", "cmake", "clang", "arm-none-eabi-gcc")
	real, _ := exec.LookPath("arm-none-eabi-gcc")
	tc := filepath.Join(t.TempDir(), "tool chain")
	inc := filepath.Join(tc, "arm-none-eabi", "include")
	os.MkdirAll(inc, 0o755)
	os.MkdirAll(filepath.Join(tc, "bin"), 0o755)
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %q -isystem %q \"$@\"\n", real, inc)
	if err := os.WriteFile(filepath.Join(tc, "bin", "arm-none-eabi-gcc"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(tc, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	b := board(t, "mps2-an386")

	mk := t.TempDir()
	if _, err := Write(mk, fakeProject(t, Make, b, "fake", "")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, mk, 2*time.Minute, "make", "-s", "COMPILER=clang")
	stamp, _ := os.ReadFile(filepath.Join(mk, "build", "flags"))
	if !strings.Contains(string(stamp), "-isystem '"+inc+"'") {
		t.Errorf("build/flags does not hold %q as one argument:\n%s", inc, stamp)
	}

	cm := t.TempDir()
	p := fakeProject(t, CMake, b, "fake", "")
	p.Compiler = "clang"
	if _, err := Write(cm, p); err != nil {
		t.Fatal(err)
	}
	mustRun(t, cm, time.Minute, "cmake", "-B", "build", "-DCMAKE_TOOLCHAIN_FILE="+filepath.Join(cm, "cmake", "arm-none-eabi-clang.cmake"), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
	mustRun(t, cm, 2*time.Minute, "cmake", "--build", "build")
	cc, _ := os.ReadFile(filepath.Join(cm, "build", "compile_commands.json"))
	if !strings.Contains(string(cc), inc) {
		t.Errorf("compile_commands.json does not name %q", inc)
	}
}
