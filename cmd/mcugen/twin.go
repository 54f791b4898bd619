package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune/measure"
)

// emulatedTwin gives the build to run for s, compiled for a board without
// an emulator (a Nucleo, an nRF): the same model, target and options
// compiled for the QEMU board of the catalog with the same core, as tune
// measures. s itself has passed the real board's fit checks, and the twin
// is held to the real board's flash as a budget, so the layers kept int8
// to fit it are kept int8 on the twin too (review finding: the twin's 4 MiB
// took every layer's int16 weights, other code than the board's). The
// instructions are then the board's code's; flash and RAM are the twin's
// build's (another start-up and linker script). It returns s itself for an
// emulated board, and an error where no QEMU board has the core.
func emulatedTwin(e *env, s *pipeline.State, cat *boards.Catalog) (*pipeline.State, error) {
	b := s.Opt.Board
	if b == nil || b.Emulated() {
		return s, nil
	}
	twin, core, err := measure.MeasureBoardOn(b, cat)
	if err != nil {
		return nil, fmt.Errorf("board %s has no emulator, and no QEMU board of the catalog has its core (%s) or runs its code: compile and size it, or run it on the hardware", b.Name, b.CPU)
	}
	note := fmt.Sprintf("board %s has no emulator: running on %s (same core, %s); flash and RAM are that build's", b.Name, twin.Name, b.CPU)
	if core != b.CPU {
		note = fmt.Sprintf("board %s has no emulator: running its %s code on %s (%s, which executes that code unchanged); flash and RAM are that build's", b.Name, b.CPU, twin.Name, core)
	}
	if !slices.Equal(b.GCCFlags(), twin.GCCFlags()) {
		note += fmt.Sprintf(" (%s's flags %v, %s's %v: float code may differ)", b.Name, b.GCCFlags(), twin.Name, twin.GCCFlags())
	}
	e.warn(note)
	opt := s.Opt
	opt.Board, opt.Target = twin, s.Report.Target
	opt.Warn = func(string) {} // said once, by the board's own compile
	r := b.RegionFor(boards.HoldsWeights)
	fromRegion := r != nil && (opt.FlashBudget == 0 || int64(r.Length) < opt.FlashBudget)
	if fromRegion {
		opt.FlashBudget = int64(r.Length)
	}
	t, err := pipeline.Compile(s.ModelPath, opt)
	var fit *pipeline.FitError
	if fromRegion && errors.As(err, &fit) && fit.Budget == "flash" {
		// The budget is the board's region, not a --flash-budget the
		// user gave: say so (user-journey finding).
		fit.Budget, fit.Board, fit.Region = "", b.Name, r.Name
	}
	if err != nil {
		return nil, err
	}
	if (s.Lean == nil) != (t.Lean == nil) || s.Lean != nil && !slices.Equal(s.Lean.Kernels, t.Lean.Kernels) {
		return nil, fmt.Errorf("board %s has no emulator, and its build on %s would keep other layers int8 to fit flash: run it on the hardware", b.Name, twin.Name)
	}
	return t, nil
}
