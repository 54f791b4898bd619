package quant

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// DefaultMethod is the range method chosen by measurement on the MLPerf Tiny
// float models (docs/QUANTIZATION.md has the numbers).
const DefaultMethod = Percentile

// Options steer Quantize.
type Options struct {
	// Method chooses activation ranges (default DefaultMethod). Graph
	// inputs always use their observed min/max.
	Method Method
	// Percentile is the percentile kept by the Percentile method (default 99.99).
	Percentile float64
	// PerTensor quantizes weights with one scale per tensor instead of one per
	// output channel (for comparison; per channel is TFLite's default).
	PerTensor bool
	// FloatIO keeps float32 graph inputs and outputs: a Quantize node follows
	// every input and a Dequantize node precedes every output. By default
	// inputs and outputs are int8, as in the MLPerf Tiny int8 models.
	FloatIO bool
	// NoBiasCorrection turns off PTQ's empirical bias correction (see
	// CorrectBias). Quantize itself never corrects biases.
	NoBiasCorrection bool
	// NoSoftmaxHeadroom turns off the softmax-aware range rule (see
	// SoftmaxHeadroom): Softmax inputs then get the method's range as is.
	NoSoftmaxHeadroom bool
	// Float names nodes of the float graph that stay in float32 (FloatNodes
	// resolves the user's patterns): their inputs are dequantized and their
	// outputs quantized again for int8 readers, and an activation is not
	// fused into or out of them. Mixed precision for a layer the report
	// shows int8 cannot hold.
	Float map[string]bool
}

// nodePattern returns the matcher of a --float pattern: a name cut as the
// quantize table cuts long ones ("functional_1/dense/Re...") matches the
// names it starts; otherwise * matches any run of characters, '/' too
// (TFLite's names are paths: "functional_1/activation_5/*" is meant to
// reach past the next '/'), and ? any one.
func nodePattern(p string) func(string) bool {
	if prefix, ok := strings.CutSuffix(p, "..."); ok && prefix != "" {
		return func(name string) bool { return strings.HasPrefix(name, prefix) }
	}
	if !strings.ContainsAny(p, "*?") {
		return func(name string) bool { return name == p }
	}
	var re strings.Builder
	re.WriteString("^")
	for _, r := range p {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	rx := regexp.MustCompile(re.String())
	return rx.MatchString
}

// FloatNodes resolves patterns (node names, globs such as "decoder/*",
// a name cut with "..." as the quantize table shows it, or a report row
// "conv1+relu1", which names both) to the names of g's nodes they match. A pattern that matches no node is
// an error that lists some of the names there are.
func FloatNodes(g *graph.Graph, patterns []string) (map[string]bool, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	out := map[string]bool{}
	for _, p := range patterns {
		parts := []string{p}
		if !slices.ContainsFunc(g.Nodes, func(n *graph.Node) bool { return n.Name == p }) && strings.Contains(p, "+") {
			parts = strings.Split(p, "+")
		}
		for _, part := range parts {
			match := nodePattern(part)
			found := false
			for _, n := range g.Nodes {
				// A pattern reaches no layout move (a Reshape, the
				// importer's NHWC Transposes: "Conv_*" took
				// "Conv_1/image_nhwc"); its exact name does.
				move := n.Op == graph.Reshape || n.Op == graph.Transpose
				if n.Name == part || !move && match(n.Name) {
					out[n.Name], found = true, true
				}
			}
			if !found {
				var names []string
				for _, n := range g.Nodes {
					if n.Op != graph.Reshape && n.Op != graph.Transpose {
						names = append(names, n.Name)
					}
				}
				more := ""
				if len(names) > 8 {
					names, more = names[:8], fmt.Sprintf(" and %d more", len(names)-8)
				}
				return nil, fmt.Errorf("%q matches no node of the model (its nodes, as the quantize report names them: %s%s)", part, strings.Join(names, ", "), more)
			}
		}
	}
	return out, nil
}

// SoftmaxHeadroom is the logit headroom the softmax-aware range rule adds
// above the calibrated maximum of a Softmax input (divided by the Softmax's
// beta): ln 256, the logit difference that spans the int8 softmax output's
// whole dynamic range (scale 1/256: a probability ratio of 256 separates
// the largest output from one LSB). With it, an input more confident than
// any calibration sample can raise its top logit far enough above every
// logit the calibration set produced to reach the output's saturated
// value instead of tying with them at the clipping point.
const SoftmaxHeadroom = 8 * math.Ln2

func (o Options) method() Method {
	if o.Method == "" {
		return DefaultMethod
	}
	return o.Method
}

func (o Options) percentile() float64 {
	if o.Percentile == 0 {
		return DefaultPercentile
	}
	return o.Percentile
}

// Fixed output parameters of ops whose int8 output range TFLite prescribes.
var fixedParams = map[graph.Op][2]float64{
	graph.Softmax: {1.0 / 256, -128},
	graph.Sigmoid: {1.0 / 256, -128},
	graph.Tanh:    {1.0 / 128, 0},
}

// passThrough ops keep their input's parameters on their output (TFLite
// requires equal input and output parameters for them).
var passThrough = map[graph.Op]bool{
	graph.MaxPool2D: true, graph.AvgPool2D: true, graph.Reshape: true,
	graph.Transpose: true, graph.Pad: true, graph.Slice: true,
	graph.Concat: true, graph.Resize: true, graph.Gather: true,
}

// isPassThrough reports whether n keeps its input's parameters: the
// passThrough ops, and the max and min reductions (their int8 kernels pick a
// stored value, as TFLite's, which requires equal parameters).
func isPassThrough(n *graph.Node) bool {
	if n.Op == graph.Reduce {
		return picksStored(n)
	}
	return passThrough[n.Op]
}

// picksStored reports a max or min reduction: its int8 kernel picks a
// stored value (the other reductions have no int8 kernel).
func picksStored(n *graph.Node) bool {
	a, ok := n.Attrs.(*graph.ReduceAttrs)
	return ok && a != nil && (a.Kind == graph.ReduceMax || a.Kind == graph.ReduceMin)
}

type params struct {
	s float32
	z int32
}

func (p params) quant() *graph.Quant {
	return &graph.Quant{Scale: []float32{p.s}, ZeroPoint: []int32{p.z}}
}

// Quantize rewrites the float graph g into TFLite's int8 scheme using the
// calibration statistics st: int8 activations (asymmetric, per tensor),
// int8 symmetric per-output-channel weights in [-127, 127], int32 biases
// with scale s_in*s_w[c]. Relu, Relu6 and Relu_n1_to_1 that follow a
// Conv2D, FullyConnected, Add, Sub or Mul are fused into it first. Ops with
// no int8 reference kernel run in float between a Dequantize and a Quantize.
// The range of a Softmax input gets SoftmaxHeadroom/beta above its
// calibrated maximum unless opt.NoSoftmaxHeadroom.
// g itself is not changed; the new graph keeps g's tensor names.
func Quantize(g *graph.Graph, st *Stats, opt Options) (*graph.Graph, error) {
	if err := graph.Validate(g); err != nil {
		return nil, fmt.Errorf("quant: %w", err)
	}
	for _, n := range g.Nodes {
		if n.Op == graph.Quantize || n.Op == graph.Dequantize {
			return nil, fmt.Errorf("quant: node %q (%s): graph is already quantized; fold it with FoldQDQ", n.Name, n.Op)
		}
	}
	for _, in := range g.Inputs {
		// Float inputs become int8; integer ones (token ids, indices) stay.
		t := g.Tensors[in]
		if t == nil {
			return nil, fmt.Errorf("quant: input %q has no tensor", in)
		}
		if t.DType != graph.Float32 && (t.Quant != nil || !t.DType.IsInt() && t.DType != graph.Bool) {
			return nil, fmt.Errorf("quant: input %q is %v; only float models (integer indices allowed) are quantized", in, t.DType)
		}
	}
	if opt.Method != "" {
		if _, err := ParseMethod(string(opt.Method)); err != nil {
			return nil, err
		}
	}
	if st == nil {
		return nil, fmt.Errorf("quant: no calibration statistics")
	}
	f := cloneGraph(g)
	fuseActivations(f, opt.Float)

	prod := f.Producers()
	isInput := map[string]bool{}
	for _, in := range f.Inputs {
		isInput[in] = true
	}
	// Ranges of every float activation.
	rng := map[string][2]float64{}
	for name, t := range f.Tensors {
		if t.IsConst() || t.DType != graph.Float32 {
			continue
		}
		ts := st.Tensors[name]
		if ts == nil {
			return nil, fmt.Errorf("quant: tensor %q has no calibration statistics (was the graph changed after Calibrate?)", name)
		}
		m := opt.method()
		if isInput[name] {
			m = MinMax
		}
		lo, hi, err := ts.Range(m, opt.percentile())
		if err != nil {
			return nil, err
		}
		if p := prod[name]; p != nil {
			if a, ok := actOf(p); ok {
				if alo, ahi, ok := a.Bounds(); ok {
					lo, hi = math.Max(lo, alo), math.Min(hi, ahi)
				}
			}
		}
		if hi < lo {
			lo, hi = 0, 0
		}
		rng[name] = [2]float64{lo, hi}
	}
	// A constant Pad's output takes its input's range: the pad value (a
	// max pool's -inf or -1000) saturates at the int8 ends, where a max
	// pool still picks the window's real values (review finding: -1000
	// gave the input a scale of 3.9).
	// So does a Transpose or Reshape of it (an NCHW Pad before the
	// importer's layout Transpose).
	// Only where the pad value's own level matters little: an infinity,
	// which no int8 range holds (it saturates, as a max pool's -inf
	// padding wants), or a value read by max pools alone (review finding:
	// a Pad of -7 was clipped to its input's range, 5 dB before an average
	// pool, 0.2 dB before a Conv).
	padded := map[string]bool{}
	cons := f.Consumers()
	for _, n := range f.Nodes {
		a, ok := n.Attrs.(*graph.PadAttrs)
		pad := n.Op == graph.Pad && ok && a != nil && (a.Mode == "constant" || a.Mode == "") &&
			(math.IsInf(a.Value, 0) || len(n.Outputs) > 0 && onlyMaxPools(f, cons, n.Outputs[0]))
		move := (n.Op == graph.Transpose || n.Op == graph.Reshape) && len(n.Inputs) > 0 && padded[n.Inputs[0]]
		if !pad && !move || opt.Float[n.Name] || len(n.Inputs) == 0 {
			continue
		}
		if r, ok := rng[n.Inputs[0]]; ok {
			if _, ok := rng[n.Outputs[0]]; ok {
				rng[n.Outputs[0]] = r
				padded[n.Outputs[0]] = true
			}
		}
	}
	// Groups of tensors that must share parameters.
	detached := concatOutputs(f, rng)
	uf, groupRange := shareParams(f, rng, detached, opt.Float)
	if more := concatDetach(f, rng, uf, groupRange, detached, opt.Float); len(more) > 0 {
		for name := range more {
			detached[name] = true
		}
		uf, groupRange = shareParams(f, rng, detached, opt.Float)
	}
	groupFixed := map[string]params{}
	conflict := map[string]bool{}
	for name := range rng {
		root := uf.find(name)
		if p := prod[name]; p != nil {
			if fp, ok := fixedParams[p.Op]; ok && !floatOnly(f, p) && !opt.Float[p.Name] {
				want := params{float32(fp[0]), int32(fp[1])}
				if have, ok := groupFixed[root]; ok && have != want {
					conflict[root] = true // a sigmoid and a tanh output in one group
				}
				groupFixed[root] = want
			}
		}
	}
	// A group holding outputs of different fixed parameters (a
	// bidirectional layer with a different activation per direction,
	// concatenated) takes its range instead, whatever the map order.
	for root := range conflict {
		delete(groupFixed, root)
	}
	if !opt.NoSoftmaxHeadroom {
		softmaxFloor(f, st, uf, rng, groupRange, groupFixed)
		softmaxHeadroom(f, uf, groupRange, groupFixed)
	}
	act := map[string]params{}
	tail := detectionTail(f)
	for name := range spectrumTail(f) {
		tail[name] = true
	}
	for name := range rng {
		if tail[name] {
			continue // float32 as TFLite's detection outputs always are
		}
		root := uf.find(name)
		if p, ok := groupFixed[root]; ok {
			act[name] = p
			continue
		}
		r := groupRange[root]
		s, z := ChooseParams(r[0], r[1])
		act[name] = params{s, z}
	}
	b := &builder{f: f, q: graph.New(f.Name, f.Format), act: act, opt: opt, dq: map[string]string{}, tail: tail, detached: detached}
	return b.build()
}

// shareParams groups the tensors that must share parameters (a
// pass-through op's input and output, a Concat's inputs but the detached
// ones, a state's two values, a graph.Tensor.QuantGroup) and gives each
// group's range. A node kept in float (--float) ties nothing: its inputs
// are dequantized and its outputs quantized on their own.
func shareParams(f *graph.Graph, rng map[string][2]float64, detached, float map[string]bool) (*unionFind, map[string][2]float64) {
	uf := newUnionFind()
	for _, n := range f.Nodes {
		if !isPassThrough(n) || float[n.Name] {
			continue
		}
		out := n.Outputs[0]
		ins := n.Inputs[:1]
		if n.Op == graph.Concat {
			ins = n.Inputs
		}
		for _, in := range ins {
			if _, ok := rng[in]; ok && !(n.Op == graph.Concat && detached[in]) {
				uf.union(in, out)
			}
		}
	}
	// A state's value at the start and its next value are stored alike.
	for _, s := range f.States {
		if _, ok := rng[s.In]; ok {
			if _, ok := rng[s.Out]; ok {
				uf.union(s.In, s.Out)
			}
		}
	}
	// Tensors the graph groups (the steps of an unrolled recurrent layer).
	for name := range rng {
		if q := f.Tensors[name].QuantGroup; q != "" {
			uf.union("\x00group/"+q, name)
		}
	}
	groupRange := map[string][2]float64{}
	for name, r := range rng {
		root := uf.find(name)
		if gr, ok := groupRange[root]; ok {
			r = [2]float64{math.Min(gr[0], r[0]), math.Max(gr[1], r[1])}
		}
		groupRange[root] = r
	}
	return uf, groupRange
}

// concatDetach are the Concat inputs that keep parameters of their own,
// each read by the Concat requantized (as concatOutputs' graph outputs),
// where sharing the Concat's would cost another reader or the input
// itself:
//   - an input another node reads too, whose range is at most half the
//     group's (a skip connection: review finding, a [0, 2] tensor stored
//     at the scale of a 30x wider Concat, and the convolution that also read
//     it came out 14 steps off);
//   - a Sigmoid, Tanh or Softmax output, whose fixed parameters would
//     otherwise clamp every other input of the Concat (review finding: a
//     detection head's box regressions beside its sigmoid scores, clamped
//     to [0, 1)), unless the whole group fits them.
func concatDetach(f *graph.Graph, rng map[string][2]float64, uf *unionFind, groupRange map[string][2]float64, detached, float map[string]bool) map[string]bool {
	prod, cons := f.Producers(), f.Consumers()
	states := map[string]bool{}
	for _, st := range f.States {
		states[st.In], states[st.Out] = true, true
	}
	span := func(r [2]float64) float64 { return math.Max(r[1], 0) - math.Min(r[0], 0) }
	more := map[string]bool{}
	for _, n := range f.Nodes {
		if n.Op != graph.Concat || float[n.Name] || len(n.Inputs) < 2 {
			continue
		}
		for _, in := range n.Inputs {
			r, ok := rng[in]
			if !ok || detached[in] || more[in] || states[in] || f.Tensors[in].QuantGroup != "" {
				continue
			}
			gr := groupRange[uf.find(in)]
			// Through the ops that pass parameters on (a Reshape, a
			// MaxPool) to the tensor they carry: a Sigmoid reshaped into a
			// detection head's Concat, or a skip connection reshaped, was
			// not seen, and the branch was clamped to the group's range
			// (quantizer review: 0.2 dB where 40.5 dB without the Reshape).
			t, next, other := in, n, false
			for {
				for _, c := range cons[t] {
					other = other || c != next
				}
				p := prod[t]
				if p == nil || p.Op == graph.Concat || !isPassThrough(p) || float[p.Name] || len(p.Inputs) == 0 || states[p.Inputs[0]] {
					break
				}
				if _, ok := rng[p.Inputs[0]]; !ok {
					break
				}
				t, next = p.Inputs[0], p
			}
			if p := prod[t]; p != nil && !floatOnly(f, p) && !float[p.Name] {
				if fp, ok := fixedParams[p.Op]; ok {
					s := fp[0]
					lo, hi := (-128-fp[1])*s, (127-fp[1])*s
					if gr[0] < lo-2*s || gr[1] > hi+2*s {
						more[in] = true
					}
					continue
				}
			}
			if other && 2*span(r) <= span(gr) {
				more[in] = true
			}
		}
	}
	return more
}

// concatOutputs are the graph outputs that a Concat also reads and that
// keep parameters of their own: a Concat's inputs share its output's
// parameters (TFLite's int8 CONCATENATION), and an output of a small range
// beside a large one took the large one's scale and came out all zeros
// (review finding: ±0.009 on a scale of 0.78). Such an output keeps its own
// range, and each Concat reads it requantized to the Concat's parameters
// (builder.node). Only outputs whose producer is not a pass-through op and
// whose only pass-through readers are Concats: another pass-through reader
// or producer needs the output's parameters equal to its own.
func concatOutputs(f *graph.Graph, rng map[string][2]float64) map[string]bool {
	prod, cons := f.Producers(), f.Consumers()
	states := map[string]bool{}
	for _, st := range f.States {
		states[st.In], states[st.Out] = true, true
	}
	out := map[string]bool{}
	for _, o := range f.Outputs {
		t := f.Tensors[o]
		if _, ok := rng[o]; !ok || t == nil || t.QuantGroup != "" || states[o] {
			continue
		}
		if p := prod[o]; p == nil || isPassThrough(p) {
			continue
		}
		concat, other := false, false
		for _, c := range cons[o] {
			switch {
			case c.Op == graph.Concat:
				concat = true
			case isPassThrough(c):
				other = true
			}
		}
		if concat && !other {
			out[o] = true
		}
	}
	return out
}

// softmaxHeadroom widens the upper end of the range of every Softmax
// input (its whole parameter-sharing group) by SoftmaxHeadroom/beta. Only
// the upper end: clipping a logit up to the lower end changes the output
// only if the lower end is within about ln 512 of the sample's largest
// logit, while clipping at the upper end ties the most confident classes.
// SoftmaxDepth is how far below a row's largest logit (divided by the
// Softmax's beta) the softmax-aware range rule keeps a Softmax input's
// range: e^-16 is about 1.1e-7 of the row's largest term, far below one
// step of the int8 output (1/256), so a logit below that may saturate at
// the range's low end without moving any output.
const SoftmaxDepth = 16

// softmaxFloor raises or lowers the low end of a Softmax input's range to
// SoftmaxDepth (over beta) below the smallest row maximum calibration saw:
// raised where an attention mask's -1e4 (or any far outlier) set it, which
// left the real logits a few steps of a scale of about 40 (a review
// finding: a transformer's int8 SQNR 3.6 dB, 24.4 with a mask of -30);
// lowered where a -inf mask was seen, which saturates at the low end and
// must land where its term vanishes.
func softmaxFloor(f *graph.Graph, st *Stats, uf *unionFind, rng map[string][2]float64, groupRange map[string][2]float64, groupFixed map[string]params) {
	negInf := map[string]bool{} // group roots holding a -inf somewhere
	for name := range rng {
		if ts := st.Tensors[name]; ts != nil && ts.NegInf {
			negInf[uf.find(name)] = true
		}
	}
	done := map[string]bool{}
	for _, n := range f.Nodes {
		a, ok := n.Attrs.(*graph.SoftmaxAttrs)
		if n.Op != graph.Softmax || !ok || a.Mode != graph.SoftmaxPlain || len(n.Inputs) == 0 || floatOnly(f, n) {
			continue
		}
		ts := st.Tensors[n.Inputs[0]]
		root := uf.find(n.Inputs[0])
		r, ok := groupRange[root]
		if !ok || ts == nil || !ts.HasRowMax || done[root] {
			continue
		}
		if _, fixed := groupFixed[root]; fixed {
			continue
		}
		done[root] = true
		beta := 1.0
		if a.Beta > 0 {
			beta = float64(a.Beta)
		}
		if floor := ts.RowMax - SoftmaxDepth/beta; (r[0] < floor || negInf[root]) && floor < r[1] {
			r[0] = floor
			groupRange[root] = r
		}
	}
}

func softmaxHeadroom(f *graph.Graph, uf *unionFind, groupRange map[string][2]float64, groupFixed map[string]params) {
	done := map[string]bool{}
	for _, n := range f.Nodes {
		if n.Op != graph.Softmax || len(n.Inputs) == 0 || floatOnly(f, n) {
			continue
		}
		root := uf.find(n.Inputs[0])
		r, ok := groupRange[root]
		if !ok {
			continue
		}
		if _, fixed := groupFixed[root]; fixed || done[root] {
			continue
		}
		done[root] = true
		beta := 1.0
		if a, ok := n.Attrs.(*graph.SoftmaxAttrs); ok && a.Beta > 0 {
			beta = float64(a.Beta)
		}
		r[1] = math.Max(r[1], 0) + SoftmaxHeadroom/beta
		groupRange[root] = r
	}
}

// floatOnly reports the ops that stay in float although graph/interp has
// an integer kernel for them: LogSoftmax and Hardmax (Softmax modes); Mod
// CumSum and Div, whose integer kernels are plain arithmetic; Maximum and
// Minimum, whose integer kernels compare raw values (right only with every
// operand on the output's parameters, and a constant operand or a second
// activation has its own), and Scatter, which needs them too; TopK (its
// indices output is not a value to quantize); reductions other than max
// and min (no integer kernel); Compare and
// Where, which would need both operands on one scale; SignalOverlapAdd,
// whose integer kernel is TFLite Micro's int16 one (plain sums saturated
// to int16); a bilinear Resize
// whose coordinates or scale TFLite's integer kernel does not take.
func floatOnly(g *graph.Graph, n *graph.Node) bool {
	switch n.Op {
	case graph.Mod, graph.CumSum, graph.Compare, graph.Where, graph.Cast, graph.TopK, graph.Div, graph.DetectionPostProcess,
		graph.Maximum, graph.Minimum, graph.Scatter, graph.SignalOverlapAdd:
		return true
	case graph.Reduce:
		return !picksStored(n)
	case graph.Resize:
		a, ok := n.Attrs.(*graph.ResizeAttrs)
		if ok && a != nil && a.Mode == "cubic" {
			return true // no integer kernel
		}
		if !ok || a == nil || a.Mode != "bilinear" {
			return false
		}
		x, y := g.In(n, 0), g.Tensors[n.Outputs[0]]
		if !graph.IntResizeCoord(a.Coord) || x == nil || y == nil || len(x.Shape) != 4 || len(y.Shape) != 4 {
			return true
		}
		return a.Scale != [2]float32{} && (a.Scale[0] != float32(y.Shape[1])/float32(x.Shape[1]) || a.Scale[1] != float32(y.Shape[2])/float32(x.Shape[2]))
	}
	a, ok := n.Attrs.(*graph.SoftmaxAttrs)
	if n.Op != graph.Softmax || !ok || a == nil {
		return false
	}
	// The integer kernel is TFLite's: the plain softmax over the last axis
	// (an ONNX softmax over W of NCHW is over axis 2 of NHWC here).
	if x := g.In(n, 0); x != nil && len(x.Shape) > 0 {
		if r := len(x.Shape); a.Axis != -1 && a.Axis != r-1 {
			return true
		}
	}
	return a.Mode != graph.SoftmaxPlain
}

type builder struct {
	f, q *graph.Graph
	act  map[string]params
	opt  Options
	dq   map[string]string // int8 tensor -> its float Dequantize output (fallback)
	tail map[string]bool   // detectionTail: tensors that stay float
	// detached are concatOutputs: a Concat reads each requantized.
	detached map[string]bool
}

// detectionTail is the set of tensors that stay float32 after
// quantization: a DetectionPostProcess output and what Slice and Reshape
// cut from it (the importer's four outputs), as TFLite's are float32. A
// range calibrated over the whole packed output (work area, classes,
// count) would also collapse the boxes and scores to a coarse grid.
func detectionTail(g *graph.Graph) map[string]bool {
	tail := map[string]bool{}
	for _, n := range g.Nodes {
		from := n.Op == graph.DetectionPostProcess ||
			(n.Op == graph.Slice || n.Op == graph.Reshape) && len(n.Inputs) > 0 && tail[n.Inputs[0]]
		if from {
			for _, o := range n.Outputs {
				tail[o] = true
			}
		}
	}
	return tail
}

// spectrumTail is the set of tensors an audio front end keeps in float32:
// a DFT's output and what is computed from it, its sum of squares, one
// product (the mel filter bank) and element-wise arithmetic (an epsilon, a
// scale, a floor), up to the first Math node (a Log, a Sqrt) or anything
// else. Their range spans many decades, so int8 zeroes the quiet bins: a
// log-mel front end quantized that way came out at -6.8 dB SQNR
// (user-journey finding). What follows, log-mel energies a few units
// wide or the network itself, is quantized as usual; a second product is
// the network's, and stops the tail too (review finding: without a Log,
// a whole network after a DFT stayed float).
func spectrumTail(g *graph.Graph) map[string]bool {
	tail := map[string]bool{}
	product := map[string]bool{} // tail tensors a product has been through
	for _, n := range g.Nodes {
		from, prod := n.Op == graph.DFT, false
		for _, in := range n.Inputs {
			if !tail[in] {
				continue
			}
			switch n.Op {
			case graph.Reduce, graph.Add, graph.Sub, graph.Mul, graph.Div, graph.Maximum, graph.Minimum, graph.Clip:
				from, prod = true, prod || product[in]
			case graph.FullyConnected, graph.BatchMatMul:
				if !product[in] {
					from, prod = true, true
				}
			}
		}
		if from {
			for _, o := range n.Outputs {
				tail[o], product[o] = true, prod
			}
		}
	}
	return tail
}

// dropRoundTrips removes each int8 round trip between float nodes: a
// Quantize whose int8 output only a Dequantize reads (and is no graph
// output or state) is lossy and does nothing else, so the Dequantize's
// readers take the float tensor instead, and both nodes go (a DFT and the
// sum of squares that reads it, both float, were joined through int8).
func dropRoundTrips(q *graph.Graph) {
	keep := map[string]bool{}
	for _, o := range q.Outputs {
		keep[o] = true
	}
	// A float graph input (FloatIO) read by a node kept float keeps its
	// name: it was renamed to its int8 twin's, and the graph lost its
	// input (found by session 47's tests of LogSoftmax).
	for _, in := range q.Inputs {
		keep[in] = true
	}
	for _, st := range q.States {
		keep[st.In], keep[st.Out] = true, true
	}
	cons := q.Consumers()
	prod := q.Producers()
	drop := map[*graph.Node]bool{}
	rename := map[string]string{}
	back := map[string]string{} // float tensor -> the int8 tensor it is quantized to
	for _, d := range q.Nodes {
		if d.Op != graph.Dequantize || len(d.Inputs) != 1 || len(d.Outputs) != 1 || keep[d.Outputs[0]] {
			continue
		}
		x := d.Inputs[0]
		p := prod[x]
		if p == nil || p.Op != graph.Quantize || len(cons[x]) != 1 || keep[x] {
			continue
		}
		fl := q.Tensors[p.Inputs[0]]
		if fl == nil || fl.DType != graph.Float32 {
			continue
		}
		drop[d], drop[p] = true, true
		rename[d.Outputs[0]] = p.Inputs[0]
		back[p.Inputs[0]] = x
	}
	if len(drop) == 0 {
		return
	}
	nodes := q.Nodes[:0]
	for _, n := range q.Nodes {
		if drop[n] {
			continue
		}
		for i, in := range n.Inputs {
			if r, ok := rename[in]; ok {
				n.Inputs[i] = r
			}
		}
		nodes = append(nodes, n)
	}
	q.Nodes = nodes
	// The float tensor takes the name of the int8 one it replaces, which is
	// the float graph's: the quality report then measures it (a chain of
	// nodes kept float had no rows).
	for fl, x := range back {
		if q.Tensors[fl] == nil || q.Tensors[fl].IsConst() || keep[fl] {
			continue
		}
		t := q.Tensors[fl]
		delete(q.Tensors, fl)
		t.Name = x
		q.Tensors[x] = t
		for _, n := range q.Nodes {
			for i, in := range n.Inputs {
				if in == fl {
					n.Inputs[i] = x
				}
			}
			for i, o := range n.Outputs {
				if o == fl {
					n.Outputs[i] = x
				}
			}
		}
	}
}

func (b *builder) build() (*graph.Graph, error) {
	f, q := b.f, b.q
	// A float constant that is a graph output (a weight the model also
	// returns) stays as it is: float32, exact.
	output := map[string]bool{}
	for _, o := range f.Outputs {
		output[o] = true
	}
	for name, t := range f.Tensors {
		if p, ok := b.act[name]; ok {
			q.AddTensor(&graph.Tensor{Name: name, DType: graph.Int8, Shape: append([]int(nil), t.Shape...), Quant: p.quant()})
		} else if !t.IsConst() || t.DType != graph.Float32 || output[name] {
			c := *t
			q.AddTensor(&c)
		}
	}
	for _, n := range f.Nodes {
		if err := b.node(n); err != nil {
			return nil, err
		}
	}
	q.Inputs = append([]string(nil), f.Inputs...)
	q.Outputs = append([]string(nil), f.Outputs...)
	if b.opt.FloatIO {
		b.floatIO()
	}
	// The states keep their names; an int8 state starts from its float
	// initial value quantized (zeros: the zero point).
	for _, s := range f.States {
		if t := q.Tensors[s.In]; t != nil && t.DType == graph.Int8 {
			sc, zp := t.Quant.At(0)
			s.Init = QuantizeData(s.InitData(f.Tensors[s.In]), sc, zp)
		}
		q.States = append(q.States, s)
	}
	for name := range b.opt.Float {
		// The mark a QDQ file carries (WriteQDQ), so that compiling it
		// keeps these float too (review finding: folding quantized them).
		if q.KeepFloat == nil {
			q.KeepFloat = map[string]bool{}
		}
		q.KeepFloat[name] = true
	}
	dropRoundTrips(q)
	q.Prune()
	// A multiplier no integer kernel applies comes from a float model
	// that overflows (a layer's products past float32, clamped after by a
	// Relu6, or read by one): one line naming the way out (diff review:
	// the quantized graph was refused as invalid, naming none).
	for _, n := range q.Nodes {
		if err := graph.CheckMultiplier(q, n); err != nil {
			return nil, fmt.Errorf("quant: node %q (%s): %v: keep it in float32 (--float %s)", n.Name, n.Op, err, n.Name)
		}
	}
	if err := graph.Validate(q); err != nil {
		return nil, fmt.Errorf("quant: quantized graph is invalid: %w", err)
	}
	return q, nil
}

// addConst adds a constant under base, or a fresh name if base is taken.
func (b *builder) addConst(base string, d *graph.Data, qp *graph.Quant) string {
	name := b.q.UniqueName(base)
	t := b.q.AddConst(name, d)
	t.Quant = qp
	return name
}

func (b *builder) node(n *graph.Node) error {
	f, q := b.f, b.q
	nn := &graph.Node{Name: n.Name, Op: n.Op, Inputs: append([]string(nil), n.Inputs...), Outputs: append([]string(nil), n.Outputs...), Attrs: copyAttrs(n.Attrs)}
	x := f.In(n, 0)
	keptFloat := floatOnly(f, n)
	if x != nil && x.DType == graph.Float32 && !x.IsConst() && keptFloat {
		// Marked as --float's nodes are, so that the QDQ file's reader
		// keeps it float too (review finding: a Div kept in float here
		// became an int8 Div after the round trip, up to 9 steps off).
		if q.KeepFloat == nil {
			q.KeepFloat = map[string]bool{}
		}
		q.KeepFloat[n.Name] = true
	}
	if x == nil || x.DType != graph.Float32 || x.IsConst() || keptFloat || b.tail[n.Inputs[0]] || b.opt.Float[n.Name] {
		// Not a float computation on an activation: keep as is, but it must
		// still read the quantized versions of its float inputs.
		return b.fallback(n)
	}
	out := b.act[n.Outputs[0]]
	switch n.Op {
	case graph.Conv2D, graph.FullyConnected, graph.ConvTranspose2D:
		// Weights [Cout, ...]: symmetric int8 per output channel; bias int32
		// on the scale s_in·s_w[c].
		w := f.In(n, 1)
		if w == nil || !w.IsConst() || w.DType != graph.Float32 {
			return b.fallback(n)
		}
		wd, wq := SymmetricWeights(w.Data, b.opt.PerTensor)
		nn.Inputs[1] = b.addConst(w.Name, wd, wq) // wd and wq may still be adjusted below
		if bt := f.In(n, 2); bt != nil {
			if !bt.IsConst() || bt.DType != graph.Float32 {
				return b.fallback(n)
			}
			in := b.act[n.Inputs[0]]
			AdjustForBias(w.Data, wd, wq, bt.Data, in.s)
			// A bias too large for int32 at any float32 weight scale
			// (review finding: "quantization scale +Inf", an internal
			// error): the layer cannot be int8.
			for c, sc := range wq.Scale {
				if math.IsInf(float64(sc), 0) {
					i := c
					if len(wq.Scale) == 1 {
						i = floatArgMaxAbs(bt.Data.F)
					}
					return fmt.Errorf("node %q: its bias %g cannot be held in int32 at its input's scale %g with any float32 weight scale: keep the node in float32 (--float %s)", n.Name, bt.Data.F[i], in.s, n.Name)
				}
			}
			bd, bq := Bias(bt.Data, in.s, wq)
			nn.Inputs[2] = b.addConst(bt.Name, bd, bq)
		}
		switch a := nn.Attrs.(type) {
		case *graph.Conv2DAttrs:
			a.Requant = graph.RequantFixedPoint
		case *graph.FullyConnectedAttrs:
			a.Requant = graph.RequantFixedPoint
		}
	default:
		for i, in := range n.Inputs {
			t := f.Tensors[in]
			if t == nil || !t.IsConst() || t.DType != graph.Float32 {
				continue
			}
			if isPassThrough(n) {
				nn.Inputs[i] = b.addConst(in, QuantizeData(t.Data, out.s, out.z), out.quant())
			} else {
				d, qp := AsymmetricConst(b.finiteConst(n, i, t.Data))
				nn.Inputs[i] = b.addConst(in, d, qp)
			}
		}
		if pa, ok := nn.Attrs.(*graph.PadAttrs); ok {
			pa.Value = float64(QuantizeValue(pa.Value, out.s, out.z))
		}
	}
	for _, o := range n.Outputs {
		if _, ok := b.act[o]; !ok && n.Op != graph.ArgMax { // ArgMax's int64 indices stay as they are
			return b.fallback(n)
		}
	}
	var requant []*graph.Node
	if n.Op == graph.Concat {
		// An output with parameters of its own is read requantized to
		// the Concat's (concatOutputs).
		for i, in := range nn.Inputs {
			if !b.detached[in] {
				continue
			}
			r := q.UniqueName(in + "_requant")
			q.AddTensor(&graph.Tensor{Name: r, DType: graph.Int8, Shape: append([]int(nil), f.Tensors[in].Shape...), Quant: out.quant()})
			requant = append(requant, &graph.Node{Name: r, Op: graph.Quantize, Inputs: []string{in}, Outputs: []string{r}})
			nn.Inputs[i] = r
		}
	}
	for _, r := range requant {
		q.AddNode(r)
	}
	q.AddNode(nn)
	if !interp.Supported(q, nn) {
		q.Nodes = q.Nodes[:len(q.Nodes)-1-len(requant)]
		return b.fallback(n)
	}
	return nil
}

// finiteConst returns d, input i of n, with its ±Inf (a -inf attention
// mask) made finite before it is quantized: in an Add or Sub with an int8
// activation, a value that takes the result past the output's range from
// anywhere in the other operand's (by one more output span, for the
// requantization's rounding), so the result saturates where the float one
// is infinite; elsewhere the finite values' extremes. (An infinite range
// fell back to [0, 1), and -inf became 0: the mask was lost, a review
// finding.)
func (b *builder) finiteConst(n *graph.Node, i int, d *graph.Data) *graph.Data {
	lo, hi, inf := 0.0, 0.0, false
	for _, v := range d.F {
		if x := float64(v); math.IsInf(x, 0) {
			inf = true
		} else {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if !inf {
		return d
	}
	neg, pos := lo, hi
	out, okOut := b.act[n.Outputs[0]]
	other, okOther := params{}, false
	if len(n.Inputs) == 2 {
		other, okOther = b.act[n.Inputs[1-i]]
	}
	if okOut && okOther && (n.Op == graph.Add || n.Op == graph.Sub) {
		oLo, oHi := float64(out.s)*float64(-128-out.z), float64(out.s)*float64(127-out.z)
		xLo, xHi := float64(other.s)*float64(-128-other.z), float64(other.s)*float64(127-other.z)
		span := oHi - oLo
		switch {
		case n.Op == graph.Add:
			neg, pos = oLo-xHi-span, oHi-xLo+span
		case i == 1: // x - c
			neg, pos = xLo-oHi-span, xHi-oLo+span
		default: // c - x
			neg, pos = oLo+xLo-span, oHi+xHi+span
		}
		neg, pos = math.Min(neg, lo), math.Max(pos, hi)
	}
	c := d.Clone()
	for k, v := range c.F {
		switch {
		case math.IsInf(float64(v), -1):
			c.F[k] = float32(neg)
		case math.IsInf(float64(v), 1):
			c.F[k] = float32(pos)
		}
	}
	return c
}

// fallback keeps n in float: its int8 inputs are dequantized, its float
// outputs quantized.
func (b *builder) fallback(n *graph.Node) error {
	f, q := b.f, b.q
	nn := &graph.Node{Name: n.Name, Op: n.Op, Inputs: append([]string(nil), n.Inputs...), Attrs: copyAttrs(n.Attrs)}
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		t := f.Tensors[in]
		if t.IsConst() && t.DType == graph.Float32 {
			nn.Inputs[i] = b.addConst(in, t.Data, nil)
			continue
		}
		if _, ok := b.act[in]; !ok {
			continue
		}
		d, ok := b.dq[in]
		if !ok {
			d = q.UniqueName(in + "_dequant")
			q.AddTensor(&graph.Tensor{Name: d, DType: graph.Float32, Shape: append([]int(nil), t.Shape...)})
			q.AddNode(&graph.Node{Name: d, Op: graph.Dequantize, Inputs: []string{in}, Outputs: []string{d}})
			b.dq[in] = d
		}
		nn.Inputs[i] = d
	}
	var requant []*graph.Node
	for _, o := range n.Outputs {
		p, ok := b.act[o]
		if !ok {
			nn.Outputs = append(nn.Outputs, o)
			continue
		}
		fl := q.UniqueName(o + "_float")
		q.AddTensor(&graph.Tensor{Name: fl, DType: graph.Float32, Shape: append([]int(nil), f.Tensors[o].Shape...)})
		nn.Outputs = append(nn.Outputs, fl)
		q.Tensors[o].Quant = p.quant()
		requant = append(requant, &graph.Node{Name: o + "_quant", Op: graph.Quantize, Attrs: b.rounding(), Inputs: []string{fl}, Outputs: []string{o}})
	}
	q.AddNode(nn)
	for _, r := range requant {
		q.AddNode(r)
	}
	return nil
}

// rounding is a float-to-int8 Quantize's: half to even, as the
// QuantizeLinear of the QDQ model quantize writes rounds, so that the model
// in memory, that file read again and ONNX Runtime running it agree on
// every input (API journey: the file's QuantizeLinear rounded half to
// even in ONNX Runtime, and half away from zero once mcugen folded it).
// The int8 kernels after it keep TFLite's arithmetic.
func (b *builder) rounding() *graph.QuantizeAttrs {
	return &graph.QuantizeAttrs{RoundHalfEven: true}
}

// floatIO makes the graph's inputs and outputs float32 again.
func (b *builder) floatIO() {
	q := b.q
	var pre []*graph.Node
	for i, in := range q.Inputs {
		t := q.Tensors[in]
		if t.DType != graph.Int8 || b.f.StateOf(in) >= 0 {
			continue // a state stays int8: the application never sees it
		}
		iname := q.UniqueName(in + "_int8")
		renameTensor(q, in, iname)
		q.AddTensor(&graph.Tensor{Name: in, DType: graph.Float32, Shape: append([]int(nil), t.Shape...)})
		q.Inputs[i] = in
		pre = append(pre, &graph.Node{Name: iname, Op: graph.Quantize, Attrs: b.rounding(), Inputs: []string{in}, Outputs: []string{iname}})
	}
	q.Nodes = append(pre, q.Nodes...)
	for i, out := range q.Outputs {
		t := q.Tensors[out]
		if t.DType != graph.Int8 || b.f.StateOf(out) >= 0 {
			continue
		}
		iname := q.UniqueName(out + "_int8")
		renameTensor(q, out, iname)
		q.AddTensor(&graph.Tensor{Name: out, DType: graph.Float32, Shape: append([]int(nil), t.Shape...)})
		q.Outputs[i] = out
		q.AddNode(&graph.Node{Name: out, Op: graph.Dequantize, Inputs: []string{iname}, Outputs: []string{out}})
	}
}

// renameTensor renames a tensor everywhere except in g.Inputs/g.Outputs.
func renameTensor(g *graph.Graph, from, to string) {
	t := g.Tensors[from]
	delete(g.Tensors, from)
	t.Name = to
	g.Tensors[to] = t
	for _, n := range g.Nodes {
		for i := range n.Inputs {
			if n.Inputs[i] == from {
				n.Inputs[i] = to
			}
		}
		for i := range n.Outputs {
			if n.Outputs[i] == from {
				n.Outputs[i] = to
			}
		}
	}
}

// actOf returns the fused activation of n, if its op has one.
func actOf(n *graph.Node) (graph.Activation, bool) {
	switch a := n.Attrs.(type) {
	case *graph.Conv2DAttrs:
		return a.Act, true
	case *graph.FullyConnectedAttrs:
		return a.Act, true
	case *graph.BinaryAttrs:
		return a.Act, true
	case *graph.PoolAttrs:
		return a.Act, true
	case *graph.ConcatAttrs:
		return a.Act, true
	}
	return graph.ActNone, false
}

// fuseActivations folds Relu and Clip(0,6)/Clip(-1,1) nodes into the
// Conv2D, FullyConnected, Add, Sub or Mul that produces their only input,
// as the TFLite converter does.
func fuseActivations(g *graph.Graph, keepFloat map[string]bool) {
	prod := g.Producers()
	cons := g.Consumers()
	isOut := outputSet(g)
	drop := map[*graph.Node]bool{}
	for _, n := range g.Nodes {
		var a graph.Activation
		switch n.Op {
		case graph.Relu:
			a = graph.ActRelu
		case graph.Clip:
			c, ok := n.Attrs.(*graph.ClipAttrs)
			switch {
			case !ok:
				continue
			case c.Min == 0 && c.Max == 6:
				a = graph.ActRelu6
			case c.Min == -1 && c.Max == 1:
				a = graph.ActReluN1To1
			case c.Min == 0 && math.IsInf(float64(c.Max), 1):
				a = graph.ActRelu
			default:
				continue
			}
		default:
			continue
		}
		in := n.Inputs[0]
		p := prod[in]
		if p == nil || drop[p] || len(cons[in]) != 1 || isOut[in] || len(p.Outputs) != 1 || keepFloat[n.Name] || keepFloat[p.Name] {
			continue
		}
		switch p.Op {
		case graph.Conv2D, graph.FullyConnected, graph.Add, graph.Sub, graph.Mul:
		default:
			continue
		}
		if p.Attrs == nil {
			p.Attrs = &graph.BinaryAttrs{}
		}
		switch pa := p.Attrs.(type) {
		case *graph.Conv2DAttrs:
			if pa.Act != graph.ActNone {
				continue
			}
			pa.Act = a
		case *graph.FullyConnectedAttrs:
			if pa.Act != graph.ActNone {
				continue
			}
			pa.Act = a
		case *graph.BinaryAttrs:
			if pa.Act != graph.ActNone {
				continue
			}
			pa.Act = a
		default:
			continue
		}
		p.Outputs[0] = n.Outputs[0]
		prod[n.Outputs[0]] = p
		delete(g.Tensors, in)
		drop[n] = true
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !drop[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
}

// cloneGraph copies g's tensors (sharing constant data) and nodes (with
// copied attribute structs).
func cloneGraph(g *graph.Graph) *graph.Graph {
	c := graph.New(g.Name, g.Format)
	for name, t := range g.Tensors {
		tc := *t
		tc.Shape = append([]int(nil), t.Shape...)
		c.Tensors[name] = &tc
	}
	for _, n := range g.Nodes {
		c.AddNode(&graph.Node{Name: n.Name, Op: n.Op, Inputs: append([]string(nil), n.Inputs...), Outputs: append([]string(nil), n.Outputs...), Attrs: copyAttrs(n.Attrs)})
	}
	c.Inputs = append([]string(nil), g.Inputs...)
	c.Outputs = append([]string(nil), g.Outputs...)
	c.States = append([]graph.State(nil), g.States...)
	if g.KeepFloat != nil {
		c.KeepFloat = maps.Clone(g.KeepFloat)
	}
	return c
}

// copyAttrs returns a shallow copy of a pointer-to-struct attribute value.
func copyAttrs(a any) any {
	v := reflect.ValueOf(a)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return a
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	return c.Interface()
}

type unionFind struct{ parent map[string]string }

func newUnionFind() *unionFind { return &unionFind{parent: map[string]string{}} }

func (u *unionFind) find(x string) string {
	p, ok := u.parent[x]
	if !ok || p == x {
		return x
	}
	r := u.find(p)
	u.parent[x] = r
	return r
}

func (u *unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u.parent[ra] = rb
	}
}

// floatArgMaxAbs is the index of the element of largest magnitude.
func floatArgMaxAbs(v []float32) int {
	best := 0
	for i, x := range v {
		if math.Abs(float64(x)) > math.Abs(float64(v[best])) {
			best = i
		}
	}
	return best
}

// onlyMaxPools reports whether every reader of t, through Transposes and
// Reshapes, is a max pool (a graph output reads it too).
func onlyMaxPools(g *graph.Graph, cons map[string][]*graph.Node, t string) bool {
	if slices.Contains(g.Outputs, t) || len(cons[t]) == 0 {
		return false
	}
	for _, c := range cons[t] {
		switch {
		case c.Op == graph.MaxPool2D && len(c.Inputs) > 0 && c.Inputs[0] == t:
		case (c.Op == graph.Transpose || c.Op == graph.Reshape) && len(c.Inputs) > 0 && c.Inputs[0] == t && len(c.Outputs) > 0:
			if !onlyMaxPools(g, cons, c.Outputs[0]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
