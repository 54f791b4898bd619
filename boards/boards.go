// Package boards is mcugen's board catalog: which CPU, gcc flags, memory regions, counter,
// UART and emulator each target has. Boards are data written in Starlark syntax
// (catalog.star, embedded; users add their own file with --boards FILE), read with
// buildtools' parser and never executed. Families share fields through inheritance, as
// TinyGo's targets do.
package boards

import (
	_ "embed"
	"fmt"
	"os"
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
	Kind string // "none", "fpgaio", "nrf-timer", "dwt", "qemu-plugin"
	Addr uint64 // register (fpgaio, dwt) or peripheral base (nrf-timer)
	Hz   int64  // its clock; 0 when it counts core cycles
}

// UART is the serial port the bare-metal harness prints to.
type UART struct {
	Kind string // "none" (print through semihosting), "cmsdk", "nrf"
	Base uint64
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
	QEMU        QEMU
	Zephyr      string // Zephyr board name
	Arduino     string // Arduino FQBN
	File        string // where it was defined
	Line        int
}

// HasFeature reports whether the board lists feature f.
func (b *Board) HasFeature(f string) bool { return slices.Contains(b.Features, f) }

// Emulated reports whether the board runs under QEMU or natively (host), i.e. whether
// `mcugen run` can execute it.
func (b *Board) Emulated() bool { return b.QEMU.Binary != "" || b.Toolchain == ToolchainHost }

// BareMetal reports whether the board is a bare-metal Cortex-M target.
func (b *Board) BareMetal() bool { return b.Toolchain == ToolchainArmNoneEABI }

// GCCFlags are the code-generation flags the board asks for (-mcpu, -march, -mfpu,
// -mfloat-abi and its cflags), without optimization level.
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
	return append(f, b.CFlags...)
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
		data, err := os.ReadFile(extraFile)
		if err != nil {
			return nil, fmt.Errorf("boards: %w", err)
		}
		if err := p.parseFile(extraFile, data); err != nil {
			return nil, err
		}
	}
	return p.resolveAll()
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
	if b, ok := c.byName[name]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("boards: unknown board %q; known boards: %s", name, strings.Join(c.Names(), ", "))
}

func newCatalog(bs []*Board) *Catalog {
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
	c := &Catalog{boards: bs, byName: map[string]*Board{}}
	for _, b := range bs {
		c.byName[b.Name] = b
	}
	return c
}
