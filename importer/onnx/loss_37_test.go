package onnx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (importer/onnx/
// ops_loss.go). The expected values are worked by hand or computed here in
// float64 by refLoss, a direct loop over ONNX's definition (the reference
// implementation of the operator's documentation): loss[n, d] =
// −x[n, t[n, d], d] · w[t[n, d]], 0 where t is ignore_index; "mean" is the
// sum over the sum of the weights of the targets kept (their count without
// weights, n·d without ignore_index), 0/0 = NaN when none is kept.

// lossCase is one loss node's operands: x [n, c, d...] (x.Shape), the
// targets t [n, d...], the weights w (nil: none), the attributes.
type lossCase struct {
	op        string // NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss
	x         *graph.Data
	t         *graph.Data
	w         *graph.Data
	reduction string // "" leaves the attribute out (the default, mean)
	ii        *int64
	logProb   bool // SoftmaxCrossEntropyLoss's second output
}

func ptr(v int64) *int64 { return &v }

// model is the case as a one-node model whose inputs are all graph inputs
// (fed at run time).
func (lc lossCase) model(name string) *onnx.Builder {
	bl := onnx.NewBuilder(name, 13, 1)
	bl.Input("x", graph.Float32, lc.x.Shape...)
	bl.Input("t", lc.t.DType, lc.t.Shape...)
	ins := []string{"x", "t"}
	if lc.w != nil {
		bl.Input("w", graph.Float32, lc.w.Shape...)
		ins = append(ins, "w")
	}
	var attrs []*onnx.Attribute
	if lc.reduction != "" {
		attrs = append(attrs, onnx.StringAttr("reduction", lc.reduction))
	}
	if lc.ii != nil {
		attrs = append(attrs, onnx.IntAttr("ignore_index", *lc.ii))
	}
	outs := []string{"loss"}
	if lc.logProb {
		outs = append(outs, "log_prob")
	}
	nodeN(bl, "loss_node", lc.op, ins, outs, attrs...)
	bl.Output("loss", graph.Float32)
	if lc.logProb {
		bl.Output("log_prob", graph.Float32, lc.x.Shape...)
	}
	return bl
}

func (lc lossCase) inputs() map[string]*graph.Data {
	in := map[string]*graph.Data{"x": lc.x, "t": lc.t}
	if lc.w != nil {
		in["w"] = lc.w
	}
	return in
}

// logSoftmax64 is log(softmax(x)) along axis 1 of x [n, c, d] in float64.
func logSoftmax64(x *graph.Data) []float64 {
	n, c := x.Shape[0], x.Shape[1]
	d := x.Len() / (n * c)
	out := make([]float64, x.Len())
	for i := range n {
		for j := range d {
			mx := math.Inf(-1)
			for k := range c {
				mx = math.Max(mx, float64(x.F[(i*c+k)*d+j]))
			}
			s := 0.0
			for k := range c {
				s += math.Exp(float64(x.F[(i*c+k)*d+j]) - mx)
			}
			for k := range c {
				out[(i*c+k)*d+j] = float64(x.F[(i*c+k)*d+j]) - mx - math.Log(s)
			}
		}
	}
	return out
}

// refLoss is the case's loss in float64 (and the log-probabilities of a
// SoftmaxCrossEntropyLoss), with its shape.
func (lc lossCase) refLoss() (loss []float64, shape []int, logProb []float64) {
	n, c := lc.x.Shape[0], lc.x.Shape[1]
	d := lc.x.Len() / (n * c)
	lp := make([]float64, lc.x.Len())
	for i, v := range lc.x.F {
		lp[i] = float64(v)
	}
	if lc.op == "SoftmaxCrossEntropyLoss" {
		lp = logSoftmax64(lc.x)
		logProb = lp
	}
	var each []float64
	var sum, wsum float64
	for i := range n {
		for j := range d {
			k := lc.t.I[i*d+j]
			if lc.ii != nil && k == *lc.ii {
				each = append(each, 0)
				continue
			}
			if k < 0 || k >= int64(c) {
				// Outside the classes and not ignored: undefined.
				each = append(each, math.NaN())
				sum, wsum = math.NaN(), math.NaN()
				continue
			}
			wk := 1.0
			if lc.w != nil {
				wk = float64(lc.w.F[k])
			}
			l := -lp[(i*c+int(k))*d+j] * wk
			each = append(each, l)
			sum += l
			wsum += wk
		}
	}
	switch lc.reduction {
	case "none":
		return each, lc.t.Shape, logProb
	case "sum":
		return []float64{sum}, []int{}, logProb
	}
	if lc.w == nil && lc.ii == nil {
		wsum = float64(n * d)
	}
	return []float64{sum / wsum}, []int{}, logProb
}

// check runs the case through the importer and graph/interp and compares
// with refLoss.
func (lc lossCase) check(t *testing.T, what string) {
	t.Helper()
	got := runOne(t, lc.model("loss"), lc.inputs())
	want, shape, lp := lc.refLoss()
	checkLoss(t, what, got[0], shape, want)
	if lc.logProb {
		checkData(t, what+" log_prob", got[1], graph.Float32, lc.x.Shape, lp)
	}
}

// checkLoss is checkData that also requires a NaN where want has one.
func checkLoss(t *testing.T, what string, got *graph.Data, shape []int, want []float64) {
	t.Helper()
	for i, w := range want {
		if math.IsNaN(w) {
			if got == nil || got.Len() <= i || !math.IsNaN(got.Float(i)) {
				t.Fatalf("%s: element %d is not NaN (%v)", what, i, got)
			}
			return
		}
	}
	checkData(t, what, got, graph.Float32, shape, want)
}

// nllX is x [2, 3] (N, C) read as log-probabilities:
//
//	n0  -1   -2   -3
//	n1  -0.5 -1.5 -2.5
//
// with targets (2, 0) the picked terms are −x = 3 and 0.5.
func nllX() *graph.Data { return f32([]int{2, 3}, -1, -2, -3, -0.5, -1.5, -2.5) }

// TestNLLLossReductionsByHand: the three reductions, without and with
// weights (0.2, 0.3, 0.5), worked by hand.
//
//	unweighted: none (3, 0.5), sum 3.5, mean 3.5/2 = 1.75
//	weighted:   none (3·0.5, 0.5·0.2) = (1.5, 0.1), sum 1.6,
//	            mean 1.6 / (0.5 + 0.2) = 2.2857142857…
func TestNLLLossReductionsByHand(t *testing.T) {
	tg := i64([]int{2}, 2, 0)
	w := f32([]int{3}, 0.2, 0.3, 0.5)
	for _, c := range []struct {
		red   string
		w     *graph.Data
		shape []int
		want  []float64
	}{
		{"none", nil, []int{2}, []float64{3, 0.5}},
		{"sum", nil, []int{}, []float64{3.5}},
		{"mean", nil, []int{}, []float64{1.75}},
		{"", nil, []int{}, []float64{1.75}}, // mean is the default
		{"none", w, []int{2}, []float64{1.5, 0.1}},
		{"sum", w, []int{}, []float64{1.6}},
		{"mean", w, []int{}, []float64{1.6 / 0.7}},
	} {
		lc := lossCase{op: "NegativeLogLikelihoodLoss", x: nllX(), t: tg, w: c.w, reduction: c.red}
		got := runOne(t, lc.model("nll"), lc.inputs())
		what := fmt.Sprintf("reduction %q weighted %v", c.red, c.w != nil)
		checkData(t, what, got[0], graph.Float32, c.shape, c.want)
		// The float64 loop agrees with the hand-worked values.
		ref, shape, _ := lc.refLoss()
		checkData(t, what+" (refLoss)", f32From(ref, shape), graph.Float32, c.shape, c.want)
	}
}

func f32From(v []float64, shape []int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i, x := range v {
		d.F[i] = float32(x)
	}
	return d
}

// TestNLLLossIgnoreIndexByHand: ignore_index 0 on the same x with targets
// (2, 0): the second term is dropped.
//
//	unweighted: none (3, 0), sum 3, mean 3/1 (one target kept) = 3
//	weighted:   none (1.5, 0), sum 1.5, mean 1.5/0.5 = 3
//
// ignore_index −1 (no target equals it) changes nothing: mean 1.75, and
// with weights 1.6/0.7.
func TestNLLLossIgnoreIndexByHand(t *testing.T) {
	tg := i64([]int{2}, 2, 0)
	w := f32([]int{3}, 0.2, 0.3, 0.5)
	for _, c := range []struct {
		red   string
		w     *graph.Data
		ii    int64
		shape []int
		want  []float64
	}{
		{"none", nil, 0, []int{2}, []float64{3, 0}},
		{"sum", nil, 0, []int{}, []float64{3}},
		{"mean", nil, 0, []int{}, []float64{3}},
		{"none", w, 0, []int{2}, []float64{1.5, 0}},
		{"sum", w, 0, []int{}, []float64{1.5}},
		{"mean", w, 0, []int{}, []float64{3}},
		{"mean", nil, -1, []int{}, []float64{1.75}},
		{"mean", w, -1, []int{}, []float64{1.6 / 0.7}},
	} {
		lc := lossCase{op: "NegativeLogLikelihoodLoss", x: nllX(), t: tg, w: c.w, reduction: c.red, ii: ptr(c.ii)}
		got := runOne(t, lc.model("nll"), lc.inputs())
		checkData(t, fmt.Sprintf("reduction %q weighted %v ignore %d", c.red, c.w != nil, c.ii), got[0], graph.Float32, c.shape, c.want)
	}
}

// TestNLLLossAllIgnored: every target ignored. "none" gives zeros, "sum" 0
// and "mean" 0/0, a NaN, with and without weights (ONNX's reference and
// function body divide the sum by the kept weights' sum, here 0).
func TestNLLLossAllIgnored(t *testing.T) {
	tg := i64([]int{2}, 1, 1)
	w := f32([]int{3}, 0.2, 0.3, 0.5)
	for _, wt := range []*graph.Data{nil, w} {
		for _, red := range []string{"none", "sum", "mean"} {
			lc := lossCase{op: "NegativeLogLikelihoodLoss", x: nllX(), t: tg, w: wt, reduction: red, ii: ptr(1)}
			got := runOne(t, lc.model("nll"), lc.inputs())
			what := fmt.Sprintf("all ignored, %s, weighted %v", red, wt != nil)
			switch red {
			case "none":
				checkData(t, what, got[0], graph.Float32, []int{2}, []float64{0, 0})
			case "sum":
				checkData(t, what, got[0], graph.Float32, []int{}, []float64{0})
			default:
				if got[0].Len() != 1 || !math.IsNaN(got[0].Float(0)) {
					t.Errorf("%s = %v, want NaN", what, got[0].F)
				}
			}
		}
	}
}

// lossInput is x [shape] with deterministic values in about [−3, 1)
// (log-probability-like, not normalized: the loss does not care), a
// fixed pseudo-random sequence.
func lossInput(shape ...int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	r := rand.New(rand.NewPCG(uint64(len(d.F)), 37))
	for i := range d.F {
		d.F[i] = 4*r.Float32() - 3
	}
	return d
}

// lossTargets is t [shape] of classes 0..c−1 with some positions set to
// extra values (ignore_index, out of range) in turn.
func lossTargets(c int, extra []int64, shape ...int) *graph.Data {
	d := graph.NewData(graph.Int64, shape)
	for i := range d.I {
		d.I[i] = int64((i*7 + 3) % c)
		if len(extra) > 0 && i%3 == 1 {
			d.I[i] = extra[(i/3)%len(extra)]
		}
	}
	return d
}

// TestNLLLossKDim: x [2, 3, 2, 3] (k = 2) with targets [2, 2, 3], every
// reduction, without and with weights, without and with ignore_index
// (inside the classes, negative and above them), against refLoss.
func TestNLLLossKDim(t *testing.T) {
	x := lossInput(2, 3, 2, 3)
	w := f32([]int{3}, 0.25, 1.5, 0.75)
	for _, ii := range []*int64{nil, ptr(1), ptr(-1), ptr(7)} {
		var extra []int64
		if ii != nil {
			extra = []int64{*ii}
		}
		tg := lossTargets(3, extra, 2, 2, 3)
		for _, wt := range []*graph.Data{nil, w} {
			for _, red := range []string{"none", "sum", "mean"} {
				lc := lossCase{op: "NegativeLogLikelihoodLoss", x: x, t: tg, w: wt, reduction: red, ii: ii}
				lc.check(t, fmt.Sprintf("k-dim %s weighted %v ignore %v", red, wt != nil, ii))
			}
		}
	}
	// int32 targets too.
	tg := lossTargets(3, []int64{-1}, 2, 2, 3)
	t32 := graph.NewData(graph.Int32, tg.Shape)
	copy(t32.I, tg.I)
	lc := lossCase{op: "NegativeLogLikelihoodLoss", x: x, t: t32, w: w, reduction: "mean", ii: ptr(-1)}
	got := runOne(t, lc.model("nll"), lc.inputs())
	want, _, _ := lossCase{op: lc.op, x: x, t: tg, w: w, reduction: "mean", ii: ptr(-1)}.refLoss()
	checkData(t, "int32 targets", got[0], graph.Float32, []int{}, want)
}

// TestSCELossByHand: SoftmaxCrossEntropyLoss of x [1, 2] = (0, ln 3):
// softmax (1/4, 3/4), log_prob (−ln 4, ln 3 − ln 4); target 0 gives
// loss ln 4 = 1.3862943611…, target 1 ln 4 − ln 3 = 0.2876820724….
func TestSCELossByHand(t *testing.T) {
	x := f32([]int{2, 2}, 0, float32(math.Log(3)), 0, float32(math.Log(3)))
	lc := lossCase{op: "SoftmaxCrossEntropyLoss", x: x, t: i64([]int{2}, 0, 1), reduction: "none", logProb: true}
	got := runOne(t, lc.model("sce"), lc.inputs())
	checkData(t, "loss", got[0], graph.Float32, []int{2}, []float64{math.Log(4), math.Log(4) - math.Log(3)})
	lp := []float64{-math.Log(4), math.Log(3) - math.Log(4)}
	checkData(t, "log_prob", got[1], graph.Float32, []int{2, 2}, append(lp, lp...))
}

// TestSCELoss: SoftmaxCrossEntropyLoss of x [2, 4] (N, C), [3, 3, 2] and
// [2, 3, 2, 2] with its log_prob output, every reduction, weights and
// ignore_index, against refLoss's float64 log-softmax.
func TestSCELoss(t *testing.T) {
	for _, shape := range [][]int{{2, 4}, {3, 3, 2}, {2, 3, 2, 2}} {
		x := lossInput(shape...)
		c := shape[1]
		w := graph.NewData(graph.Float32, []int{c})
		for i := range w.F {
			w.F[i] = 0.5 + float32(i)*0.25
		}
		ts := append([]int{shape[0]}, shape[2:]...)
		for _, ii := range []*int64{nil, ptr(0), ptr(-3)} {
			var extra []int64
			if ii != nil {
				extra = []int64{*ii}
			}
			tg := lossTargets(c, extra, ts...)
			for _, wt := range []*graph.Data{nil, w} {
				for _, red := range []string{"none", "sum", "mean"} {
					for _, lp := range []bool{false, true} {
						lc := lossCase{op: "SoftmaxCrossEntropyLoss", x: x, t: tg, w: wt, reduction: red, ii: ii, logProb: lp}
						lc.check(t, fmt.Sprintf("SCE %v %s weighted %v ignore %v log_prob %v", shape, red, wt != nil, ii, lp))
					}
				}
			}
		}
	}
}

// TestLossConstantFolds: with every operand constant the loss folds to a
// constant (no node left).
func TestLossConstantFolds(t *testing.T) {
	bl := onnx.NewBuilder("fold", 13, 1)
	bl.Init("x", nllX())
	bl.Init("t", i64([]int{2}, 2, 0))
	bl.Init("w", f32([]int{3}, 0.2, 0.3, 0.5))
	nodeN(bl, "loss_node", "NegativeLogLikelihoodLoss", []string{"x", "t", "w"}, []string{"loss"}, onnx.IntAttr("ignore_index", 0))
	bl.Output("loss", graph.Float32)
	g, err := onnx.Import("m", bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Op != graph.Reshape {
			t.Errorf("node %s (%s) left after folding", n.Name, n.Op)
		}
	}
	got := runOne(t, bl, nil)
	checkData(t, "folded", got[0], graph.Float32, []int{}, []float64{3})
}

// TestLossDeterministic: the composed nodes' names are the same on every
// import, and derived from the node's output.
func TestLossDeterministic(t *testing.T) {
	lc := lossCase{op: "SoftmaxCrossEntropyLoss", x: lossInput(2, 3, 4), t: lossTargets(3, []int64{-1}, 2, 4),
		w: f32([]int{3}, 1, 2, 3), reduction: "mean", ii: ptr(-1), logProb: true}
	var prints []string
	for range 3 {
		g, err := onnx.Decode("m", lc.model("det").Model().Marshal(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		prints = append(prints, graph.Print(g))
		for _, n := range g.Nodes {
			if !strings.HasPrefix(n.Name, "loss_node") {
				t.Errorf("node %q is not named after loss_node", n.Name)
			}
		}
	}
	if prints[0] != prints[1] || prints[1] != prints[2] {
		t.Error("imports differ")
	}
}

// TestLossRefusals: bad operands and attributes are errors naming the
// node, never a panic.
func TestLossRefusals(t *testing.T) {
	base := func() lossCase {
		return lossCase{op: "NegativeLogLikelihoodLoss", x: lossInput(2, 3, 4), t: lossTargets(3, nil, 2, 4)}
	}
	cases := []struct {
		name string
		lc   func() lossCase
		want string
	}{
		{"reduction", func() lossCase { c := base(); c.reduction = "average"; return c }, `reduction "average"`},
		{"target shape", func() lossCase { c := base(); c.t = lossTargets(3, nil, 2, 3); return c }, "target [2 3] does not match"},
		{"target type", func() lossCase { c := base(); c.t = f32([]int{2, 4}, 0, 0, 0, 0, 0, 0, 0, 0); return c }, "target is float32"},
		{"weight shape", func() lossCase { c := base(); c.w = f32([]int{2}, 1, 1); return c }, "weight [2]: want [3]"},
		{"rank 1", func() lossCase { c := base(); c.x = f32([]int{3}, 0, 0, 0); c.t = i64([]int{}, 0); return c }, "rank 1"},
		{"int input", func() lossCase { c := base(); c.x = graph.NewData(graph.Int32, []int{2, 3, 4}); return c }, "on int32"},
		{"SCE reduction", func() lossCase { c := base(); c.op = "SoftmaxCrossEntropyLoss"; c.reduction = "x"; return c }, `reduction "x"`},
	}
	for _, c := range cases {
		lc := c.lc()
		bl := onnx.NewBuilder("refuse", 13, 1)
		bl.Input("x", lc.x.DType, lc.x.Shape...)
		bl.Input("t", lc.t.DType, lc.t.Shape...)
		ins := []string{"x", "t"}
		if lc.w != nil {
			bl.Input("w", graph.Float32, lc.w.Shape...)
			ins = append(ins, "w")
		}
		var attrs []*onnx.Attribute
		if lc.reduction != "" {
			attrs = append(attrs, onnx.StringAttr("reduction", lc.reduction))
		}
		nodeN(bl, "loss_node", lc.op, ins, []string{"loss"}, attrs...)
		bl.Output("loss", graph.Float32)
		_, err := onnx.Import("m", bl.Model(), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), `"loss_node"`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming loss_node and %q", c.name, err, c.want)
		}
	}
}

// TestGatherManyConstIndices: a Gather of more than 64 constant indices
// from a run-time value (ONNX's function body of a weighted
// NegativeLogLikelihoodLoss, its targets bound as constants) reads a
// constant index table; negative indices count from the end. Beyond 65,536
// indices (a 256 KB table) it is refused.
func TestGatherManyConstIndices(t *testing.T) {
	const n = 100
	idx := graph.NewData(graph.Int64, []int{n})
	want := make([]float64, 2*n)
	for i := range n {
		k := int64((i*5)%9 - 4) // −4..4
		idx.I[i] = k
		if k < 0 {
			k += 5
		}
		want[i] = float64(k)        // row 0: x[0][j] = j
		want[n+i] = float64(10 + k) // row 1: x[1][j] = 10 + j
	}
	bl := onnx.NewBuilder("gather", 13, 1)
	bl.Input("x", graph.Float32, 2, 5)
	bl.Init("i", idx)
	nodeN(bl, "g", "Gather", []string{"x", "i"}, []string{"y"}, onnx.IntAttr("axis", 1))
	bl.Output("y", graph.Float32, 2, n)
	x := f32([]int{2, 5}, 0, 1, 2, 3, 4, 10, 11, 12, 13, 14)
	got := runOne(t, bl, map[string]*graph.Data{"x": x})
	checkData(t, "gather", got[0], graph.Float32, []int{2, n}, want)

	big := graph.NewData(graph.Int64, []int{65537})
	bl = onnx.NewBuilder("gather", 13, 1)
	bl.Input("x", graph.Float32, 2, 5)
	bl.Init("i", big)
	nodeN(bl, "g", "Gather", []string{"x", "i"}, []string{"y"}, onnx.IntAttr("axis", 1))
	bl.Output("y", graph.Float32, 2, 65537)
	if _, err := onnx.Import("m", bl.Model(), onnx.Options{}); err == nil || !strings.Contains(err.Error(), "Gather of 65537 constant indices") {
		t.Errorf("65,537 indices: %v, want refused", err)
	}
}

// TestLossHostC compiles three loss nodes in one model to C for the host
// (AddressSanitizer and UndefinedBehaviorSanitizer, -pedantic -Werror),
// runs it and checks the outputs against refLoss (and graph/interp's):
//
//   - NegativeLogLikelihoodLoss "none" of x [2, 3, 4] with weights,
//     ignore_index 9, and targets 9 (ignored, outside the classes), 5 and
//     −7 (outside the classes, not ignored: undefined in ONNX; the gathers
//     clamp them, so no load leaves a tensor; their values are not
//     checked);
//   - SoftmaxCrossEntropyLoss "mean" of x [2, 3, 2, 2] with weights,
//     ignore_index −1 and its log_prob;
//   - NegativeLogLikelihoodLoss "sum" of x [2, 3, 100, 100] with weights:
//     20,000 terms, within 1e-6 of the float64 value: the C's float sum
//     is compensated (a plain float32 accumulator strayed by 4e-6).
func TestLossHostC(t *testing.T) {
	w3 := f32([]int{3}, 0.25, 1.5, 0.75)
	a := lossCase{op: "NegativeLogLikelihoodLoss", x: lossInput(2, 3, 4), t: i64([]int{2, 4}, 9, 0, 2, 5, 1, -7, 9, 2),
		w: w3, reduction: "none", ii: ptr(9)}
	b := lossCase{op: "SoftmaxCrossEntropyLoss", x: lossInput(2, 3, 2, 2), t: lossTargets(3, []int64{-1}, 2, 2, 2),
		w: w3, reduction: "mean", ii: ptr(-1), logProb: true}
	c := lossCase{op: "NegativeLogLikelihoodLoss", x: lossInput(2, 3, 100, 100), t: lossTargets(3, nil, 2, 100, 100),
		w: w3, reduction: "sum"}

	bl := onnx.NewBuilder("loss_c", 13, 1)
	for _, p := range []struct {
		tag string
		lc  lossCase
	}{{"a", a}, {"b", b}, {"c", c}} {
		lc := p.lc
		bl.Input("x_"+p.tag, graph.Float32, lc.x.Shape...)
		bl.Input("t_"+p.tag, graph.Int64, lc.t.Shape...)
		bl.Input("w_"+p.tag, graph.Float32, 3)
		attrs := []*onnx.Attribute{onnx.StringAttr("reduction", lc.reduction)}
		if lc.ii != nil {
			attrs = append(attrs, onnx.IntAttr("ignore_index", *lc.ii))
		}
		outs := []string{"loss_" + p.tag}
		if lc.logProb {
			outs = append(outs, "log_prob_"+p.tag)
		}
		nodeN(bl, "loss_"+p.tag+"_node", lc.op, []string{"x_" + p.tag, "t_" + p.tag, "w_" + p.tag}, outs, attrs...)
		bl.Output("loss_"+p.tag, graph.Float32)
		if lc.logProb {
			bl.Output("log_prob_"+p.tag, graph.Float32, lc.x.Shape...)
		}
	}
	in := map[string]*graph.Data{}
	for tag, lc := range map[string]lossCase{"a": a, "b": b, "c": c} {
		in["x_"+tag], in["t_"+tag], in["w_"+tag] = lc.x, lc.t, lc.w
	}
	x := sanitizedHostRun(t, bl.Model(), "loss", []map[string]*graph.Data{in}, 3*time.Minute)
	out := x.Outputs[0]
	if len(out) != 4 {
		t.Fatalf("%d outputs, want 4", len(out))
	}
	// a: only the defined elements (targets 9 ignored, 0 2 1 2 in range).
	wa, _, _ := a.refLoss()
	if out[0].Len() != 8 {
		t.Fatalf("a: %d elements, want 8", out[0].Len())
	}
	for _, i := range []int{0, 1, 2, 4, 6, 7} {
		if math.Abs(out[0].Float(i)-wa[i]) > 1e-6*max(1, math.Abs(wa[i])) {
			t.Errorf("a[%d] = %v, want %v", i, out[0].Float(i), wa[i])
		}
	}
	wb, _, lpb := b.refLoss()
	checkData(t, "C SCE mean", out[1], graph.Float32, []int{}, wb)
	checkData(t, "C SCE log_prob", out[2], graph.Float32, b.x.Shape, lpb)
	wc, _, _ := c.refLoss()
	if got := out[3].Float(0); math.Abs(got-wc[0]) > 1e-6*math.Abs(wc[0]) {
		t.Errorf("C sum of 20,000 terms = %v, want %v (1e-6 relative)", got, wc[0])
	}
}
