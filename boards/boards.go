// Package boards is mcugen's board catalog: which CPU, gcc flags, memory regions, counter,
// UART and emulator each target has. Boards are data written in Starlark syntax
// (catalog.star, embedded; users add their own file with --boards FILE), read with
// buildtools' parser and never executed. Families share fields through inheritance, as
// TinyGo's targets do.
package boards

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
)

//go:embed catalog.star
var builtinCatalog []byte

// BuiltinFile is the name the embedded catalog has in error messages.
const BuiltinFile = "catalog.star"

// Toolchains a board can name.
const (
	ToolchainArmNoneEABI = "arm-none-eabi"
	ToolchainAArch64     = "aarch64-linux-gnu"
	ToolchainHost        = "host"
)

// Region roles: what a memory region holds.
const (
	HoldsCode    = "code"    // .text, .rodata and the load image of .data
	HoldsWeights = "weights" // the .mcugen.weights section (read-only model constants)
	HoldsData    = "data"    // .data, .bss and the stack
	HoldsArena   = "arena"   // the .mcugen.arena section (the activation arena)
)

// Region is one memory region of a board.
type Region struct {
	Name     string
	Origin   uint64
	Length   uint64
	Holds    []string // of HoldsCode, HoldsWeights, HoldsData, HoldsArena
	ReadOnly bool
}

// Counter is the free-running counter the harness reads around an inference.
type Counter struct {
	Kind string // "none", "fpgaio", "nrf-timer", "stm32-tim", "dwt", "qemu-plugin"
	Addr uint64 // register (fpgaio, dwt) or peripheral base (nrf-timer, stm32-tim)
	Hz   int64  // its clock; 0 when it counts core cycles
}

// UART is the serial port the bare-metal harness prints to (8N1, transmit only).
type UART struct {
	Kind    string // "none" (print through semihosting), "cmsdk", "nrf", "stm32", "stm32f4", "stm32-lpuart"
	Base    uint64
	Baud    int64 // bits per second; 0: the port's reset setting (cmsdk, nrf)
	ClockHz int64 // the port's kernel clock after reset (stm32 kinds)
	TxPin   int64 // the nRF PSEL.TXD value (pin, plus 32 for port 1); -1: not set
}

// UART kinds and what they drive: Arm's CMSDK APB UART (the MPS boards), the nRF51/nRF52
// UART (not UARTE), the STM32 USART with ISR/TDR registers (F0, F3, F7, G0, G4, H7, L0,
// L4, L5, U5, WB, WL), the older STM32 USART with SR/DR (F1, F2, F4), and the STM32 LPUART.
var uartKinds = []string{"cmsdk", "nrf", "stm32", "stm32f4", "stm32-lpuart"}

// RegWrite is one register the bare-metal runtime programs at start, before its UART and
// counter (clock enables, pin multiplexing): *Addr = (*Addr & ^Mask) | Value.
type RegWrite struct {
	Addr, Mask, Value uint32
}

// BRR is the value of an STM32 UART's baud rate register for u's clock and baud: the
// USART's divider rounded to nearest (16× oversampling), the LPUART's 256·clock/baud.
// It reports false for other kinds or a rate the port cannot make.
func (u UART) BRR() (uint32, bool) {
	if u.Baud <= 0 || u.ClockHz <= 0 {
		return 0, false
	}
	switch u.Kind {
	case "stm32", "stm32f4":
		d := (u.ClockHz + u.Baud/2) / u.Baud
		return uint32(d), d >= 16 && d <= 0xFFFF
	case "stm32-lpuart":
		d := (256*u.ClockHz + u.Baud/2) / u.Baud
		return uint32(d), d >= 0x300 && d <= 0xFFFFF && u.ClockHz >= 3*u.Baud && u.ClockHz <= 4096*u.Baud
	}
	return 0, false
}

// nrfBaud maps a baud rate to the nRF UART's BAUDRATE register value (the reference
// manual's table).
var nrfBaud = map[int64]uint32{
	1200: 0x0004F000, 2400: 0x0009D000, 4800: 0x0013B000, 9600: 0x00275000, 14400: 0x003B0000,
	19200: 0x004EA000, 28800: 0x0075F000, 38400: 0x009D5000, 57600: 0x00EBF000,
	76800: 0x013A9000, 115200: 0x01D7E000, 230400: 0x03AFB000, 250000: 0x04000000,
	460800: 0x075F7000, 921600: 0x0EBED000, 1000000: 0x10000000,
}

// NRFBaud is the nRF BAUDRATE register value for u.Baud, false when the UART has no such
// rate.
func (u UART) NRFBaud() (uint32, bool) {
	v, ok := nrfBaud[u.Baud]
	return v, ok
}

// QEMU says how to emulate a board.
type QEMU struct {
	Binary      string // "qemu-system-arm", "qemu-aarch64"; "" when there is no emulator
	Machine     string // -M; "" for user-mode emulation
	Args        []string
	ICountShift int // -icount shift=N,align=off,sleep=off; 0 = no icount
}

// Board is one resolved board: every inherited field filled in.
type Board struct {
	Name        string
	Description string
	Part        string   // the chip's part number
	Inherits    []string // the parents named in its definition
	Toolchain   string   // ToolchainArmNoneEABI, ToolchainAArch64 or ToolchainHost
	CPU         string   // -mcpu
	Arch        string   // -march
	FPU         string   // -mfpu
	FloatABI    string   // -mfloat-abi: "soft", "softfp", "hard"
	CFlags      []string // further flags the core needs (-mthumb, ...)
	Features    []string // "dsp", "fpu", "mve", "neon", "dotprod", "i8mm"
	Memory      []Region
	StackBytes  int
	Counter     Counter
	UART        UART
	Init        []RegWrite // registers the bare-metal runtime programs first
	QEMU        QEMU
	Zephyr      string // Zephyr board name
	Arduino     string // Arduino FQBN
	// NoBoot says why the image mcugen's own runtime builds (the make and
	// cmake projects) does not boot on the board as is; "" where it does.
	NoBoot string
	File   string // where it was defined
	Line   int
}

// HasFeature reports whether the board lists feature f.
func (b *Board) HasFeature(f string) bool { return slices.Contains(b.Features, f) }

// Emulated reports whether the board runs under QEMU or natively (host), i.e. whether
// `mcugen run` can execute it.
func (b *Board) Emulated() bool { return b.QEMU.Binary != "" || b.Toolchain == ToolchainHost }

// BareMetal reports whether the board is a bare-metal Cortex-M target.
func (b *Board) BareMetal() bool { return b.Toolchain == ToolchainArmNoneEABI }

// ConstInRAM reports an 8-bit AVR Arduino board, whose compiler copies
// constant data into SRAM at start-up: its FQBN (vendor:architecture:board)
// names architecture avr. Teensy's Arm boards keep the name "avr" for
// their core, so an Arm CPU rules it out.
func (b *Board) ConstInRAM() bool {
	parts := strings.Split(b.Arduino, ":")
	return len(parts) >= 3 && parts[1] == "avr" && !strings.HasPrefix(b.CPU, "cortex")
}

// ArduinoWeightsSection is the linker section an Arduino build puts the
// model's weights in to keep them in flash, or "" where read-only data
// stays there anyway: Teensyduino's Teensy 4 linker scripts copy .rodata
// into DTCM and keep .progmem in flash (review: a float VWW's 843 KB of
// weights overflowed teensy40's DTCM by 503,936 B).
func (b *Board) ArduinoWeightsSection() string {
	if strings.HasPrefix(b.Arduino, "teensy:avr:teensy4") || b.Arduino == "teensy:avr:teensyMM" {
		return ".progmem"
	}
	return ""
}

// Running returns a copy of the emulated board h that builds b's code: h's
// memory map, counter, UART and emulator with b's core, flags and
// features (a board whose core no QEMU machine models, run on one whose
// core executes its instructions unchanged).
func (h *Board) Running(b *Board) *Board {
	t := *h
	t.CPU, t.Arch, t.FPU, t.FloatABI = b.CPU, b.Arch, b.FPU, b.FloatABI
	t.CFlags, t.Features = slices.Clone(b.CFlags), slices.Clone(b.Features)
	// The board's stack, so a kernel whose local arrays the board's stack
	// cannot hold fails on the stand-in too (a user journey: tune chose
	// Winograd on a board of 8 KiB stack, measured under the stand-in's 16).
	if b.StackBytes > 0 {
		t.StackBytes = b.StackBytes
	}
	t.Description = fmt.Sprintf("%s, running %s code", h.Description, b.CPU)
	return &t
}

// TuningCore names the core tuning records are kept for: the CPU, or for a
// board that names none (a Linux board, whose flags choose the code) its
// toolchain and -march, as "aarch64-linux-gnu armv8.2-a+dotprod"; "" for
// the host. (Tuning journey: aarch64-linux records had no core, so no
// command could apply them.)
//
// A core whose FPU is optional, built without one (soft float, as a Cortex-M4
// without an FPU is), is "cortex-m4 soft-float": its float kernels are other
// code than the FPU board's, so records measured there must not apply here,
// nor the other way (review finding: soft-float records made a hard-float
// build 23% slower, without a note).
func (b *Board) TuningCore() string {
	if b.CPU != "" && fpuOptional(b.CPU) && (b.FloatABI == "" || b.FloatABI == "soft") {
		return b.CPU + " soft-float"
	}
	if b.CPU != "" || b.Toolchain == ToolchainHost {
		return b.CPU
	}
	return strings.TrimSpace(b.Toolchain + " " + b.Arch)
}

// fpuOptional reports whether the core may come with an FPU or without one.
func fpuOptional(cpu string) bool {
	base, _, _ := strings.Cut(cpu, "+")
	switch base {
	case "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p", "cortex-m52", "cortex-m55", "cortex-m85":
		return true
	}
	return false
}

// gccOnly are board flags clang does not take: -masm-syntax-unified makes
// gcc read the ARMv6-M boards' inline asm in unified syntax, which is
// clang's only syntax.
var gccOnly = map[string]bool{"-masm-syntax-unified": true}

// ClangOnly is flags without the gcc-only ones: a board's GCCFlags as clang
// takes them.
func ClangOnly(flags []string) []string {
	var out []string
	for _, f := range flags {
		if !gccOnly[f] {
			out = append(out, f)
		}
	}
	return out
}

// OptLevel is the optimization level the board's builds take: the last -O
// option of its cflags, or -O2. Builds put it after GCCFlags, where the
// -O2 they added alone overrode a board file's "-Os" (a review finding).
func (b *Board) OptLevel() string {
	opt := "-O2"
	for _, f := range b.CFlags {
		if strings.HasPrefix(f, "-O") {
			opt = f
		}
	}
	return opt
}

// KeepsFramePointer reports whether gcc flags keep a frame pointer: the last
// of -fno-omit-frame-pointer and -fomit-frame-pointer among them decides.
func KeepsFramePointer(flags []string) bool {
	keep := false
	for _, f := range flags {
		switch f {
		case "-fno-omit-frame-pointer":
			keep = true
		case "-fomit-frame-pointer":
			keep = false
		}
	}
	return keep
}

// GCCFlags are the code-generation flags the board asks for (-mcpu, -march, -mfpu,
// -mfloat-abi and its cflags; an -O among those is OptLevel's too).
func (b *Board) GCCFlags() []string {
	var f []string
	if b.CPU != "" {
		f = append(f, "-mcpu="+b.CPU)
	}
	if b.Arch != "" {
		f = append(f, "-march="+b.Arch)
	}
	if b.FPU != "" {
		f = append(f, "-mfpu="+b.FPU)
	}
	if b.FloatABI != "" {
		f = append(f, "-mfloat-abi="+b.FloatABI)
	}
	f = append(f, b.CFlags...)
	if b.Thumb1() && !slices.Contains(f, "-masm-syntax-unified") {
		// gcc writes Thumb-1 code in the divided syntax unless told, and
		// the runtime's and kernels' assembly is unified (a Cortex-M23
		// board of the user's own, without the flag, did not assemble).
		f = append(f, "-masm-syntax-unified")
	}
	return f
}

// Thumb1 reports whether the board's core runs only the 16-bit Thumb
// instruction set plus the few 32-bit ones of ARMv6-M and ARMv8-M
// Baseline: the Cortex-M0, M0+, M1 and M23.
func (b *Board) Thumb1() bool {
	switch CoreOf(b.CPU) {
	case "cortex-m0", "cortex-m0plus", "cortex-m1", "cortex-m23":
		return true
	}
	switch arch, _, _ := strings.Cut(b.Arch, "+"); arch {
	case "armv6-m", "armv6s-m", "armv8-m.base":
		return true
	}
	return false
}

// RegionFor returns the region that holds role (HoldsCode, ...): the first region that
// lists it; for weights the code region and for the arena the data region when none
// lists them. It returns nil for boards without a memory map.
func (b *Board) RegionFor(role string) *Region {
	for i := range b.Memory {
		if slices.Contains(b.Memory[i].Holds, role) {
			return &b.Memory[i]
		}
	}
	switch role {
	case HoldsWeights:
		return b.RegionFor(HoldsCode)
	case HoldsArena:
		return b.RegionFor(HoldsData)
	}
	return nil
}

// Region returns the region called name, or nil.
func (b *Board) Region(name string) *Region {
	for i := range b.Memory {
		if b.Memory[i].Name == name {
			return &b.Memory[i]
		}
	}
	return nil
}

// FlashBytes is the size of the region holding code (0 without a memory map).
func (b *Board) FlashBytes() uint64 {
	if r := b.RegionFor(HoldsCode); r != nil {
		return r.Length
	}
	return 0
}

// RAMBytes is the size of the region holding data (0 without a memory map).
func (b *Board) RAMBytes() uint64 {
	if r := b.RegionFor(HoldsData); r != nil {
		return r.Length
	}
	return 0
}

// Catalog is a set of resolved boards.
type Catalog struct {
	boards []*Board
	byName map[string]*Board
	// builtinOnly: no board file of the user's was loaded (Load("")).
	builtinOnly bool
}

// Builtin returns the built-in boards, sorted by name.
func Builtin() ([]*Board, error) {
	c, err := Load("")
	if err != nil {
		return nil, err
	}
	return c.Boards(), nil
}

// Load reads the built-in catalog and, when extraFile is not "", a user's board file on
// top of it (its boards may inherit from built-in boards and families).
func Load(extraFile string) (*Catalog, error) {
	p := newParser()
	if err := p.parseFile(BuiltinFile, builtinCatalog); err != nil {
		return nil, err
	}
	if extraFile != "" {
		data, err := readBoardFile(extraFile)
		if err != nil {
			return nil, err
		}
		if err := p.parseFile(extraFile, data); err != nil {
			return nil, err
		}
	}
	c, err := p.resolveAll()
	if err == nil && extraFile == "" {
		c.builtinOnly = true
	}
	return c, err
}

// LoadData is Load for a user's board file given as bytes (name is used in messages).
func LoadData(name string, data []byte) (*Catalog, error) {
	p := newParser()
	if err := p.parseFile(BuiltinFile, builtinCatalog); err != nil {
		return nil, err
	}
	if err := p.parseFile(name, data); err != nil {
		return nil, err
	}
	return p.resolveAll()
}

// Boards returns every board, sorted by name.
func (c *Catalog) Boards() []*Board { return slices.Clone(c.boards) }

// Names returns the board names, sorted.
func (c *Catalog) Names() []string {
	n := make([]string, len(c.boards))
	for i, b := range c.boards {
		n[i] = b.Name
	}
	return n
}

// Get returns the board called name.
func (c *Catalog) Get(name string) (*Board, error) {
	b, err := c.get(name)
	if err != nil && c.builtinOnly {
		// User-journey finding: a board of the user's own file, named
		// without --boards, got only "did you mean" a catalog board.
		err = fmt.Errorf("%w; a board of your own file needs --boards FILE", err)
	}
	return b, err
}

func (c *Catalog) get(name string) (*Board, error) {
	if b, ok := c.byName[name]; ok {
		return b, nil
	}
	// A name that differs only in case, or in - against _, is surely that
	// board (MPS2-AN386, nucleo_f746zg).
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	for _, b := range c.boards {
		if norm(b.Name) == norm(name) {
			return nil, fmt.Errorf("boards: unknown board %q (did you mean %q?)", name, b.Name)
		}
	}
	// A part number (stm32l4r5, STM32F407VG, nrf52840) names the board
	// whose chip shares the longest prefix with it, at least the family's
	// seven characters (user-journey finding: stm32l4r5 got "did you mean
	// stm32u575", and stm32f407 nothing).
	if m := partMatch(c.boards, norm(name)); m != "" {
		return nil, fmt.Errorf("boards: unknown board %q (did you mean %s?)", name, m)
	}
	// A typo of one or two characters (nucleo-l4r5z: user-journey finding)
	// gets the nearest names, when they are that near.
	best, near := 3, []string(nil)
	for _, b := range c.boards {
		switch d := editDistance(norm(b.Name), norm(name)); {
		case d < best:
			best, near = d, []string{b.Name}
		case d == best:
			near = append(near, b.Name)
		}
	}
	if len(near) > 0 && len(near) <= 3 && len(name) > 3 {
		q := make([]string, len(near))
		for i, n := range near {
			q[i] = fmt.Sprintf("%q", n)
		}
		return nil, fmt.Errorf("boards: unknown board %q (did you mean %s?)", name, strings.Join(q, " or "))
	}
	return nil, fmt.Errorf("boards: unknown board %q; known boards: %s", name, strings.Join(c.Names(), ", "))
}

// partMatch names the boards whose part number shares the longest prefix
// with name (lower case), when that prefix is at least seven characters
// ("stm32f4", "nrf5284"), as `"board" (its part PART)`; "" for none.
func partMatch(boards []*Board, name string) string {
	best, out := 6, []string(nil)
	for _, b := range boards {
		part := strings.ToLower(b.Part)
		n := 0
		for n < len(part) && n < len(name) && part[n] == name[n] {
			n++
		}
		switch {
		case n > best:
			best, out = n, []string{fmt.Sprintf("%q (its part %s)", b.Name, b.Part)}
		case n == best && n > 6:
			out = append(out, fmt.Sprintf("%q (its part %s)", b.Name, b.Part))
		}
	}
	if len(out) == 0 || len(out) > 3 {
		return ""
	}
	return strings.Join(out, " or ")
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func newCatalog(bs []*Board) *Catalog {
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
	c := &Catalog{boards: bs, byName: map[string]*Board{}}
	for _, b := range bs {
		c.byName[b.Name] = b
	}
	return c
}
