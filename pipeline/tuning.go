package pipeline

import (
	"fmt"
	"path/filepath"

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
// core (found by lowering once with the defaults).
func (s *State) tuneTarget(t tir.Target) (tir.Target, error) {
	t, err := s.tuneTargetKnobs(t)
	for _, k := range s.Opt.KeepInt8 {
		t = t.WithKnobs(k, map[string]int{"weights": 8})
	}
	return t, err
}

func (s *State) tuneTargetKnobs(t tir.Target) (tir.Target, error) {
	if s.Opt.Board != nil {
		t = t.ForCore(s.Opt.Board.CPU)
	}
	for key, k := range s.Opt.Knobs {
		t = t.WithKnobs(key, k)
	}
	if s.Opt.Tuning == "" {
		return t, nil
	}
	rs, notes, err := tune.Load(s.Opt.Tuning)
	if err != nil {
		return t, err
	}
	for _, n := range notes {
		s.Opt.Warn(n)
	}
	if rs.Len() == 0 {
		s.Opt.Warn(fmt.Sprintf("tuning records %s: no records", s.Opt.Tuning))
		return t, nil
	}
	core := ""
	if s.Opt.Board != nil {
		core = s.Opt.Board.CPU
	}
	m, err := tir.Lower(s.Graph, s.Plan, t)
	if err != nil {
		return t, err
	}
	over, notes := tune.Overrides(s.Graph, m, rs, t.Name, core)
	for _, n := range notes {
		// Name the model: one records file serves several (bench a b
		// --tuning both.json said the same line twice, naming neither).
		if s.ModelPath != "" {
			n = filepath.Base(s.ModelPath) + ": " + n
		}
		s.Opt.Warn(n)
	}
	for name, k := range over {
		t = t.WithKnobs(name, k)
	}
	s.Tuned = len(over)
	return t, nil
}
