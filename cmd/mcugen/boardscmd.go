package main

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/boards"
)

type boardsCmd struct {
	Boards string `help:"A Starlark board file adding boards (new names; a board may inherit a built-in one)." type:"existingfile" placeholder:"FILE"`
	JSON   bool   `name:"json" help:"Print one JSON object."`
}

type boardInfo struct {
	Name       string   `json:"name"`
	CPU        string   `json:"cpu"`
	Features   []string `json:"features"`
	FlashBytes uint64   `json:"flash_bytes"`
	RAMBytes   uint64   `json:"ram_bytes"`
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
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return err
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
		var arena uint64
		if r := b.RegionFor(boards.HoldsArena); r != nil {
			arena = r.Length
		}
		out.Boards = append(out.Boards, boardInfo{Name: b.Name, CPU: b.CPU, Features: feats, FlashBytes: b.FlashBytes(),
			RAMBytes: b.RAMBytes(), ArenaRAMBytes: arena, QEMU: qemu, Output: output(b), Zephyr: b.Zephyr, Arduino: b.Arduino})
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
	fmt.Fprintf(e.stdout, "%-22s %-12s %-22s %10s %10s %10s  %-14s %-24s %-22s %s\n", "board", "cpu", "features", "flash", "ram", "arena ram", "qemu", "output", "zephyr", "arduino (fqbn)")
	for _, b := range out.Boards {
		cpu := b.CPU
		if cpu == "" {
			cpu = "native"
		}
		fmt.Fprintf(e.stdout, "%-22s %-12s %-22s %10s %10s %10s  %-14s %-24s %-22s %s\n", b.Name, cpu, strings.Join(b.Features, ","), kib(b.FlashBytes), kib(b.RAMBytes),
			kib(b.ArenaRAMBytes), dash(b.QEMU), b.Output, dash(b.Zephyr), dash(b.Arduino))
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
