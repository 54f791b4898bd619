package memplan

import (
	"fmt"
	"sort"

	"github.com/mcugen/mcugen/graph"
)

// Validate checks p against g from scratch: Order is a topological order of
// every node; every activation tensor has one buffer whose First and Last
// match its lifetime; views share their source's bytes; every arena buffer is
// aligned and inside the arena; no two buffers live at the same step share a
// byte unless they are the input and output of a node that runs in place,
// legally (see the package doc); scratch lives only at its node; and
// LowerBoundBytes is the largest live sum over the steps.
func (p *Plan) Validate(g *graph.Graph) error {
	nn := len(g.Nodes)
	if len(p.Order) != nn {
		return fmt.Errorf("memplan: plan orders %d nodes, graph has %d", len(p.Order), nn)
	}
	if p.Align <= 0 {
		return fmt.Errorf("memplan: plan alignment %d", p.Align)
	}
	pos := make([]int, nn)
	for i := range pos {
		pos[i] = -1
	}
	for s, n := range p.Order {
		if n < 0 || n >= nn || pos[n] >= 0 {
			return fmt.Errorf("memplan: order %v is not a permutation of the nodes", p.Order)
		}
		pos[n] = s
	}
	end := max(nn-1, 0)
	isAct := func(name string) bool {
		t := g.Tensors[name]
		return name != "" && t != nil && !t.IsConst()
	}
	producer := map[string]int{}
	isInput, isOutput := map[string]bool{}, map[string]bool{}
	for _, in := range g.Inputs {
		if isAct(in) {
			isInput[in] = true
		}
	}
	for _, o := range g.Outputs {
		isOutput[o] = true
	}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if isAct(o) {
				producer[o] = i
			}
		}
	}
	want := map[string]Buffer{} // expected tensor, First and own last
	for in := range isInput {
		want[in] = Buffer{Tensor: in, First: 0, Last: 0}
	}
	for o, i := range producer {
		want[o] = Buffer{Tensor: o, First: pos[i], Last: pos[i]}
	}
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			if !isAct(in) {
				continue
			}
			w, ok := want[in]
			if !ok {
				return fmt.Errorf("memplan: node %q reads %q, which nothing writes", n.Name, in)
			}
			if pr, ok := producer[in]; ok && pos[pr] >= pos[i] {
				return fmt.Errorf("memplan: node %q runs at step %d but its input %q is written at step %d", n.Name, pos[i], in, pos[pr])
			}
			w.Last = max(w.Last, pos[i])
			want[in] = w
		}
	}
	for o := range isOutput {
		if w, ok := want[o]; ok {
			w.Last = end
			want[o] = w
		}
	}
	bufs := map[string]*Buffer{}
	for i := range p.Buffers {
		b := &p.Buffers[i]
		if _, dup := bufs[b.Tensor]; dup {
			return fmt.Errorf("memplan: tensor %q has two buffers", b.Tensor)
		}
		if _, ok := want[b.Tensor]; !ok {
			return fmt.Errorf("memplan: buffer for %q, which is not an activation tensor of the graph", b.Tensor)
		}
		bufs[b.Tensor] = b
	}
	for name := range want {
		if bufs[name] == nil {
			return fmt.Errorf("memplan: activation tensor %q has no buffer", name)
		}
	}
	// Views and roots.
	root := func(b *Buffer) *Buffer {
		for k := 0; b.AliasOf != "" && k <= len(bufs); k++ {
			b = bufs[b.AliasOf]
		}
		return b
	}
	rootLast := map[string]int{}
	rootOut := map[string]bool{}
	for name, b := range bufs {
		w := want[name]
		if b.Size != g.Tensors[name].Bytes() {
			return fmt.Errorf("memplan: buffer %q has size %d, tensor has %d bytes", name, b.Size, g.Tensors[name].Bytes())
		}
		if b.First != w.First {
			return fmt.Errorf("memplan: buffer %q starts at step %d, its producer runs at step %d", name, b.First, w.First)
		}
		if b.AliasOf != "" {
			src := bufs[b.AliasOf]
			pr, ok := producer[name]
			if src == nil || !ok || g.Nodes[pr].Op != graph.Reshape || g.Nodes[pr].Inputs[0] != b.AliasOf {
				return fmt.Errorf("memplan: buffer %q aliases %q but is not a Reshape of it", name, b.AliasOf)
			}
			if src.Size != b.Size {
				return fmt.Errorf("memplan: view %q (%d B) of %q (%d B) changes the size", name, b.Size, src.Tensor, src.Size)
			}
			r := root(b)
			if r == nil || r.AliasOf != "" {
				return fmt.Errorf("memplan: view %q has an alias cycle", name)
			}
			if b.Offset != r.Offset {
				return fmt.Errorf("memplan: view %q at offset %d, its source %q at %d", name, b.Offset, r.Tensor, r.Offset)
			}
			if b.Last != w.Last {
				return fmt.Errorf("memplan: view %q ends at step %d, its last reader runs at step %d", name, b.Last, w.Last)
			}
		}
		r := root(b)
		rootLast[r.Tensor] = max(rootLast[r.Tensor], w.Last)
		if isOutput[name] {
			rootOut[r.Tensor] = true
		}
	}
	for name, b := range bufs {
		if b.AliasOf == "" && b.Last != rootLast[name] {
			return fmt.Errorf("memplan: buffer %q ends at step %d, it (or a view of it) is last read at step %d", name, b.Last, rootLast[name])
		}
	}
	// Places.
	for name, b := range bufs {
		r := root(b)
		io := isInput[r.Tensor] || rootOut[r.Tensor]
		if b.Offset < 0 {
			constView := false
			if pr, ok := producer[r.Tensor]; ok && g.Nodes[pr].Op == graph.Reshape {
				src := g.Tensors[g.Nodes[pr].Inputs[0]]
				constView = src != nil && src.IsConst()
			}
			if b.Offset != -1 || !(constView || (io && !p.IOInArena)) {
				return fmt.Errorf("memplan: buffer %q is not in the arena (offset %d)", name, b.Offset)
			}
			continue
		}
		if io && !p.IOInArena {
			return fmt.Errorf("memplan: graph input/output %q is in the arena but IOInArena is false", name)
		}
		if err := p.checkPlace(b); err != nil {
			return err
		}
	}
	// In-place nodes.
	var scratchOf = map[string]*Buffer{}
	for i := range p.Scratch {
		s := &p.Scratch[i]
		ni := nodeIndex(g, s.Node)
		if ni < 0 {
			return fmt.Errorf("memplan: scratch %q for unknown node %q", s.Tensor, s.Node)
		}
		if scratchOf[s.Node] != nil {
			return fmt.Errorf("memplan: node %q has two scratch buffers", s.Node)
		}
		scratchOf[s.Node] = s
		if s.First != pos[ni] || s.Last != pos[ni] || s.Offset < 0 {
			return fmt.Errorf("memplan: scratch of %q lives over steps %d..%d at offset %d, the node runs at step %d", s.Node, s.First, s.Last, s.Offset, pos[ni])
		}
		if err := p.checkPlace(s); err != nil {
			return err
		}
	}
	type pair struct{ x, y string }
	legal := map[pair]int{} // in-place (input root, output) -> step
	for name := range p.InPlace {
		ni := nodeIndex(g, name)
		if ni < 0 {
			return fmt.Errorf("memplan: in-place node %q is not in the graph", name)
		}
		n := g.Nodes[ni]
		if len(n.Inputs) == 0 || len(n.Outputs) != 1 || !isAct(n.Inputs[0]) || !isAct(n.Outputs[0]) {
			return fmt.Errorf("memplan: node %q (%s) cannot run in place: needs an activation input and one output", name, n.Op)
		}
		kind, scratch := inPlaceRule(g, n, g.Tensors[n.Inputs[0]], g.Tensors[n.Outputs[0]])
		if kind == ipNone {
			return fmt.Errorf("memplan: node %q (%s) may not run in place", name, n.Op)
		}
		x, y := root(bufs[n.Inputs[0]]), bufs[n.Outputs[0]]
		s := pos[ni]
		switch {
		case x.Offset < 0 || y.Offset < 0 || y.AliasOf != "":
			return fmt.Errorf("memplan: in-place node %q: input and output must both own arena buffers", name)
		case x.Last != s || rootOut[x.Tensor]:
			return fmt.Errorf("memplan: in-place node %q overwrites %q, which is still needed after step %d", name, x.Tensor, s)
		case x.Offset != y.Offset:
			return fmt.Errorf("memplan: in-place node %q: output at %d, input at %d", name, y.Offset, x.Offset)
		}
		for _, in := range n.Inputs[1:] {
			if isAct(in) && root(bufs[in]) == x {
				return fmt.Errorf("memplan: in-place node %q reads %q twice", name, x.Tensor)
			}
		}
		if scratch > 0 && !p.StagedInPlace {
			if sc := scratchOf[name]; sc == nil || sc.Size < scratch {
				return fmt.Errorf("memplan: in-place node %q needs %d B of scratch", name, scratch)
			}
		}
		legal[pair{x.Tensor, y.Tensor}] = s
	}
	// Overlaps among the buffers that own bytes, and scratch.
	var owners []*Buffer
	for _, b := range p.Buffers {
		if b.AliasOf == "" && b.Offset >= 0 {
			owners = append(owners, bufs[b.Tensor])
		}
	}
	roots := owners
	owners = append([]*Buffer(nil), roots...)
	for i := range p.Scratch {
		owners = append(owners, &p.Scratch[i])
	}
	// Each buffer against those still live when it starts (a sweep by
	// first step): every pair was compared, O(n²), and a 100,000-node
	// chain took minutes (review finding).
	byFirst := append([]*Buffer(nil), owners...)
	sort.SliceStable(byFirst, func(i, j int) bool { return byFirst[i].First < byFirst[j].First })
	var active []*Buffer
	for _, a := range byFirst {
		kept := active[:0]
		for _, b := range active {
			if b.Last >= a.First {
				kept = append(kept, b)
			}
		}
		active = append(kept, a)
		for _, b := range active[:len(active)-1] {
			if a.Last < b.First || b.Last < a.First || a.Size == 0 || b.Size == 0 ||
				a.Offset+a.Size <= b.Offset || b.Offset+b.Size <= a.Offset {
				continue
			}
			if s, ok := legal[pair{a.Tensor, b.Tensor}]; ok && a.Last == s && b.First == s {
				continue
			}
			if s, ok := legal[pair{b.Tensor, a.Tensor}]; ok && b.Last == s && a.First == s {
				continue
			}
			return fmt.Errorf("memplan: %q [%d,%d) and %q [%d,%d) overlap while both live (steps %d..%d and %d..%d)",
				a.Tensor, a.Offset, a.Offset+a.Size, b.Tensor, b.Offset, b.Offset+b.Size, a.First, a.Last, b.First, b.Last)
		}
	}
	// The lower bound, recomputed.
	live := make([]int, nn+1)
	for _, b := range roots {
		for s := b.First; s <= b.Last; s++ {
			live[s] += roundUp(b.Size, p.Align)
		}
	}
	for pr, s := range legal {
		live[s] -= min(roundUp(bufs[pr.x].Size, p.Align), roundUp(bufs[pr.y].Size, p.Align))
	}
	lb := 0
	for _, v := range live {
		lb = max(lb, v)
	}
	if lb != p.LowerBoundBytes {
		return fmt.Errorf("memplan: lower bound is %d B, plan says %d B", lb, p.LowerBoundBytes)
	}
	if p.ActivationBytes < lb || p.ArenaBytes < p.ActivationBytes {
		return fmt.Errorf("memplan: arena %d B, activations %d B, lower bound %d B are inconsistent", p.ArenaBytes, p.ActivationBytes, lb)
	}
	return nil
}

func (p *Plan) checkPlace(b *Buffer) error {
	if b.Offset%p.Align != 0 {
		return fmt.Errorf("memplan: buffer %q at offset %d is not %d-byte aligned", b.Tensor, b.Offset, p.Align)
	}
	if b.Offset+b.Size > p.ArenaBytes {
		return fmt.Errorf("memplan: buffer %q [%d,%d) runs past the arena (%d B)", b.Tensor, b.Offset, b.Offset+b.Size, p.ArenaBytes)
	}
	return nil
}

func nodeIndex(g *graph.Graph, name string) int {
	for i, n := range g.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}
