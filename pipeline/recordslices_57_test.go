package pipeline

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
	"github.com/mcugen/mcugen/tune"
)

// A 3×3 depthwise layer of 48 channels 64 wide needs a ring of 19,008 B
// in one piece, more than the 15,360 B mps2-an386 leaves its kernels, so
// the planar form runs it in two channel slices of 9,504 B. A record for
// it, of the defaults or of dw_step 2, builds that same sliced form: the
// build applies it with no stack note, and tune's check (RecordsOverStack)
// reports none. (Review finding: the check lowered without the stack, saw
// the unsliced 19,008 B, warned on every such record of the defaults, in
// bench, test and a re-run of tune, and dropped a winning one.)
func TestDepthwiseRecordInSlicesApplies57(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	g := func() *graph.Graph { return tirtest.DepthwiseK(6, 64, 48, 3, 1, 1, graph.ActRelu, -128) }
	var warns []string
	opt := Options{Board: b, Target: "dsp", Version: "test", Warn: func(s string) { warns = append(warns, s) }}
	base, err := CompileGraph(g(), "dw57", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Fatalf("untuned build warned: %q", warns)
	}
	var f0 = base.Module.Funcs[0]
	if f0.Knobs["dw_planar"] != 1 || f0.ScratchBytes() != 9504 {
		t.Fatalf("untuned kernel: knobs %v, %d B of local arrays; want the planar form in two slices (9,504 B)", f0.Knobs, f0.ScratchBytes())
	}
	var sig string
	for _, n := range base.Graph.Nodes {
		if n.Op == graph.Conv2D {
			sig = tune.Signature(base.Graph, n)
		}
	}
	path := filepath.Join(t.TempDir(), "records.json")
	for _, c := range []struct {
		name       string
		knobs      tune.Knobs
		ins        int64
		defaults   int
		wantDWStep int
	}{
		{"a record of the defaults", tune.Knobs(maps.Clone(f0.Knobs)), 5000, 1, 4},
		{"dw_step 2 that beat the defaults", tune.Knobs{"dw_planar": 1, "dw_step": 2}, 4000, 0, 2},
	} {
		rs := tune.NewRecords()
		rs.Put(&tune.Record{Kernel: sig, Target: base.Module.Target, Core: "cortex-m4", Knobs: c.knobs, Instructions: c.ins, Default: 5000, Search: "exhaustive"})
		if err := rs.Save(path); err != nil {
			t.Fatal(err)
		}
		warns = nil
		o := opt
		o.Tuning = path
		s, err := CompileGraph(g(), "dw57", o)
		if err != nil {
			t.Fatal(err)
		}
		if len(warns) > 0 {
			t.Errorf("%s: warned %q", c.name, strings.Join(warns, "\n"))
		}
		f := s.Module.Funcs[0]
		if s.Tuned != 1 || s.TunedDefaults != c.defaults || f.Knobs["dw_step"] != c.wantDWStep || f.ScratchBytes() != 9504 {
			t.Errorf("%s: %d kernels tuned (%d the defaults), dw_step %d, %d B of local arrays; want 1 (%d), %d, 9,504 B",
				c.name, s.Tuned, s.TunedDefaults, f.Knobs["dw_step"], f.ScratchBytes(), c.defaults, c.wantDWStep)
		}
		if over := s.RecordsOverStack(rs); len(over) > 0 {
			t.Errorf("%s: tune's check says over the stack: %v", c.name, over)
		}
	}
}
