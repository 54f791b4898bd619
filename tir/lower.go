package tir

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
)

// Lower turns a planned graph into a Module: one PrimFunc per (fused) node in
// plan order, scheduled for target, simplified and flattened, with the calls
// the entry function makes. Reshapes whose output shares its input's storage
// vanish; element-wise activations following a float conv/FC/binary op fuse
// into it.
func Lower(g *graph.Graph, plan *memplan.Plan, target Target) (*Module, error) {
	if plan == nil {
		return nil, fmt.Errorf("tir: no memory plan")
	}
	if err := CheckAccumulation(g); err != nil {
		return nil, err
	}
	l := &lowerer{g: g, plan: plan, target: target}
	return l.run()
}

type lowerer struct {
	g      *graph.Graph
	plan   *memplan.Plan
	target Target
	m      *Module
}

func (l *lowerer) run() (*Module, error) {
	g := l.g
	m := &Module{Name: g.Name, ArenaBytes: l.plan.ArenaBytes, Target: l.target.Name, IOInArena: l.plan.IOInArena}
	l.m = m
	for _, name := range g.Inputs {
		t := g.Tensor(name)
		if t == nil {
			return nil, fmt.Errorf("tir: graph input %q has no tensor", name)
		}
		m.Inputs = append(m.Inputs, l.io(t))
	}
	for _, name := range g.Outputs {
		t := g.Tensor(name)
		if t == nil {
			return nil, fmt.Errorf("tir: graph output %q has no tensor", name)
		}
		m.Outputs = append(m.Outputs, l.io(t))
	}
	for _, st := range g.States {
		in, out := slices.Index(g.Inputs, st.In), slices.Index(g.Outputs, st.Out)
		if in < 0 || out < 0 {
			return nil, fmt.Errorf("tir: state %q/%q is not a graph input/output pair", st.In, st.Out)
		}
		a, b := m.Inputs[in], m.Outputs[out]
		if a.DType != b.DType || a.Bytes != b.Bytes || m.IsState(in, false) || m.IsState(out, true) {
			return nil, fmt.Errorf("tir: state %q/%q: %s of %d bytes, next value %s of %d bytes (or a tensor of two states)", st.In, st.Out, a.DType, a.Bytes, b.DType, b.Bytes)
		}
		if st.Init != nil && st.Init.Len()*a.DType.Size() != a.Bytes {
			return nil, fmt.Errorf("tir: state %q: initial value of %d elements for %d bytes", st.In, st.Init.Len(), a.Bytes)
		}
		m.States = append(m.States, &StateIO{In: in, Out: out, Init: st.Init})
	}
	order := l.plan.Order
	if len(order) == 0 && len(g.Nodes) > 0 {
		return nil, fmt.Errorf("tir: the plan has no node order")
	}
	fusedInto := l.fuseActivations(order)
	lutInto := l.fuseTables(order, fusedInto)
	seen := map[*Buffer]bool{}
	for step, ni := range order {
		if ni < 0 || ni >= len(g.Nodes) {
			return nil, fmt.Errorf("tir: plan step %d names node %d of %d", step, ni, len(g.Nodes))
		}
		n := g.Nodes[ni]
		if _, ok := fusedInto[n]; ok && fusedInto[n] == nil {
			continue // fused into its producer
		}
		if c, ok := lutInto[n]; ok && c == nil {
			continue // a table applied in its producer's stores
		}
		if n.Op == graph.Reshape {
			wi, err1 := l.where(n.Inputs[0])
			wo, err2 := l.where(n.Outputs[0])
			if err1 == nil && err2 == nil && wi == wo {
				continue // a view: memplan gave it its input's bytes
			}
		}
		var f *PrimFunc
		var err error
		if l.plan.InPlace[n.Name] && n.Op == graph.Conv2D && rowStagedTarget(l.target.Name, l.g, n) {
			// The generic schedules (and the dsp and mve targets' float
			// ones) have no in-place form: stage the input rows
			// (inplace_rows.go); nil where it cannot.
			if f, err = l.rowStaged(n, fusedInto[n], len(m.Funcs)); err != nil {
				return nil, err
			}
		}
		if f == nil {
			if f, err = l.kernel(n, fusedInto[n], len(m.Funcs)); err != nil {
				return nil, err
			}
		}
		if c := lutInto[n]; c != nil {
			g, ok, err := l.applyTable(f, n, c)
			switch {
			case err != nil:
				return nil, err
			case ok:
				f = g
			default:
				delete(lutInto, c) // the schedule writes through pointers: lower c on its own
			}
		}
		call := &KernelCall{Func: f}
		for _, p := range f.Params {
			w, err := l.where(p.Tensor)
			if err != nil {
				return nil, fmt.Errorf("tir: node %q (%s): %v", n.Name, n.Op, err)
			}
			call.Args = append(call.Args, w)
			call.Bytes = append(call.Bytes, g.Tensor(p.Tensor).Bytes())
		}
		if l.plan.InPlace[n.Name] && !canRunInPlace(n, f) {
			return nil, &InPlaceError{Node: n.Name, Op: string(n.Op)}
		}
		m.Funcs = append(m.Funcs, f)
		m.Calls = append(m.Calls, call)
		for _, c := range f.Consts() {
			if !seen[c] {
				seen[c] = true
				m.Consts = append(m.Consts, c)
			}
			if c.DType == F32 {
				m.Float = true
			}
		}
		for _, p := range f.Params {
			if p.DType == F32 {
				m.Float = true
			}
		}
	}
	return m, nil
}

func (l *lowerer) io(t *graph.Tensor) *IO {
	o := &IO{Name: t.Name, DType: t.DType, Shape: append([]int{}, t.Shape...), Bytes: t.Bytes(), Offset: -1}
	if q := t.Quant; q != nil && t.DType != F32 && len(q.Scale) == 1 && len(q.ZeroPoint) <= 1 {
		o.Quantized, o.Scale = true, q.Scale[0]
		if len(q.ZeroPoint) == 1 {
			o.ZeroPoint = q.ZeroPoint[0]
		}
	}
	if off, ok := l.plan.Offset(t.Name); ok {
		o.Offset = off
	}
	return o
}

// where resolves where a tensor lives at run time.
func (l *lowerer) where(tensor string) (Where, error) {
	for depth := 0; depth < 64; depth++ {
		b := l.plan.Buffer(tensor)
		if b != nil && b.Offset >= 0 {
			return Where{Arena: true, Offset: b.Offset}, nil
		}
		for i, name := range l.g.Outputs {
			if name == tensor {
				return Where{IO: i, Output: true}, nil
			}
		}
		for i, name := range l.g.Inputs {
			if name == tensor {
				return Where{IO: i}, nil
			}
		}
		if b == nil || b.AliasOf == "" {
			return Where{}, fmt.Errorf("tensor %q has no place in the memory plan", tensor)
		}
		tensor = b.AliasOf
	}
	return Where{}, fmt.Errorf("tensor %q: alias chain too long", tensor)
}

// fuseActivations finds float Relu/Clip nodes whose only input is produced by
// a float Conv2D, FullyConnected or binary op with no fused activation yet,
// read by nothing else and not a graph output. It maps the activation node to
// nil (skip it) and the producer to the activation node.
func (l *lowerer) fuseActivations(order []int) map[*graph.Node]*graph.Node {
	g := l.g
	out := map[*graph.Node]*graph.Node{}
	prod := g.Producers()
	cons := g.Consumers()
	isOut := map[string]bool{}
	for _, o := range g.Outputs {
		isOut[o] = true
	}
	for _, ni := range order {
		n := g.Nodes[ni]
		if (n.Op != graph.Relu && n.Op != graph.Clip) || len(n.Inputs) != 1 {
			continue
		}
		if actOf(n) == graph.ActNone {
			continue
		}
		t := g.Tensor(n.Inputs[0])
		p := prod[n.Inputs[0]]
		if t == nil || p == nil || t.DType != F32 || isOut[t.Name] || len(cons[t.Name]) != 1 {
			continue
		}
		if _, done := out[p]; done {
			continue
		}
		if currentAct(p) != graph.ActNone || !fusable(p) || l.clobbersInputs(p, n.Outputs[0]) || l.writesEarlyOverLive(order, p, n) {
			continue
		}
		out[p] = n
		out[n] = nil
	}
	return out
}

// clobbersInputs reports whether writing tensor out while node p runs would
// overwrite one of p's inputs. Fusing a consumer into p makes p write the
// consumer's output, which the plan may have placed over p's inputs (dead by
// the time the consumer ran on its own); such a fusion must not happen.
func (l *lowerer) clobbersInputs(p *graph.Node, out string) bool {
	wo, err := l.where(out)
	ot := l.g.Tensor(out)
	if err != nil || !wo.Arena || ot == nil {
		return false
	}
	for _, in := range p.Inputs {
		t := l.g.Tensor(in)
		if in == "" || t == nil || t.IsConst() {
			continue
		}
		wi, err := l.where(in)
		if err != nil || !wi.Arena {
			continue
		}
		if wi.Offset < wo.Offset+ot.Bytes() && wo.Offset < wi.Offset+t.Bytes() {
			return true
		}
	}
	return false
}

// writesEarlyOverLive reports whether node p, writing the output of node c
// that comes later in order (c fused into p), would overwrite a tensor the
// plan keeps live in between: the plan placed c's output for c's own step.
// (QDQ journey: a Quantize with its Dequantize fused, two steps early,
// overwrote the input a second convolution still had to read.)
func (l *lowerer) writesEarlyOverLive(order []int, p, c *graph.Node) bool {
	bo := l.plan.Buffer(c.Outputs[0])
	if bo == nil || bo.Offset < 0 {
		return false
	}
	sp, sc := -1, -1
	for step, ni := range order {
		switch l.g.Nodes[ni] {
		case p:
			sp = step
		case c:
			sc = step
		}
	}
	if sp < 0 || sc <= sp {
		return false
	}
	for _, b := range l.plan.Buffers {
		if b.Offset < 0 || b.Tensor == bo.Tensor || b.Tensor == c.Inputs[0] {
			continue
		}
		if b.Offset < bo.Offset+bo.Size && bo.Offset < b.Offset+b.Size && b.Last >= sp && b.First < sc {
			return true
		}
	}
	return false
}

// actOf maps a Relu or Clip node to a fused activation (ActNone if it is not one).
func actOf(n *graph.Node) graph.Activation {
	if n.Op == graph.Relu {
		return graph.ActRelu
	}
	if a, ok := n.Attrs.(*graph.ClipAttrs); ok && a != nil {
		switch {
		case a.Min == 0 && a.Max == 6:
			return graph.ActRelu6
		case a.Min == -1 && a.Max == 1:
			return graph.ActReluN1To1
		}
	}
	return graph.ActNone
}

func fusable(n *graph.Node) bool {
	switch n.Op {
	case graph.Conv2D, graph.FullyConnected, graph.Add, graph.Sub, graph.Mul:
		return true
	}
	return false
}

func currentAct(n *graph.Node) graph.Activation {
	switch a := n.Attrs.(type) {
	case *graph.Conv2DAttrs:
		if a != nil {
			return a.Act
		}
	case *graph.FullyConnectedAttrs:
		if a != nil {
			return a.Act
		}
	case *graph.BinaryAttrs:
		if a != nil {
			return a.Act
		}
	}
	return graph.ActNone
}

// withAct returns a copy of n whose attributes carry act.
func withAct(n *graph.Node, act graph.Activation) *graph.Node {
	c := *n
	switch a := n.Attrs.(type) {
	case *graph.Conv2DAttrs:
		b := *a
		b.Act = act
		c.Attrs = &b
	case *graph.FullyConnectedAttrs:
		b := graph.FullyConnectedAttrs{}
		if a != nil {
			b = *a
		}
		b.Act = act
		c.Attrs = &b
	default:
		b := graph.BinaryAttrs{}
		if ba, ok := n.Attrs.(*graph.BinaryAttrs); ok && ba != nil {
			b = *ba
		}
		b.Act = act
		c.Attrs = &b
	}
	return &c
}

// kernel builds, schedules and finalizes the PrimFunc of node n (with the
// activation node act fused in when not nil). A schedule whose local arrays
// pass the target's stack (Target.StackBytes) gives way to the next
// target's in the fallback chain (the generic one, for dsp), where that one
// fits: a dsp convolution over wide rows of many channels (a 3×3 over 65
// channels of 20 columns took 31,968 B of rows, a 7×7 over 33 channels
// 87,696 B) refused a whole model on a 16 KiB stack, and the generic loops
// keep no rows.
func (l *lowerer) kernel(n *graph.Node, act *graph.Node, index int) (f *PrimFunc, err error) {
	// The builders panic on ill-typed expressions (a float input with int
	// weights, say); report that as an error about the node.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("tir: node %q (%s): cannot lower: %v", n.Name, n.Op, r)
			if _, ok := r.(runtime.Error); ok {
				// Not an ill-typed expression but a fault of the lowering
				// (a negative shift, an index out of range): said as one,
				// so that the mutation and fuzz tests see it (review
				// finding: a schedule's negative shift read as "cannot
				// lower").
				err = fmt.Errorf("tir: node %q (%s): internal error: %v", n.Name, n.Op, r)
			}
		}
	}()
	if f, err = l.compute(n, act, index); err != nil {
		return nil, err
	}
	s, err := l.target.schedule(f)
	if err != nil {
		return nil, fmt.Errorf("tir: node %q (%s): schedule: %v", n.Name, n.Op, err)
	}
	s = Finalize(s)
	lim := l.target.StackBytes
	if lim <= 0 || s.ScratchBytes() <= lim {
		return s, nil
	}
	for next := l.target.next(); next != nil; next = next.next() {
		alt := *next
		alt.StackBytes = lim
		g, err := l.compute(n, act, index)
		if err != nil {
			return nil, err
		}
		if g, err = alt.schedule(g); err != nil {
			continue
		}
		if g = Finalize(g); g.ScratchBytes() <= lim {
			g.StackFallback = s.ScratchBytes()
			return g, nil
		}
	}
	return s, nil
}

// compute builds the PrimFunc of node n (with act fused in when not nil),
// unscheduled.
func (l *lowerer) compute(n *graph.Node, act *graph.Node, index int) (*PrimFunc, error) {
	fn, ok := computes[n.Op]
	if !ok {
		return nil, fmt.Errorf("tir: node %q (%s): no compute definition for this op", n.Name, n.Op)
	}
	if len(n.Outputs) != 1 {
		return nil, fmt.Errorf("tir: node %q (%s): %d outputs, kernels have one", n.Name, n.Op, len(n.Outputs))
	}
	k := &kctx{g: l.g, n: n, f: &PrimFunc{Node: n.Name}, params: map[string]*Buffer{}, stack: l.target.StackBytes, target: l.target.Name}
	if act != nil {
		k.n = withAct(n, actOf(act))
		k.out = l.g.Tensor(act.Outputs[0])
		k.f.Node = n.Name + " + " + act.Name
	}
	if t := l.g.Out(n, 0); t == nil || t.DType == graph.Invalid {
		return nil, fmt.Errorf("tir: node %q (%s): output has no shape or dtype", n.Name, n.Op)
	}
	body, err := fn(k)
	if err != nil {
		return nil, err
	}
	f := k.f
	f.Body = body
	var dt DType = graph.Float32
	if t := l.g.In(n, 0); t != nil {
		dt = t.DType
	}
	f.Name = fmt.Sprintf("%s_%d_%s", f.Op, index, kernelSuffix(dt))
	// Constants the compute definition derived (multipliers, tables, folded
	// bias) are named after the kernel, not after the node's long name.
	for _, c := range f.Consts() {
		if c.Tensor == "" && strings.HasPrefix(c.Name, n.Name) {
			c.Name = f.Name + strings.TrimPrefix(c.Name, n.Name)
		}
	}
	// Inputs first, then the output, each in first-use order.
	sort.SliceStable(f.Params, func(i, j int) bool { return !f.Params[i].Writes && f.Params[j].Writes })
	f.WantInPlace = l.plan.InPlace[n.Name]
	return f, nil
}

// Finalize runs the passes every kernel goes through after its schedule:
// unrolled loops expanded, simplification, buffers flattened to element offsets.
func Finalize(f *PrimFunc) *PrimFunc {
	f = Simplify(f)
	f = ExpandUnrolled(f)
	f = PruneConditions(f)
	f = Flatten(f)
	return Simplify(f)
}

// canRunInPlace reports whether f computes each output element from the
// input elements at the same position only (so writing over the input is safe).
func canRunInPlace(n *graph.Node, f *PrimFunc) bool {
	switch n.Op {
	case graph.Relu, graph.Clip, graph.LeakyRelu, graph.Sigmoid, graph.Tanh, graph.HardSwish, graph.HardSigmoid, graph.Math,
		graph.Quantize, graph.Dequantize, graph.Add, graph.Sub, graph.Mul, graph.Div, graph.Maximum, graph.Minimum, graph.Pow, graph.Mod, graph.Reshape:
		return true
	case graph.Conv2D:
		return f != nil && f.InPlaceSafe
	}
	return false
}

// InPlaceError says the plan runs a node in place and its scheduled kernel
// cannot: plan again without it (pipeline does).
type InPlaceError struct{ Node, Op string }

func (e *InPlaceError) Error() string {
	return fmt.Sprintf("tir: node %q (%s): the plan runs it in place, its kernel cannot", e.Node, e.Op)
}

// InPlaceOK is for memplan.Options.InPlaceOK: the generic kernels can write
// their output over their first input only for element-wise ops.
func InPlaceOK(n *graph.Node) bool { return canRunInPlace(n, nil) }

// InPlaceOKFor is InPlaceOK for a target's schedules: the generic target
// offers the pointwise and depthwise convolutions that row staging covers
// (inplace_rows.go), and the dsp and mve targets the float ones it covers;
// the dsp and mve targets offer int8 pointwise convolutions (it stages each block of pixels before
// writing their outputs, in increasing pixel order when Cout <= Cin and
// decreasing when Cout > Cin) and 3x3, 5x5 and 7x7 depthwise ones whose
// output rows are no longer than their input rows (the planar schedule
// lays each input row out before any output overwrites it). Lowering has
// the last word: a kernel that did not take such a form makes Lower return
// an InPlaceError.
func InPlaceOKFor(target string, g *graph.Graph) func(n *graph.Node) bool {
	if target == Generic.Name {
		// Row staging (inplace_rows.go) runs its convolution kernels in
		// place. (Not neon's: Cortex-A parts have the RAM, and its
		// one-row kernels measured up to 2.8 times slower.)
		return func(n *graph.Node) bool { return InPlaceOK(n) || rowStageOK(g, n) }
	}
	if target != DSP.Name && target != MVE.Name {
		return InPlaceOK
	}
	return func(n *graph.Node) bool {
		if InPlaceOK(n) || rowStagedTarget(target, g, n) && rowStageOK(g, n) {
			return true
		}
		if n.Op != graph.Conv2D || len(n.Inputs) < 2 {
			return false
		}
		at, ok := n.Attrs.(*graph.Conv2DAttrs)
		x, y, w := g.In(n, 0), g.Out(n, 0), g.In(n, 1)
		if !ok || at == nil || x == nil || y == nil || w == nil || x.DType != graph.Int8 || y.DType != graph.Int8 ||
			len(x.Shape) != 4 || len(y.Shape) != 4 || len(w.Shape) != 4 || x.Shape[0] != 1 {
			return false
		}
		c := x.Shape[3]
		if at.Group == 1 {
			return w.Shape[1] == 1 && w.Shape[2] == 1
		}
		k := w.Shape[1]
		return at.Group == c && y.Shape[3] == c && c%4 == 0 && w.Shape[2] == k && (k == 3 || k == 5 || k == 7) &&
			at.Dilation[0] <= 1 && at.Dilation[1] <= 1 && y.Shape[1] <= x.Shape[1] && y.Shape[2] <= x.Shape[2]
	}
}

// rowStagedTarget reports whether target runs n in place by row staging
// (inplace_rows.go): every convolution on the generic target, and the float
// ones on dsp and mve, whose own in-place forms are int8 (a float32 VWW on
// the Cortex-M4 planned 221,184 B where the generic target's staging took
// 184,320 B).
func rowStagedTarget(target string, g *graph.Graph, n *graph.Node) bool {
	switch target {
	case Generic.Name:
		return true
	case DSP.Name, MVE.Name:
		x := g.In(n, 0)
		return x != nil && x.DType == graph.Float32
	}
	return false
}

// Flatten rewrites every multi-dimensional buffer access as one element offset.
func Flatten(f *PrimFunc) *PrimFunc {
	g := *f
	flat := func(b *Buffer, idx []Expr) []Expr {
		if len(idx) == 0 {
			return nil
		}
		var off Expr
		for i, e := range idx {
			if b.Strides[i] == 0 {
				continue
			}
			t := Mul(e, C(int64(b.Strides[i])))
			if off == nil {
				off = t
			} else {
				off = Add(off, t)
			}
		}
		if off == nil {
			off = C(0)
		}
		return []Expr{SimplifyExpr(Canonical(off))}
	}
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		if st, ok := s.(*Store); ok && !st.Flat {
			return &Store{Buf: st.Buf, Indices: flat(st.Buf, st.Indices), Value: st.Value, Flat: true}
		}
		return s
	}, func(e Expr) Expr {
		if ld, ok := e.(*Load); ok && !ld.Flat {
			return &Load{Buf: ld.Buf, Indices: flat(ld.Buf, ld.Indices), Flat: true}
		}
		return e
	})
	return &g
}

// tableOps are the element-wise ops whose 8-bit integer form is a lookup
// table (see computeUnary).
var tableOps = map[graph.Op]bool{
	graph.Relu: true, graph.Clip: true, graph.LeakyRelu: true, graph.Sigmoid: true, graph.Tanh: true,
	graph.HardSwish: true, graph.HardSigmoid: true, graph.Math: true, graph.Quantize: true, graph.Dequantize: true,
}

// fuseTables finds 8-bit element-wise table ops whose input comes from a
// kernel-producing node and is read by nothing else: the table is applied
// as the producer stores each element, and the intermediate tensor is never
// written. It maps the producer to the table node and the table node to nil.
func (l *lowerer) fuseTables(order []int, fused map[*graph.Node]*graph.Node) map[*graph.Node]*graph.Node {
	g := l.g
	out := map[*graph.Node]*graph.Node{}
	prod := g.Producers()
	cons := g.Consumers()
	isOut := map[string]bool{}
	for _, o := range g.Outputs {
		isOut[o] = true
	}
	for _, ni := range order {
		c := g.Nodes[ni]
		if !tableOps[c.Op] || len(c.Inputs) != 1 || len(c.Outputs) != 1 {
			continue
		}
		xt, yt := g.Tensor(c.Inputs[0]), g.Tensor(c.Outputs[0])
		p := prod[c.Inputs[0]]
		if xt == nil || yt == nil || p == nil || (xt.DType != graph.Int8 && xt.DType != graph.UInt8) {
			continue
		}
		// One table maps every element alike: a per-channel quantized
		// input or output is not one mapping (review: a per-axis
		// activation Dequantize failed to compile).
		if xt.Quant.PerAxis() || yt.Quant.PerAxis() {
			continue
		}
		if isOut[xt.Name] || len(cons[xt.Name]) != 1 || xt.NumElements() != yt.NumElements() || len(p.Outputs) != 1 {
			continue
		}
		if _, taken := out[p]; taken || p.Op == graph.Reshape {
			continue
		}
		if _, f := fused[p]; f {
			continue
		}
		if _, f := fused[c]; f {
			continue
		}
		if l.clobbersInputs(p, c.Outputs[0]) || l.writesEarlyOverLive(order, p, c) {
			continue
		}
		out[p] = c
		out[c] = nil
	}
	return out
}

// applyTable makes kernel f (of node p) store table[v] instead of v, into
// the output of table node c. It reports false when f touches its output
// other than by plain stores (a target intrinsic writing through a pointer).
func (l *lowerer) applyTable(f *PrimFunc, p, c *graph.Node) (*PrimFunc, bool, error) {
	xt, yt := l.g.Tensor(c.Inputs[0]), l.g.Tensor(c.Outputs[0])
	var old *Buffer
	for _, b := range f.Params {
		if b.Tensor == xt.Name && b.Writes {
			old = b
		}
	}
	other := false
	VisitExprs(f.Body, func(e Expr) {
		switch x := e.(type) {
		case *Load:
			other = other || x.Buf == old
		case *Ptr:
			other = other || x.Buf == old
		}
	})
	if old == nil || other {
		return nil, false, nil
	}
	k := &kctx{g: l.g, n: c, f: f, params: map[string]*Buffer{}}
	r, err := k.tableData(c, xt, yt)
	if err != nil {
		return nil, false, err
	}
	lo, _ := xt.DType.Range()
	// value: what the kernel stores in the table node's output for v.
	var value func(v Expr) Expr
	if flips(r, xt.DType, yt.DType) {
		// uint8 ↔ int8 at zero points 128 apart (quant.ShiftUint8Layers's
		// edges): ± 128, no table.
		d := int64(128)
		if yt.DType == graph.Int8 {
			d = -128
		}
		value = func(v Expr) Expr { return CastTo(yt.DType, Add(CastTo(I32, v), C(d))) }
	} else {
		table := k.tableBuf(r, yt, "")
		table.Name = f.Name + "_" + opName(c.Op) + "_table"
		value = func(v Expr) Expr {
			return &Load{Buf: table, Indices: []Expr{Sub(CastTo(I32, v), C(lo))}, Flat: true}
		}
	}
	nb := NewBuffer(cname(yt.Name), yt.DType, []int{yt.NumElements()}, ScopeParam)
	nb.Tensor, nb.Writes = yt.Name, true
	g := *f
	g.Params = make([]*Buffer, len(f.Params))
	for i, b := range f.Params {
		g.Params[i] = b
		if b == old {
			g.Params[i] = nb
		}
	}
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		st, ok := s.(*Store)
		if !ok || st.Buf != old {
			return s
		}
		return &Store{Buf: nb, Indices: st.Indices, Value: value(st.Value), Flat: st.Flat}
	}, nil)
	g.Node = f.Node + " + " + c.Name
	return Simplify(&g), true, nil
}
