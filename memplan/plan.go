package memplan

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// Options control the planner. Start from DefaultOptions.
type Options struct {
	// Algorithm is "best" (default when empty), "greedy-size",
	// "greedy-conflicts", "hill-climb" or "exact".
	Algorithm string
	// Align is the alignment of every buffer in bytes (default 16 when 0).
	Align int
	// IOInArena puts graph inputs and outputs in the arena; false leaves them
	// in the caller's buffers (Offset -1).
	IOInArena bool
	// InPlace allows element-wise ops and depthwise Conv2D to write their
	// output over their first input when it dies there.
	InPlace bool
	// Scratch returns the workspace bytes a kernel needs for n (nil: none).
	Scratch func(n *graph.Node) int
	// InPlaceOK reports whether the kernel for n can write its output over its
	// first input (nil: the planner's own rules decide alone). It can only
	// veto: a node runs in place only if the planner's rules allow it too.
	InPlaceOK func(n *graph.Node) bool
	// StagedInPlace says the kernels that run in place stage what they
	// still need of their input in their own local arrays (tir's row
	// staging, the planar depthwise ring, the pointwise pixel blocks), so
	// the plan reserves no arena scratch for the channel or pixel
	// InPlaceLoop describes. Without it every in-place depthwise or
	// pointwise node gets that buffer in Plan.Scratch.
	StagedInPlace bool
	// ExactBudget bounds the branch-and-bound search (default 200 ms when 0).
	ExactBudget time.Duration
	// OrderSearch searches topological orders for a lower peak.
	OrderSearch bool
}

// DefaultOptions is "best" placement, 16-byte alignment, inputs and outputs
// in the arena, in-place on, order search on.
func DefaultOptions() Options {
	return Options{Algorithm: "best", Align: 16, IOInArena: true, InPlace: true, OrderSearch: true}
}

// Algorithms lists the placement algorithms Options.Algorithm accepts.
var Algorithms = []string{"best", "greedy-size", "greedy-conflicts", "hill-climb", "exact"}

const defaultExactBudget = 200 * time.Millisecond

// exactMaxSlots is the largest number of slots "best" runs the exact search on.
const exactMaxSlots = 40

// Buffer is one tensor's (or one node's scratch) place in the arena.
type Buffer struct {
	Tensor string `json:"tensor"`
	// Offset in bytes from the arena start; -1 when the tensor is not in the
	// arena (a caller's input/output buffer, or a view of a constant).
	Offset int `json:"offset"`
	// Size in bytes (the tensor's own size; placement rounds it up to Align).
	Size int `json:"size"`
	// First and Last are the steps (indices into Plan.Order) at which the
	// buffer is written first and read last, both inclusive.
	First int `json:"first"`
	Last  int `json:"last"`
	// AliasOf names the tensor whose bytes a view shares ("" if none).
	AliasOf string `json:"alias_of,omitempty"`
	// Node is the producing node ("" for graph inputs), or for a scratch
	// buffer the node that uses it.
	Node string `json:"node,omitempty"`
}

// Plan is a static memory plan.
type Plan struct {
	Graph string `json:"graph"`
	// Order lists node indices (into graph.Graph.Nodes) in execution order.
	Order []int `json:"order"`
	// Buffers has one entry per activation tensor: graph inputs first, then
	// node outputs in node order.
	Buffers []Buffer `json:"buffers"`
	// Scratch has one entry per node with workspace, in execution order.
	Scratch []Buffer `json:"scratch"`
	// ArenaBytes is the arena the generated code reserves (scratch included).
	ArenaBytes int `json:"arena_bytes"`
	// ActivationBytes is the end of the highest activation buffer (scratch
	// excluded); compare it with LowerBoundBytes.
	ActivationBytes int `json:"activation_bytes"`
	// LowerBoundBytes is the largest sum of live activation buffers over the
	// steps of Order.
	LowerBoundBytes int `json:"lower_bound_bytes"`
	// ScratchBytes is the largest scratch buffer (only one node runs at a time).
	ScratchBytes int `json:"scratch_bytes"`
	// Algorithm names the placement that produced the plan.
	Algorithm string `json:"algorithm"`
	// InPlace holds the names of nodes that write their output over their
	// first input.
	InPlace   map[string]bool `json:"in_place"`
	Align     int             `json:"align"`
	IOInArena bool            `json:"io_in_arena"`
	// OrderSearched is true when Order differs from the graph's node order.
	OrderSearched bool `json:"order_searched"`
	// StagedInPlace is Options.StagedInPlace: in-place nodes have no
	// arena scratch of their own.
	StagedInPlace bool `json:"staged_in_place,omitempty"`

	stepNames []string
}

// Offset returns the arena offset of tensor, false when it is not in the arena.
func (p *Plan) Offset(tensor string) (int, bool) {
	for i := range p.Buffers {
		if p.Buffers[i].Tensor == tensor {
			if p.Buffers[i].Offset < 0 {
				return -1, false
			}
			return p.Buffers[i].Offset, true
		}
	}
	return -1, false
}

// Buffer returns the buffer of tensor, or nil.
func (p *Plan) Buffer(tensor string) *Buffer {
	for i := range p.Buffers {
		if p.Buffers[i].Tensor == tensor {
			return &p.Buffers[i]
		}
	}
	return nil
}

// Build computes a static memory plan for g. (The brief named it Plan, which
// Go does not allow next to the type Plan.)
func Build(g *graph.Graph, opt Options) (*Plan, error) {
	if opt.Algorithm == "" {
		opt.Algorithm = "best"
	}
	if !slices.Contains(Algorithms, opt.Algorithm) {
		return nil, fmt.Errorf("memplan: unknown algorithm %q (want one of %v)", opt.Algorithm, Algorithms)
	}
	if opt.Align == 0 {
		opt.Align = 16
	}
	if opt.Align < 0 {
		return nil, fmt.Errorf("memplan: alignment %d must be positive", opt.Align)
	}
	// Never below an element's size: with Align 1 a float32 tensor took an
	// odd offset, and Validate passed it (memory-planner review). The
	// plan's Align says what was used.
	for _, t := range g.Tensors {
		if e := 0; t != nil && !t.IsConst() {
			if e = t.DType.Size(); e > 0 && opt.Align%e != 0 {
				opt.Align = lcm(opt.Align, e)
			}
		}
	}
	if opt.ExactBudget <= 0 {
		opt.ExactBudget = defaultExactBudget
	}
	if n := len(g.Nodes); n > MaxNodes {
		return nil, fmt.Errorf("memplan: the graph has %d nodes; mcugen plans at most %d (a recurrent layer unrolled over a long sequence has thousands)", n, MaxNodes)
	}
	a, err := analyze(g, opt)
	if err != nil {
		return nil, err
	}
	model := make([]int, len(g.Nodes))
	for i := range model {
		model[i] = i
	}
	// The greedy order (greedyOrder) stands beside the model's for every
	// graph, and the beam search's for those it can afford.
	var greedy []int
	if opt.OrderSearch && len(g.Nodes) > 2 {
		if greedy = a.greedyOrder(); slices.Equal(greedy, model) {
			greedy = nil
		}
	}
	// The placers keep a conflict list per pair of tensors live together:
	// thousands live at once (a Concat of every layer's output) took
	// gigabytes (review finding). Real models keep a few dozen. An order
	// past the limit is not planned; the model's may be, where the greedy
	// one is not (a review: 1,100 multiplies read in the file's order
	// before their sum were refused, where three are live at once).
	var best *Plan
	live := maxLive(a.lifetimes(model).slots)
	if live <= MaxLive {
		best = a.planOrder(model)
	}
	consider := func(ord []int) {
		if ord == nil || maxLive(a.lifetimes(ord).slots) > MaxLive {
			return
		}
		p := a.planOrder(ord)
		if best == nil || p.ArenaBytes < best.ArenaBytes ||
			(p.ArenaBytes == best.ArenaBytes && p.LowerBoundBytes < best.LowerBoundBytes) {
			p.OrderSearched = true
			best = p
		}
	}
	consider(greedy)
	if best == nil {
		return nil, fmt.Errorf("memplan: %d tensors are live at once in the model's order; mcugen plans at most %d", live, MaxLive)
	}
	// The search costs about 8·n² set operations of n/64 words each even
	// at its narrowest beam: past maxSearchNodes (a recurrent layer
	// unrolled over hundreds of steps) it would take minutes, and the
	// greedy order (or the model's) stands.
	if opt.OrderSearch && len(g.Nodes) > 2 && len(g.Nodes) <= maxSearchNodes {
		if ord := a.searchOrder(); !slices.Equal(ord, model) && !slices.Equal(ord, greedy) {
			consider(ord)
		}
	}
	return best, nil
}

// MaxNodes and MaxLive bound what Build plans: the nodes of a graph, and
// the tensors live at one step of its order. Both are far beyond any model
// a microcontroller runs; past them the placement's quadratic conflict
// lists and the validation would take minutes and gigabytes.
const (
	MaxNodes = 50000
	MaxLive  = 1024
)

// maxLive is the largest number of slots live at one step.
func maxLive(slots []slot) int {
	ev := map[int]int{}
	for _, s := range slots {
		ev[s.first]++
		ev[s.last+1]--
	}
	steps := make([]int, 0, len(ev))
	for k := range ev {
		steps = append(steps, k)
	}
	slices.Sort(steps)
	live, most := 0, 0
	for _, k := range steps {
		live += ev[k]
		most = max(most, live)
	}
	return most
}

// maxSearchNodes is the largest graph whose execution order is searched.
const maxSearchNodes = 600

// planOrder places everything for one execution order.
func (a *analysis) planOrder(order []int) *Plan {
	lt := a.lifetimes(order)
	slots := lt.slots
	pl := newPlacer(slots)
	lb := lt.lowerBound()

	var best *Plan
	try := func(name string, off []int) {
		p := a.buildPlan(order, lt, off, lb)
		p.Algorithm = name
		if best == nil || p.ArenaBytes < best.ArenaBytes ||
			(p.ArenaBytes == best.ArenaBytes && p.ActivationBytes < best.ActivationBytes) {
			best = p
		}
	}
	// Nothing beats an arena at the bound (scratch included).
	atBound := func() bool { return best.ArenaBytes == lb }
	switch a.opt.Algorithm {
	case "greedy-size":
		try("greedy-size", pl.greedy(pl.sizeOrder()))
	case "greedy-conflicts":
		try("greedy-conflicts", pl.greedy(pl.conflictOrder()))
	case "hill-climb":
		try("hill-climb", pl.hillClimb(lb))
	case "exact":
		try("exact", pl.exact(lb, a.opt.ExactBudget))
	default:
		try("greedy-size", pl.greedy(pl.sizeOrder()))
		if !atBound() {
			try("greedy-conflicts", pl.greedy(pl.conflictOrder()))
		}
		var hc []int
		if !atBound() {
			hc = pl.hillClimb(lb)
			try("hill-climb", hc)
		}
		if !atBound() && len(slots) <= exactMaxSlots {
			try("exact", pl.exact(lb, a.opt.ExactBudget, hc))
		}
	}
	if a.opt.Algorithm == "best" {
		best.Algorithm = "best/" + best.Algorithm
	}
	return best
}

// buildPlan turns slot offsets into buffers and places the scratch.
func (a *analysis) buildPlan(order []int, lt *lifetimes, off []int, lb int) *Plan {
	p := &Plan{
		Graph:           a.g.Name,
		Order:           append([]int(nil), order...),
		LowerBoundBytes: lb,
		InPlace:         map[string]bool{},
		Align:           a.opt.Align,
		IOInArena:       a.opt.IOInArena,
		StagedInPlace:   a.opt.StagedInPlace,
	}
	for _, n := range order {
		p.stepNames = append(p.stepNames, a.g.Nodes[n].Name)
	}
	for n := range lt.inPlace {
		p.InPlace[a.g.Nodes[n].Name] = true
	}
	for id := range a.ts {
		t := &a.ts[id]
		b := Buffer{Tensor: t.name, Offset: -1, Size: t.bytes, First: lt.first[id], Last: lt.last[id]}
		if t.producer >= 0 {
			b.Node = a.g.Nodes[t.producer].Name
		}
		if t.viewOf >= 0 {
			b.AliasOf = a.ts[t.viewOf].name
		}
		if s := lt.slotOf[t.root]; s >= 0 {
			b.Offset = off[s]
		}
		p.Buffers = append(p.Buffers, b)
		if b.Offset >= 0 && b.AliasOf == "" {
			p.ActivationBytes = max(p.ActivationBytes, b.Offset+roundUp(b.Size, a.opt.Align))
		}
	}
	p.ArenaBytes = p.ActivationBytes
	// Scratch: each live only at its node's step; first fit against the
	// activation slots live at that step, largest first.
	type req struct{ step, size int }
	var reqs []req
	for step, n := range order {
		if s := lt.scratch[n]; s > 0 {
			reqs = append(reqs, req{step, s})
		}
	}
	offs := make([]int, len(reqs))
	idx := make([]int, len(reqs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return reqs[y].size - reqs[x].size })
	for _, i := range idx {
		r := reqs[i]
		var ivs []interval
		for s, sl := range lt.slots {
			if sz := sl.sizeAt(r.step); sz > 0 {
				ivs = append(ivs, interval{off[s] - r.size, off[s] + sz})
			}
		}
		offs[i] = firstFit(ivs)
	}
	for i, r := range reqs {
		n := order[r.step]
		p.Scratch = append(p.Scratch, Buffer{
			Tensor: a.g.Nodes[n].Name + "#scratch", Offset: offs[i], Size: r.size,
			First: r.step, Last: r.step, Node: a.g.Nodes[n].Name,
		})
		p.ArenaBytes = max(p.ArenaBytes, offs[i]+r.size)
		p.ScratchBytes = max(p.ScratchBytes, r.size)
	}
	return p
}

func roundUp(x, a int) int {
	if a <= 1 {
		return x
	}
	return (x + a - 1) / a * a
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
