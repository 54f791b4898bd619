package boards

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The boards DESIGN §5 and the issue require, with facts from the shared toolchain notes.
func TestBuiltinQEMUBoards(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, cpu, fpu, abi, machine string
		features                     []string
		code, data                   uint64 // origins
		ram                          uint64
		counter                      uint64
		hz                           int64
		uart                         uint64
	}{
		{"mps2-an385", "cortex-m3", "", "soft", "mps2-an385", nil, 0, 0x20000000, 4 << 20, 0x40028018, 25e6, 0x40004000},
		{"mps2-an386", "cortex-m4", "fpv4-sp-d16", "hard", "mps2-an386", []string{"dsp", "fpu"}, 0, 0x20000000, 4 << 20, 0x40028018, 25e6, 0x40004000},
		{"mps2-an500", "cortex-m7", "fpv5-d16", "hard", "mps2-an500", []string{"dsp", "fpu"}, 0, 0x20000000, 4 << 20, 0x40028018, 25e6, 0x40004000},
		{"mps2-an505", "cortex-m33", "fpv5-sp-d16", "hard", "mps2-an505", []string{"dsp", "fpu"}, 0x10000000, 0x38000000, 4 << 20, 0x50302018, 20e6, 0x50200000},
		{"mps3-an547", "cortex-m55", "", "hard", "mps3-an547", []string{"dsp", "fpu", "mve"}, 0, 0x20000000, 512 << 10, 0x59302018, 20e6, 0x59303000},
		{"microbit", "cortex-m0", "", "soft", "microbit", nil, 0, 0x20000000, 16 << 10, 0x40008000, 16e6, 0x40002000},
	}
	for _, tc := range cases {
		b, err := c.Get(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if b.CPU != tc.cpu || b.FPU != tc.fpu || b.FloatABI != tc.abi || b.QEMU.Machine != tc.machine {
			t.Errorf("%s: cpu/fpu/abi/machine = %s/%s/%s/%s", tc.name, b.CPU, b.FPU, b.FloatABI, b.QEMU.Machine)
		}
		if !slices.Equal(b.Features, tc.features) && !(len(b.Features) == 0 && len(tc.features) == 0) {
			t.Errorf("%s: features %v, want %v", tc.name, b.Features, tc.features)
		}
		if b.RegionFor(HoldsCode).Origin != tc.code || b.RegionFor(HoldsData).Origin != tc.data || b.RAMBytes() != tc.ram {
			t.Errorf("%s: code %#x data %#x ram %d", tc.name, b.RegionFor(HoldsCode).Origin, b.RegionFor(HoldsData).Origin, b.RAMBytes())
		}
		if b.Counter.Addr != tc.counter || b.Counter.Hz != tc.hz || b.UART.Base != tc.uart {
			t.Errorf("%s: counter %#x@%d uart %#x", tc.name, b.Counter.Addr, b.Counter.Hz, b.UART.Base)
		}
		if b.Toolchain != ToolchainArmNoneEABI || b.QEMU.Binary != "qemu-system-arm" || b.QEMU.ICountShift != 7 {
			t.Errorf("%s: toolchain %s qemu %+v", tc.name, b.Toolchain, b.QEMU)
		}
		if !slices.Contains(b.GCCFlags(), "-mthumb") || !slices.Contains(b.GCCFlags(), "-mcpu="+tc.cpu) {
			t.Errorf("%s: flags %v", tc.name, b.GCCFlags())
		}
	}
	// Weights on the M55 go to the read-only QSPI flash, the rest to the TCMs.
	an547, _ := c.Get("mps3-an547")
	if r := an547.RegionFor(HoldsWeights); r == nil || r.Name != "QSPI" || !r.ReadOnly {
		t.Errorf("an547 weights region %+v", r)
	}
	a64, _ := c.Get("aarch64-linux")
	if a64.Toolchain != ToolchainAArch64 || a64.QEMU.Binary != "qemu-aarch64" || !a64.HasFeature("neon") || !a64.HasFeature("dotprod") {
		t.Errorf("aarch64-linux: %+v", a64)
	}
	host, _ := c.Get("host")
	if host.Toolchain != ToolchainHost || host.QEMU.Binary != "" || host.Counter.Kind != "none" || !host.Emulated() {
		t.Errorf("host: %+v", host)
	}
}

// Every board resolves to something a build can use, and the real boards have their
// datasheet sizes.
func TestEveryBoardResolves(t *testing.T) {
	bs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "microbit",
		"aarch64-linux", "host", "nucleo-l4r5zi", "nucleo-f746zg", "nucleo-h743zi", "nrf52840dk",
		"nrf5340dk", "arduino-nano-33-ble", "rp2040", "teensy40", "portenta-h7", "stm32u575"}
	var names []string
	for _, b := range bs {
		names = append(names, b.Name)
		if b.Toolchain == ToolchainArmNoneEABI {
			if b.CPU == "" || b.StackBytes <= 0 || b.RegionFor(HoldsCode) == nil || b.RegionFor(HoldsData) == nil {
				t.Errorf("%s incomplete: %+v", b.Name, b)
			}
			if b.RegionFor(HoldsData).ReadOnly {
				t.Errorf("%s: data in a read-only region", b.Name)
			}
		}
		if b.HasFeature("fpu") != (b.FloatABI == "hard" || b.Toolchain != ToolchainArmNoneEABI && b.HasFeature("fpu")) {
			t.Errorf("%s: fpu feature %v with float ABI %q", b.Name, b.HasFeature("fpu"), b.FloatABI)
		}
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("board %s missing", w)
		}
	}
	c, _ := Load("")
	sizes := map[string][2]uint64{ // flash, RAM of the region holding data
		"nucleo-l4r5zi": {2 << 20, 640 << 10}, "nucleo-f746zg": {1 << 20, 320 << 10},
		"nucleo-h743zi": {2 << 20, 128 << 10}, "nrf52840dk": {1 << 20, 256 << 10},
		"nrf5340dk": {1 << 20, 512 << 10}, "arduino-nano-33-ble": {960 << 10, 256 << 10},
		"rp2040": {2 << 20, 264 << 10}, "stm32u575": {2 << 20, 768 << 10},
		"portenta-h7": {768 << 10, 128 << 10}, "teensy40": {1984 << 10, 512 << 10},
	}
	for n, s := range sizes {
		b, err := c.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		if b.FlashBytes() != s[0] || b.RAMBytes() != s[1] {
			t.Errorf("%s: flash %d RAM %d, want %d %d", n, b.FlashBytes(), b.RAMBytes(), s[0], s[1])
		}
		if b.Part == "" || b.Zephyr == "" {
			t.Errorf("%s: part %q zephyr %q", n, b.Part, b.Zephyr)
		}
	}
	// The H7s keep the arena in AXI SRAM, apart from the data in DTCM.
	h7, _ := c.Get("nucleo-h743zi")
	if r := h7.RegionFor(HoldsArena); r.Name != "AXISRAM" || r.Length != 512<<10 {
		t.Errorf("h743 arena region %+v", r)
	}
	f7, _ := c.Get("nucleo-f746zg")
	if f7.FPU != "fpv5-sp-d16" || f7.CPU != "cortex-m7" {
		t.Errorf("f746: single-precision M7 expected, got %s %s", f7.CPU, f7.FPU)
	}
}

func TestInheritance(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	an386, _ := c.Get("mps2-an386")
	// From cortex-m (grandparent): -mthumb and the toolchain; from cortex-m4f: the FPU;
	// from mps2: memory, counter; from qemu-system-arm through mps2: the qemu args, merged
	// with the board's own machine.
	if an386.Toolchain != ToolchainArmNoneEABI || !slices.Equal(an386.CFlags, []string{"-mthumb"}) {
		t.Errorf("cortex-m fields not inherited: %+v", an386)
	}
	if an386.QEMU.Machine != "mps2-an386" || !slices.Contains(an386.QEMU.Args, "-semihosting-config") {
		t.Errorf("qemu not merged: %+v", an386.QEMU)
	}
	if an386.StackBytes != 16<<10 {
		t.Errorf("stack %d", an386.StackBytes)
	}
	// A board's own field overrides its parent's.
	micro, _ := c.Get("microbit")
	if micro.StackBytes != 2<<10 || !slices.Contains(micro.CFlags, "-masm-syntax-unified") {
		t.Errorf("microbit overrides lost: %+v", micro)
	}
	// A board can inherit from another board.
	nano, _ := c.Get("arduino-nano-33-ble")
	if nano.CPU != "cortex-m4" || nano.Counter.Hz != 64e6 || nano.RegionFor(HoldsCode).Origin != 0x10000 {
		t.Errorf("nano inherits badly: %+v", nano)
	}
	if !slices.Equal(nano.Inherits, []string{"nrf52840dk"}) {
		t.Errorf("inherits %v", nano.Inherits)
	}
}

func TestUnknownBoardListsKnown(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get("mps2-an999")
	if err == nil || !strings.Contains(err.Error(), `"mps2-an999"`) || !strings.Contains(err.Error(), "mps2-an386") || !strings.Contains(err.Error(), "microbit") {
		t.Fatalf("err = %v", err)
	}
}

func TestUserFileAddsBoard(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "my.star")
	src := `# my board
SRAM = 0x20000000
board(
    name = "my-an386-small",
    inherits = "mps2-an386",
    memory = [
        region(name = "FLASH", origin = 0, length = 256 * 1024, holds = ["code", "weights"]),
        region(name = "RAM", origin = SRAM, length = 64 << 10, holds = ["data"]),
        region(name = "BIG", origin = SRAM + 0x100000, length = 1024 * 1024, holds = ["arena"]),
    ],
    stack_bytes = 4096,
)
`
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get("my-an386-small")
	if err != nil {
		t.Fatal(err)
	}
	if b.CPU != "cortex-m4" || b.QEMU.Machine != "mps2-an386" || b.StackBytes != 4096 {
		t.Errorf("%+v", b)
	}
	if r := b.RegionFor(HoldsArena); r.Name != "BIG" || r.Origin != 0x20100000 || r.Length != 1<<20 {
		t.Errorf("arena region %+v", r)
	}
	if b.RAMBytes() != 64<<10 || b.File != f || b.Line != 3 {
		t.Errorf("ram %d at %s:%d", b.RAMBytes(), b.File, b.Line)
	}
	if _, err := c.Get("mps2-an385"); err != nil {
		t.Error("built-in boards lost:", err)
	}
}

func TestBadFilesGiveLine(t *testing.T) {
	cases := []struct{ name, src, line, msg string }{
		{"syntax", "board(\n  name = \"x\",\n  cpu = = 3,\n)\n", "bad.star:3:", "syntax error"},
		{"unknown field", "board(\n  name = \"x\",\n  inherits = \"mps2-an385\",\n  cpuu = \"m4\",\n)\n", "bad.star:4", `unknown field "cpuu"`},
		// A problem in an inherited field names the board's own line
		// (adversarial journey: only catalog.star:120 was named).
		{"inherited qemu without machine", "\nboard(name = \"myboard\", inherits = [\"cortex-m4f\", \"mps2\"])\n", "bad.star:2", "qemu-system-arm needs a machine (a field it inherits from catalog.star:"},
		{"unknown parent", "\n\nboard(name = \"x\", inherits = \"nope\")\n", "bad.star:3", `unknown "nope"`},
		{"type", "board(\n  name = \"x\",\n  stack_bytes = \"big\",\n)\n", "bad.star:3", "must be an integer"},
		{"overlap", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"A\", origin = 0, length = 4096, holds = [\"code\", \"data\"]),\n region(name = \"B\", origin = 2048, length = 4096),\n])\n", "bad.star:3", "overlaps"},
		{"duplicate", "board(name = \"microbit\", inherits = \"cortex-m0\")\n", "bad.star:1", "already defined at catalog.star:"},
		{"no toolchain", "\nboard(name = \"x\")\n", "bad.star:2", "no toolchain"},
		{"cycle", "family(name = \"a\", inherits = \"b\")\nfamily(name = \"b\", inherits = \"a\")\nboard(name = \"x\", inherits = \"a\")\n", "bad.star:", "cycle"},
		{"bad feature", "board(name = \"x\", inherits = \"mps2-an385\",\n features = [\"sse\"])\n", "bad.star:2", `unknown feature "sse"`},
		{"uart kind", "board(name = \"x\", inherits = \"mps2-an385\",\n uart = uart(kind = \"pl011\", base = 4096))\n", "bad.star:2", `unknown uart kind "pl011"`},
		{"stm32 no clock", "board(name = \"x\", inherits = \"mps2-an385\",\n uart = uart(kind = \"stm32\", base = 4096, baud = 115200))\n", "bad.star:2", "needs baud and clock_hz"},
		{"stm32 too fast", "board(name = \"x\", inherits = \"mps2-an385\",\n uart = uart(kind = \"stm32\", base = 4096, baud = 921600, clock_hz = 8000000))\n", "bad.star:2", "cannot make 921600 baud from a 8000000 Hz clock"},
		{"lpuart too fast", "board(name = \"x\", inherits = \"mps2-an385\",\n uart = uart(kind = \"stm32-lpuart\", base = 4096, baud = 2000000, clock_hz = 4000000))\n", "bad.star:2", "cannot make 2000000 baud"},
		{"nrf baud", "board(name = \"x\", inherits = \"microbit\",\n uart = uart(baud = 12345))\n", "bad.star:2", "no 12345 baud setting"},
		{"nrf pin", "board(name = \"x\", inherits = \"microbit\",\n uart = uart(tx_pin = 48))\n", "bad.star:2", "tx_pin 48 is not an nRF pin"},
		{"stm32 tx_pin", "board(name = \"x\", inherits = \"nucleo-f746zg\",\n uart = uart(tx_pin = 8))\n", "bad.star:2", "route an STM32 pin with init"},
		{"init entry", "board(name = \"x\", inherits = \"mps2-an385\",\n init = [region(name = \"A\", origin = 0, length = 4)])\n", "bad.star:2", "init entries must be reg"},
		{"reg outside mask", "board(name = \"x\", inherits = \"mps2-an385\",\n init = [reg(addr = 0x40000000, mask = 3, value = 4)])\n", "bad.star:2", "has bits outside its mask"},
		{"reg unaligned", "board(name = \"x\", inherits = \"mps2-an385\",\n init = [reg(addr = 0x40000002, mask = 1)])\n", "bad.star:2", "word-aligned addr"},
		{"name with a comma", "board(name = \"a,b\", inherits = \"mps2-an385\")\n", "bad.star:1", `board name "a,b": letters, digits`},
		{"name with a newline", "board(name = \"a\\nb\", inherits = \"mps2-an385\")\n", "bad.star:1", "board name"},
		// Cores and features (a user journey: all three were accepted).
		{"cpu typo", "\nboard(name = \"x\", inherits = \"nucleo-l4r5zi\", cpu = \"cortex-m4x\")\n", "bad.star:2", `cpu "cortex-m4x" is not a Cortex-M core gcc knows`},
		{"mve on m4", "board(name = \"x\", inherits = \"nucleo-l4r5zi\",\n features = [\"dsp\", \"fpu\", \"mve\"])\n", "bad.star:1", `feature "mve": cortex-m4 (cortex-m4) has no Helium (MVE)`},
		{"nodsp", "board(name = \"x\", inherits = \"stm32u575\", cpu = \"cortex-m33+nodsp\")\n", "bad.star:1", `feature "dsp": cortex-m33 (cortex-m33+nodsp) has no DSP extension`},
		{"dsp on m3", "board(name = \"x\", inherits = \"mps2-an385\", features = [\"dsp\"])\n", "bad.star:1", `feature "dsp": cortex-m3 (cortex-m3) has no DSP extension`},
		{"nodsp drops mve", "board(name = \"x\", inherits = \"mps3-an547\", cpu = \"cortex-m55+nodsp\")\n", "bad.star:1", `feature "dsp": cortex-m55 (cortex-m55+nodsp) has no DSP extension`},
		{"nofp with fpu", "board(name = \"x\", inherits = \"nucleo-l4r5zi\", cpu = \"cortex-m4+nofp\")\n", "bad.star:1", `feature "fpu": cortex-m4 (cortex-m4+nofp) has no FPU`},
		{"machine of another core", "board(name = \"x\", inherits = \"mps2-an386\", cpu = \"cortex-m33\")\n", "bad.star:1", "cpu cortex-m33 on QEMU machine mps2-an386, whose core is a cortex-m4"},
		// A user journey's board files, each accepted before.
		{"region name with a space", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"AXI SRAM\", origin = 0, length = 4096, holds = [\"code\", \"data\"]),\n])\n", "bad.star:2", `region name "AXI SRAM": letters, digits and _`},
		{"origin not aligned", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"FLASH\", origin = 0x08000001, length = 4096, holds = [\"code\", \"data\"]),\n])\n", "bad.star:2", `origin 0x8000001 is not word-aligned`},
		{"role twice", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"A\", origin = 0, length = 4096, holds = [\"code\", \"arena\"]),\n region(name = \"B\", origin = 8192, length = 4096, holds = [\"data\", \"arena\"]),\n])\n", "bad.star:3", `regions "A" and "B" both hold arena`},
		{"float_abi typo", "board(name = \"x\", inherits = \"nucleo-l4r5zi\",\n float_abi = \"hardfp\")\n", "bad.star:2", `float_abi "hardfp": one of hard, softfp, soft`},
		{"fpu of another core", "board(name = \"x\", inherits = \"nucleo-f746zg\", cpu = \"cortex-m4\")\n", "bad.star:1", `fpu "fpv5-sp-d16": cortex-m4's FPU does not run its code (fpv4-sp-d16 do)`},
		// Session 44's review: each was accepted and failed at the build.
		{"capitalised cpu", "board(name = \"x\", inherits = \"nucleo-l4r5zi\",\n cpu = \"Cortex-M4\", features = [\"dsp\", \"fpu\", \"mve\"])\n", "bad.star:1", `cpu "Cortex-M4": write it in lowercase, "cortex-m4"`},
		{"cpu without the dash", "board(name = \"x\", inherits = \"nucleo-l4r5zi\", cpu = \"cortexm4\")\n", "bad.star:1", `cpu "cortexm4" is not a Cortex-M core gcc knows`},
		{"cortex-a cpu bare-metal", "board(name = \"x\", inherits = \"mps2-an385\", cpu = \"cortex-a53\", qemu = \"none\")\n", "bad.star:1", "runs on Cortex-M"},
		{"region named ORIGIN", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"ORIGIN\", origin = 0, length = 4096, holds = [\"code\", \"data\"]),\n])\n", "bad.star:2", `region name "ORIGIN" is a word of the linker script's language`},
		{"region named len", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"len\", origin = 0, length = 4096, holds = [\"code\", \"data\"]),\n])\n", "bad.star:2", `region name "len"`},
		{"vector table off 128", "board(name = \"x\", inherits = \"mps2-an385\", memory = [\n region(name = \"FLASH\", origin = 0x08000004, length = 4096, holds = [\"code\", \"data\"]),\n])\n", "bad.star:2", `origin 0x8000004 is not a multiple of 128`},
	}
	for _, tc := range cases {
		_, err := LoadData("bad.star", []byte(tc.src))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.line) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %q lacks %q / %q", tc.name, err, tc.line, tc.msg)
		}
		if !regexp.MustCompile(`bad\.star:\d+`).MatchString(err.Error()) {
			t.Errorf("%s: no file:line in %q", tc.name, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.star")); err == nil || !strings.Contains(err.Error(), "missing.star") {
		t.Errorf("missing file: %v", err)
	}
}

// gcc's -mcpu suffixes that keep a feature are accepted: +nomve.fp keeps
// integer MVE, .small-multiply is the same core (a review).
func TestCoreSuffixesAccepted(t *testing.T) {
	src := "board(name = \"a\", inherits = \"mps3-an547\", cpu = \"cortex-m55+nomve.fp\")\n" +
		"board(name = \"b\", inherits = \"rp2040\", cpu = \"cortex-m0plus.small-multiply\")\n" +
		"board(name = \"c\", inherits = \"stm32u575\", cpu = \"cortex-m35p\")\n"
	if _, err := LoadData("ok.star", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

// The parser never panics, and every board it accepts has what a build needs.
func FuzzLoadData(f *testing.F) {
	f.Add([]byte(`board(name = "x", inherits = "mps2-an385", stack_bytes = 4096)`))
	f.Add([]byte("K = 1 << 10\nfamily(name = \"f\", inherits = [\"cortex-m4f\", \"mps2\"])\nboard(name = \"y\", inherits = \"f\", memory = [region(name = \"A\", origin = 0, length = 64 * K, holds = [\"code\", \"data\"])])\n"))
	f.Add([]byte(`board(name = "z", toolchain = "host", counter = counter(kind = "dwt"), qemu = qemu(binary = "q"))`))
	f.Add([]byte("board(\n name = \"w\",\n inherits = \"microbit\",\n memory = [region(name = \"R\", origin = -1, length = 0)],\n)"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := LoadData("fuzz.star", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "boards: ") {
				t.Errorf("error without prefix: %v", err)
			}
			return
		}
		for _, b := range c.Boards() {
			if b.BareMetal() && (b.RegionFor(HoldsCode) == nil || b.RegionFor(HoldsData) == nil || b.CPU == "" || b.StackBytes <= 0) {
				t.Errorf("accepted an incomplete board %+v", b)
			}
		}
	})
}

// A board that inherits one with a UART and names another kind takes none of the
// parent's UART arguments (they were merged in, and the parse then refused arguments the
// user never wrote); the same kind still inherits them argument by argument.
func TestUARTKindOverride(t *testing.T) {
	src := `board(name = "x1", inherits = "nucleo-f746zg", uart = uart(kind = "cmsdk", base = 0x40004000))
board(name = "x2", inherits = "microbit", uart = uart(kind = "stm32", base = 0x40004800, baud = 115200, clock_hz = 16000000))
board(name = "x3", inherits = "nucleo-f746zg", uart = uart(base = 0x40011000))
`
	c, err := LoadData("kinds.star", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]UART{
		"x1": {Kind: "cmsdk", Base: 0x40004000, TxPin: -1},
		"x2": {Kind: "stm32", Base: 0x40004800, Baud: 115200, ClockHz: 16000000, TxPin: -1},
		"x3": {Kind: "stm32", Base: 0x40011000, Baud: 115200, ClockHz: 16000000, TxPin: -1},
	}
	for name, w := range want {
		b, err := c.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if b.UART != w {
			t.Errorf("%s: uart %+v, want %+v", name, b.UART, w)
		}
	}
}

// The STM32 baud dividers, worked by hand from the reference manuals' formulas
// (USART: clock / baud rounded, 16× oversampling; LPUART: 256 · clock / baud), and the
// catalog's ports: each Nucleo's virtual COM port from the clock it starts on.
func TestUARTDividers(t *testing.T) {
	for _, tc := range []struct {
		u    UART
		want uint32
		ok   bool
	}{
		{UART{Kind: "stm32", Baud: 115200, ClockHz: 16000000}, 139, true},        // 138.89
		{UART{Kind: "stm32", Baud: 115200, ClockHz: 64000000}, 556, true},        // 555.56
		{UART{Kind: "stm32", Baud: 115200, ClockHz: 4000000}, 35, true},          // 34.72
		{UART{Kind: "stm32f4", Baud: 9600, ClockHz: 16000000}, 1667, true},       // 1666.67
		{UART{Kind: "stm32-lpuart", Baud: 115200, ClockHz: 4000000}, 8889, true}, // 8888.89
		{UART{Kind: "stm32", Baud: 1000000, ClockHz: 4000000}, 4, false},         // below 16
		{UART{Kind: "stm32-lpuart", Baud: 9600, ClockHz: 80000000}, 2133333, false},
		{UART{Kind: "nrf", Baud: 115200, ClockHz: 16000000}, 0, false},
	} {
		got, ok := tc.u.BRR()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%+v: BRR %d %v, want %d %v", tc.u, got, ok, tc.want, tc.ok)
		}
	}
	if v, ok := (UART{Kind: "nrf", Baud: 115200}).NRFBaud(); !ok || v != 0x01D7E000 {
		t.Errorf("nRF 115200: %#x %v", v, ok)
	}
	cat, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		board, kind string
		base        uint64
		brr         uint32
	}{
		{"nucleo-f746zg", "stm32", 0x40004800, 139},
		{"nucleo-h743zi", "stm32", 0x40004800, 556},
		{"nucleo-l4r5zi", "stm32-lpuart", 0x40008000, 8889},
		{"stm32u575", "stm32", 0x40013800, 35},
		{"netduinoplus2", "stm32f4", 0x40011000, 139},
	} {
		b, err := cat.Get(tc.board)
		if err != nil {
			t.Fatal(err)
		}
		brr, ok := b.UART.BRR()
		if b.UART.Kind != tc.kind || b.UART.Base != tc.base || !ok || brr != tc.brr {
			t.Errorf("%s: uart %+v brr %d %v, want %s at %#x, brr %d", tc.board, b.UART, brr, ok, tc.kind, tc.base, tc.brr)
		}
		if len(b.Init) == 0 {
			t.Errorf("%s: no init registers (clock enables, pin multiplexing)", tc.board)
		}
	}
	b, _ := cat.Get("nucleo-f746zg")
	want := []RegWrite{{0x40023830, 1 << 3, 1 << 3}, {0x40023840, 1 << 18, 1 << 18}, {0x40020C00, 3 << 16, 2 << 16}, {0x40020C24, 15, 7}}
	if !slices.Equal(b.Init, want) {
		t.Errorf("nucleo-f746zg init %x, want %x", b.Init, want)
	}
	for name, pin := range map[string]int64{"microbit": 24, "nrf52840dk": 6, "arduino-nano-33-ble": 35} {
		b, _ := cat.Get(name)
		if b.UART.Kind != "nrf" || b.UART.TxPin != pin || b.UART.Baud != 115200 {
			t.Errorf("%s: uart %+v, want nrf on pin %d at 115200", name, b.UART, pin)
		}
	}
}

// A board name that differs only in case or in _ for -, or by one or two
// characters from one to three boards, or a chip's part number, gets those
// boards back (user-journey findings: MPS2-AN386 and nucleo-l4r5z listed
// every board instead; stm32l4r5 got stm32u575).
func TestUnknownBoardSuggests(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"MPS2-AN386":    `boards: unknown board "MPS2-AN386" (did you mean "mps2-an386"?)`,
		"nucleo_f746zg": `boards: unknown board "nucleo_f746zg" (did you mean "nucleo-f746zg"?)`,
		"mps2-an999":    `boards: unknown board "mps2-an999"; known boards: `,
		"nucleo-l4r5z":  `boards: unknown board "nucleo-l4r5z" (did you mean "nucleo-l4r5zi"?)`,
		"mps2-an38":     `boards: unknown board "mps2-an38" (did you mean "mps2-an385" or "mps2-an386"?)`,
		"rp240":         `boards: unknown board "rp240" (did you mean "rp2040"?)`,
		"xyz":           `boards: unknown board "xyz"; known boards: `,
		// A part number names the board whose chip shares the longest
		// prefix with it, seven characters (the family) at least.
		"stm32l4r5":   `boards: unknown board "stm32l4r5" (did you mean "nucleo-l4r5zi" (its part STM32L4R5ZIT6)?)`,
		"stm32f407":   `boards: unknown board "stm32f407" (did you mean "netduinoplus2" (its part STM32F405RGT6)?)`,
		"STM32F746ZG": `boards: unknown board "STM32F746ZG" (did you mean "nucleo-f746zg" (its part STM32F746ZGT6)?)`,
		"stm32":       `boards: unknown board "stm32"; known boards: `,
	} {
		_, err := c.Get(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s", in, err, want)
		}
		// Without --boards, a board of the user's own file may be meant.
		if err == nil || !strings.HasSuffix(err.Error(), "; a board of your own file needs --boards FILE") {
			t.Errorf("%s: %v does not point at --boards", in, err)
		}
	}
	// With a board file loaded, that is not the hint.
	u, err := LoadData("mine.star", []byte("board(name = \"mine\", inherits = \"mps2-an386\")\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Get("rp240"); err == nil || strings.Contains(err.Error(), "--boards") {
		t.Errorf("with a board file: %v", err)
	}
}

// TuningCore: the CPU where a board names one, its toolchain and -march
// where it does not (aarch64-linux's records had no core), nothing for the
// host.
func TestTuningCore(t *testing.T) {
	cat, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"mps2-an386":    "cortex-m4",
		"mps3-an547":    "cortex-m55",
		"aarch64-linux": "aarch64-linux-gnu armv8.2-a+dotprod",
		"host":          "",
	} {
		b, err := cat.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.TuningCore(); got != want {
			t.Errorf("%s: TuningCore() = %q, want %q", name, got, want)
		}
	}
}

// gcc writes Thumb-1 code in the divided syntax unless told, and the
// runtime's assembly is unified: a Cortex-M23 board of the user's own
// (no -masm-syntax-unified in its cflags) did not assemble. GCCFlags adds
// the flag for the ARMv6-M and ARMv8-M Baseline cores, once.
func TestThumb1BoardsGetUnifiedSyntax(t *testing.T) {
	for _, c := range []struct {
		b    Board
		want int
	}{
		{Board{CPU: "cortex-m23", CFlags: []string{"-mthumb"}}, 1},
		{Board{CPU: "cortex-m0plus", CFlags: []string{"-mthumb", "-masm-syntax-unified"}}, 1},
		{Board{Arch: "armv8-m.base+fp", CFlags: []string{"-mthumb"}}, 1},
		{Board{Arch: "armv6-m"}, 1},
		{Board{CPU: "cortex-m33", CFlags: []string{"-mthumb"}}, 0},
		{Board{CPU: "cortex-m3"}, 0},
		{Board{Arch: "armv8-m.main+dsp"}, 0},
	} {
		f := c.b.GCCFlags()
		n := 0
		for _, x := range f {
			if x == "-masm-syntax-unified" {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%s%s: flags %v, want -masm-syntax-unified %d time(s)", c.b.CPU, c.b.Arch, f, c.want)
		}
	}
}
