package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tune"
)

// CompileGraph runs every pass after import on a graph already in memory
// (the autotuner compiles one-kernel graphs this way); name stands for the
// model file in generated comments and the default prefix.
func CompileGraph(g *graph.Graph, name string, opt Options) (*State, error) {
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	if opt.Prefix == "" {
		opt.Prefix = DefaultPrefix(name)
	}
	s := &State{Opt: opt, ModelPath: name, Graph: g}
	for _, p := range Passes {
		if p.Name == "import" {
			continue
		}
		if err := p.Run(s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// tuneTarget adds knob overrides to t: Options.Knobs as given, then the
// records of Options.Tuning that match this model's kernels on the board's
// core (found by lowering once with the defaults), then int8 weights for
// the kernels Options.KeepInt8 and the fit pass (State.Lean) keep int8
// (and packed int4 for Options.KeepInt4 and LeanWeights.Int4),
// whose records are those tuned with int8 weights (tune.KeyFor). It
// returns the notes on the records for the caller to give once: the fit
// pass calls it again as it keeps more kernels int8.
func (s *State) tuneTarget(t tir.Target) (tir.Target, []string, error) {
	lean := append(slices.Clone(s.Opt.KeepInt8), s.Opt.KeepInt4...)
	if s.Lean != nil {
		lean = append(lean, s.Lean.Kernels...)
	}
	t, notes, err := s.tuneTargetKnobs(t, lean)
	for _, k := range lean {
		t = t.WithKnobs(k, map[string]int{"weights": 8})
	}
	// Packed int4 weights where the fit pass went further than int8 (their
	// records are the int8 ones: tuned with the same blocks).
	four := slices.Clone(s.Opt.KeepInt4)
	if s.Lean != nil {
		four = append(four, s.Lean.int4Tried...)
	}
	for _, k := range four {
		// The records' block shapes are int8's: the int4 form keeps its
		// own (review finding: a record's 2x2 took a 49-row int4 layer
		// to the C form, 29% slower).
		t = t.WithKnobs(k, map[string]int{"weights": 4, "block_rows": tir.DSPW4Block[0], "block_oc": tir.DSPW4Block[1]})
	}
	return t, notes, err
}

func (s *State) tuneTargetKnobs(t tir.Target, lean []string) (tir.Target, []string, error) {
	if s.Opt.Board != nil {
		t = t.ForCore(s.Opt.Board.CPU)
	}
	for key, k := range s.Opt.Knobs {
		t = t.WithKnobs(key, k)
	}
	if s.Opt.Tuning == "" {
		return t, nil, nil
	}
	if s.records == nil {
		rs, read, err := tune.Load(s.Opt.Tuning)
		if err != nil {
			return t, nil, err
		}
		s.records, s.recordsRead = rs, read
	}
	rs, notes := s.records, slices.Clone(s.recordsRead)
	if rs.Len() == 0 {
		return t, append(notes, fmt.Sprintf("tuning records %s: no records", s.Opt.Tuning)), nil
	}
	// Lowered with the kernels kept int8 as they will be, so each finds
	// the record of its weights' layout.
	base := t
	for _, k := range lean {
		base = base.WithKnobs(k, map[string]int{"weights": 8})
	}
	core := ""
	if s.Opt.Board != nil {
		core = tune.ToolCore(s.Opt.Board.TuningCore(), s.Opt.Compiler)
	}
	m, err := tir.Lower(s.Graph, s.Plan, base)
	if err != nil {
		return t, notes, err
	}
	over, more := tune.Overrides(s.Graph, m, rs, t.Name, core)
	for _, n := range more {
		// Name the model: one records file serves several (bench a b
		// --tuning both.json said the same line twice, naming neither).
		if s.ModelPath != "" {
			n = filepath.Base(s.ModelPath) + ": " + n
		}
		notes = append(notes, n)
	}
	for name, k := range over {
		t = t.WithKnobs(name, k)
	}
	s.Tuned = len(over)
	return t, notes, nil
}
