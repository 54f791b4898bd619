package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestArduinoLayout(t *testing.T) {
	p := fakeProject(t, Arduino, board(t, "arduino-nano-33-ble"), "fake", "")
	files, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"library.properties", "src/FakeModel.h", "src/FakeModel.cpp", "src/fake.h", "src/fake.c",
		"examples/fake/fake.ino", "README.md"} {
		if _, ok := files[f]; !ok {
			t.Errorf("missing %s", f)
		}
	}
	// library.properties: the fields the 1.5 specification requires, one key=value a line.
	props := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(files["library.properties"])), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("library.properties line %q is not key=value", l)
		}
		props[k] = v
	}
	for _, k := range []string{"name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url", "architectures"} {
		if props[k] == "" {
			t.Errorf("library.properties lacks %s", k)
		}
	}
	if !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`).MatchString(props["name"]) {
		t.Errorf("library name %q breaks the specification's rules", props["name"])
	}
	if props["category"] != "Data Processing" || props["architectures"] != "*" {
		t.Errorf("category %q, architectures %q", props["category"], props["architectures"])
	}
	if !strings.Contains(string(files["README.md"]), "--fqbn arduino:mbed_nano:nano33ble") {
		t.Errorf("README does not use the board's FQBN")
	}
}

// TestArduinoARM compiles the library's sources for a Cortex-M4.
func TestArduinoARM(t *testing.T) {
	needTool(t, "arm-none-eabi-gcc", "arm-none-eabi-g++")
	dir := t.TempDir()
	if _, err := Write(dir, fakeProject(t, Arduino, board(t, "arduino-nano-33-ble"), "fake", "")); err != nil {
		t.Fatal(err)
	}
	cpu := []string{"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2", "-Wall", "-Wextra", "-Werror", "-Isrc", "-c"}
	obj := filepath.Join(t.TempDir(), "x.o")
	mustRun(t, dir, time.Minute, "arm-none-eabi-gcc", append(cpu, "-std=c99", "-pedantic", "src/fake.c", "-o", obj)...)
	mustRun(t, dir, time.Minute, "arm-none-eabi-g++", append(cpu, "-std=c++11", "-pedantic", "-fno-exceptions", "src/FakeModel.cpp", "-o", obj)...)
}

// TestArduinoAVRCompile compiles the library's C for the ATmega2560 with avr-gcc, where
// int is 16 bits, as strict C99.
func TestArduinoAVRCompile(t *testing.T) {
	needTool(t, "avr-gcc", "avr-g++")
	dir := t.TempDir()
	if _, err := Write(dir, fakeProject(t, Arduino, board(t, "mps2-an386"), "fake", "")); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(t.TempDir(), "x.o")
	flags := []string{"-mmcu=atmega2560", "-Os", "-Wall", "-Wextra", "-Werror", "-Isrc", "-c"}
	mustRun(t, dir, time.Minute, "avr-gcc", append(flags, "-std=c99", "-pedantic", "src/fake.c", "-o", obj)...)
	mustRun(t, dir, time.Minute, "avr-g++", append(flags, "-std=c++11", "src/FakeModel.cpp", "-o", obj)...)
}

// TestArduinoSimavr builds the example sketch with Debian's arduino-builder for
// arduino:avr:mega and runs it under simavr, checking every printed output.
func TestArduinoSimavr(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an Arduino sketch and runs simavr")
	}
	needTool(t, "arduino-builder", "avr-gcc", "simavr")
	const hw = "/usr/share/arduino/hardware"
	if _, err := os.Stat(filepath.Join(hw, "arduino", "avr", "boards.txt")); err != nil {
		needTool(t, "arduino-core-avr (/usr/share/arduino/hardware/arduino/avr)")
	}
	p := fakeProject(t, Arduino, board(t, "mps2-an386"), "fake", "")
	libs := t.TempDir()
	lib := filepath.Join(libs, "FakeModel")
	if _, err := Write(lib, p); err != nil {
		t.Fatal(err)
	}
	out := arduinoBuildRun(t, libs, filepath.Join(lib, "examples", "fake", "fake.ino"))
	t.Logf("simavr:\n%s", out)
	checkExampleOutput(t, out, p)
}

// arduinoBuildRun builds sketch for the Mega 2560 and runs it under simavr; it returns
// the serial output, one line per line printed.
func arduinoBuildRun(t *testing.T, libs, sketch string) string {
	t.Helper()
	build := t.TempDir()
	// Debian's arduino-core-avr 1.8.7 with gcc-avr 5.4: <float.h> in C++11 mode lacks
	// DECIMAL_DIG, which the core's WString.cpp uses; give it the compiler's own value.
	// MCUGEN_STOP_WHEN_DONE makes the sketch sleep with interrupts off, which ends simavr.
	mustRun(t, build, 5*time.Minute, "arduino-builder", "-compile",
		"-hardware", "/usr/share/arduino/hardware", "-hardware", "/usr/share/arduino-builder",
		"-tools", "/usr/share/arduino-builder", "-libraries", libs,
		"-fqbn", "arduino:avr:mega:cpu=atmega2560",
		"-prefs=compiler.cpp.extra_flags=-DDECIMAL_DIG=__DECIMAL_DIG__ -DMCUGEN_STOP_WHEN_DONE",
		"-build-path", build, sketch)
	elf := filepath.Join(build, filepath.Base(sketch)+".elf")
	raw := mustRun(t, build, time.Minute, "simavr", "-m", "atmega2560", "-f", "16000000", elf)
	// simavr prints each UART line in colour, with '\n' shown as a trailing '.'.
	var lines []string
	for _, l := range strings.Split(regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(raw, ""), "\n") {
		lines = append(lines, strings.TrimSuffix(l, "."))
	}
	return strings.Join(lines, "\n")
}
