package quant

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// CorrectBias removes the mean quantization error of every Conv2D and
// FullyConnected of the int8 graph q, channel by channel, layer by layer
// (empirical bias correction): it runs the float graph f and q on samples,
// and for each layer, with the layers before it already corrected, moves the
// int32 bias by the mean difference between the dequantized int8 output and
// the float one, over the elements that are not clipped (by a fused
// activation or by the output's int8 range: a clipping error is no bias,
// and moving the bias for it would shift every unclipped value). q is
// changed in place; it must come from Quantize(f, ...) so that tensor names
// match.
func CorrectBias(f, q *graph.Graph, samples []map[string]*graph.Data) error {
	if len(samples) == 0 {
		return fmt.Errorf("quant: bias correction: no samples")
	}
	fvals := make([]map[string]*graph.Data, len(samples))
	qvals := make([]map[string]*graph.Data, len(samples))
	// Without states, the float graph runs a node at a time over every
	// sample, as far as the layer being corrected needs, and keeps only
	// what a later node reads: every activation of every sample at once
	// took VWW 6 MB a sample (review finding: 1.46 GB for 256 samples).
	var fc *floatCursor
	if len(f.States) == 0 {
		fc = newFloatCursor(f, q, samples)
		fvals = fc.vals
	}
	// The samples are a sequence: a state's value at each sample is the
	// float graph's, carried from the previous ones (and quantized for the
	// int8 graph: its own would depend on the corrections being made).
	fsess := interp.NewSession(f)
	for i, s := range samples {
		v := s
		if fc == nil {
			var err error
			if v, err = fsess.RunAll(s); err != nil {
				return fmt.Errorf("quant: bias correction: float graph, sample %d: %w", i, err)
			}
			fvals[i] = v
		}
		qvals[i] = map[string]*graph.Data{}
		for j, name := range q.Inputs {
			d := s[name]
			if q.StateOf(name) >= 0 {
				d = v[name]
			}
			if d == nil {
				d = s[f.Inputs[j]]
			}
			t := q.Tensors[name]
			if t.DType.IsInt() && t.Quant != nil && d.DType == graph.Float32 {
				sc, z := t.Quant.At(0)
				d = QuantizeInput(d, sc, z)
				d.DType = t.DType
			}
			qvals[i][name] = d
		}
	}
	// The nodes of one parameter group (the steps of an unrolled recurrent
	// layer) keep one bias, so that their kernels stay one kernel: the
	// first node's correction is every one's.
	groupDelta := map[string][]float64{} // per channel, in real units
	// The last node of q that reads each tensor: the int8 values go after it.
	lastRead := map[string]int{}
	for k, n := range q.Nodes {
		for _, in := range n.Inputs {
			lastRead[in] = k
		}
	}
	for _, o := range q.Outputs {
		lastRead[o] = len(q.Nodes) // an output's values are not dropped
	}
	for k, n := range q.Nodes {
		if err := correctNode(f, q, n, samples, fvals, qvals, fc, groupDelta); err != nil {
			return err
		}
		// The int8 values no later node reads.
		for _, name := range append(append([]string{}, n.Inputs...), n.Outputs...) {
			if r, ok := lastRead[name]; !ok || r <= k {
				for i := range qvals {
					delete(qvals[i], name)
				}
			}
		}
	}
	return nil
}

// correctNode runs q's node n over the samples (its inputs in qvals, its
// outputs added there) and, for a Conv2D or FullyConnected, moves its bias
// by the mean error against the float outputs (fvals, from the cursor fc
// where there is one) and runs it again.
func correctNode(f, q *graph.Graph, n *graph.Node, samples []map[string]*graph.Data, fvals, qvals []map[string]*graph.Data, fc *floatCursor, groupDelta map[string][]float64) error {
	sub := singleNode(q, n)
	run := func() error {
		for i := range samples {
			in := map[string]*graph.Data{}
			for _, name := range sub.Inputs {
				in[name] = qvals[i][name]
			}
			out, err := interp.Run(sub, in)
			if err != nil {
				return fmt.Errorf("quant: bias correction: node %q (%s), sample %d: %w", n.Name, n.Op, i, err)
			}
			for k, v := range out {
				qvals[i][k] = v
			}
		}
		return nil
	}
	if err := run(); err != nil {
		return err
	}
	if !correctable(f, q, n) {
		return nil
	}
	bt, yt := q.In(n, 2), q.Out(n, 0)
	if fc != nil {
		if err := fc.upTo(yt.Name); err != nil {
			return err
		}
		defer fc.done(yt.Name)
	}
	a, _ := actOf(n)
	lo, hi, _ := a.Bounds()
	if a == graph.ActNone {
		lo, hi = math.Inf(-1), math.Inf(1)
	}
	group := ""
	if ft := f.Tensors[yt.Name]; ft != nil {
		group = ft.QuantGroup
	}
	if d, ok := groupDelta[group]; ok && group != "" && len(d) == bt.Data.Len() {
		// In this node's bias units: its input may have another scale
		// than the first node's (a GRU's first steps read the initial
		// state, then the steps' outputs).
		changed := false
		for ch, v := range d {
			s, _ := bt.Quant.At(ch)
			if di := math.Round(v / float64(s)); di != 0 {
				bt.Data.I[ch] = clampBias(float64(bt.Data.I[ch]) - di)
				changed = true
			}
		}
		if changed {
			if err := run(); err != nil {
				return err
			}
		}
		return nil
	}
	ys, yz := yt.Quant.At(0)
	lo = math.Max(lo, float64(ys)*float64(-128-yz))
	hi = math.Min(hi, float64(ys)*float64(127-yz))
	c := bt.Data.Len()
	sum := make([]float64, c)
	cnt := make([]float64, c)
	for i := range samples {
		fx := fvals[i][yt.Name]
		qy := floatOf(qvals[i][yt.Name], yt.Quant)
		if fx == nil || qy == nil || fx.Len() != len(qy) {
			continue
		}
		for j, v := range fx.F {
			x := float64(v)
			if x <= lo || x >= hi {
				continue
			}
			sum[j%c] += qy[j] - x
			cnt[j%c]++
		}
	}
	changed := false
	delta := make([]float64, c)
	for ch := 0; ch < c; ch++ {
		if cnt[ch] == 0 {
			continue
		}
		s, _ := bt.Quant.At(ch)
		d := math.Round(sum[ch] / cnt[ch] / float64(s))
		if d == 0 {
			continue
		}
		delta[ch] = d * float64(s)
		bt.Data.I[ch] = clampBias(float64(bt.Data.I[ch]) - d)
		changed = true
	}
	if group != "" {
		groupDelta[group] = delta
	}
	if changed {
		if err := run(); err != nil {
			return err
		}
	}
	return nil
}

// floatCursor runs a float graph without states a node at a time over
// every sample, as far as asked (upTo), keeping in vals only the values
// that a float node still to run reads or that bias correction has still
// to compare (the outputs of q's Conv2D and FullyConnected nodes).
type floatCursor struct {
	f    *graph.Graph
	next int                      // the next node of f to run
	vals []map[string]*graph.Data // per sample
	// reads counts the reads of each tensor by f's nodes not yet run;
	// wanted holds the tensors bias correction compares and has not.
	reads  map[string]int
	wanted map[string]bool
}

func newFloatCursor(f, q *graph.Graph, samples []map[string]*graph.Data) *floatCursor {
	c := &floatCursor{f: f, vals: make([]map[string]*graph.Data, len(samples)), reads: map[string]int{}, wanted: map[string]bool{}}
	for i, s := range samples {
		c.vals[i] = map[string]*graph.Data{}
		for k, v := range s {
			c.vals[i][k] = v
		}
	}
	for _, n := range f.Nodes {
		for _, in := range n.Inputs {
			c.reads[in]++
		}
	}
	for _, n := range q.Nodes {
		if correctable(f, q, n) {
			c.wanted[n.Outputs[0]] = true
		}
	}
	return c
}

// correctable reports whether bias correction compares n's output: a
// Conv2D or FullyConnected of q with an int32 bias and an int8 output that
// the float graph f computes too.
func correctable(f, q *graph.Graph, n *graph.Node) bool {
	if n.Op != graph.Conv2D && n.Op != graph.FullyConnected {
		return false
	}
	bt, yt := q.In(n, 2), q.Out(n, 0)
	return bt != nil && bt.IsConst() && bt.DType == graph.Int32 && bt.Quant != nil && yt.Quant != nil && f.Tensors[yt.Name] != nil
}

// upTo runs f's nodes until every sample holds name (or f has none left).
func (c *floatCursor) upTo(name string) error {
	for c.next < len(c.f.Nodes) && (len(c.vals) == 0 || c.vals[0][name] == nil) {
		n := c.f.Nodes[c.next]
		c.next++
		sub := singleNode(c.f, n)
		for i := range c.vals {
			in := map[string]*graph.Data{}
			for _, x := range sub.Inputs {
				in[x] = c.vals[i][x]
			}
			out, err := interp.Run(sub, in)
			if err != nil {
				return fmt.Errorf("quant: bias correction: float graph, node %q (%s), sample %d: %w", n.Name, n.Op, i, err)
			}
			for k, v := range out {
				c.vals[i][k] = v
			}
		}
		for _, x := range n.Inputs {
			c.reads[x]--
			c.drop(x)
		}
		for _, o := range n.Outputs {
			c.drop(o) // read by nothing and compared by nothing
		}
	}
	return nil
}

// done says bias correction has compared name.
func (c *floatCursor) done(name string) {
	delete(c.wanted, name)
	c.drop(name)
}

// drop removes name's values when nothing reads or wants them any more.
func (c *floatCursor) drop(name string) {
	if c.reads[name] > 0 || c.wanted[name] {
		return
	}
	for i := range c.vals {
		delete(c.vals[i], name)
	}
}

// clampBias keeps a corrected bias within ±2^30, AdjustForBias's headroom
// for the accumulation: clamped to int32's range, a correction divided by
// a tiny bias scale saturated the bias, and the compiler refused the
// quantizer's own layer (review finding: a channel of weights 1e-6 beside
// one of 1e3).
func clampBias(v float64) int64 {
	return int64(math.Max(-biasLimit, math.Min(biasLimit, v)))
}

// singleNode is a graph holding n alone, its activation inputs as graph inputs.
func singleNode(g *graph.Graph, n *graph.Node) *graph.Graph {
	s := graph.New(n.Name, g.Format)
	for _, in := range n.Inputs {
		if in == "" {
			continue
		}
		t := g.Tensors[in]
		s.Tensors[in] = t
		if !t.IsConst() && !contains(s.Inputs, in) {
			s.Inputs = append(s.Inputs, in)
		}
	}
	for _, o := range n.Outputs {
		s.Tensors[o] = g.Tensors[o]
		s.Outputs = append(s.Outputs, o)
	}
	s.Nodes = []*graph.Node{n}
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
