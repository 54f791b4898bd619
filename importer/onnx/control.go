package onnx

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// Control flow (If, Loop, Scan) is unrolled at import: the graph IR is flat.
// A subgraph is instantiated (inlineGraph) by renaming every value it
// defines to a fresh key of im.vals, binding its inputs to the values the
// node gives it, and converting its nodes as the main graph's are, so that
// constants fold through it. Values of an enclosing scope are read by their
// names (ONNX lets a subgraph read them); a nested subgraph's reads of the
// names its enclosing subgraph defines are rewritten to that instance's keys
// (substGraph). If with a constant condition inlines the branch taken, and
// with a run-time one both branches and a Where per output; Loop needs a
// trip count and conditions that are constants at import; Scan's iteration
// count is its inputs' static length.

// maxUnrollTrips bounds the iterations of one unrolled Loop or Scan.
const maxUnrollTrips = 4096

// maxUnrolledNodes bounds the subgraph nodes instantiated by unrolling
// over the whole model (memplan plans at most 50,000 nodes).
const maxUnrolledNodes = 50000

// maxControlDepth bounds the nesting of control-flow nodes.
const maxControlDepth = 16

func init() {
	converters["If"] = convIf
	converters["Loop"] = convLoop
	// A Loop's trip count and first condition must be known at compile
	// time (the backend tests feed them as inputs; a model holds them).
	paramSlots["Loop"] = []int{0, 1}
	converters["Scan"] = convScan
}

// ctlState is the importer's control-flow bookkeeping.
type ctlState struct {
	keys     map[string]bool // fresh keys handed out
	unrolled int             // subgraph nodes instantiated so far
	depth    int             // control-flow nesting being converted
	// consts holds the values of subgraph initializers (by *Tensor) and
	// Constant nodes (by their value attribute) already instantiated.
	consts map[any]*value
	// notes describe the model's top-level control flow as unrolled, for
	// one note at the end of the import.
	notes []string
}

// note records what a top-level If, Loop or Scan became.
func (im *importer) ctlNote(format string, a ...any) {
	if s := fmt.Sprintf(format, a...); im.ctl.depth == 0 && !slices.Contains(im.ctl.notes, s) {
		im.ctl.notes = append(im.ctl.notes, s)
	}
}

func (s *ctlState) cache(k any, v *value) {
	if s.consts == nil {
		s.consts = map[any]*value{}
	}
	s.consts[k] = v
}

// freshKey returns a key of im.vals that no value of the model has or will
// have: base, or base with a numeric suffix.
func (im *importer) freshKey(base string) string {
	if im.ctl.keys == nil {
		im.ctl.keys = map[string]bool{}
	}
	k := base
	for i := 1; im.ctl.keys[k] || im.vals[k] != nil || im.uses[k] > 0; i++ {
		k = base + "~" + strconv.Itoa(i)
	}
	im.ctl.keys[k] = true
	return k
}

// bindKey binds v to a fresh key (so that a made-up node can read it).
func (im *importer) bindKey(base string, v *value) string {
	k := im.freshKey(base)
	im.vals[k] = v
	v.pending += 2
	return k
}

// constKey binds constant d to a fresh key.
func (im *importer) constKey(base string, d *graph.Data) string {
	k := im.freshKey(base)
	im.hold(d)
	im.vals[k] = &value{name: k, dt: d.DType, shape: slices.Clone(d.Shape), c: d}
	return k
}

// graphDefs returns the names g defines: its inputs, initializers and its
// nodes' outputs.
func graphDefs(g *Graph) map[string]bool {
	defs := map[string]bool{}
	for _, vi := range g.Input {
		defs[vi.Name] = true
	}
	for _, t := range g.Initializer {
		defs[t.Name] = true
	}
	for _, n := range g.Nodes {
		for _, o := range n.Output {
			if o != "" {
				defs[o] = true
			}
		}
	}
	return defs
}

// freeVars returns the names g reads from enclosing scopes (its nodes'
// inputs, its nested subgraphs' free names and its outputs, less what it
// defines), in order of first appearance.
func freeVars(g *Graph) []string {
	defs := graphDefs(g)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !defs[s] && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, n := range g.Nodes {
		for _, in := range n.Input {
			add(in)
		}
		for _, s := range nodeCaptures(n) {
			add(s)
		}
	}
	for _, o := range g.Output {
		add(o.Name)
	}
	return out
}

// nodeCaptures returns the names n's subgraphs read from n's scope.
func nodeCaptures(n *Node) []string {
	var out []string
	for _, a := range n.Attribute {
		if a.G != nil {
			out = append(out, freeVars(a.G)...)
		}
		for _, g := range a.Graphs {
			if g != nil {
				out = append(out, freeVars(g)...)
			}
		}
	}
	return out
}

// countCaptures counts the reads of n's subgraphs as uses of the values
// they capture, twice (each may be read once per iteration): a value that
// a subgraph reads must not be folded into its producer as if a single
// reader had it.
func (im *importer) countCaptures(n *Node) {
	for _, s := range nodeCaptures(n) {
		im.uses[s] += 2
	}
}

// substGraph returns a copy of g whose reads of enclosing names go through
// sub (names g defines itself shadow sub's).
func substGraph(g *Graph, sub map[string]string) *Graph {
	defs := graphDefs(g)
	inner := map[string]string{}
	for k, v := range sub {
		if !defs[k] {
			inner[k] = v
		}
	}
	ng := *g
	ng.Nodes = make([]*Node, len(g.Nodes))
	for i, n := range g.Nodes {
		ng.Nodes[i] = substNode(n, inner, func(s string) string { return s })
	}
	ng.Output = make([]*ValueInfo, len(g.Output))
	for i, o := range g.Output {
		c := *o
		if r, ok := inner[c.Name]; ok {
			c.Name = r
		}
		ng.Output[i] = &c
	}
	return &ng
}

// substNode copies n with its inputs renamed through sub, its outputs
// through out and its subgraphs' reads of sub's names rewritten.
func substNode(n *Node, sub map[string]string, out func(string) string) *Node {
	c := *n
	c.Input = make([]string, len(n.Input))
	for i, in := range n.Input {
		c.Input[i] = in
		if r, ok := sub[in]; ok {
			c.Input[i] = r
		}
	}
	c.Output = make([]string, len(n.Output))
	for i, o := range n.Output {
		if o != "" {
			c.Output[i] = out(o)
		}
	}
	c.Attribute = make([]*Attribute, len(n.Attribute))
	for i, a := range n.Attribute {
		if a.G == nil && len(a.Graphs) == 0 {
			c.Attribute[i] = a
			continue
		}
		ca := *a
		if a.G != nil {
			ca.G = substGraph(a.G, sub)
		}
		if len(a.Graphs) > 0 {
			ca.Graphs = make([]*Graph, len(a.Graphs))
			for j, g := range a.Graphs {
				if g != nil {
					ca.Graphs[j] = substGraph(g, sub)
				}
			}
		}
		c.Attribute[i] = &ca
	}
	return &c
}

// graphAttr returns n's GRAPH attribute name.
func graphAttr(c *nodeCtx, name string) (*Graph, error) {
	a := c.attr(name)
	if a == nil || a.G == nil {
		return nil, fmt.Errorf("attribute %q (a graph) is missing", name)
	}
	return a.G, nil
}

// tensorTypes refuses a subgraph whose inputs or outputs are not tensors
// (sequences, optionals, maps).
func tensorTypes(g *Graph, what string) error {
	for _, list := range []struct {
		kind string
		vis  []*ValueInfo
	}{{"input", g.Input}, {"output", g.Output}} {
		for _, vi := range list.vis {
			if vi.Type != nil && vi.Type.NotTensor {
				return unsupportedf("%s %s %q is a sequence, optional or map: mcugen unrolls control flow over tensors only", what, list.kind, vi.Name)
			}
		}
	}
	return nil
}

// inlineGraph instantiates subgraph g of node owner: g's inputs are bound
// to binds, its nodes converted, and its outputs' values returned. label
// names the instance (a branch, an iteration) in keys and messages.
func (im *importer) inlineGraph(owner *Node, g *Graph, label string, binds []*value) (outs []*value, err error) {
	if len(binds) != len(g.Input) {
		return nil, fmt.Errorf("%s: the subgraph has %d inputs, the node gives it %d", label, len(g.Input), len(binds))
	}
	if im.ctl.depth >= maxControlDepth {
		return nil, unsupportedf("control flow nested more than %d deep", maxControlDepth)
	}
	// An instance counts as one node at least, so that loops of empty
	// bodies nested in each other are bounded too.
	cost := max(len(g.Nodes), 1)
	if im.ctl.unrolled+cost > maxUnrolledNodes {
		return nil, unsupportedf("unrolling would instantiate more than %d subgraph nodes (%d so far, %s adds %d)", maxUnrolledNodes, im.ctl.unrolled, label, cost)
	}
	im.ctl.unrolled += cost
	im.ctl.depth++
	defer func() { im.ctl.depth-- }()
	saved := im.node
	defer func() { im.node = saved }()

	// Ops first, as run does: every unsupported op at once.
	var unsupported []string
	seenOp := map[string]bool{}
	for _, n := range g.Nodes {
		op := n.OpType
		if n.Domain != "" && n.Domain != "ai.onnx" {
			op = n.Domain + "::" + n.OpType
		} else if _, ok := converters[n.OpType]; ok {
			continue
		}
		if !seenOp[op] {
			seenOp[op] = true
			unsupported = append(unsupported, strconv.Quote(op))
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return nil, unsupportedf("%s: unsupported ops in the subgraph: %s", label, strings.Join(unsupported, ", "))
	}

	prefix := owner.Name + "/" + label
	ren := map[string]string{}
	define := func(name, what string) error {
		if name == "" {
			return fmt.Errorf("%s: a subgraph %s has an empty name", label, what)
		}
		if _, dup := ren[name]; dup {
			return fmt.Errorf("%s: %q is defined twice in the subgraph", label, name)
		}
		ren[name] = im.freshKey(prefix + "/" + name)
		return nil
	}
	for _, vi := range g.Input {
		if err := define(vi.Name, "input"); err != nil {
			return nil, err
		}
	}
	for _, t := range g.Initializer {
		if err := define(t.Name, "initializer"); err != nil {
			return nil, err
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Output {
			if o != "" {
				if err := define(o, "output"); err != nil {
					return nil, err
				}
			}
		}
	}
	nodes := make([]*Node, len(g.Nodes))
	for i, n := range g.Nodes {
		c := substNode(n, ren, func(s string) string { return ren[s] })
		nm := n.Name
		if nm == "" {
			nm = fmt.Sprintf("%s_%d", n.OpType, i)
		}
		c.Name = prefix + "/" + nm
		nodes[i] = c
		for _, in := range c.Input {
			im.uses[in]++
		}
		im.countCaptures(c)
	}
	outKeys := make([]string, len(g.Output))
	for i, o := range g.Output {
		outKeys[i] = o.Name
		if r, ok := ren[o.Name]; ok {
			outKeys[i] = r
		}
		im.uses[outKeys[i]]++
	}
	for _, t := range g.Initializer {
		k := ren[t.Name]
		v := im.ctl.consts[t]
		if v == nil {
			d, err := t.ToData()
			if err != nil {
				return nil, fmt.Errorf("%s: initializer %q: %w", label, t.Name, err)
			}
			im.hold(d)
			v = &value{name: k, dt: d.DType, shape: d.Shape, c: d}
			im.ctl.cache(t, v)
		}
		im.vals[k] = v
		v.pending += im.uses[k]
	}
	for i, vi := range g.Input {
		k := ren[vi.Name]
		im.vals[k] = binds[i]
		binds[i].pending += im.uses[k]
	}
	order, err := topoOrder(nodes, func(v string) bool { return im.vals[v] != nil })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	orig := map[*Node]string{}
	for i, n := range nodes {
		nm := g.Nodes[i].Name
		if nm == "" {
			nm = fmt.Sprintf("%s_%d", n.OpType, i)
		}
		orig[n] = nm
	}
	for _, n := range order {
		im.node = n
		where := fmt.Sprintf("%s: node %q (%s)", label, orig[n], n.OpType)
		for _, in := range n.Input {
			if in != "" && im.vals[in] == nil {
				return nil, fmt.Errorf("%s: input %q is not defined before use", where, in)
			}
		}
		// A constant of the subgraph is one value for every instance
		// (one tensor of weights, however many iterations read it).
		var constKey *Attribute
		if n.OpType == "Constant" && len(n.Attribute) == 1 && len(n.Output) == 1 && n.Output[0] != "" {
			constKey = n.Attribute[0]
			if v := im.ctl.consts[constKey]; v != nil {
				im.vals[n.Output[0]] = v
				v.pending += im.uses[n.Output[0]]
				continue
			}
		}
		if err := convertNode(im, n, converters[n.OpType]); err != nil {
			var ue *UnsupportedError
			if errors.As(err, &ue) {
				return nil, &UnsupportedError{Msg: where + ": " + ue.Msg}
			}
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if v := im.vals[n.Output[0]]; constKey != nil && v != nil && v.c != nil {
			im.ctl.cache(constKey, v)
		}
		for _, o := range n.Output {
			if o == "" {
				continue
			}
			v := im.vals[o]
			if v == nil {
				return nil, fmt.Errorf("%s: an output was not produced", where)
			}
			if err := checkShape(v.shape); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	for i, k := range outKeys {
		v := im.vals[k]
		if v == nil {
			return nil, fmt.Errorf("%s: subgraph output %q is not produced by any node", label, g.Output[i].Name)
		}
		outs = append(outs, v)
	}
	return outs, nil
}

// synth converts a node mcugen makes itself (a Slice, Reshape, Concat or
// Where of the unrolling) reading the values at keys ins; out is the key it
// writes ("" for a fresh one). Its inputs follow opset 13.
func (im *importer) synth(op string, ins []string, out string, attrs ...*Attribute) (string, error) {
	owner := im.node
	if out == "" {
		out = im.freshKey(owner.Name + "/" + strings.ToLower(op))
		im.uses[out] += 2
	}
	n := &Node{Name: out, OpType: op, Input: ins, Output: []string{out}, Attribute: attrs}
	saved := im.opset
	if im.opset < 13 {
		im.opset = 13
	}
	im.node = n
	defer func() { im.opset, im.node = saved, owner }()
	if err := convertNode(im, n, converters[op]); err != nil {
		return "", err
	}
	if im.vals[out] == nil {
		return "", fmt.Errorf("%s: no output", op)
	}
	return out, nil
}

// take returns the key of element idx of the value at key along axis (the
// axis dropped).
func (im *importer) take(key string, axis, idx int) (string, error) {
	v := im.vals[key]
	base := im.node.Name + "/" + v.name
	i64 := func(x ...int) *graph.Data { return intsData(x) }
	s, err := im.synth("Slice", []string{key, im.constKey(base+"_start", i64(idx)), im.constKey(base+"_end", i64(idx+1)), im.constKey(base+"_axis", i64(axis))}, "")
	if err != nil {
		return "", err
	}
	shape := slices.Delete(slices.Clone(v.shape), axis, axis+1)
	return im.synth("Reshape", []string{s, im.constKey(base+"_shape", intsData(shape))}, "")
}

// stack writes the values at keys, stacked along a new axis, to key out
// ("" for a fresh one) and returns out. All must share dtype and shape.
func (im *importer) stack(keys []string, axis int, out string, what string) (string, error) {
	first := im.vals[keys[0]]
	for i, k := range keys[1:] {
		v := im.vals[k]
		if v.dt != first.dt || !slices.Equal(v.shape, first.shape) {
			return "", unsupportedf("%s changes between iterations (%s %v at iteration 0, %s %v at iteration %d): stacking needs one type and shape", what, first.dt, first.shape, v.dt, v.shape, i+1)
		}
	}
	if axis < 0 || axis > len(first.shape) {
		return "", fmt.Errorf("%s: axis %d out of range for rank %d", what, axis, len(first.shape)+1)
	}
	shape := slices.Insert(slices.Clone(first.shape), axis, 1)
	shapeKey := im.constKey(im.node.Name+"/stack_shape", intsData(shape))
	if len(keys) == 1 {
		return im.synth("Reshape", []string{keys[0], shapeKey}, out)
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		p, err := im.synth("Reshape", []string{k, shapeKey}, "")
		if err != nil {
			return "", err
		}
		parts[i] = p
	}
	return im.synth("Concat", parts, out, IntAttr("axis", int64(axis)))
}

// outputTo writes value v to output i of the node.
func (im *importer) outputTo(c *nodeCtx, i int, v *value) {
	if c.out(i) != "" {
		c.alias(i, v)
	}
}

// convIf inlines the branch a constant condition takes, or both branches
// and a Where per output when the condition is known at run time only.
func convIf(im *importer, c *nodeCtx) error {
	cond, err := c.need(0)
	if err != nil {
		return err
	}
	thenG, err := graphAttr(c, "then_branch")
	if err != nil {
		return err
	}
	elseG, err := graphAttr(c, "else_branch")
	if err != nil {
		return err
	}
	if err := tensorTypes(thenG, "then_branch"); err != nil {
		return err
	}
	if err := tensorTypes(elseG, "else_branch"); err != nil {
		return err
	}
	if len(thenG.Input) > 0 || len(elseG.Input) > 0 {
		return fmt.Errorf("an If branch takes no inputs (then_branch has %d, else_branch %d)", len(thenG.Input), len(elseG.Input))
	}
	if len(thenG.Output) != len(elseG.Output) {
		return fmt.Errorf("then_branch has %d outputs, else_branch %d", len(thenG.Output), len(elseG.Output))
	}
	if len(c.n.Output) > len(thenG.Output) {
		return fmt.Errorf("%d outputs, the branches have %d", len(c.n.Output), len(thenG.Output))
	}
	if cond.dt != graph.Bool {
		return fmt.Errorf("the condition is %s, not bool", cond.dt)
	}
	if graph.NumElements(cond.shape) != 1 {
		return fmt.Errorf("the condition has shape %v, not one element", cond.shape)
	}
	if cond.c != nil {
		g, label := elseG, "else_branch"
		if cond.c.I[0] != 0 {
			g, label = thenG, "then_branch"
		}
		outs, err := im.inlineGraph(c.n, g, label, nil)
		if err != nil {
			return err
		}
		for i, v := range outs {
			im.outputTo(c, i, v)
		}
		return nil
	}
	im.ctlNote("node %q (If) both branches (the condition is known at run time; a Where selects)", c.n.Name)
	thenOuts, err := im.inlineGraph(c.n, thenG, "then_branch", nil)
	if err != nil {
		return err
	}
	elseOuts, err := im.inlineGraph(c.n, elseG, "else_branch", nil)
	if err != nil {
		return err
	}
	// Both branches run: what they compute is defined for any input (an
	// integer division by zero gives 0), and a Where keeps one.
	condKey := ""
	for i := range c.n.Output {
		if c.out(i) == "" {
			continue
		}
		a, b := thenOuts[i], elseOuts[i]
		if a == b {
			im.outputTo(c, i, a)
			continue
		}
		why := ""
		switch {
		case a.dt != b.dt:
			why = fmt.Sprintf("then_branch gives %s, else_branch %s", a.dt, b.dt)
		case !slices.Equal(a.shape, b.shape):
			why = fmt.Sprintf("then_branch gives shape %v, else_branch %v", a.shape, b.shape)
		}
		qa, qb := im.valueQuant(a), im.valueQuant(b)
		if why == "" && ((qa == nil) != (qb == nil) || qa != nil && !quantEqual(qa, qb)) {
			why = "the branches' values are quantized differently"
		}
		if why != "" {
			return unsupportedf("output %d (%q) differs between the branches (%s) and the condition (%q) is known at run time only: both branches are computed and one selected, which needs one type, shape and quantization", i, c.out(i), why, cond.name)
		}
		if condKey == "" {
			condKey = im.bindKey(c.n.Name+"/cond", cond)
			if len(cond.shape) > 0 {
				// A one-element condition as a scalar, so that it
				// broadcasts over values of any rank (a rank-0 one too).
				if condKey, err = im.synth("Reshape", []string{condKey, im.constKey(c.n.Name+"/cond_shape", intsData(nil))}, ""); err != nil {
					return err
				}
			}
		}
		out, err := im.synth("Where", []string{condKey, im.bindKey(c.n.Name+"/then", a), im.bindKey(c.n.Name+"/else", b)}, c.out(i))
		if err != nil {
			return err
		}
		if v := im.vals[out]; v.c == nil && qa != nil {
			q := *qa
			im.g.Tensors[v.tensors[v.primary]].Quant = &q
		}
	}
	return nil
}

// valueQuant returns the quantization of v's graph tensor (nil for a
// constant or a float value).
func (im *importer) valueQuant(v *value) *graph.Quant {
	if v.c != nil || v.lazy != nil {
		return nil
	}
	if t := im.g.Tensors[v.tensors[v.primary]]; t != nil {
		return t.Quant
	}
	return nil
}

// ctlScalar returns the single element of a constant, or an error.
func ctlScalar(d *graph.Data, what string) (int64, error) {
	if d.Len() != 1 {
		return 0, fmt.Errorf("%s has %d elements, not one", what, d.Len())
	}
	if d.DType == graph.Float32 {
		return 0, fmt.Errorf("%s is float32", what)
	}
	return d.I[0], nil
}

// declShape is the shape a subgraph input declares for a scalar: [1] when
// it says so, else [].
func declShape(vi *ValueInfo) []int {
	if vi.Type != nil && vi.Type.HasShape && len(vi.Type.Shape) == 1 {
		return []int{1}
	}
	return []int{}
}

const runTimeLoop = "mcugen unrolls loops whose trip count is known at compile time"

// convLoop unrolls a Loop whose trip count and conditions are constants.
func convLoop(im *importer, c *nodeCtx) error {
	body, err := graphAttr(c, "body")
	if err != nil {
		return err
	}
	if err := tensorTypes(body, "body"); err != nil {
		return err
	}
	if c.nIn() < 2 {
		return fmt.Errorf("a Loop has at least two inputs (M and cond), this one %d", c.nIn())
	}
	nCarried := c.nIn() - 2
	if len(body.Input) != nCarried+2 {
		return fmt.Errorf("the body takes %d inputs, the Loop gives it %d (iteration number, condition and %d carried values)", len(body.Input), nCarried+2, nCarried)
	}
	nScan := len(body.Output) - 1 - nCarried
	if nScan < 0 {
		return fmt.Errorf("the body has %d outputs, fewer than the condition and %d carried values", len(body.Output), nCarried)
	}
	if len(c.n.Output) > nCarried+nScan {
		return fmt.Errorf("%d outputs, the body gives %d carried values and %d scan outputs", len(c.n.Output), nCarried, nScan)
	}
	trips := int64(-1)
	if m := c.in(0); m != nil {
		if m.c == nil {
			return unsupportedf("the trip count M (%q) depends on the input at run time: %s", m.name, runTimeLoop)
		}
		if trips, err = ctlScalar(m.c, "the trip count M"); err != nil {
			return err
		}
		trips = max(trips, 0)
	}
	cond, hasCond := true, false
	if cv := c.in(1); cv != nil {
		if cv.c == nil {
			return unsupportedf("the condition cond (%q) depends on the input at run time: %s (and whose conditions fold to constants)", cv.name, runTimeLoop)
		}
		x, err := ctlScalar(cv.c, "the condition cond")
		if err != nil {
			return err
		}
		cond, hasCond = x != 0, true
	}
	if trips < 0 && !hasCond {
		return unsupportedf("neither a trip count M nor a condition: the loop never ends")
	}
	if !hasCond && trips > maxUnrollTrips {
		return unsupportedf("the loop runs %d iterations (its trip count M): mcugen unrolls loops of at most %d iterations", trips, maxUnrollTrips)
	}
	if !hasCond && im.ctl.unrolled+int(trips)*max(len(body.Nodes), 1) > maxUnrolledNodes {
		return unsupportedf("unrolling the loop's %d iterations of %d body nodes would instantiate more than %d subgraph nodes", trips, len(body.Nodes), maxUnrolledNodes)
	}
	carried := make([]*value, nCarried)
	for i := range carried {
		if carried[i], err = c.need(2 + i); err != nil {
			return err
		}
	}
	scans := make([][]*value, nScan)
	it := int64(0)
	for ; cond && (trips < 0 || it < trips); it++ {
		if it >= maxUnrollTrips {
			what := fmt.Sprintf("its trip count M is %d", trips)
			if trips < 0 || hasCond && trips > maxUnrollTrips {
				what = fmt.Sprintf("its condition is still true after %d iterations", it)
			}
			return unsupportedf("the loop runs more than %d iterations (%s): mcugen unrolls loops of at most %d iterations", maxUnrollTrips, what, maxUnrollTrips)
		}
		iter := graph.NewData(graph.Int64, declShape(body.Input[0]))
		iter.I[0] = it
		cin := graph.NewData(graph.Bool, declShape(body.Input[1]))
		cin.I[0] = 1
		binds := append([]*value{
			{name: body.Input[0].Name, dt: graph.Int64, shape: iter.Shape, c: iter},
			{name: body.Input[1].Name, dt: graph.Bool, shape: cin.Shape, c: cin},
		}, carried...)
		im.hold(iter)
		im.hold(cin)
		outs, err := im.inlineGraph(c.n, body, fmt.Sprintf("iter%d", it), binds)
		if err != nil {
			return err
		}
		if hasCond {
			co := outs[0]
			if co.c == nil {
				return unsupportedf("the condition the body computes (output %q) at iteration %d depends on the input at run time: %s (and whose conditions fold to constants)", body.Output[0].Name, it, runTimeLoop)
			}
			x, err := ctlScalar(co.c, "the body's condition")
			if err != nil {
				return err
			}
			cond = x != 0
		}
		copy(carried, outs[1:1+nCarried])
		for k := range scans {
			scans[k] = append(scans[k], outs[1+nCarried+k])
		}
	}
	im.ctlNote("node %q (Loop) %d times", c.n.Name, it)
	for i, v := range carried {
		im.outputTo(c, i, v)
	}
	for k := range scans {
		out := c.out(nCarried + k)
		if out == "" {
			continue
		}
		if it == 0 {
			return unsupportedf("the loop runs no iteration, so scan output %q is empty (zero-size tensors are not supported)", out)
		}
		keys := make([]string, len(scans[k]))
		for j, v := range scans[k] {
			keys[j] = im.bindKey(fmt.Sprintf("%s/iter%d/scan%d", c.n.Name, j, k), v)
		}
		if _, err := im.stack(keys, 0, out, fmt.Sprintf("scan output %q", out)); err != nil {
			return err
		}
	}
	return nil
}

// scanAttr reads an INTS attribute of n entries (def when absent).
func scanAttr(c *nodeCtx, name string, n int, def int) ([]int, error) {
	v, ok := c.ints(name)
	if !ok {
		out := make([]int, n)
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	if len(v) != n {
		return nil, fmt.Errorf("%s has %d entries, want %d", name, len(v), n)
	}
	return v, nil
}

// convScan unrolls a Scan over its inputs' static length.
func convScan(im *importer, c *nodeCtx) error {
	body, err := graphAttr(c, "body")
	if err != nil {
		return err
	}
	if err := tensorTypes(body, "body"); err != nil {
		return err
	}
	nIn := int(c.int("num_scan_inputs", 0))
	if nIn < 1 {
		return fmt.Errorf("num_scan_inputs is %d, want at least 1", nIn)
	}
	first := 0
	if im.opset < 9 {
		first = 1 // sequence_lens
	}
	nState := c.nIn() - first - nIn
	if nState < 0 {
		return fmt.Errorf("%d inputs, fewer than num_scan_inputs %d", c.nIn(), nIn)
	}
	if len(body.Input) != nState+nIn {
		return fmt.Errorf("the body takes %d inputs, the Scan gives it %d (%d state, %d scanned)", len(body.Input), nState+nIn, nState, nIn)
	}
	nOut := len(body.Output) - nState
	if nOut < 0 {
		return fmt.Errorf("the body has %d outputs, fewer than the %d state values", len(body.Output), nState)
	}
	if len(c.n.Output) > nState+nOut {
		return fmt.Errorf("%d outputs, the body gives %d", len(c.n.Output), nState+nOut)
	}
	vals := make([]*value, nState+nIn)
	for i := range vals {
		if vals[i], err = c.need(first + i); err != nil {
			return err
		}
	}
	outNames := make([]string, nState+nOut)
	for i := range outNames {
		outNames[i] = c.out(i)
	}
	if im.opset < 9 {
		return im.scan8(c, body, vals, nState, nOut, outNames)
	}
	inAxes, err := scanAttr(c, "scan_input_axes", nIn, 0)
	if err != nil {
		return err
	}
	inDirs, err := scanAttr(c, "scan_input_directions", nIn, 0)
	if err != nil {
		return err
	}
	outAxes, err := scanAttr(c, "scan_output_axes", nOut, 0)
	if err != nil {
		return err
	}
	outDirs, err := scanAttr(c, "scan_output_directions", nOut, 0)
	if err != nil {
		return err
	}
	keys := make([]string, len(vals))
	for i, v := range vals {
		keys[i] = im.bindKey(fmt.Sprintf("%s/in%d", c.n.Name, i), v)
	}
	finals, err := im.scanCore(body, keys[:nState], keys[nState:], inAxes, inDirs, outAxes, outDirs, outNames[nState:], "")
	if err != nil {
		return err
	}
	for i, k := range finals {
		im.outputTo(c, i, im.vals[k])
	}
	return nil
}

// scanCore runs a Scan's iterations over the values at keys: states are
// carried, scan inputs sliced along their axes; the scan outputs are
// stacked into outNames ("" for a fresh key, which outNames then holds).
// It returns the keys of the final states.
func (im *importer) scanCore(body *Graph, states, scanIns []string, inAxes, inDirs, outAxes, outDirs []int, outNames []string, label string) ([]string, error) {
	owner := im.node
	length := -1
	axes := make([]int, len(scanIns))
	for j, k := range scanIns {
		v := im.vals[k]
		if len(v.shape) == 0 {
			return nil, fmt.Errorf("scan input %d is a scalar: there is no axis to scan", j)
		}
		a, err := normAxis(inAxes[j], len(v.shape))
		if err != nil {
			return nil, fmt.Errorf("scan input %d: scan_input_axes: %w", j, err)
		}
		axes[j] = a
		if inDirs[j] != 0 && inDirs[j] != 1 {
			return nil, fmt.Errorf("scan input %d: direction %d (0 or 1)", j, inDirs[j])
		}
		if length >= 0 && v.shape[a] != length {
			return nil, fmt.Errorf("scan input %d has %d steps along axis %d, scan input 0 has %d", j, v.shape[a], a, length)
		}
		length = v.shape[a]
	}
	if length > maxUnrollTrips {
		return nil, unsupportedf("the scan runs %d iterations: mcugen unrolls scans of at most %d iterations", length, maxUnrollTrips)
	}
	if length <= 0 {
		return nil, unsupportedf("the scan runs no iteration (zero-size tensors are not supported)")
	}
	im.ctlNote("node %q (Scan) %d steps", owner.Name, length)
	for k, d := range outDirs {
		if d != 0 && d != 1 {
			return nil, fmt.Errorf("scan output %d: direction %d (0 or 1)", k, d)
		}
	}
	pieces := make([][]string, len(outNames))
	for t := 0; t < length; t++ {
		binds := make([]*value, 0, len(states)+len(scanIns))
		for _, k := range states {
			binds = append(binds, im.vals[k])
		}
		for j, k := range scanIns {
			idx := t
			if inDirs[j] == 1 {
				idx = length - 1 - t
			}
			s, err := im.take(k, axes[j], idx)
			if err != nil {
				return nil, err
			}
			binds = append(binds, im.vals[s])
		}
		it := fmt.Sprintf("%siter%d", label, t)
		outs, err := im.inlineGraph(owner, body, it, binds)
		if err != nil {
			return nil, err
		}
		for i := range states {
			states[i] = im.bindKey(owner.Name+"/"+it+"/state", outs[i])
		}
		for k := range outNames {
			pieces[k] = append(pieces[k], im.bindKey(fmt.Sprintf("%s/%s/scan%d", owner.Name, it, k), outs[len(states)+k]))
		}
	}
	for k, name := range outNames {
		if name == "" && label == "" {
			continue
		}
		p := pieces[k]
		if outDirs[k] == 1 {
			slices.Reverse(p)
		}
		r := len(im.vals[p[0]].shape) + 1
		a, err := normAxis(outAxes[k], r)
		if err != nil {
			return nil, fmt.Errorf("scan output %d: scan_output_axes: %w", k, err)
		}
		what := fmt.Sprintf("scan output %d", k)
		if outNames[k], err = im.stack(p, a, name, what); err != nil {
			return nil, err
		}
	}
	return states, nil
}

// scan8 is opset 8's Scan: a batch axis first on every input and output,
// each batch entry scanned along axis 1 of its inputs.
func (im *importer) scan8(c *nodeCtx, body *Graph, vals []*value, nState, nOut int, outNames []string) error {
	nIn := len(vals) - nState
	dirs, err := scanAttr(c, "directions", nIn, 0)
	if err != nil {
		return err
	}
	batch := -1
	for i, v := range vals {
		if len(v.shape) < 1 || i >= nState && len(v.shape) < 2 {
			return fmt.Errorf("input %d of shape %v has no batch (and sequence) axis", first8(i), v.shape)
		}
		if batch >= 0 && v.shape[0] != batch {
			return fmt.Errorf("input %d has batch %d, input %d has %d", first8(i), v.shape[0], first8(0), batch)
		}
		batch = v.shape[0]
	}
	steps := vals[nState].shape[1]
	if sl := c.in(0); sl != nil {
		if sl.c == nil {
			return unsupportedf("sequence_lens (%q) depends on the input at run time: mcugen unrolls scans of a length known at compile time", sl.name)
		}
		for _, n := range sl.c.Ints() {
			if n != steps {
				return unsupportedf("sequence_lens %v: sequences shorter than the scan inputs' %d steps are not supported", sl.c.Ints(), steps)
			}
		}
	}
	if batch > maxUnrollTrips {
		return unsupportedf("a batch of %d: mcugen unrolls scans of at most %d batch entries", batch, maxUnrollTrips)
	}
	keys := make([]string, len(vals))
	for i, v := range vals {
		keys[i] = im.bindKey(fmt.Sprintf("%s/in%d", c.n.Name, i), v)
	}
	zeros := func(n int) []int { return make([]int, n) }
	finals := make([][]string, nState)
	scans := make([][]string, nOut)
	for b := 0; b < batch; b++ {
		per := make([]string, len(keys))
		for i, k := range keys {
			if per[i], err = im.take(k, 0, b); err != nil {
				return err
			}
		}
		outs := make([]string, nOut)
		st, err := im.scanCore(body, per[:nState], per[nState:], zeros(nIn), dirs, zeros(nOut), zeros(nOut), outs, fmt.Sprintf("batch%d/", b))
		if err != nil {
			return err
		}
		for i := range st {
			finals[i] = append(finals[i], st[i])
		}
		for k := range outs {
			scans[k] = append(scans[k], outs[k])
		}
	}
	for i := range finals {
		if outNames[i] == "" {
			continue
		}
		if _, err := im.stack(finals[i], 0, outNames[i], fmt.Sprintf("state %d", i)); err != nil {
			return err
		}
	}
	for k := range scans {
		if outNames[nState+k] == "" {
			continue
		}
		if _, err := im.stack(scans[k], 0, outNames[nState+k], fmt.Sprintf("scan output %d", k)); err != nil {
			return err
		}
	}
	return nil
}

// first8 is the Scan-8 node input index of value i (after sequence_lens).
func first8(i int) int { return i + 1 }
