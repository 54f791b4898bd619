package tflite

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// Control flow: IF and WHILE run other subgraphs of the file. mcugen's
// graph is flat and its memory plan static, so they are unrolled at import:
//
//   - WHILE: the condition subgraph is evaluated at compile time on the
//     loop variables (in a scratch graph, by the reference interpreter);
//     while it is true, the body subgraph's operators are imported once
//     more, their inputs bound to the loop variables' current values.
//     Values that only depend on constants (counters, a time step's index)
//     fold to constants as they are imported, so the next condition can be
//     evaluated and the body's slices and gathers see constant indices. A
//     condition that reads a value known only at run time is refused: the
//     trip count must be known at compile time (Keras recurrent layers that
//     the converter writes as a WHILE over the time steps are).
//   - IF: a constant condition imports the branch taken; a condition known
//     at run time imports both branches and selects each output with a
//     Where (both run; the outputs must agree in type, shape and
//     quantization).
//
// Subgraph constants (weights) are imported once per subgraph and shared by
// every unrolled copy.
const (
	codeIf    = 118
	codeWhile = 119
	optIf     = 92
	optWhile  = 93

	// maxIterations bounds an unrolled loop, maxInlinedNodes the nodes all
	// unrolling adds, maxInlinedOps the operators it imports (conditions
	// and folded ones too: nested loops multiply), and maxInlineDepth the
	// nesting of IF and WHILE.
	maxIterations   = 4096
	maxInlinedNodes = 100000
	maxInlinedOps   = 50000
	maxInlineDepth  = 16
	// maxFoldElems bounds a value folded while unrolling (the counters and
	// indices that decide a loop; larger constant work is left to the
	// pipeline's own folding).
	maxFoldElems = 4096
	// maxFoldBytes bounds the data all that folding reads and writes
	// (8 bytes an element, as the interpreter holds them).
	maxFoldBytes = 64 << 20
)

func init() {
	register(ctrlIf, codeIf)
	register(ctrlWhile, codeWhile)
}

// subgraphConsts are one subgraph's tensors imported as constants into the
// main graph, kept across its unrolled copies.
type subgraphConsts struct {
	consts, dwNames, dequantized map[int]string
}

// ctrlWhile unrolls a WHILE whose trip count is known at compile time.
func ctrlWhile(c *opctx, _ *graph.Node) error {
	d := c.d
	o, err := c.options(optWhile)
	if err != nil {
		return err
	}
	condK, bodyK := int(o.i32(0, 0)), int(o.i32(1, 0))
	if len(c.ins) != len(c.outs) {
		return c.errorf("%d loop variables in, %d out: a WHILE's inputs and outputs pair up", len(c.ins), len(c.outs))
	}
	vals, err := c.inputNames(0)
	if err != nil {
		return err
	}
	start, iters := len(d.g.Nodes), 0
	for iter := 0; ; iter++ {
		cond, err := c.evalCondition(condK, vals, iter)
		if err != nil {
			return err
		}
		if !cond {
			break
		}
		if iter == maxIterations {
			return c.errorf("the loop runs more than %d times: mcugen unrolls loops, and this one is too long", maxIterations)
		}
		next, err := c.inline(d.g, bodyK, vals, fmt.Sprintf("body (subgraph %d), iteration %d", bodyK, iter), fmt.Sprintf("%s/%d/", c.base(), iter))
		if err != nil {
			return err
		}
		if len(next) != len(vals) {
			return c.errorf("body (subgraph %d) gives %d values for %d loop variables", bodyK, len(next), len(vals))
		}
		for i := range next {
			a, b := d.g.Tensors[vals[i]], d.g.Tensors[next[i]]
			if a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) || !sameQuantParams(a, b) {
				return c.errorf("loop variable %d changes from %s %v to %s %v in iteration %d: mcugen's shapes are static", i, a.DType, a.Shape, b.DType, b.Shape, iter)
			}
		}
		vals = next
		iters = iter + 1
	}
	if d.depth == 0 {
		d.unrolled = append(d.unrolled, fmt.Sprintf("operator %d (WHILE) %d times", c.index, iters))
	}
	return c.bindOutputs(vals, start)
}

// ctrlIf imports the branch a constant condition takes, or both branches
// and a Where per output.
func ctrlIf(c *opctx, _ *graph.Node) error {
	d := c.d
	o, err := c.options(optIf)
	if err != nil {
		return err
	}
	thenK, elseK := int(o.i32(0, 0)), int(o.i32(1, 0))
	cond, err := c.in(0)
	if err != nil {
		return err
	}
	if cond.DType != graph.Bool || cond.NumElements() != 1 {
		return c.errorf("condition %q is %s %v, want one bool", cond.Name, cond.DType, cond.Shape)
	}
	args, err := c.inputNames(1)
	if err != nil {
		return err
	}
	start := len(d.g.Nodes)
	if cond.IsConst() {
		k, which := elseK, "else"
		if cond.Data.I[0] != 0 {
			k, which = thenK, "then"
		}
		vals, err := c.inline(d.g, k, args, fmt.Sprintf("%s branch (subgraph %d)", which, k), c.base()+"/"+which+"/")
		if err != nil {
			return err
		}
		return c.bindOutputs(vals, start)
	}
	if d.depth == 0 {
		d.unrolled = append(d.unrolled, fmt.Sprintf("operator %d (IF) both branches (the condition is known at run time; a Where selects)", c.index))
	}
	tv, err := c.inline(d.g, thenK, args, fmt.Sprintf("then branch (subgraph %d)", thenK), c.base()+"/then/")
	if err != nil {
		return err
	}
	ev, err := c.inline(d.g, elseK, args, fmt.Sprintf("else branch (subgraph %d)", elseK), c.base()+"/else/")
	if err != nil {
		return err
	}
	// Both branches run. What a branch computes is defined for any input
	// (an integer division by zero gives 0, a gather clamps its indices),
	// so a branch the condition guards runs harmlessly, and its values are
	// not selected.
	if len(tv) != len(c.outs) || len(ev) != len(c.outs) {
		return c.errorf("the branches give %d and %d values for %d outputs", len(tv), len(ev), len(c.outs))
	}
	for k := range c.outs {
		a, b := d.g.Tensors[tv[k]], d.g.Tensors[ev[k]]
		out, err := c.out(k)
		if err != nil {
			return err
		}
		if a.DType != out.DType || b.DType != out.DType || !slices.Equal(a.Shape, b.Shape) || a.NumElements() != out.NumElements() {
			return c.errorf("output %d: the branches give %s %v and %s %v for %s %v; with a condition known only at run time mcugen runs both and selects, so they must agree", k, a.DType, a.Shape, b.DType, b.Shape, out.DType, out.Shape)
		}
		if !sameQuantParams(a, b) || !sameQuantParams(a, out) {
			return c.errorf("output %d: the branches' values are quantized differently", k)
		}
		x, y := a.Name, b.Name
		if !slices.Equal(a.Shape, out.Shape) {
			x = c.mathNode(graph.Reshape, nil, []string{x}, "then", a.DType, out.Shape, a.Quant)
			y = c.mathNode(graph.Reshape, nil, []string{y}, "else", b.DType, out.Shape, b.Quant)
		}
		c.emit(graph.Where, nil, []string{cond.Name, x, y}, out)
	}
	c.done = true
	return nil
}

// base names the operator's unrolled copies: its first output's name in
// the file.
func (c *opctx) base() string {
	if len(c.outs) > 0 && c.outs[0] >= 0 && int(c.outs[0]) < len(c.d.tensors) {
		if s := c.d.tensors[c.outs[0]].str(tensorName); s != "" {
			return s
		}
	}
	return fmt.Sprintf("op%d", c.index)
}

// inputNames imports inputs from..len-1 and returns their names.
func (c *opctx) inputNames(from int) ([]string, error) {
	var names []string
	for i := from; i < len(c.ins); i++ {
		t, err := c.in(i)
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	return names, nil
}

// bindOutputs makes the operator's outputs the values vals. A constant
// stays a constant; a value the unrolling made (nodes from start on) takes
// the output's name; anything else (a value passed through, or bound twice)
// is viewed through a Reshape, which moves nothing.
func (c *opctx) bindOutputs(vals []string, start int) error {
	d := c.d
	if len(vals) != len(c.outs) {
		return c.errorf("%d values for %d outputs", len(vals), len(c.outs))
	}
	made := map[string]bool{}
	for _, n := range d.g.Nodes[start:] {
		for _, o := range n.Outputs {
			made[o] = true
		}
	}
	for k, v := range vals {
		src := d.g.Tensors[v]
		name, err := d.tensor(int(c.outs[k]))
		if err != nil {
			return c.errorf("output: %v", err)
		}
		out := d.g.Tensors[name]
		if out.IsConst() {
			return c.errorf("output %q is a constant", name)
		}
		if out.DType != src.DType || out.NumElements() != src.NumElements() || !sameQuantParams(out, src) {
			return c.errorf("output %d (%q) is %s %v, the subgraph gives %s %v", k, out.Name, out.DType, out.Shape, src.DType, src.Shape)
		}
		switch {
		case src.IsConst():
			if err := c.constOut(k, src.Data); err != nil {
				return err
			}
		case made[v] && slices.Equal(src.Shape, out.Shape) && !slices.Contains(d.g.Outputs, v):
			// The value takes the output's name as the file writes it
			// where that is free (the unrolled copies took names first).
			delete(made, v) // a second output bound to it gets a view
			delete(d.g.Tensors, name)
			if want := d.tensors[c.outs[k]].str(tensorName); want != "" && (want == v || d.g.Tensors[want] == nil) {
				name = want
			}
			if name != v {
				d.renameFrom(start, v, name)
			}
			d.names[int(c.outs[k])] = name
		default:
			c.emit(graph.Reshape, nil, []string{src.Name}, out)
		}
	}
	c.done = true
	return nil
}

// renameFrom renames tensor from to to, which nodes from start on (the
// only ones that can name it) read or write.
func (d *decoder) renameFrom(start int, from, to string) {
	t := d.g.Tensors[from]
	delete(d.g.Tensors, from)
	t.Name = to
	d.g.Tensors[to] = t
	for _, n := range d.g.Nodes[start:] {
		for i, s := range n.Inputs {
			if s == from {
				n.Inputs[i] = to
			}
		}
		for i, s := range n.Outputs {
			if s == from {
				n.Outputs[i] = to
			}
		}
		if n.Name == from {
			n.Name = to
		}
	}
	if fs, ok := d.fileSize[from]; ok {
		delete(d.fileSize, from)
		d.fileSize[to] = fs
	}
}

// evalCondition evaluates a WHILE's condition subgraph on the loop
// variables, in a scratch graph: it must fold to one constant bool.
func (c *opctx) evalCondition(k int, vals []string, iter int) (bool, error) {
	d := c.d
	scratch := graph.New("condition", "tflite")
	for _, v := range vals {
		if scratch.Tensors[v] == nil {
			t := *d.g.Tensors[v]
			scratch.AddTensor(&t)
		}
	}
	res, err := c.inline(scratch, k, vals, fmt.Sprintf("condition (subgraph %d), iteration %d", k, iter), "")
	if err != nil {
		return false, err
	}
	if len(res) != 1 {
		return false, c.errorf("condition (subgraph %d) has %d outputs, want one bool", k, len(res))
	}
	t := scratch.Tensors[res[0]]
	if t.DType != graph.Bool || t.NumElements() != 1 {
		return false, c.errorf("condition (subgraph %d) gives %s %v, want one bool", k, t.DType, t.Shape)
	}
	if !t.IsConst() {
		var dyn []string
		for _, v := range vals {
			if !d.g.Tensors[v].IsConst() && !slices.Contains(dyn, v) {
				dyn = append(dyn, v)
			}
		}
		return false, c.errorf("the loop's condition (subgraph %d) is known only at run time (it reads values computed from the model's input: %q): mcugen unrolls loops whose trip count it can compute at compile time", k, dyn)
	}
	return t.Data.I[0] != 0, nil
}

// inline imports subgraph k's operators into g, its inputs bound to args
// (tensor names of g), and returns the names of its outputs. Values that
// depend only on constants are folded as they are made.
func (c *opctx) inline(g *graph.Graph, k int, args []string, what, prefix string) (outs []string, err error) {
	d := c.d
	if k <= 0 || k >= len(d.subgraphs) {
		return nil, c.errorf("%s: the model has %d subgraphs (and 0 is the main one)", what, len(d.subgraphs))
	}
	if d.depth >= maxInlineDepth {
		return nil, c.errorf("%s: IF and WHILE nested more than %d deep (or a subgraph that runs itself)", what, maxInlineDepth)
	}
	sg := d.subgraphs[k]
	tensors := sg.tables(subgraphTensors, "tensor")
	ins, outIdx := sg.ints(subgraphInputs), sg.ints(subgraphOutputs)
	ops := sg.tables(subgraphOperators, "operator")
	if err := d.check(); err != nil {
		return nil, c.errorf("%s: %v", what, err)
	}
	if len(ins) != len(args) {
		return nil, c.errorf("%s takes %d inputs, the operator passes %d", what, len(ins), len(args))
	}
	main := g == d.main
	var cache *subgraphConsts
	if main {
		if d.subConsts == nil {
			d.subConsts = map[int]*subgraphConsts{}
		}
		if cache = d.subConsts[k]; cache == nil {
			cache = &subgraphConsts{consts: map[int]string{}, dwNames: map[int]string{}, dequantized: map[int]string{}}
			d.subConsts[k] = cache
		}
	}
	names := map[int]string{}
	for i, idx := range ins {
		if _, dup := names[int(idx)]; dup {
			return nil, c.errorf("%s lists input tensor %d twice", what, idx)
		}
		if idx < 0 || int(idx) >= len(tensors) {
			return nil, c.errorf("%s: input tensor index %d out of range (%d tensors)", what, idx, len(tensors))
		}
		names[int(idx)] = args[i]
	}
	// The caches by tensor index hold only the subgraph's own constants:
	// an input is another tensor in each copy.
	dwNames, dequantized := map[int]string{}, map[int]string{}
	fileConsts := map[int]string{}
	if cache != nil {
		for idx, name := range cache.consts {
			if _, bound := names[idx]; !bound {
				names[idx] = name
			}
		}
		maps.Copy(dwNames, cache.dwNames)
		maps.Copy(dequantized, cache.dequantized)
		fileConsts = cache.consts
		defer func() {
			for key, name := range dwNames {
				// A dequantized weight's key is -2 - its index (ops.go).
				if idx := key; cache.consts[idx] != "" || (idx < -1 && cache.consts[-2-idx] != "") {
					cache.dwNames[key] = name
				}
			}
			for idx, name := range dequantized {
				if cache.consts[idx] != "" {
					cache.dequantized[idx] = name
				}
			}
		}()
	}

	// Swap in the subgraph; put the caller's back on the way out.
	saved := struct {
		g                           *graph.Graph
		tensors                     []table
		names, dwNames, dequantized map[int]string
		fileConsts                  map[int]string
		fileSize                    map[string][]int
		states, spare, hybrid       int
		prefix                      string
	}{d.g, d.tensors, d.names, d.dwNames, d.dequantized, d.fileConsts, d.fileSize, len(d.states), len(d.spare), len(d.hybrid), d.prefix}
	d.g, d.tensors, d.names, d.dwNames, d.dequantized, d.fileConsts = g, tensors, names, dwNames, dequantized, fileConsts
	d.prefix += prefix
	if !main {
		d.fileSize = map[string][]int{}
	}
	d.depth++
	defer func() {
		d.depth--
		if !main {
			// A scratch graph's names mean nothing in the model's graph.
			d.spare, d.hybrid = d.spare[:saved.spare], d.hybrid[:saved.hybrid]
		}
		d.g, d.tensors, d.names, d.dwNames, d.dequantized, d.fileConsts, d.fileSize, d.prefix =
			saved.g, saved.tensors, saved.names, saved.dwNames, saved.dequantized, saved.fileConsts, saved.fileSize, saved.prefix
	}()

	for i, op := range ops {
		if d.inlinedOps++; d.inlinedOps > maxInlinedOps {
			return nil, c.errorf("%s: unrolling IF and WHILE imports more than %d operators", what, maxInlinedOps)
		}
		start := len(g.Nodes)
		if err := d.operator(i, op); err != nil {
			return nil, c.errorf("%s: %v", what, err)
		}
		if len(d.states) != saved.states {
			return nil, c.errorf("%s: operator %d keeps a state (a variable tensor); mcugen does not take stateful operators inside IF or WHILE", what, i)
		}
		if err := d.foldNew(g, start); err != nil {
			return nil, c.errorf("%s: operator %d: %v", what, i, err)
		}
		if d.inlined += len(g.Nodes) - start; d.inlined > maxInlinedNodes {
			return nil, c.errorf("%s: unrolling IF and WHILE makes more than %d nodes", what, maxInlinedNodes)
		}
	}
	for _, idx := range outIdx {
		name, err := d.tensor(int(idx))
		if err != nil {
			return nil, c.errorf("%s: output: %v", what, err)
		}
		outs = append(outs, name)
	}
	return outs, nil
}

// foldNew replaces the nodes of g from start on whose inputs are all
// constants, and whose outputs are small, by their values. The data they
// read and write counts against maxFoldBytes for the whole import (a loop
// that sums a large constant in every iteration is refused, not run for
// minutes).
func (d *decoder) foldNew(g *graph.Graph, start int) error {
	for i := start; i < len(g.Nodes); {
		n := g.Nodes[i]
		if !foldableSmall(g, n) {
			i++
			continue
		}
		for _, s := range append(slices.Clone(n.Inputs), n.Outputs...) {
			if t := g.Tensors[s]; s != "" && t != nil {
				d.foldBytes += int64(t.NumElements()) * 8
			}
		}
		if d.foldBytes > maxFoldBytes {
			return fmt.Errorf("unrolling IF and WHILE computes more than %d MiB of constant data at compile time", maxFoldBytes>>20)
		}
		res, err := interp.FoldNode(g, n)
		if err != nil {
			i++
			continue // left to the kernel
		}
		for _, out := range n.Outputs {
			g.Tensors[out].Data = res[out]
		}
		g.Nodes = slices.Delete(g.Nodes, i, i+1)
	}
	return nil
}

func foldableSmall(g *graph.Graph, n *graph.Node) bool {
	if len(n.Inputs) == 0 || len(n.Outputs) == 0 {
		return false
	}
	for _, in := range n.Inputs {
		if in == "" {
			continue // an absent optional input
		}
		if t := g.Tensors[in]; t == nil || !t.IsConst() {
			return false
		}
	}
	elems := 0
	for _, out := range n.Outputs {
		t := g.Tensors[out]
		if t == nil || t.IsConst() {
			return false
		}
		elems += t.NumElements()
	}
	return elems <= maxFoldElems
}
