package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// SVDF: a rank-decomposed fully connected layer over the last memory_size
// inputs, the keyword-spotting layer of TFLite Micro's streaming models. Its
// activation state is a variable tensor: the model carries it from one
// inference to the next (graph.State), so the import adds a state whose
// next value the operator computes.
const (
	opSVDF     = 27
	optSVDF    = 6
	svdfInputs = 5
)

func init() { register((*opctx).svdf, opSVDF) }

// svdf imports the float operator as canonical ops. Per batch row b, with
// the state viewed as [batch, filters, memory]:
//
//	state' = the state shifted one step to the older end, its newest slot
//	         (memory − 1) of filter f = Σ_i x[b][i] · weights_feature[f][i]
//	s[b][f] = Σ_t state'[b][f][t] · weights_time[f][t]
//	out[b][u] = act(bias[u] + Σ_{r < rank} s[b][u·rank + r])
//
// and state' is the state's next value.
func (c *opctx) svdf(_ *graph.Node) error {
	o, err := c.options(optSVDF)
	if err != nil {
		return err
	}
	rank := int(o.i32(0, 0))
	act, err := c.act(o.u8(1, 0))
	if err != nil {
		return err
	}
	if len(c.ins) != svdfInputs {
		return c.errorf("%d inputs, SVDF has %d (input, weights_feature, weights_time, bias, activation_state)", len(c.ins), svdfInputs)
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	wf, err := c.in(1)
	if err != nil {
		return err
	}
	wt, err := c.in(2)
	if err != nil {
		return err
	}
	bias, err := c.optIn(3)
	if err != nil {
		return err
	}
	if x.DType == graph.Int8 {
		return c.svdfInt(x, wf, wt, bias, rank)
	}
	if x.DType != graph.Float32 {
		return c.errorf("input %q is %s: SVDF takes float32 or int8", x.Name, x.DType)
	}
	if len(x.Shape) != 2 || len(wf.Shape) != 2 || len(wt.Shape) != 2 || !wf.IsConst() || !wt.IsConst() ||
		wf.DType != graph.Float32 || wt.DType != graph.Float32 {
		return c.errorf("want input [batch, input_size] and constant float weights_feature [filters, input_size], weights_time [filters, memory_size]; got %v, %v, %v", x.Shape, wf.Shape, wt.Shape)
	}
	l, err := c.svdfOperands(x, wf, wt, bias, rank, graph.Float32, graph.Float32, graph.Float32)
	if err != nil {
		return err
	}
	batch, filters, memory, units, state, y := l.batch, l.filters, l.memory, l.units, l.state, l.y
	f32 := graph.Float32
	s3 := c.step(graph.Reshape, nil, []string{state.Name}, "state3d", f32, []int{batch, filters, memory}, nil)
	feat := c.step(graph.FullyConnected, &graph.FullyConnectedAttrs{}, []string{x.Name, wf.Name}, "feature", f32, []int{batch, filters}, nil)
	feat3 := c.step(graph.Reshape, nil, []string{feat.Name}, "feature3d", f32, []int{batch, filters, 1}, nil)
	next3 := feat3
	if memory > 1 {
		sl := fullSlice([]int{batch, filters, memory})
		sl.Begin[2] = 1
		old := c.step(graph.Slice, sl, []string{s3.Name}, "older", f32, []int{batch, filters, memory - 1}, nil)
		next3 = c.step(graph.Concat, &graph.ConcatAttrs{Axis: 2}, []string{old.Name, feat3.Name}, "state3d_next", f32, []int{batch, filters, memory}, nil)
	}
	next := c.step(graph.Reshape, nil, []string{next3.Name}, "state_next", f32, []int{batch, memory * filters}, nil)
	c.d.states = append(c.d.states, graph.State{In: state.Name, Out: next.Name})
	wt3 := c.step(graph.Reshape, nil, []string{wt.Name}, "weights_time3d", f32, []int{1, filters, memory}, nil)
	prod := c.step(graph.Mul, &graph.BinaryAttrs{}, []string{next3.Name, wt3.Name}, "timed", f32, []int{batch, filters, memory}, nil)
	sum := c.step(graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: []int{2}}, []string{prod.Name}, "filters", f32, []int{batch, filters}, nil)
	var last *graph.Tensor
	switch {
	case rank > 1:
		r3 := c.step(graph.Reshape, nil, []string{sum.Name}, "ranked", f32, []int{batch, units, rank}, nil)
		last = c.step(graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: []int{2}}, []string{r3.Name}, "units", f32, []int{batch, units}, nil)
	default:
		last = sum
	}
	switch {
	case bias != nil:
		b2 := c.step(graph.Reshape, nil, []string{bias.Name}, "bias2d", f32, []int{1, units}, nil)
		c.emit(graph.Add, &graph.BinaryAttrs{Act: act}, []string{last.Name, b2.Name}, y)
	case act != graph.ActNone:
		zero := c.d.g.AddConst(c.d.g.UniqueName(y.Name+"/zero"), graph.NewData(f32, []int{1}))
		c.emit(graph.Add, &graph.BinaryAttrs{Act: act}, []string{last.Name, zero.Name}, y)
	default:
		c.emit(graph.Reshape, nil, []string{last.Name}, y)
	}
	c.done = true
	return nil
}

// stateIn imports input i, a variable tensor the operator updates, as a
// state's input: a tensor of dtype dt and shape's elements that the model
// does not compute. It starts from zeros, as in TFLite and TFLite Micro,
// which reset variable tensors when they allocate them: a buffer the file
// gives the variable is ignored there, and here. One operator may update a
// state.
func (c *opctx) stateIn(i int, dt graph.DType, shape []int) (*graph.Tensor, error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return nil, c.errorf("input %d (the state) is missing", i)
	}
	k := int(c.ins[i])
	if k >= len(c.d.tensors) || !c.d.tensors[k].boolean(tensorIsVariable) {
		return nil, c.errorf("input %d (the state) is not a variable tensor", i)
	}
	t, err := c.in(i)
	if err != nil {
		return nil, err
	}
	if t.DType != dt || t.NumElements() != graph.NumElements(shape) {
		return nil, c.errorf("state %q: %s %v, want %s %v", t.Name, t.DType, t.Shape, dt, shape)
	}
	if slices.ContainsFunc(c.d.states, func(s graph.State) bool { return s.In == t.Name }) {
		return nil, c.errorf("state %q is updated by two operators", t.Name)
	}
	if slices.Contains(c.d.g.Inputs, t.Name) {
		return nil, c.errorf("state %q is also a subgraph input", t.Name)
	}
	for _, n := range c.d.g.Nodes {
		if slices.Contains(n.Outputs, t.Name) {
			return nil, c.errorf("state %q is also computed by %q", t.Name, n.Name)
		}
	}
	t.Data = nil
	t.Shape = slices.Clone(shape)
	return t, nil
}

// svdfInt imports the full-integer SVDF (TFLite Micro's
// EvalIntegerSvdfReference): int8 input and weights_feature, an int16 (or
// int8) state and weights_time, an int32 bias and an int8 output, as
// graph.SVDFFeature (the state's next value) and graph.SVDFTime (the
// output). TFLite's integer kernel applies no fused activation, so none is
// applied here either.
func (c *opctx) svdfInt(x, wf, wt, bias *graph.Tensor, rank int) error {
	perTensor := func(t *graph.Tensor) bool { return t.Quant != nil && len(t.Quant.Scale) == 1 && t.Quant.Scale[0] > 0 }
	if len(x.Shape) != 2 || len(wf.Shape) != 2 || len(wt.Shape) != 2 || !wf.IsConst() || !wt.IsConst() ||
		wf.DType != graph.Int8 || (wt.DType != graph.Int16 && wt.DType != graph.Int8) {
		return c.errorf("want input int8 [batch, input_size], constant int8 weights_feature [filters, input_size] and int16 or int8 weights_time [filters, memory_size]; got %s %v, %s %v, %s %v",
			x.DType, x.Shape, wf.DType, wf.Shape, wt.DType, wt.Shape)
	}
	l, err := c.svdfOperands(x, wf, wt, bias, rank, graph.Int32, wt.DType, graph.Int8)
	if err != nil {
		return err
	}
	state, y, memory := l.state, l.y, l.memory
	for _, t := range []*graph.Tensor{x, wf, wt, state, y} {
		if !perTensor(t) {
			return c.errorf("tensor %q needs one positive scale (per-tensor quantization)", t.Name)
		}
	}
	attrs := &graph.SVDFAttrs{Rank: rank, Memory: memory}
	next := c.temp("state_next", state.DType, state.Shape, state.Quant)
	c.d.g.AddNode(&graph.Node{Name: next.Name, Op: graph.SVDFFeature, Attrs: attrs, Inputs: []string{x.Name, wf.Name, state.Name}, Outputs: []string{next.Name}})
	// TFLite Micro resets an int8 variable to its zero point, any other to 0.
	var init *graph.Data
	if _, zp := state.Quant.At(0); state.DType == graph.Int8 && zp != 0 {
		init = graph.NewData(graph.Int8, state.Shape)
		for i := range init.I {
			init.I[i] = int64(zp)
		}
	}
	c.d.states = append(c.d.states, graph.State{In: state.Name, Out: next.Name, Init: init})
	ins := []string{next.Name, wt.Name}
	if bias != nil {
		ins = append(ins, bias.Name)
	}
	c.emit(graph.SVDFTime, attrs, ins, y)
	c.done = true
	return nil
}

// svdfOperands are an SVDF's checked operands and sizes.
type svdfOperands struct {
	batch, filters, memory, units int
	state, y                      *graph.Tensor
}

// svdfOperands checks what both forms of SVDF share: weights that fit the
// input, a rank that divides the filters, a bias (of biasT) per unit, the
// state variable (of stateT) and the output (of yT).
func (c *opctx) svdfOperands(x, wf, wt, bias *graph.Tensor, rank int, biasT, stateT, yT graph.DType) (*svdfOperands, error) {
	batch, inSize := x.Shape[0], x.Shape[1]
	filters, memory := wf.Shape[0], wt.Shape[1]
	if wf.Shape[1] != inSize || wt.Shape[0] != filters || memory < 1 {
		return nil, c.errorf("weights_feature %v and weights_time %v do not fit input %v", wf.Shape, wt.Shape, x.Shape)
	}
	if rank < 1 || filters%rank != 0 {
		return nil, c.errorf("rank %d does not divide the %d filters", rank, filters)
	}
	units := filters / rank
	if bias != nil && (bias.DType != biasT || bias.NumElements() != units || !bias.IsConst()) {
		return nil, c.errorf("bias %q: %s %v, want a constant %s [%d]", bias.Name, bias.DType, bias.Shape, biasT, units)
	}
	state, err := c.stateIn(4, stateT, []int{batch, memory * filters})
	if err != nil {
		return nil, err
	}
	y, err := c.out(0)
	if err != nil {
		return nil, err
	}
	if y.DType != yT || y.NumElements() != batch*units {
		return nil, c.errorf("output %q: %s %v, want %s [%d %d]", y.Name, y.DType, y.Shape, yT, batch, units)
	}
	return &svdfOperands{batch: batch, filters: filters, memory: memory, units: units, state: state, y: y}, nil
}
