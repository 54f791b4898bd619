package main

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune/measure"
)

// emulatedTwin gives the build to run for s, compiled for a board without
// an emulator (a Nucleo, an nRF): the same model, target and options
// compiled for the QEMU board of the catalog with the same core, as tune
// measures. s itself has passed the real board's fit checks. The
// instructions are the same code's; flash and RAM are the twin's build's
// (another start-up and linker script). It returns s itself for an
// emulated board, and an error where no QEMU board has the core.
func emulatedTwin(e *env, s *pipeline.State, cat *boards.Catalog) (*pipeline.State, error) {
	b := s.Opt.Board
	if b == nil || b.Emulated() {
		return s, nil
	}
	twin, err := measure.MeasureBoard(b, cat)
	if err != nil {
		return nil, fmt.Errorf("board %s has no emulator, and no QEMU board of the catalog has its core (%s): compile and size it, or run it on the hardware", b.Name, b.CPU)
	}
	note := fmt.Sprintf("board %s has no emulator: running on %s (same core, %s); flash and RAM are that build's", b.Name, twin.Name, b.CPU)
	if !slices.Equal(b.GCCFlags(), twin.GCCFlags()) {
		note += fmt.Sprintf(" (%s's flags %v, %s's %v: float code may differ)", b.Name, b.GCCFlags(), twin.Name, twin.GCCFlags())
	}
	e.warn(note)
	opt := s.Opt
	opt.Board, opt.Target = twin, s.Report.Target
	return pipeline.Compile(s.ModelPath, opt)
}
