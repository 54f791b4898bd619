package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
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
	// The specification's maintainer is a name and an email; the address
	// goes in url (review: a URL in maintainer).
	if strings.Contains(props["maintainer"], "://") {
		t.Errorf("maintainer %q holds a URL", props["maintainer"])
	}
	if !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`).MatchString(props["name"]) {
		t.Errorf("library name %q breaks the specification's rules", props["name"])
	}
	if props["category"] != "Data Processing" || props["architectures"] != "mbed_nano" {
		t.Errorf("category %q, architectures %q (want the FQBN's, mbed_nano)", props["category"], props["architectures"])
	}
	if !strings.Contains(string(files["README.md"]), "--fqbn arduino:mbed_nano:nano33ble") {
		t.Errorf("README does not use the board's FQBN")
	}
	if !strings.Contains(string(files["examples/fake/fake.ino"]), "--fqbn arduino:mbed_nano:nano33ble") {
		t.Errorf("the example sketch does not name the board's FQBN")
	}
}

// TestArduinoRefusesBoardWithoutFQBN: a board without an Arduino FQBN in the catalog
// (mps2-an386, host) is refused with one line naming the board and the fix, as Zephyr
// refuses a board without a Zephyr name, and nothing is written; a malformed FQBN is
// refused too.
func TestArduinoRefusesBoardWithoutFQBN(t *testing.T) {
	for _, bn := range []string{"mps2-an386", "host", "aarch64-linux"} {
		b := board(t, bn)
		want := `board "` + bn + `" has no Arduino FQBN; pick a board with one (mcugen boards) or add ` + "`arduino = \"vendor:arch:board\"`" + ` to a board file`
		if err := CheckBoard(Arduino, b); err == nil || err.Error() != want {
			t.Errorf("CheckBoard(arduino, %s) = %v, want %q", bn, err, want)
		}
		p := fakeProject(t, Arduino, b, "fake", "")
		if files, err := Files(p); err == nil || err.Error() != want {
			t.Errorf("%s: Files = %d files, %v; want the error %q", bn, len(files), err, want)
		}
		dir := filepath.Join(t.TempDir(), "out")
		if written, err := Write(dir, p); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Write wrote %v, err %v; want a one-line error", bn, written, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: the refused project left %s behind (%v)", bn, dir, err)
		}
	}
	if err := CheckBoard(Arduino, board(t, "arduino-nano-33-ble")); err != nil {
		t.Errorf("arduino-nano-33-ble has an FQBN: %v", err)
	}
	if err := CheckBoard(Make, board(t, "mps2-an386")); err != nil {
		t.Errorf("make needs no FQBN: %v", err)
	}
	bad := *board(t, "arduino-nano-33-ble")
	for _, fqbn := range []string{"nano33ble", "arduino:mbed_nano", "arduino:avr:mega\nx=y", "a:b:c:cpu"} {
		bad.Arduino = fqbn
		if err := CheckBoard(Arduino, &bad); err == nil || !strings.Contains(err.Error(), "is not vendor:architecture:board") {
			t.Errorf("FQBN %q: err = %v", fqbn, err)
		}
	}
}

// TestArduinoFQBNFromCatalog: every catalog board with an FQBN gets exactly that FQBN in
// the README's commands, the sketch and library.properties' architectures; none of them
// (all Arm) is sent to an AVR core; every board without one is refused.
func TestArduinoFQBNFromCatalog(t *testing.T) {
	bs, err := boards.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range bs {
		files, err := Files(fakeProject(t, Arduino, b, "fake", ""))
		if b.Arduino == "" {
			if err == nil || !strings.Contains(err.Error(), "has no Arduino FQBN") {
				t.Errorf("%s (no FQBN): err = %v", b.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", b.Name, err)
			continue
		}
		n++
		want := []string{
			"arduino-cli compile --fqbn " + b.Arduino + " --library . examples/fake",
			"arduino-cli upload -p PORT --fqbn " + b.Arduino + " examples/fake",
		}
		var got []string
		for _, c := range readmeCommands(t, files["README.md"]) {
			got = append(got, strings.Join(c, " "))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: README commands %q, want %q", b.Name, got, want)
		}
		for _, f := range []string{"README.md", "examples/fake/fake.ino", "library.properties"} {
			if strings.Contains(string(files[f]), "arduino:avr:") {
				t.Errorf("%s: %s names an AVR FQBN for an Arm board:\n%s", b.Name, f, files[f])
			}
		}
		arch := strings.Split(b.Arduino, ":")[1]
		if !strings.Contains(string(files["library.properties"]), "\narchitectures="+arch+"\n") {
			t.Errorf("%s: library.properties does not declare architectures=%s:\n%s", b.Name, arch, files["library.properties"])
		}
	}
	if n == 0 {
		t.Fatal("no catalog board has an Arduino FQBN")
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
// int is 16 bits, as strict C99 (the library of an AVR board from a user's board file).
func TestArduinoAVRCompile(t *testing.T) {
	needTool(t, "avr-gcc", "avr-g++")
	dir := t.TempDir()
	if _, err := Write(dir, fakeProject(t, Arduino, avrBoard(t), "fake", "")); err != nil {
		t.Fatal(err)
	}
	// The README says the weights are copied into SRAM too, as compile
	// warns (template journey finding: it said flash only); an ARM
	// board's does not.
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "which avr-gcc also copies into SRAM at start-up") {
		t.Errorf("the AVR README does not say the weights take SRAM:\n%s", readme)
	}
	if files, err := Files(fakeProject(t, Arduino, board(t, "arduino-nano-33-ble"), "fake", "")); err != nil || strings.Contains(string(files["README.md"]), "SRAM") {
		t.Errorf("the nano 33 BLE README speaks of SRAM (%v)", err)
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
	p := fakeProject(t, Arduino, avrBoard(t), "fake", "")
	libs := t.TempDir()
	lib := filepath.Join(libs, "FakeModel")
	if _, err := Write(lib, p); err != nil {
		t.Fatal(err)
	}
	if readme, _ := os.ReadFile(filepath.Join(lib, "README.md")); !strings.Contains(string(readme), "--fqbn "+arduinoMegaFQBN+" ") {
		t.Errorf("README does not build for %s, the FQBN this test builds:\n%s", arduinoMegaFQBN, readme)
	}
	out := arduinoBuildRun(t, libs, filepath.Join(lib, "examples", "fake", "fake.ino"))
	t.Logf("simavr:\n%s", out)
	checkExampleOutput(t, out, p)
}

// arduinoMegaFQBN is the FQBN arduinoBuildRun builds for: avrBoard's.
const arduinoMegaFQBN = "arduino:avr:mega:cpu=atmega2560"

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
		"-fqbn", arduinoMegaFQBN,
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
