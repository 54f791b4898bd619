package memplan

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// tinfo is one activation tensor.
type tinfo struct {
	name     string
	bytes    int // the tensor's size
	size     int // bytes rounded up to the alignment
	producer int // node index; -1 for a graph input
	viewOf   int // the tensor a Reshape view reads; -1 when not a view
	root     int // the tensor that owns the bytes (itself when not a view)
	input    bool
	output   bool
	cons     []int // nodes that read this tensor directly, deduplicated
}

// inPlaceKind says how a node may run in place.
type inPlaceKind uint8

const (
	ipNone inPlaceKind = iota
	ipElementwise
	ipDepthwise
	ipPointwise
)

// analysis is everything about the graph that does not depend on the order.
type analysis struct {
	g   *graph.Graph
	opt Options
	ts  []tinfo
	id  map[string]int

	// per root tensor
	groupCons [][]int // nodes reading the root or any of its views
	groupOut  []bool  // the root or one of its views is a graph output
	outside   []bool  // the root is not in the arena

	// per node
	ins       [][]int // activation input tensor ids in input order (no "" or constants)
	outs      [][]int
	preds     [][]int // nodes producing the node's activation inputs
	kind      []inPlaceKind
	ipScratch []int // scratch a node needs to run in place (aligned)
	kernel    []int // kernel scratch (aligned)
}

var elementwiseUnary = map[graph.Op]bool{
	graph.Relu: true, graph.Clip: true, graph.LeakyRelu: true, graph.Sigmoid: true,
	graph.Tanh: true, graph.HardSwish: true, graph.HardSigmoid: true, graph.Math: true,
	graph.Quantize: true, graph.Dequantize: true,
}

var elementwiseBinary = map[graph.Op]bool{
	graph.Add: true, graph.Sub: true, graph.Mul: true, graph.Div: true,
	graph.Maximum: true, graph.Minimum: true, graph.Pow: true, graph.Mod: true,
}

func isActivation(t *graph.Tensor) bool { return t != nil && !t.IsConst() }

func analyze(g *graph.Graph, opt Options) (*analysis, error) {
	a := &analysis{g: g, opt: opt, id: map[string]int{}}
	addTensor := func(name string, producer int) (int, error) {
		t := g.Tensors[name]
		if t == nil {
			return 0, fmt.Errorf("memplan: tensor %q is not in the graph", name)
		}
		if t.Bytes() < 0 {
			return 0, fmt.Errorf("memplan: tensor %q has shape %v with a negative size", name, t.Shape)
		}
		id := len(a.ts)
		a.ts = append(a.ts, tinfo{name: name, bytes: t.Bytes(), size: roundUp(t.Bytes(), opt.Align),
			producer: producer, viewOf: -1, root: id})
		a.id[name] = id
		return id, nil
	}
	for _, name := range g.Inputs {
		if _, dup := a.id[name]; dup {
			continue
		}
		t := g.Tensors[name]
		if t == nil {
			return nil, fmt.Errorf("memplan: graph input %q is not in the graph", name)
		}
		if t.IsConst() {
			continue
		}
		id, err := addTensor(name, -1)
		if err != nil {
			return nil, err
		}
		a.ts[id].input = true
	}
	nn := len(g.Nodes)
	a.ins = make([][]int, nn)
	a.outs = make([][]int, nn)
	a.preds = make([][]int, nn)
	a.kind = make([]inPlaceKind, nn)
	a.ipScratch = make([]int, nn)
	a.kernel = make([]int, nn)
	for i, n := range g.Nodes {
		for _, in := range n.Inputs {
			if in == "" {
				continue
			}
			t := g.Tensors[in]
			if t == nil {
				return nil, fmt.Errorf("memplan: node %q (%s): input %q is not in the graph", n.Name, n.Op, in)
			}
			if t.IsConst() {
				continue
			}
			id, ok := a.id[in]
			if !ok {
				return nil, fmt.Errorf("memplan: node %q (%s): input %q is read before any node writes it (nodes must be in execution order)", n.Name, n.Op, in)
			}
			a.ins[i] = append(a.ins[i], id)
			if !containsInt(a.ts[id].cons, i) {
				a.ts[id].cons = append(a.ts[id].cons, i)
			}
			if p := a.ts[id].producer; p >= 0 && !containsInt(a.preds[i], p) {
				a.preds[i] = append(a.preds[i], p)
			}
		}
		for _, out := range n.Outputs {
			if out == "" {
				continue
			}
			if t := g.Tensors[out]; t != nil && t.IsConst() {
				continue
			}
			if id, dup := a.id[out]; dup {
				if a.ts[id].input {
					return nil, fmt.Errorf("memplan: node %q (%s) writes graph input %q", n.Name, n.Op, out)
				}
				return nil, fmt.Errorf("memplan: node %q (%s): tensor %q is written by two nodes", n.Name, n.Op, out)
			}
			id, err := addTensor(out, i)
			if err != nil {
				return nil, fmt.Errorf("%w (output of node %q)", err, n.Name)
			}
			a.outs[i] = append(a.outs[i], id)
		}
		if opt.Scratch != nil {
			s := opt.Scratch(n)
			if s < 0 {
				return nil, fmt.Errorf("memplan: node %q (%s): negative scratch %d", n.Name, n.Op, s)
			}
			a.kernel[i] = roundUp(s, opt.Align)
		}
	}
	for _, name := range g.Outputs {
		id, ok := a.id[name]
		if !ok {
			t := g.Tensors[name]
			if t != nil && t.IsConst() {
				continue
			}
			return nil, fmt.Errorf("memplan: graph output %q is written by no node", name)
		}
		a.ts[id].output = true
	}
	// Views: a Reshape of an activation is an alias of its input, unless its
	// output must live in a caller's buffer.
	for i, n := range g.Nodes {
		if n.Op != graph.Reshape || len(a.outs[i]) != 1 || len(n.Inputs) == 0 || n.Inputs[0] == "" {
			continue
		}
		o := a.outs[i][0]
		if a.ts[o].output && !opt.IOInArena {
			continue
		}
		src := g.Tensors[n.Inputs[0]]
		if src == nil || src.Bytes() != a.ts[o].bytes {
			continue
		}
		if src.IsConst() {
			// A view of a constant: it is not in the arena at all, but for
			// a graph output in the arena, which is a copy.
			if !a.ts[o].output {
				a.ts[o].viewOf = -2
			}
			continue
		}
		in := a.id[n.Inputs[0]]
		a.ts[o].viewOf = in
		a.ts[o].root = a.ts[in].root
	}
	a.groupCons = make([][]int, len(a.ts))
	a.groupOut = make([]bool, len(a.ts))
	a.outside = make([]bool, len(a.ts))
	for id := range a.ts {
		t := &a.ts[id]
		if t.viewOf == -2 {
			t.viewOf = -1
			a.outside[id] = true
		}
		r := t.root
		for _, c := range t.cons {
			if !containsInt(a.groupCons[r], c) {
				a.groupCons[r] = append(a.groupCons[r], c)
			}
		}
		if t.output {
			a.groupOut[r] = true
		}
	}
	for id := range a.ts {
		t := &a.ts[id]
		if t.root != id {
			continue
		}
		if !opt.IOInArena && (t.input || a.groupOut[id]) {
			a.outside[id] = true
		}
	}
	for id := range a.ts {
		if a.outside[a.ts[id].root] {
			a.outside[id] = true
		}
	}
	if opt.InPlace {
		for i, n := range g.Nodes {
			a.kind[i], a.ipScratch[i] = a.inPlaceCandidate(n, i)
		}
	}
	return a, nil
}

// inPlaceCandidate applies the op rules (see the package doc): whether n
// could write output 0 over input 0, and the channel scratch a depthwise
// convolution needs for it.
func (a *analysis) inPlaceCandidate(n *graph.Node, i int) (inPlaceKind, int) {
	if len(a.outs[i]) != 1 || len(n.Outputs) != 1 || len(n.Inputs) == 0 || n.Inputs[0] == "" {
		return ipNone, 0
	}
	x, y := a.g.Tensors[n.Inputs[0]], a.g.Tensors[n.Outputs[0]]
	if !isActivation(x) || !isActivation(y) {
		return ipNone, 0
	}
	if a.opt.InPlaceOK != nil && !a.opt.InPlaceOK(n) {
		return ipNone, 0
	}
	kind, extra := inPlaceRule(a.g, n, x, y)
	return kind, roundUp(extra, a.opt.Align)
}

// inPlaceRule is the structural rule shared by the planner and Validate:
// whether n may write y over x, and the scratch bytes that needs.
func inPlaceRule(g *graph.Graph, n *graph.Node, x, y *graph.Tensor) (inPlaceKind, int) {
	es := x.DType.Size()
	if es == 0 || es != y.DType.Size() {
		return ipNone, 0
	}
	switch {
	case elementwiseUnary[n.Op] || elementwiseBinary[n.Op]:
		if x.NumElements() == y.NumElements() {
			return ipElementwise, 0
		}
	case n.Op == graph.Conv2D:
		at, ok := n.Attrs.(*graph.Conv2DAttrs)
		if !ok || at == nil || len(x.Shape) != 4 || len(y.Shape) != 4 {
			return ipNone, 0
		}
		c := x.Shape[3]
		if c < 1 || y.Shape[0] != x.Shape[0] {
			return ipNone, 0
		}
		if at.Group == c && y.Shape[3] == c {
			inCh := x.Shape[0] * x.Shape[1] * x.Shape[2]
			outCh := y.Shape[0] * y.Shape[1] * y.Shape[2]
			return ipDepthwise, min(inCh, outCh) * es
		}
		w := g.In(n, 1)
		if at.Group == 1 && w != nil && len(w.Shape) == 4 && w.Shape[1] == 1 && w.Shape[2] == 1 &&
			at.Stride == [2]int{1, 1} && at.Pad == (graph.Padding{}) &&
			y.Shape[1] == x.Shape[1] && y.Shape[2] == x.Shape[2] {
			return ipPointwise, min(c, y.Shape[3]) * es
		}
	}
	return ipNone, 0
}

// InPlaceLoop tells lowering how node n must loop when a plan runs it in
// place (Plan.InPlace[n.Name]), and the scratch bytes that loop needs (the
// node's Plan.Scratch buffer holds them at offset roundUp(kernel workspace,
// Align) from its start):
//
//   - "elementwise": out[i] is written after x[i] is read; scratch 0.
//   - "depthwise-channel": channel by channel; for each channel either compute
//     the output channel into scratch and then store it (when N·OH·OW <=
//     N·H·W; scratch is one output channel) or copy the input channel to
//     scratch and compute from there (scratch is one input channel).
//   - "pointwise-forward" (Cout <= Cin) and "pointwise-backward" (Cout > Cin):
//     a 1x1 stride-1 unpadded Conv2D, pixel by pixel in increasing or
//     decreasing pixel order; output pixel p is computed from input pixel p
//     only, through a one-pixel scratch of min(Cin, Cout) elements (either the
//     input pixel copied in or the output pixel computed before it is stored).
//     With both tensors at one offset, output pixel p only covers input pixels
//     <= p (forward) or >= p (backward), which are consumed already.
//
// It returns "" when n may never run in place.
func InPlaceLoop(g *graph.Graph, n *graph.Node) (loop string, scratch int) {
	if len(n.Inputs) == 0 || len(n.Outputs) != 1 {
		return "", 0
	}
	x, y := g.In(n, 0), g.Out(n, 0)
	if !isActivation(x) || !isActivation(y) {
		return "", 0
	}
	kind, s := inPlaceRule(g, n, x, y)
	switch kind {
	case ipElementwise:
		return "elementwise", 0
	case ipDepthwise:
		return "depthwise-channel", s
	case ipPointwise:
		if y.Shape[3] > x.Shape[3] {
			return "pointwise-backward", s
		}
		return "pointwise-forward", s
	}
	return "", 0
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// rect is one tensor of a slot: live over [first, last], size bytes from the
// slot's offset.
type rect struct{ first, last, size int }

// slot is a set of tensors that share one offset (in-place chains).
type slot struct {
	members []rect
	maxSize int
	first   int
	last    int
}

func (s *slot) sizeAt(step int) int {
	m := 0
	for _, r := range s.members {
		if r.first <= step && step <= r.last {
			m = max(m, r.size)
		}
	}
	return m
}

// lifetimes is the per-order part of the plan.
type lifetimes struct {
	steps   int
	first   []int // per tensor
	last    []int
	inPlace map[int]bool // node indices
	slotOf  []int        // per root tensor; -1 outside the arena
	slots   []slot
	scratch []int // per node, aligned bytes
}

func (a *analysis) lifetimes(order []int) *lifetimes {
	nt := len(a.ts)
	lt := &lifetimes{steps: len(order), first: make([]int, nt), last: make([]int, nt),
		inPlace: map[int]bool{}, slotOf: make([]int, nt), scratch: make([]int, len(a.g.Nodes))}
	pos := make([]int, len(a.g.Nodes))
	for s, n := range order {
		pos[n] = s
	}
	end := max(len(order)-1, 0)
	groupLast := make([]int, nt)
	for id := range a.ts {
		t := &a.ts[id]
		f := 0
		if t.producer >= 0 {
			f = pos[t.producer]
		}
		l := f
		for _, c := range t.cons {
			l = max(l, pos[c])
		}
		if t.output {
			l = end
		}
		lt.first[id], lt.last[id] = f, l
	}
	for id := range a.ts {
		r := a.ts[id].root
		groupLast[r] = max(groupLast[r], lt.last[id])
	}
	for id := range a.ts {
		if a.ts[id].root == id {
			lt.last[id] = groupLast[id]
		}
	}
	// In-place decisions, then slots by union-find over roots.
	parent := make([]int, nt)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for s, n := range order {
		lt.scratch[n] = a.kernel[n]
		if x, y, ok := a.inPlaceAt(n, func(r int) bool { return lt.last[r] == s }); ok {
			lt.inPlace[n] = true
			parent[find(y)] = find(x)
			if !a.opt.StagedInPlace {
				lt.scratch[n] += a.ipScratch[n]
			}
		}
	}
	slotIdx := map[int]int{}
	for id := range a.ts {
		lt.slotOf[id] = -1
		if a.ts[id].root != id || a.outside[id] {
			continue
		}
		r := find(id)
		si, ok := slotIdx[r]
		if !ok {
			si = len(lt.slots)
			slotIdx[r] = si
			lt.slots = append(lt.slots, slot{first: lt.first[id], last: lt.last[id]})
		}
		lt.slotOf[id] = si
		sl := &lt.slots[si]
		sl.members = append(sl.members, rect{lt.first[id], lt.last[id], a.ts[id].size})
		sl.maxSize = max(sl.maxSize, a.ts[id].size)
		sl.first = min(sl.first, lt.first[id])
		sl.last = max(sl.last, lt.last[id])
	}
	return lt
}

// inPlaceAt reports whether node n can write its output over the root of its
// first input, given dies(r) telling whether root r dies at n. It returns the
// two root tensor ids.
func (a *analysis) inPlaceAt(n int, dies func(r int) bool) (x, y int, ok bool) {
	if a.kind[n] == ipNone || len(a.ins[n]) == 0 {
		return 0, 0, false
	}
	first := a.id[a.g.Nodes[n].Inputs[0]]
	x = a.ts[first].root
	y = a.outs[n][0]
	if a.outside[x] || a.groupOut[x] || a.outside[y] || a.ts[y].root != y || !dies(x) {
		return 0, 0, false
	}
	for _, in := range a.ins[n][1:] {
		if a.ts[in].root == x {
			return 0, 0, false
		}
	}
	return x, y, true
}

// lowerBound is the largest sum over a step of the live slots' sizes.
func (lt *lifetimes) lowerBound() int {
	live := make([]int, lt.steps+1)
	for i := range lt.slots {
		sl := &lt.slots[i]
		for s := sl.first; s <= sl.last; s++ {
			live[s] += sl.sizeAt(s)
		}
	}
	m := 0
	for _, v := range live {
		m = max(m, v)
	}
	return m
}
