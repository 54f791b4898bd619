package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestZephyrStructure(t *testing.T) {
	b := board(t, "nucleo-l4r5zi")
	p := fakeProject(t, Zephyr, b, "fake", "")
	files, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"CMakeLists.txt", "prj.conf", "src/main.c", "README.md", "west.yml", "model/fake.h", "model/fake.c", "src/fake_vectors.h"} {
		if _, ok := files[f]; !ok {
			t.Errorf("missing %s", f)
		}
	}
	// The CMake calls a Zephyr application needs, in Zephyr's order: the minimum CMake
	// version, find_package(Zephyr) before project(), then sources on the "app" target.
	cm := string(files["CMakeLists.txt"])
	order := []string{
		"cmake_minimum_required(VERSION 3.20.0)",
		"find_package(Zephyr 3.7 REQUIRED HINTS $ENV{ZEPHYR_BASE})",
		"project(fake",
		"target_sources(app PRIVATE src/main.c)",
		"target_link_libraries(app PRIVATE fake_model)",
	}
	at := 0
	for _, s := range order {
		i := strings.Index(cm[at:], s)
		if i < 0 {
			t.Fatalf("CMakeLists.txt lacks %q after offset %d:\n%s", s, at, cm)
		}
		at += i + len(s)
	}
	// prj.conf: only Kconfig assignments and comments; the options main.c relies on.
	conf := string(files["prj.conf"])
	line := regexp.MustCompile(`^(#.*|CONFIG_[A-Z0-9_]+=(y|n|[0-9]+|"[^"]*"))$`)
	for _, l := range strings.Split(strings.TrimSpace(conf), "\n") {
		if !line.MatchString(l) {
			t.Errorf("prj.conf: not a Kconfig line: %q", l)
		}
	}
	for _, want := range []string{"CONFIG_TIMING_FUNCTIONS=y", "CONFIG_PRINTK=y", "CONFIG_FPU=y"} {
		if !strings.Contains(conf, want+"\n") {
			t.Errorf("prj.conf lacks %s:\n%s", want, conf)
		}
	}
	readme := string(files["README.md"])
	for _, want := range []string{"west build -b nucleo_l4r5zi", "Zephyr 3.7 LTS", "v3.7.0"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if !strings.Contains(string(files["west.yml"]), "revision: v3.7.0") {
		t.Errorf("west.yml does not pin v3.7.0")
	}
	// Boards without a Zephyr name are refused with a clear error (CheckBoard's).
	if _, err := Files(fakeProject(t, Zephyr, board(t, "mps2-an386"), "fake", "")); err == nil || !strings.Contains(err.Error(), "no Zephyr board name") {
		t.Errorf("mps2-an386 (no Zephyr name): err = %v", err)
	}
	if err := CheckBoard(Zephyr, board(t, "mps2-an386")); err == nil || !strings.Contains(err.Error(), `board "mps2-an386" has no Zephyr board name`) {
		t.Errorf("CheckBoard(zephyr, mps2-an386) = %v", err)
	}
}

// TestZephyrAnyDirectory: the README's and west.yml's commands work from the project
// directory whatever the user named it (`mcugen compile ... -o anything`): they use "."
// and never the model's name as a path, and the manifest pins no directory name for
// itself (west init -l takes the directory it is given).
func TestZephyrAnyDirectory(t *testing.T) {
	files, err := Files(fakeProject(t, Zephyr, board(t, "nucleo-l4r5zi"), "kws_ref_model", ""))
	if err != nil {
		t.Fatal(err)
	}
	readme, west := string(files["README.md"]), string(files["west.yml"])
	var cmds []string
	for _, c := range readmeCommands(t, files["README.md"]) {
		cmds = append(cmds, strings.Join(c, " "))
	}
	if want := []string{"west build -b nucleo_l4r5zi .", "west flash"}; strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("README commands %q, want %q", cmds, want)
	}
	if !strings.Contains(readme, "From this directory") || !strings.Contains(readme, "`west init -l . && west update`") {
		t.Errorf("README does not say to run the commands from the project directory:\n%s", readme)
	}
	if !strings.Contains(west, "west init -l . && west update") {
		t.Errorf("west.yml's comment does not use the project directory:\n%s", west)
	}
	for _, bad := range []string{"-b nucleo_l4r5zi kws_ref_model", "-l kws_ref_model", "path: kws_ref_model", "self:"} {
		if strings.Contains(readme, bad) || strings.Contains(west, bad) {
			t.Errorf("README or west.yml assumes the directory is named after the model (%q):\n%s\n%s", bad, readme, west)
		}
	}
}

// TestZephyrCompiles compiles the application's sources for a Cortex-M4 against the
// test-only declarations of the Zephyr APIs main.c uses.
func TestZephyrCompiles(t *testing.T) {
	needTool(t, "arm-none-eabi-gcc")
	p := fakeProject(t, Zephyr, board(t, "nucleo-l4r5zi"), "fake", "")
	dir := t.TempDir()
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	api, err := filepath.Abs("testdata/zephyr/zephyr_api.h")
	if err != nil {
		t.Fatal(err)
	}
	inc := t.TempDir()
	for _, h := range zephyrLTS.Includes {
		f := filepath.Join(inc, filepath.FromSlash(h))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("#include \""+api+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []string{"src/main.c", "model/fake.c"} {
		mustRun(t, dir, time.Minute, "arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
			"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", inc, "-I", "model", "-I", "src",
			"-c", src, "-o", filepath.Join(t.TempDir(), "x.o"))
	}
}
