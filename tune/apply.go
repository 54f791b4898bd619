package tune

import (
	"fmt"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// Overrides finds the records that apply to a module lowered for target on
// core: for each kernel of m (lowered with the schedule defaults) whose graph
// node's signature has a record, its knobs keyed by kernel name, as
// tir.Target.WithKnobs takes them. Records for other cores or targets and
// records for kernels the model does not have are ignored, with a note.
func Overrides(g *graph.Graph, m *tir.Module, rs *Records, target, core string) (map[string]Knobs, []string) {
	byName := map[string]*graph.Node{}
	for _, n := range g.Nodes {
		byName[n.Name] = n
	}
	out := map[string]Knobs{}
	used := map[*Record]bool{}
	for _, f := range m.Funcs {
		node, _, _ := strings.Cut(f.Node, " + ")
		n := byName[node]
		if n == nil {
			continue
		}
		if r := rs.Get(Signature(g, n), target, core); r != nil {
			out[f.Name] = r.Knobs.Clone()
			used[r] = true
		}
	}
	var notes []string
	other, unknown := 0, 0
	for _, r := range rs.Records {
		switch {
		case used[r]:
		case r.Core != core || r.Target != target:
			other++
		default:
			unknown++
		}
	}
	if other > 0 {
		notes = append(notes, fmt.Sprintf("tuning: %d record(s) for another core or target ignored (this build: %s on %s)", other, target, core))
	}
	if unknown > 0 {
		notes = append(notes, fmt.Sprintf("tuning: %d record(s) for kernels this model does not have ignored", unknown))
	}
	return out, notes
}
