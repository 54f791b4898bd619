package runner

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcugen/mcugen/boards"
)

// LockupError is a bare-metal core that QEMU stopped with "Lockup": a fault
// it could not take, at start-up (a vector table or stack in memory the
// machine does not have) or inside the fault handler. A stack overflow that
// locks up is a StackOverflowError instead.
type LockupError struct {
	Board   string
	PC, SP  uint64
	HasRegs bool
	Func    string // the function holding PC, "" when unknown
	// Hint names the board's regions outside the memory QEMU's machine has
	// (a mistyped origin in a board file); "" when all are inside.
	Hint string
}

func (e *LockupError) Error() string {
	at := ""
	if e.HasRegs {
		at = fmt.Sprintf(" at pc=%#08x", e.PC)
		if e.Func != "" {
			at += " (in " + e.Func + ")"
		}
		at += fmt.Sprintf(" with SP=%#08x", e.SP)
	}
	why := "a fault it could not take, at start-up or in the fault handler"
	if e.Hint != "" {
		why += "; " + e.Hint
	}
	return fmt.Sprintf("runner: firmware on %s locked up%s: %s", e.Board, at, why)
}

// lockupError reads QEMU's register dump after a lockup (R13, R15).
func lockupError(fw *Firmware, log string) *LockupError {
	if !fw.Board.BareMetal() || !strings.Contains(log, "Lockup") {
		return nil
	}
	e := &LockupError{Board: fw.Board.Name, Hint: unmappedHint(fw.Board)}
	pc, okPC := qemuReg(log, "R15")
	sp, okSP := qemuReg(log, "R13")
	if okPC && okSP {
		e.PC, e.SP, e.HasRegs = pc, sp, true
		e.Func = funcAt(fw.Path, pc)
	}
	return e
}

// qemuReg reads register name (R13, R15) from the register dump QEMU
// prints when it stops a core ("R13=20003fe0").
func qemuReg(log, name string) (uint64, bool) {
	_, after, ok := strings.Cut(log, name+"=")
	if !ok || len(after) < 8 {
		return 0, false
	}
	v, err := strconv.ParseUint(after[:8], 16, 32)
	return v, err == nil
}

var builtinBoards = sync.OnceValues(boards.Builtin)

// unmappedHint says which of b's regions that hold code, weights, data or
// the arena lie outside the memory the catalog gives b's QEMU machine (the
// regions of the built-in boards on that machine): after a hang or a lockup
// that is most likely a mistyped origin in a board file. "" when every
// region is inside, or the catalog has no board on the machine.
func unmappedHint(b *boards.Board) string {
	if b.QEMU.Machine == "" {
		return ""
	}
	cat, err := builtinBoards()
	if err != nil {
		return ""
	}
	var known []boards.Region
	for _, c := range cat {
		if c.QEMU.Machine == b.QEMU.Machine && c.QEMU.Binary == b.QEMU.Binary {
			for _, r := range c.Memory {
				if !containsRegion(known, r) {
					known = append(known, r)
				}
			}
		}
	}
	if len(known) == 0 {
		return ""
	}
	var bad []string
	for _, r := range b.Memory {
		if len(r.Holds) > 0 && !containsRegion(known, r) {
			bad = append(bad, fmt.Sprintf("%s (%#08x, %s B)", r.Name, r.Origin, commas(r.Length)))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	var have []string
	for _, r := range known {
		have = append(have, fmt.Sprintf("%s at %#08x, %s B", r.Name, r.Origin, commas(r.Length)))
	}
	return fmt.Sprintf("the board's region %s lies outside the memory the catalog gives QEMU's %s machine (%s): is its origin or length mistyped in the board file?",
		strings.Join(bad, " and "), b.QEMU.Machine, strings.Join(have, "; "))
}

// containsRegion says whether r lies inside one of rs.
func containsRegion(rs []boards.Region, r boards.Region) bool {
	for _, k := range rs {
		if r.Origin >= k.Origin && r.Origin-k.Origin <= k.Length && r.Length <= k.Length-(r.Origin-k.Origin) {
			return true
		}
	}
	return false
}
