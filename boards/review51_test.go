package boards

import (
	"strings"
	"testing"
)

// Text a board file gives are written into the projects'
// Makefile, CMake toolchain file and READMEs as they are, so the board file
// is refused where they would not survive that (review: no_boot's
// $(shell ...) ran at `make run`, a newline broke the Makefile).
func TestBoardTextForBuildFiles51(t *testing.T) {
	for src, want := range map[string]string{
		`no_boot = "x $(shell touch /tmp/p)"`:     `no_boot "x $(shell touch /tmp/p)": printable text without`,
		`no_boot = "needs the \"vendor\" loader"`: "printable text without a backslash, a double quote",
		`no_boot = "two\nlines"`:                  "printable text without",
		"description = \"tab\\there\"":            "description",
		`zephyr = "my board; rm -rf /"`:           "a Zephyr board name is letters, digits and / _ . -",
		`arduino = "arduino:avr:uno && x"`:        "an FQBN is letters, digits and : _ . - = ,",
		`stack_bytes = 08192`:                     `number "08192" has a leading zero: write 8192`,
		`memory = [region(name = "FLASH", origin = 0, length = 65536, holds = ["code", "weights"]), region(name = "RAM", origin = 0x20000000, length = 65536, holds = ["data"]), region(name = "ARENA", origin = 0x21000004, length = 8064, holds = ["arena"])]`: `region "ARENA" holds the arena, which the linker script aligns to 16 bytes: origin 0x21000004`,
	} {
		_, err := LoadData("user.star", []byte(`board(name = "x", inherits = "mps2-an386", `+src+")\n"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "user.star:1") {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// Helium's FPU comes with -mfpu=auto only.
	if _, err := LoadData("user.star", []byte(`board(name = "x", inherits = "mps3-an547", fpu = "fpv4-sp-d16")`+"\n")); err == nil || !strings.Contains(err.Error(), `fpu "fpv4-sp-d16": cortex-m55's Helium (mve) and FPU come with fpu = "auto"`) {
		t.Errorf("M55 with fpv4-sp-d16: %v", err)
	}
	for src, want := range map[string]string{
		`board(name = "x", inherits = "mps2-an386", counter = counter(kind = "fpgaio", addr = 0, hz = 25000000))`: `counter "fpgaio" needs the word-aligned, nonzero addr`,
		`board(name = "x", inherits = "aarch64-linux", cpu = "cortex-m4")`:                                        `cpu "cortex-m4" is not an AArch64 core`,
	} {
		if _, err := LoadData("user.star", []byte(src+"\n")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// What stays taken: ordinary text, Zephyr's qualified names, FQBNs
	// with options, flags with = and commas.
	ok := `board(name = "x", inherits = "mps2-an386", description = "Lab rig (rev. B), 2 MiB: it's fine",
    no_boot = "it needs the vendor's bootloader at 0x8000", zephyr = "mps3/corstone300/an547",
    arduino = "STMicroelectronics:stm32:Nucleo_144:pnum=NUCLEO_F746ZG", cflags = ["-mthumb", "-Wl,--gc-sections", "-DV=1"],
    stack_bytes = 0x2000)
`
	c, err := LoadData("user.star", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.Get("x"); err != nil || b.StackBytes != 0x2000 || b.Zephyr != "mps3/corstone300/an547" {
		t.Errorf("board x: %+v", b)
	}
}

// A UTF-8 byte-order mark before the first call is not read as text
// (review: "expected a call of board(...)" on such a call).
func TestBoardFileBOM51(t *testing.T) {
	c, err := LoadData("user.star", []byte("\xef\xbb\xbfboard(name = \"x\", inherits = \"mps2-an386\")\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("x"); err != nil {
		t.Fatal(err)
	}
}
