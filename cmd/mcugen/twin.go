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
// measures. s itself has passed the real board's fit checks, and the twin
// is held to the real board's flash as a budget, so the layers kept int8
// to fit it are kept int8 on the twin too (review finding: the twin's 4 MiB
// took every layer's int16 weights, other code than the board's). The
// instructions are then the board's code's; flash and RAM are the twin's
// build's (another start-up and linker script). It returns s itself for an
// emulated board, and an error where no QEMU board has the core.
func emulatedTwin(e *env, s *pipeline.State, cat *boards.Catalog) (*pipeline.State, error) {
	b := s.Opt.Board
	if b != nil && b.QEMU.Binary != "" && b.BareMetal() && (b.Counter.Kind == "" || b.Counter.Kind == "none" || b.Counter.Kind == "dwt") {
		// QEMU models no DWT cycle counter: the firmware reads 0 and
		// the count is n/a, which only tune explained (review: a board
		// of the stm32 family, whose counter is the DWT's, on
		// netduinoplus2).
		what := "has no counter"
		if b.Counter.Kind == "dwt" {
			what = "counts with the DWT, which QEMU does not model"
		}
		e.warnOnce(fmt.Sprintf("board %s %s: no instruction count under QEMU; give it a counter QEMU models (fpgaio, stm32-tim or nrf-timer, as the catalog's QEMU boards have)", b.Name, what))
	}
	if b == nil || b.Emulated() {
		return s, nil
	}
	twin, core, err := measure.MeasureBoardOn(b, cat)
	if err != nil {
		return nil, fmt.Errorf("board %s has no emulator, and no QEMU board of the catalog has its core (%s) or runs its code: compile and size it, or run it on the hardware", b.Name, b.CPU)
	}
	// The twin builds with b's own flags and stack_bytes
	// (measure.MeasureBoardOn, boards.Board.Running).
	e.warnOnce(twinNote("running", b, twin, core) + "; flash and RAM are that build's")
	opt := s.Opt
	opt.Board, opt.Target = twin, s.Report.Target
	opt.Warn = func(string) {} // said once, by the board's own compile
	// The board's build decided which layers keep int8 weights to fit
	// its flash (and measured the code where its estimate could not
	// tell): the twin takes that decision as knobs rather than fitting
	// its own 4 MiB (review findings: the twin took every layer's int16
	// weights, other code than the board's; then, fitting the board's
	// region by the estimate alone, it refused what compile accepted).
	// KeepInt8 wins over tuning records as the fit pass does (as knobs, a
	// record asking for Winograd won, and a tuned build on a board without
	// an emulator was refused: user-journey finding).
	if s.Lean != nil && len(s.Lean.Kernels) > 0 {
		opt.KeepInt8 = slices.Clone(s.Lean.Kernels)
		opt.KeepInt4 = slices.Clone(s.Lean.Int4)
	}
	t, err := pipeline.Compile(s.ModelPath, opt)
	if err != nil {
		return nil, err
	}
	if lean := int8Kernels(t); !slices.Equal(lean, int8Kernels(s)) {
		return nil, fmt.Errorf("board %s has no emulator, and its build on %s keeps other layers int8 (%v, the board's %v): run it on the hardware", b.Name, twin.Name, lean, int8Kernels(s))
	}
	return t, nil
}

// int8Kernels lists the kernels of s whose weights are int8 in flash
// (knob weights = 8), sorted.
func int8Kernels(s *pipeline.State) []string {
	var out []string
	for _, f := range s.Module.Funcs {
		if f.Knobs["weights"] == 8 {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// twinNote says that board b, which has no emulator, is run (verb) on
// twin, a QEMU board whose core is core.
func twinNote(verb string, b, twin *boards.Board, core string) string {
	if core != b.CPU {
		return fmt.Sprintf("board %s has no emulator: %s its %s code on %s (%s, which executes that code unchanged)", b.Name, verb, b.CPU, twin.Name, core)
	}
	return fmt.Sprintf("board %s has no emulator: %s on %s (same core, %s)", b.Name, verb, twin.Name, b.CPU)
}
