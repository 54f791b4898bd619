package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["RNN"] = convRecurrent(graph.RNNSimple)
	converters["GRU"] = convRecurrent(graph.RNNGRU)
	converters["LSTM"] = convRecurrent(graph.RNNLSTM)
	paramSlots["RNN"] = []int{1, 2, 3, 4}
	paramSlots["GRU"] = []int{1, 2, 3, 4}
	paramSlots["LSTM"] = []int{1, 2, 3, 4, 7}
}

// onnxGate maps the cell's gate order (graph.RNNLayer) to ONNX's: LSTM
// weights are stacked i, o, f, c; GRU z, r, h.
func onnxGate(kind graph.RNNKind, k int) int {
	if kind == graph.RNNLSTM {
		return []int{0, 2, 3, 1}[k]
	}
	return k
}

// convRecurrent unrolls RNN, GRU and LSTM over their time steps
// (graph.RNNLayer). The weights, biases, peepholes and sequence lengths
// must be constants; the initial states may be computed.
func convRecurrent(kind graph.RNNKind) converter {
	return func(im *importer, c *nodeCtx) error {
		op := c.n.OpType
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if err := needFloat(x, op); err != nil {
			return err
		}
		if len(x.shape) != 3 {
			return fmt.Errorf("X of shape %v: want [seq_length, batch_size, input_size]", x.shape)
		}
		layout := int(c.int("layout", 0))
		if layout != 0 && layout != 1 {
			return fmt.Errorf("layout %d: want 0 or 1", layout)
		}
		steps, batch, in := x.shape[0], x.shape[1], x.shape[2]
		if layout == 1 {
			steps, batch = batch, steps
		}
		if steps > graph.MaxRNNSteps {
			return unsupportedf("%d time steps (mcugen unrolls at most %d)", steps, graph.MaxRNNSteps)
		}
		w, err := c.constIn(1, "W")
		if err != nil {
			return err
		}
		r, err := c.constIn(2, "R")
		if err != nil {
			return err
		}
		if w == nil || r == nil {
			return fmt.Errorf("W and R are required")
		}
		nd := 1
		dir := c.str("direction", "forward")
		switch dir {
		case "forward", "reverse":
		case "bidirectional":
			nd = 2
		default:
			return fmt.Errorf("direction %q: want forward, reverse or bidirectional", dir)
		}
		gates := kind.Gates()
		hidden := int(c.int("hidden_size", 0))
		if len(r.Shape) == 3 && hidden == 0 {
			hidden = r.Shape[2]
		}
		if hidden <= 0 {
			return fmt.Errorf("hidden_size %d", hidden)
		}
		if !slices.Equal(w.Shape, []int{nd, gates * hidden, in}) {
			return fmt.Errorf("W of shape %v: want [%d, %d, %d]", w.Shape, nd, gates*hidden, in)
		}
		if !slices.Equal(r.Shape, []int{nd, gates * hidden, hidden}) {
			return fmt.Errorf("R of shape %v: want [%d, %d, %d]", r.Shape, nd, gates*hidden, hidden)
		}
		if w.DType != graph.Float32 || r.DType != graph.Float32 {
			return unsupportedf("%s with %s weights", op, w.DType)
		}
		b, err := c.constIn(3, "B")
		if err != nil {
			return err
		}
		if b != nil && (b.DType != graph.Float32 || !slices.Equal(b.Shape, []int{nd, 2 * gates * hidden})) {
			return fmt.Errorf("B of shape %v: want [%d, %d]", b.Shape, nd, 2*gates*hidden)
		}
		var lens []int
		if d, err := c.constIn(4, "sequence_lens"); err != nil {
			return err
		} else if d != nil {
			if d.Len() != batch || d.DType == graph.Float32 {
				return fmt.Errorf("sequence_lens of %d %s values: want %d integers", d.Len(), d.DType, batch)
			}
			full := true
			for _, v := range d.Ints() {
				if v < 0 || v > steps {
					return fmt.Errorf("sequence length %d outside [0, %d]", v, steps)
				}
				full = full && v == steps
			}
			if !full {
				lens = d.Ints()
			}
		}
		var p *graph.Data
		if kind == graph.RNNLSTM {
			if p, err = c.constIn(7, "P"); err != nil {
				return err
			}
			if p != nil && (p.DType != graph.Float32 || !slices.Equal(p.Shape, []int{nd, 3 * hidden})) {
				return fmt.Errorf("P of shape %v: want [%d, %d]", p.Shape, nd, 3*hidden)
			}
			if c.int("input_forget", 0) != 0 {
				return unsupportedf("LSTM with input_forget = 1 (coupled input and forget gates) is not supported")
			}
		}
		state := func(i int, what string) (*value, error) {
			v := c.in(i)
			if v == nil {
				return nil, nil
			}
			want := []int{nd, batch, hidden}
			if layout == 1 {
				want = []int{batch, nd, hidden}
			}
			if !slices.Equal(v.shape, want) || v.dt != graph.Float32 {
				return nil, fmt.Errorf("%s of shape %v: want %v", what, v.shape, want)
			}
			return v, nil
		}
		h0, err := state(5, "initial_h")
		if err != nil {
			return err
		}
		var c0 *value
		if kind == graph.RNNLSTM {
			if c0, err = state(6, "initial_c"); err != nil {
				return err
			}
		}
		names := kind.DefaultActs()
		if nd == 2 {
			names = append(names, names...)
		}
		if a := c.attr("activations"); a != nil {
			names = nil
			for _, s := range a.Strings {
				names = append(names, string(s))
			}
			if len(names) != kind.Acts()*nd {
				return fmt.Errorf("%d activations: want %d", len(names), kind.Acts()*nd)
			}
		}
		var alphas, betas []float32
		if a := c.attr("activation_alpha"); a != nil {
			alphas = a.Floats
		}
		if a := c.attr("activation_beta"); a != nil {
			betas = a.Floats
		}
		acts, err := graph.ParseRNNActs(names, alphas, betas)
		if err != nil {
			return unsupportedf("%s: %v", op, err)
		}
		clip := c.float("clip", 0)
		if c.attr("clip") != nil && !(clip > 0) {
			return fmt.Errorf("clip %v: want a positive threshold", clip)
		}
		lbr := kind == graph.RNNGRU && c.int("linear_before_reset", 0) != 0

		base := c.n.Name
		for i := 0; base == "" && i < len(c.n.Output); i++ {
			base = c.out(i)
		}
		if base == "" {
			base = op
		}
		f := graph.Float32
		emit := func(o graph.Op, ins []string, attrs any, shape []int, suffix string) string {
			t := im.newTensor(base+"_"+suffix, f, shape)
			im.emit(o, ins, attrs, t)
			return t.Name
		}
		konst := func(d *graph.Data, what string) string {
			return im.g.AddConst(im.g.UniqueName(base+"_"+what), d).Name
		}

		// The step inputs, [batch, input] each, shared by the directions.
		xin := im.get(x, asIs)
		xs := make([]string, steps)
		for t := range xs {
			if steps == 1 {
				xs[t] = emit(graph.Reshape, []string{xin}, nil, []int{batch, in}, "x0")
				continue
			}
			begin, end := []int{t, 0, 0}, []int{t + 1, batch, in}
			if layout == 1 {
				begin, end = []int{0, t, 0}, []int{batch, t + 1, in}
			}
			sl := emit(graph.Slice, []string{xin}, &graph.SliceAttrs{Begin: begin, End: end, Stride: []int{1, 1, 1}}, []int{end[0] - begin[0], end[1] - begin[1], in}, fmt.Sprintf("x%d_slice", t))
			xs[t] = emit(graph.Reshape, []string{sl}, nil, []int{batch, in}, fmt.Sprintf("x%d", t))
		}
		// A direction's slice of an initial state, as [batch, hidden].
		stateOf := func(v *value, d int, what string) string {
			if v == nil {
				return ""
			}
			src := im.get(v, asIs)
			if nd > 1 {
				begin, end := []int{d, 0, 0}, []int{d + 1, batch, hidden}
				if layout == 1 {
					begin, end = []int{0, d, 0}, []int{batch, d + 1, hidden}
				}
				src = emit(graph.Slice, []string{src}, &graph.SliceAttrs{Begin: begin, End: end, Stride: []int{1, 1, 1}}, []int{end[0] - begin[0], end[1] - begin[1], hidden}, fmt.Sprintf("%s%d_slice", what, d))
			}
			return emit(graph.Reshape, []string{src}, nil, []int{batch, hidden}, fmt.Sprintf("%s%d", what, d))
		}

		// Node names need not be unique: a counter keeps two layers' groups
		// (and constants) apart.
		im.recurrent++
		ys := make([][]string, nd) // [direction][time]
		hs := make([]string, nd)
		cs := make([]string, nd)
		for d := 0; d < nd; d++ {
			l := &graph.RNNLayer{Kind: kind, Batch: batch, Hidden: hidden, Acts: acts[d*kind.Acts() : (d+1)*kind.Acts()], Clip: clip, LinearBeforeReset: lbr}
			for k := 0; k < gates; k++ {
				og := onnxGate(kind, k)
				l.W = append(l.W, konst(graph.RowsData(w, d, og*hidden, (og+1)*hidden), fmt.Sprintf("d%d_W%d", d, k)))
				l.R = append(l.R, konst(graph.RowsData(r, d, og*hidden, (og+1)*hidden), fmt.Sprintf("d%d_R%d", d, k)))
				bias := ""
				if b != nil {
					rb := (gates + og) * hidden
					if lbr && k == 2 {
						l.RBh = konst(graph.SpanData(b, d, rb, rb+hidden, -1), fmt.Sprintf("d%d_RBh", d))
						rb = -1
					}
					bias = konst(graph.SpanData(b, d, og*hidden, (og+1)*hidden, rb), fmt.Sprintf("d%d_B%d", d, k))
				}
				l.B = append(l.B, bias)
			}
			if p != nil {
				for k, op := range []int{0, 2, 1} { // i, f, o from ONNX's i, o, f
					l.P[k] = konst(graph.SpanData(p, d, op*hidden, (op+1)*hidden, -1), fmt.Sprintf("d%d_P%d", d, k))
				}
			}
			order := make([]int, steps)
			for t := range order {
				order[t] = t
			}
			if dir == "reverse" || d == 1 {
				slices.Reverse(order)
			}
			in := make([]string, steps)
			for i, t := range order {
				in[i] = xs[t]
			}
			y, h, cc := l.Run(im.g, emit, fmt.Sprintf("%s_d%d#%d", base, d, im.recurrent), in, stateOf(h0, d, "h"), stateOf(c0, d, "c"), lens, order)
			ys[d] = make([]string, steps)
			for i, t := range order {
				ys[d][t] = y[i]
			}
			hs[d], cs[d] = h, cc
		}

		// Y: [seq, dirs, batch, hidden], or [batch, seq, dirs, hidden].
		if c.out(0) != "" {
			var parts []string
			for t := 0; t < steps; t++ {
				for d := 0; d < nd; d++ {
					parts = append(parts, ys[d][t])
				}
			}
			shape := []int{steps, nd, batch, hidden}
			if layout == 1 {
				shape = []int{batch, steps, nd, hidden}
			}
			c.gather(0, parts, layout == 1, shape, emit)
		}
		final := func(i int, vs []string) {
			if c.out(i) == "" {
				return
			}
			shape := []int{nd, batch, hidden}
			if layout == 1 {
				shape = []int{batch, nd, hidden}
			}
			for d, v := range vs {
				if v == "" {
					// No step ran: the state is its initial value (zeros).
					vs[d] = konst(graph.NewData(graph.Float32, []int{batch, hidden}), fmt.Sprintf("zero%d", d))
				}
			}
			c.gather(i, vs, layout == 1, shape, emit)
		}
		final(1, hs)
		if kind == graph.RNNLSTM {
			final(2, cs)
		}
		return nil
	}
}

// gather writes [batch, hidden] parts, in order, as output i of the given
// shape: stacked along a new leading axis (batch-second layout) or along
// a new axis after the batch (batch-first).
func (c *nodeCtx) gather(i int, parts []string, batchFirst bool, shape []int, emit graph.Emitter) {
	batch, hidden := shape[len(shape)-2], shape[len(shape)-1]
	if batchFirst {
		batch = shape[0]
	}
	if len(parts) == 1 {
		c.emitOut(i, graph.Reshape, parts, nil, graph.Float32, shape, asIs)
		return
	}
	axis, one := 0, []int{1, batch, hidden}
	if batchFirst {
		axis, one = 1, []int{batch, 1, hidden}
	}
	ins := make([]string, len(parts))
	for j, p := range parts {
		ins[j] = emit(graph.Reshape, []string{p}, nil, one, fmt.Sprintf("out%d_%d", i, j))
	}
	cat := slices.Clone(one)
	cat[axis] = len(parts)
	all := emit(graph.Concat, ins, &graph.ConcatAttrs{Axis: axis}, cat, fmt.Sprintf("out%d", i))
	c.emitOut(i, graph.Reshape, []string{all}, nil, graph.Float32, shape, asIs)
}
