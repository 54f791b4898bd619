package tune

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// Overrides finds the records that apply to a module lowered for target on
// core: for each kernel of m (lowered with the schedule defaults) whose graph
// node's signature has a record, its knobs keyed by kernel name, as
// tir.Target.WithKnobs takes them. Records for other cores or targets and
// records for kernels the model does not have are ignored, with a note.
//
// Of a record's knobs, only those the tuner could have written for that
// kernel apply (CheckOp): a knob its schedule does not read, or a value the
// tuner would not try for it, is left out with a note (one per record) and
// the kernel keeps that knob's default; the record's other knobs apply.
func Overrides(g *graph.Graph, m *tir.Module, rs *Records, target, core string) (map[string]Knobs, []string) {
	byName := map[string]*graph.Node{}
	for _, n := range g.Nodes {
		byName[n.Name] = n
	}
	out := map[string]Knobs{}
	used := map[*Record]bool{}
	have := map[string]bool{}         // the model's kernels, as Key without the weights
	applied := map[string]bool{}      // those a record applied to
	var order []*Record               // records with ignored knobs, in kernel order
	ignored := map[*Record][]string{} // their ignored knobs, described
	for _, f := range m.Funcs {
		node, _, _ := strings.Cut(f.Node, " + ")
		n := byName[node]
		if n == nil {
			continue
		}
		sig := Signature(g, n)
		have[Key(sig, target, core)] = true
		r := rs.Get(sig, target, core, f.Knobs)
		if r == nil {
			continue
		}
		used[r] = true
		applied[Key(sig, target, core)] = true
		if r.Default > 0 && r.Instructions >= r.Default {
			// The search found nothing faster than the defaults of the
			// mcugen that wrote the record: its knobs are those defaults,
			// and this version's own (faster, where they changed) apply.
			// Pinned, they kept an RGB first layer on the rows form after
			// the 14-word gather became the default (VWW 4,357,732 untuned,
			// 4,468,173 with session 25's records).
			out[f.Name] = Knobs{}
			continue
		}
		kt := target
		if f.KnobTarget != "" {
			kt = f.KnobTarget // another target's schedule ran it (tir.PrimFunc.KnobTarget)
		}
		keep, bad := CheckOp(kt, f.Op, f.Knobs, r.Knobs)
		if len(bad) > 0 {
			if ignored[r] == nil {
				order = append(order, r)
			}
			for _, b := range bad {
				if !slices.Contains(ignored[r], b) {
					ignored[r] = append(ignored[r], b)
				}
			}
		}
		if len(keep) > 0 {
			out[f.Name] = keep
		}
	}
	var notes []string
	file := "tuning records"
	if rs.Path != "" {
		file += " " + rs.Path
	}
	for _, r := range order {
		notes = append(notes, fmt.Sprintf("%s: kernel %q: ignored %s; the kernel keeps the default there, the rest of the record applies",
			file, r.Kernel, strings.Join(ignored[r], ", ")))
	}
	other, layout, unknown := 0, 0, 0
	bareCore, compiler := SplitToolCore(core)
	otherCC := map[string]int{} // records of this core and target tuned with another compiler, by compiler
	for _, r := range rs.Records {
		switch {
		case used[r]:
		case r.Core == bareCore && r.Target == target && r.Compiler != compiler:
			otherCC[CompilerName(r.Compiler)]++
		case r.ToolCore() != core || r.Target != target:
			other++
		case applied[Key(r.Kernel, r.Target, r.ToolCore())]:
			// The kernel took its record of the other layout: a file
			// holding both, as one tuned with and without a budget.
		case have[Key(r.Kernel, r.Target, r.ToolCore())]:
			layout++ // the kernel is the model's, with weights laid out otherwise
		default:
			unknown++
		}
	}
	if other > 0 {
		shown := bareCore
		if shown == "" {
			shown = "its compiler's default core" // the host names no core (it said "the host" for host and aarch64-linux: CI journey)
		}
		notes = append(notes, fmt.Sprintf("%s: %d record(s) for another core or target ignored (this build: %s on %s)", file, other, target, shown))
	}
	for _, cc := range slices.Sorted(maps.Keys(otherCC)) {
		notes = append(notes, fmt.Sprintf("%s: %d record(s) tuned with %s ignored (this build compiles with %s: tune --cc %s for records that apply)",
			file, otherCC[cc], cc, CompilerName(compiler), CompilerName(compiler)))
	}
	if layout > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d record(s) tuned with the other layout of a kernel's weights ignored (int8 weights are tuned apart from int16 ones: a flash budget or a smaller board's flash keeps them int8); tune with this build's flags for records that apply", file, layout))
	}
	if unknown > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d record(s) for kernels this model does not have ignored", file, unknown))
	}
	if len(used) == 0 && len(rs.Records) > 0 {
		why := ""
		if unknown > 0 {
			why = " (kernels are matched by op, shapes, quantization and target: records of other models, or of another quantization of this one, do not match)"
		}
		notes = append(notes, fmt.Sprintf("%s: no record applies to this build: it compiles with the default schedules%s", file, why))
	}
	return out, notes
}

// CheckOp splits a record's knobs for a kernel scheduled for target, whose
// schedule read the knobs in read (PrimFunc.Knobs after lowering with the
// defaults), into those that may apply and descriptions of those that may
// not: a knob the schedule does not read ("knob bogus=3 (its schedule does
// not read it)"), or a value outside the knob's value set ("knob
// block_oc=1000 (not one of 1,2,4)"), sorted by name. The value set is the
// one the tuner searches for the kernel (SpaceFor over the same defaults),
// with the fit pass's Lean setting, which the tuner holds fixed for the
// kernels the fit pass keeps int8: every record tune writes passes whole.
//
// op is the kernel's: the value sets are the ones SpaceFor gives it.
func CheckOp(target, op string, read, rec Knobs) (keep Knobs, bad []string) {
	keep = Knobs{}
	space := SpaceFor(target, op, read)
	for _, name := range slices.Sorted(maps.Keys(rec)) {
		v := rec[name]
		if _, ok := read[name]; !ok {
			bad = append(bad, fmt.Sprintf("knob %s=%d (its schedule does not read it)", name, v))
			continue
		}
		vals := space.Values(name)
		if lv, ok := Lean[name]; ok && v == lv {
			vals = append(vals, lv)
		}
		if !slices.Contains(vals, v) {
			bad = append(bad, fmt.Sprintf("knob %s=%d (not one of %s)", name, v, joinInts(space.Values(name))))
			continue
		}
		keep[name] = v
	}
	return keep, bad
}

func joinInts(v []int) string {
	p := make([]string, len(v))
	for i, x := range v {
		p[i] = strconv.Itoa(x)
	}
	return strings.Join(p, ",")
}
