package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCMakeQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware and runs QEMU")
	}
	needTool(t, "cmake", "make", "arm-none-eabi-gcc", "qemu-system-arm")
	for _, bn := range []string{"mps2-an386", "mps3-an547"} {
		t.Run(bn, func(t *testing.T) {
			p := fakeProject(t, CMake, board(t, bn), "fake", "")
			dir := t.TempDir()
			if _, err := Write(dir, p); err != nil {
				t.Fatal(err)
			}
			files, _ := Files(p)
			out := runReadme(t, dir, files) // the README's own two commands
			checkExampleOutput(t, out, p)
			size := mustRun(t, dir, time.Minute, "cmake", "--build", "build", "--target", "size")
			if !strings.Contains(size, "text") {
				t.Errorf("size target printed %q", size)
			}
		})
	}
}

// TestCMakeSubdirectory builds the model library from a user's own CMake project through
// add_subdirectory: the library and its include directory come along, the example does not.
func TestCMakeSubdirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmake")
	}
	needTool(t, "cmake", "make", "arm-none-eabi-gcc")
	p := fakeProject(t, CMake, board(t, "mps2-an386"), "fake", "")
	top := t.TempDir()
	if _, err := Write(filepath.Join(top, "third_party", "fake"), p); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(top, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("CMakeLists.txt", `cmake_minimum_required(VERSION 3.13)
project(user C)
add_subdirectory(third_party/fake)
add_library(user STATIC user.c)
target_link_libraries(user PRIVATE fake)
`)
	write("user.c", `#include "fake.h"
int32_t user_infer(void *x, void *y, void *z)
{
    struct fake_inputs in;
    struct fake_outputs out;
    in.x = x;
    out.y = y;
    out.z = z;
    return fake_run(&in, &out);
}
`)
	mustRun(t, top, 2*time.Minute, "cmake", "-B", "build", "-DCMAKE_TOOLCHAIN_FILE=third_party/fake/cmake/arm-none-eabi.cmake")
	mustRun(t, top, 2*time.Minute, "cmake", "--build", "build")
	if _, err := os.Stat(filepath.Join(top, "build", "third_party", "fake", "libfake.a")); err != nil {
		t.Errorf("the model library was not built: %v", err)
	}
	if _, err := os.Stat(filepath.Join(top, "build", "third_party", "fake", "fake_example.elf")); err == nil {
		t.Errorf("the example was built inside a user's project")
	}
}

// Two models' projects, examples on, in one build beside the application's
// own run target: the example targets carry the model's prefix (user-journey
// finding: both projects made global "run" and "size" targets, and CMake
// refused the second).
func TestCMakeTwoModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cmake")
	}
	needTool(t, "cmake", "make", "arm-none-eabi-gcc")
	b := board(t, "mps2-an386")
	top := t.TempDir()
	for _, prefix := range []string{"fake", "fake2"} {
		if _, err := Write(filepath.Join(top, prefix), fakeProject(t, CMake, b, "fake", prefix)); err != nil {
			t.Fatal(err)
		}
	}
	src := "cmake_minimum_required(VERSION 3.13)\nproject(user C)\nadd_subdirectory(fake)\nadd_subdirectory(fake2)\nadd_custom_target(run COMMAND echo user)\n"
	if err := os.WriteFile(filepath.Join(top, "CMakeLists.txt"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, top, 2*time.Minute, "cmake", "-B", "build", "-DCMAKE_TOOLCHAIN_FILE=fake/cmake/arm-none-eabi.cmake",
		"-DFAKE_BUILD_EXAMPLE=ON", "-DFAKE2_BUILD_EXAMPLE=ON")
	for _, prefix := range []string{"fake", "fake2"} {
		out := mustRun(t, top, 2*time.Minute, "cmake", "--build", "build", "--target", prefix+"_size")
		if !strings.Contains(out, "text") || !strings.Contains(out, prefix+"_example.elf") {
			t.Errorf("%s_size printed:\n%s", prefix, out)
		}
	}
}
