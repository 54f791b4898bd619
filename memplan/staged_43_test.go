package memplan

import (
	"encoding/json"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The graph of TestInPlaceDepthwise, planned for kernels that stage their
// input themselves (Options.StagedInPlace, what the pipeline asks): the
// depthwise step still runs in place, in the 1024 B the input already holds,
// and the 16 B one-channel buffer is not reserved, so the arena is the
// in-place bound, 1024 B (1040 B with the buffer).
func TestStagedInPlaceReservesNoScratch(t *testing.T) {
	g, _, _, _ := depthwiseFC()

	opt := DefaultOptions()
	opt.StagedInPlace = true
	p := mustPlan(t, g, opt)
	dw := g.Nodes[0].Name
	if !p.InPlace[dw] || p.ArenaBytes != 1024 || p.ScratchBytes != 0 || len(p.Scratch) != 0 || !p.StagedInPlace {
		t.Fatalf("staged: in place %v, arena %d, scratch %d (%d buffers), staged %v; want in place, 1024, 0, 0, true\n%s",
			p.InPlace[dw], p.ArenaBytes, p.ScratchBytes, len(p.Scratch), p.StagedInPlace, p.Table())
	}
	if err := p.Validate(g); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	// The flag is what lets Validate accept the missing buffer: the same
	// plan claiming unstaged kernels is refused, and it survives JSON.
	q := *p
	q.StagedInPlace = false
	if err := q.Validate(g); err == nil {
		t.Errorf("an unstaged in-place depthwise step with no scratch passed Validate")
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var r Plan
	if err := json.Unmarshal(js, &r); err != nil || !r.StagedInPlace {
		t.Errorf("JSON round trip lost staged_in_place (%v): %s", err, js)
	}
}

// Kernel workspace (Options.Scratch) is still reserved when the in-place
// buffer is not: 32 B for the depthwise node, on top of the 1024 B.
func TestStagedInPlaceKeepsKernelScratch(t *testing.T) {
	g, _, _, _ := depthwiseFC()
	opt := DefaultOptions()
	opt.StagedInPlace = true
	opt.Scratch = func(n *graph.Node) int {
		if n.Op == graph.Conv2D {
			return 20 // rounded up to 32 by the 16-byte alignment
		}
		return 0
	}
	p := mustPlan(t, g, opt)
	if !p.InPlace[g.Nodes[0].Name] || p.ScratchBytes != 32 || p.ArenaBytes != 1056 || len(p.Scratch) != 1 {
		t.Errorf("arena %d, scratch %d (%d buffers); want 1056, 32, 1\n%s", p.ArenaBytes, p.ScratchBytes, len(p.Scratch), p.Table())
	}
	if err := p.Validate(g); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
