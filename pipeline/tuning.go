package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/boards"
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
	return runTwice(opt, func(o Options) *State { return &State{Opt: o, ModelPath: name, Graph: g} }, "", true)
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
	t = s.boardTarget(t)
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
	m, err := s.lowerDeclinedOutOfPlace(base)
	if err != nil {
		return t, notes, err
	}
	over, more := tune.Overrides(s.Graph, m, rs, t.Name, core)
	for _, n := range more {
		// Name the model: one records file serves several (bench a b
		// --tuning both.json said the same line twice, naming neither).
		notes = append(notes, s.modelPrefix()+n)
	}
	// Records are kept per core, and a board of that core may leave less
	// stack than the one tuned on: a record whose form's local arrays are
	// over it would make lowering take the next target's plain schedule,
	// slower than the defaults (a review finding: IC's Winograd records on
	// an 8 KiB stack made the tuned build 15% slower than the untuned one,
	// in silence). Such a kernel keeps its defaults, with a note.
	lim := s.kernelStack()
	for _, f := range s.overStack(t, over, lim) {
		delete(over, f.Name)
		notes = append(notes, fmt.Sprintf("%stuning records %s: kernel %s: its record's form needs %s B of stack for its local arrays, and %s leaves its kernels %s B; the kernel keeps its defaults",
			s.modelPrefix(), s.Opt.Tuning, f.Name, commas(int64(formStack(f))), s.Opt.Board.Name, commas(int64(lim))))
	}
	s.Tuned, s.TunedDefaults = len(over), 0
	for name, k := range over {
		if len(k) == 0 {
			s.TunedDefaults++ // a record of the defaults: this version's apply
			continue
		}
		t = t.WithKnobs(name, k)
	}
	return t, notes, nil
}

// lowerDeclinedOutOfPlace lowers the graph for t over s.Plan less the
// in-place runs whose kernels decline them (tir.InPlaceError): the
// lowering that finds each kernel's record and its stack. The build's own
// lowering then plans again without those runs and says so (review
// finding: a model whose plan ran a convolution in place that its kernel
// could not failed `compile --tuning`, and `tune` at its last step, with
// the InPlaceError, where compile without records planned again).
func (s *State) lowerDeclinedOutOfPlace(t tir.Target) (*tir.Module, error) {
	plan := s.Plan
	for {
		m, err := tir.Lower(s.Graph, plan, t)
		var ip *tir.InPlaceError
		if !errors.As(err, &ip) || plan == nil || !plan.InPlace[ip.Node] {
			return m, err
		}
		p := *plan
		p.InPlace = maps.Clone(plan.InPlace)
		delete(p.InPlace, ip.Node)
		plan = &p
	}
}

// overStack returns the kernels whose records in over (by kernel name)
// hold knobs other than the defaults and whose form, lowered as the build
// lowers it (t with those knobs, its stack lim), still has local arrays of
// more than lim bytes or gave way to a fallback target's schedule, in
// kernel order (none when lim is 0, or when that lowering fails: the
// build's own lowering then says why). A record of the defaults builds
// what the untuned build does, and a form that fits lim once the schedule
// takes the stack into account (the planar depthwise form's channel
// slices) builds as recorded: neither is over (review finding: both were
// reported, from a lowering without the stack, and a fitting depthwise
// record was dropped).
func (s *State) overStack(t tir.Target, over map[string]tune.Knobs, lim int) []*tir.PrimFunc {
	if lim <= 0 || len(over) == 0 {
		return nil
	}
	tuned := false
	for name, k := range over {
		if len(k) > 0 {
			t, tuned = t.WithKnobs(name, k), true
		}
	}
	if !tuned {
		return nil
	}
	t.StackBytes = lim
	m, err := s.lowerDeclinedOutOfPlace(t)
	if err != nil {
		return nil
	}
	var out []*tir.PrimFunc
	for _, f := range m.Funcs {
		if k, ok := over[f.Name]; ok && len(k) > 0 && (f.ScratchBytes() > lim || f.StackFallback > 0) {
			out = append(out, f)
		}
	}
	return out
}

// formStack is the local arrays (bytes) of the form f's knobs asked for:
// the fallback's first form's where one took f.
func formStack(f *tir.PrimFunc) int { return max(f.ScratchBytes(), f.StackFallback) }

// RecordsOverStack returns the signatures (tune.Signature) of the model's
// kernels whose records in rs have a form over the board's stack, so that
// a build takes their defaults: what tune reports for them. s is a
// compiled State.
func (s *State) RecordsOverStack(rs *tune.Records) map[string]bool {
	if s.Module == nil || s.Opt.Board == nil {
		return nil
	}
	t, err := tir.TargetByName(s.targetName())
	if err != nil {
		return nil
	}
	t = s.boardTarget(t)
	for key, k := range s.Opt.Knobs {
		t = t.WithKnobs(key, k)
	}
	over, _ := tune.Overrides(s.Graph, s.Module, rs, t.Name, tune.ToolCore(s.Opt.Board.TuningCore(), s.Opt.Compiler))
	byName := map[string]*graph.Node{}
	for _, n := range s.Graph.Nodes {
		byName[n.Name] = n
	}
	var out map[string]bool
	for _, f := range s.overStack(t, over, s.kernelStack()) {
		node, _, _ := strings.Cut(f.Node, " + ")
		if n := byName[node]; n != nil {
			if out == nil {
				out = map[string]bool{}
			}
			out[tune.Signature(s.Graph, n)] = true
		}
	}
	return out
}

// kernelStack is the stack a kernel's local arrays may take on the board
// (its stack less the call frames, as checkStack counts), or 0 where no
// limit is known.
func (s *State) kernelStack() int {
	if b, f := s.Opt.Board, s.Opt.StackFrames(); b != nil && b.BareMetal() && b.StackBytes > f {
		return b.StackBytes - f
	}
	return 0
}

// modelPrefix is "model.tflite: " for a note, or "" without a model path.
func (s *State) modelPrefix() string {
	if s.ModelPath == "" {
		return ""
	}
	return filepath.Base(s.ModelPath) + ": "
}

// boardTarget is t with the board's defaults: its core's (ForCore), and
// knob stream 0 where its flags keep a frame pointer
// (boards.KeepsFramePointer; tir streamOff says why).
func (s *State) boardTarget(t tir.Target) tir.Target {
	b := s.Opt.Board
	if b == nil {
		return t
	}
	t = t.ForCore(b.CPU)
	if boards.KeepsFramePointer(append(b.GCCFlags(), s.Opt.CFlags...)) {
		for _, op := range []string{"conv2d", "fully_connected"} {
			t = t.WithKnobs(op, map[string]int{"stream": 0})
		}
	}
	return t
}
