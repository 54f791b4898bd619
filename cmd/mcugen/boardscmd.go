package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/boards"
)

type boardsCmd struct {
	Boards string `help:"A Starlark board file adding boards (new names; a board may inherit a built-in one)." type:"path" placeholder:"FILE"`
	Show   string `help:"Print one board's whole resolved definition (memory, counter, UART, start-up registers, emulator, flags)." placeholder:"BOARD"`
	JSON   bool   `name:"json" help:"Print one JSON object."`
}

type boardInfo struct {
	Name       string   `json:"name"`
	CPU        string   `json:"cpu"`
	Features   []string `json:"features"`
	FlashBytes uint64   `json:"flash_bytes"`
	// WeightsFlashBytes is the region the model's weights go to under
	// mcugen's linker script: the code region, or a larger one (the
	// MPS3's 8 MiB QSPI beside its 512 KiB ITCM).
	WeightsFlashBytes uint64 `json:"weights_flash_bytes"`
	RAMBytes          uint64 `json:"ram_bytes"`
	// ArenaRAMBytes is the region the model's arena goes to: the data
	// region, or a larger one (the H7's AXI SRAM beside its DTCM).
	ArenaRAMBytes uint64 `json:"arena_ram_bytes"`
	QEMU          string `json:"qemu"`
	// Output is where the example program prints: "stdout" (hosted), "semihosting"
	// (a debugger's console) or "uart <kind>[ <baud>]".
	Output  string `json:"output"`
	Zephyr  string `json:"zephyr,omitempty"`
	Arduino string `json:"arduino,omitempty"`
}

func (c *boardsCmd) Run(e *env) error {
	if err := checkPath("--boards", c.Boards, false); err != nil {
		return err
	}
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return err
	}
	if c.Show != "" {
		b, err := getBoard(cat, c.Show)
		if err != nil {
			return err
		}
		if c.JSON {
			return e.printJSON(detailOf(b))
		}
		showBoard(e, b)
		return nil
	}
	var out struct {
		Boards []boardInfo `json:"boards"`
	}
	for _, b := range cat.Boards() {
		qemu := b.QEMU.Machine
		if qemu == "" {
			qemu = b.QEMU.Binary
		}
		feats := b.Features
		if feats == nil {
			feats = []string{}
		}
		var arena, weights uint64
		if r := b.RegionFor(boards.HoldsArena); r != nil {
			arena = r.Length
		}
		if r := b.RegionFor(boards.HoldsWeights); r != nil {
			weights = r.Length
		}
		// The table's and --json's core agree: a Linux board's
		// architecture where it names no -mcpu, "native" for the host
		// (--json said "" where the table said native: review finding).
		out.Boards = append(out.Boards, boardInfo{Name: b.Name, CPU: cmp.Or(b.CPU, b.Arch, "native"), Features: feats, FlashBytes: b.FlashBytes(),
			WeightsFlashBytes: weights, RAMBytes: b.RAMBytes(), ArenaRAMBytes: arena, QEMU: qemu, Output: output(b), Zephyr: b.Zephyr, Arduino: b.Arduino})
	}
	if c.JSON {
		return e.printJSON(out)
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	// Columns as wide as their longest entry (user boards' names and
	// Zephyr's qualified board names run long).
	nw, cw, fw, qw, ow, zw := len("board"), len("native"), len("features"), len("qemu"), len("output"), len("zephyr")
	for _, b := range out.Boards {
		nw, cw, fw, qw = max(nw, len(b.Name)), max(cw, len(b.CPU)), max(fw, len(strings.Join(b.Features, ","))), max(qw, len(dash(b.QEMU)))
		ow, zw = max(ow, len(b.Output)), max(zw, len(dash(b.Zephyr)))
	}
	row := "%-*s %-*s %-*s %10s %10s %10s %10s  %-*s %-*s %-*s %s\n"
	fmt.Fprintf(e.stdout, row, nw, "board", cw, "cpu", fw, "features", "flash", "weights", "ram", "arena ram", qw, "qemu", ow, "output", zw, "zephyr", "arduino (fqbn)")
	for _, b := range out.Boards {
		fmt.Fprintf(e.stdout, row, nw, b.Name, cw, b.CPU, fw, strings.Join(b.Features, ","), kib(b.FlashBytes), kib(b.WeightsFlashBytes), kib(b.RAMBytes),
			kib(b.ArenaRAMBytes), qw, dash(b.QEMU), ow, b.Output, zw, dash(b.Zephyr), dash(b.Arduino))
	}
	return nil
}

// output says where b's example program prints.
func output(b *boards.Board) string {
	switch {
	case !b.BareMetal():
		return "stdout"
	case b.UART.Kind == "none":
		return "semihosting"
	case b.UART.Baud > 0:
		return fmt.Sprintf("uart %s %d", b.UART.Kind, b.UART.Baud)
	}
	return "uart " + b.UART.Kind
}

func kib(n uint64) string {
	if n == 0 {
		return "-"
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// showBoard prints one board's resolved fields, one per line.
func showBoard(e *env, b *boards.Board) {
	p := func(k, format string, a ...any) {
		fmt.Fprintf(e.stdout, "%-12s "+format+"\n", append([]any{k}, a...)...)
	}
	p("board", "%s (%s:%d)", b.Name, b.File, b.Line)
	if b.Description != "" {
		p("description", "%s", b.Description)
	}
	if b.Part != "" {
		p("part", "%s", b.Part)
	}
	if len(b.Inherits) > 0 {
		p("inherits", "%s", strings.Join(b.Inherits, ", "))
	}
	if b.NoBoot != "" {
		p("no boot", "%s", b.NoBoot)
	}
	p("toolchain", "%s", b.Toolchain)
	if f := b.GCCFlags(); len(f) > 0 {
		p("gcc flags", "%s", strings.Join(f, " "))
	}
	p("features", "%s", strings.Join(b.Features, ","))
	for _, r := range b.Memory {
		ro := ""
		if r.ReadOnly {
			ro = ", read-only"
		}
		roles := slices.Clone(r.Holds)
		// The roles a region takes by default (weights in the code region,
		// the arena in the data one) are shown too (docs journey: a board
		// whose regions held only code and data did not say where they go).
		for _, role := range []string{boards.HoldsWeights, boards.HoldsArena} {
			if !slices.Contains(roles, role) && b.RegionFor(role) != nil && b.RegionFor(role).Name == r.Name {
				roles = append(roles, role+" (by default)")
			}
		}
		holds := "nothing"
		if len(roles) > 0 {
			holds = strings.Join(roles, ", ")
		}
		p("memory", "%-8s 0x%08X  %10s  holds %s%s", r.Name, r.Origin, kib(r.Length), holds, ro)
	}
	if b.StackBytes > 0 {
		p("stack", "%d B", b.StackBytes)
	}
	switch c := b.Counter; c.Kind {
	case "none", "":
		p("counter", "none")
	case "qemu-plugin":
		p("counter", "%s", c.Kind)
	case "dwt":
		// The core's cycle counter (CYCCNT); its clock where the board
		// gives one (a user journey: the 80 MHz was dropped).
		line := "dwt (core cycles, CYCCNT at 0xE0001004)"
		if c.Hz > 0 {
			line = fmt.Sprintf("dwt (core cycles at %d Hz, CYCCNT at 0xE0001004)", c.Hz)
		}
		p("counter", "%s", line)
	default:
		p("counter", "%s at 0x%08X, %d Hz", c.Kind, c.Addr, c.Hz)
	}
	p("output", "%s", output(b))
	if u := b.UART; u.Kind != "none" && u.Kind != "" {
		line := fmt.Sprintf("%s at 0x%08X", u.Kind, u.Base)
		if brr, ok := u.BRR(); ok {
			line += fmt.Sprintf(", BRR %d (%d baud from %d Hz)", brr, u.Baud, u.ClockHz)
		}
		if u.TxPin >= 0 {
			line += fmt.Sprintf(", TX pin %d", u.TxPin)
		}
		p("uart", "%s", line)
	}
	for _, r := range b.Init {
		p("init", "*0x%08X = (*0x%08X & ~0x%08X) | 0x%08X", r.Addr, r.Addr, r.Mask, r.Value)
	}
	if q := b.QEMU; q.Binary != "" {
		line := q.Binary
		if q.Machine != "" {
			line += " -M " + q.Machine
		}
		if q.ICountShift > 0 {
			line += fmt.Sprintf(" -icount shift=%d", q.ICountShift)
		}
		p("qemu", "%s", line)
	} else {
		p("qemu", "none")
	}
	if b.Zephyr != "" {
		p("zephyr", "%s", b.Zephyr)
	}
	if b.Arduino != "" {
		p("arduino", "%s", b.Arduino)
	}
}

// boardDetail is boards --show --json: the resolved board in the JSON's
// snake_case.
type boardDetail struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Part        string      `json:"part,omitempty"`
	Inherits    []string    `json:"inherits,omitempty"`
	NoBoot      string      `json:"no_boot,omitempty"`
	File        string      `json:"file"`
	Line        int         `json:"line"`
	Toolchain   string      `json:"toolchain"`
	GCCFlags    []string    `json:"gcc_flags"`
	Features    []string    `json:"features"`
	Memory      []memDetail `json:"memory"`
	StackBytes  int         `json:"stack_bytes"`
	Counter     struct {
		Kind string `json:"kind"`
		Addr uint64 `json:"addr,omitempty"`
		Hz   int64  `json:"hz,omitempty"`
	} `json:"counter"`
	Output  string      `json:"output"`
	UART    *uartDetail `json:"uart,omitempty"`
	Init    []regDetail `json:"init,omitempty"`
	QEMU    *qemuDetail `json:"qemu,omitempty"`
	Zephyr  string      `json:"zephyr,omitempty"`
	Arduino string      `json:"arduino,omitempty"`
}

type memDetail struct {
	Name     string   `json:"name"`
	Origin   uint64   `json:"origin"`
	Length   uint64   `json:"length"`
	Holds    []string `json:"holds"`
	ReadOnly bool     `json:"readonly,omitempty"`
}

type uartDetail struct {
	Kind    string `json:"kind"`
	Base    uint64 `json:"base"`
	Baud    int64  `json:"baud,omitempty"`
	ClockHz int64  `json:"clock_hz,omitempty"`
	BRR     uint32 `json:"brr,omitempty"`
	TxPin   *int64 `json:"tx_pin,omitempty"`
}

type regDetail struct {
	Addr  uint32 `json:"addr"`
	Mask  uint32 `json:"mask"`
	Value uint32 `json:"value"`
}

type qemuDetail struct {
	Binary      string   `json:"binary"`
	Machine     string   `json:"machine,omitempty"`
	Args        []string `json:"args,omitempty"`
	ICountShift int      `json:"icount_shift,omitempty"`
}

func detailOf(b *boards.Board) boardDetail {
	d := boardDetail{Name: b.Name, Description: b.Description, Part: b.Part, Inherits: b.Inherits, NoBoot: b.NoBoot, File: b.File, Line: b.Line,
		Toolchain: b.Toolchain, GCCFlags: b.GCCFlags(), Features: b.Features, StackBytes: b.StackBytes, Output: output(b),
		Zephyr: b.Zephyr, Arduino: b.Arduino}
	if d.Features == nil {
		d.Features = []string{}
	}
	if d.GCCFlags == nil {
		d.GCCFlags = []string{}
	}
	d.Memory = []memDetail{}
	for _, r := range b.Memory {
		d.Memory = append(d.Memory, memDetail{r.Name, r.Origin, r.Length, append([]string{}, r.Holds...), r.ReadOnly})
	}
	d.Counter.Kind, d.Counter.Addr, d.Counter.Hz = b.Counter.Kind, b.Counter.Addr, b.Counter.Hz
	if u := b.UART; u.Kind != "none" && u.Kind != "" {
		d.UART = &uartDetail{Kind: u.Kind, Base: u.Base, Baud: u.Baud, ClockHz: u.ClockHz}
		if brr, ok := u.BRR(); ok {
			d.UART.BRR = brr
		}
		if u.TxPin >= 0 {
			pin := u.TxPin
			d.UART.TxPin = &pin
		}
	}
	for _, r := range b.Init {
		d.Init = append(d.Init, regDetail{r.Addr, r.Mask, r.Value})
	}
	if q := b.QEMU; q.Binary != "" {
		d.QEMU = &qemuDetail{q.Binary, q.Machine, q.Args, q.ICountShift}
	}
	return d
}
