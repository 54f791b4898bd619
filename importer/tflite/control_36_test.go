package tflite_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Control flow (IF, WHILE) is unrolled at import (ops_control.go). The
// expected values are TFLite Micro's own (kernels/while_test.cc and
// if_test.cc, on the models test_helpers.cc builds) or worked by hand.

const (
	opIf, opWhile, opLess, opDUS        = 118, 119, 58, 151
	optIf, optWhile, optGather, optPack = 92, 93, 23, 59
)

func f32(name string, shape ...int32) tg.Tensor {
	return tg.Tensor{Name: name, Type: tg.Float32, Shape: shape}
}

// tflmWhileModel is TFLite Micro's GetSimpleModelWithSubgraphsAndWhile
// (while a < b: a += b; b stays), with a and b constants when given, plus
// a third loop variable x, an input, to which the body adds a each time
// round: x + Σ a over the iterations (mcugen's extension, so that the
// unrolled model computes something at run time).
func tflmWhileModel(a, b *float32) *tg.Model {
	m := &tg.Model{}
	ta, tb := f32("a", 1), f32("b", 1)
	if a != nil {
		ta.Data, tb.Data = tg.F32Bytes(*a), tg.F32Bytes(*b)
	}
	ia, ib := m.AddTensor(ta), m.AddTensor(tb)
	x := m.AddTensor(f32("x", 1))
	oa, ob, ox := m.AddTensor(f32("a_out", 1)), m.AddTensor(f32("b_out", 1)), m.AddTensor(f32("x_out", 1))
	m.Inputs, m.Outputs = []int32{x}, []int32{oa, ob, ox}
	if a == nil {
		m.Inputs = []int32{ia, ib, x}
	}
	m.AddOp(opWhile, &tg.Options{Type: optWhile, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 2)}}, []int32{ia, ib, x}, oa, ob, ox)

	cond := &tg.Model{}
	ca, cb, cx := cond.AddTensor(f32("a", 1)), cond.AddTensor(f32("b", 1)), cond.AddTensor(f32("x", 1))
	cl := cond.AddTensor(tg.Tensor{Name: "less", Type: tg.BoolT, Shape: []int32{1}})
	cond.Inputs, cond.Outputs = []int32{ca, cb, cx}, []int32{cl}
	cond.AddOp(opLess, nil, []int32{ca, cb}, cl)

	body := &tg.Model{}
	ba, bb, bx := body.AddTensor(f32("a", 1)), body.AddTensor(f32("b", 1)), body.AddTensor(f32("x", 1))
	bs, bxs := body.AddTensor(f32("sum", 1)), body.AddTensor(f32("x_sum", 1))
	body.Inputs, body.Outputs = []int32{ba, bb, bx}, []int32{bs, bb, bxs}
	body.AddOp(tg.OpAdd, nil, []int32{ba, bb}, bs)
	body.AddOp(tg.OpAdd, nil, []int32{bx, ba}, bxs)
	m.Subgraphs = []*tg.Model{cond, body}
	return m
}

func decodeOK(t *testing.T, name string, m *tg.Model) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode(name, m.Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return g
}

func runOK(t *testing.T, g *graph.Graph, feeds map[string]*graph.Data) map[string]*graph.Data {
	t.Helper()
	out, err := interp.Run(g, feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fdata(shape []int, v ...float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Shape: shape, F: v}
}

// TestWhileTFLMValues: TFLite Micro's three WHILE tests (no iteration,
// one, three), with constant a and b, so mcugen knows the trip count.
func TestWhileTFLMValues(t *testing.T) {
	cases := []struct {
		a, b, wantA float32
		iters       int
		sumA        float32 // Σ a over the iterations
	}{
		{3, 2, 3, 0, 0},            // WhileShouldNeverInvokeConditionFalse
		{2, 3, 5, 1, 2},            // WhileShouldInvokeOnce
		{-5, 3, 4, 3, -5 + -2 + 1}, // WhileShouldInvokeMultiple: -5, -2, 1, 4
	}
	var fw []firmwareCase
	for _, c := range cases {
		name := strings.ReplaceAll(fmt.Sprintf("while_%v_%v", c.a, c.b), "-", "m")
		build := func(t *testing.T) *graph.Graph { return decodeOK(t, name, tflmWhileModel(&c.a, &c.b)) }
		g := build(t)
		adds := 0
		for _, n := range g.Nodes {
			if n.Op == graph.Add {
				adds++
			}
		}
		// a's sums fold at compile time; x's are one Add an iteration.
		if adds != c.iters {
			t.Errorf("%s: %d Add nodes, want %d (one an iteration)", name, adds, c.iters)
		}
		x := float32(1.25)
		out := runOK(t, g, map[string]*graph.Data{g.Inputs[0]: fdata([]int{1}, x)})
		want := []float32{c.wantA, c.b, x + c.sumA}
		for i, o := range g.Outputs {
			if got := out[o].F[0]; got != want[i] {
				t.Errorf("%s: output %d = %v, want %v", name, i, got, want[i])
			}
		}
		fw = append(fw, firmwareCase{name: name, graph: build,
			vecs: []map[string]*graph.Data{{"x": fdata([]int{1}, x)}, {"x": fdata([]int{1}, -7)}},
			check: func(t *testing.T, v int, outs []*graph.Data) {
				xv := []float32{x, -7}[v]
				for i, w := range []float32{c.wantA, c.b, xv + c.sumA} {
					if got := outs[i].F[0]; got != w {
						t.Errorf("vector %d output %d: %v, want %v", v, i, got, w)
					}
				}
			}})
	}
	matchesOnBoards(t, "ctl_", fw)
}

// TestWhileRunTimeCondition: TFLite Micro's WHILE model as it is (a and b
// inputs) has a trip count known only at run time, which mcugen refuses
// with the reason.
func TestWhileRunTimeCondition(t *testing.T) {
	_, err := tflite.Decode("while_dyn", tflmWhileModel(nil, nil).Bytes())
	if err == nil || !strings.Contains(err.Error(), "operator 0 (WHILE)") || !strings.Contains(err.Error(), "known only at run time") {
		t.Fatalf("err = %v", err)
	}
}

// tflmIfModel is TFLite Micro's BuildSimpleModelWithSubgraphsAndIf: IF
// (cond) then a + b else a · b, over [1, 2] floats; cond a constant when
// given.
func tflmIfModel(cond *bool) *tg.Model {
	m := &tg.Model{}
	tc := tg.Tensor{Name: "cond", Type: tg.BoolT, Shape: []int32{1}}
	if cond != nil {
		tc.Data = []byte{0}
		if *cond {
			tc.Data[0] = 1
		}
	}
	ic, ia, ib := m.AddTensor(tc), m.AddTensor(f32("a", 1, 2)), m.AddTensor(f32("b", 1, 2))
	o := m.AddTensor(f32("out", 1, 2))
	m.Inputs, m.Outputs = []int32{ic, ia, ib}, []int32{o}
	if cond != nil {
		m.Inputs = []int32{ia, ib}
	}
	m.AddOp(opIf, &tg.Options{Type: optIf, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 2)}}, []int32{ic, ia, ib}, o)
	for _, code := range []int32{tg.OpAdd, tg.OpMul} {
		s := &tg.Model{}
		sa, sb, so := s.AddTensor(f32("a", 1, 2)), s.AddTensor(f32("b", 1, 2)), s.AddTensor(f32("out", 1, 2))
		s.Inputs, s.Outputs = []int32{sa, sb}, []int32{so}
		s.AddOp(code, nil, []int32{sa, sb}, so)
		m.Subgraphs = append(m.Subgraphs, s)
	}
	return m
}

// TestIfTFLMValues: TFLite Micro's IF model with the condition an input
// (both branches run, a Where selects) and a constant (only the branch
// taken is imported). TFLite Micro's if_test: cond true, a (2, 5), b (3,
// 7) gives (5, 12); false gives the product (6, 35).
func TestIfTFLMValues(t *testing.T) {
	a, b := fdata([]int{1, 2}, 2, 5), fdata([]int{1, 2}, 3, 7)
	want := map[bool][]float32{true: {5, 12}, false: {6, 35}}
	boolData := func(v bool) *graph.Data {
		d := graph.NewData(graph.Bool, []int{1})
		if v {
			d.I[0] = 1
		}
		return d
	}
	build := func(t *testing.T) *graph.Graph { return decodeOK(t, "if_dyn", tflmIfModel(nil)) }
	g := build(t)
	if !slices.ContainsFunc(g.Nodes, func(n *graph.Node) bool { return n.Op == graph.Where }) {
		t.Errorf("a run-time condition should select with a Where")
	}
	var vecs []map[string]*graph.Data
	for _, cv := range []bool{true, false} {
		feeds := map[string]*graph.Data{"cond": boolData(cv), "a": a, "b": b}
		out := runOK(t, g, feeds)
		if got := out[g.Outputs[0]].F; !slices.Equal(got, want[cv]) {
			t.Errorf("cond %v: %v, want %v", cv, got, want[cv])
		}
		vecs = append(vecs, feeds)
	}
	fw := []firmwareCase{{name: "if_dyn", graph: build, vecs: vecs, check: func(t *testing.T, v int, outs []*graph.Data) {
		if w := want[v == 0]; !slices.Equal(outs[0].F, w) {
			t.Errorf("vector %d: %v, want %v", v, outs[0].F, w)
		}
	}}}
	for _, cv := range []bool{true, false} {
		name := map[bool]string{true: "if_then", false: "if_else"}[cv]
		build := func(t *testing.T) *graph.Graph { return decodeOK(t, name, tflmIfModel(&cv)) }
		g := build(t)
		if len(g.Nodes) != 1 || g.Nodes[0].Op != map[bool]graph.Op{true: graph.Add, false: graph.Mul}[cv] || g.Nodes[0].Outputs[0] != "out" {
			t.Errorf("%s: nodes %v, want the one branch taken", name, g.Nodes)
		}
		out := runOK(t, g, map[string]*graph.Data{"a": a, "b": b})
		if got := out[g.Outputs[0]].F; !slices.Equal(got, want[cv]) {
			t.Errorf("%s: %v, want %v", name, got, want[cv])
		}
		fw = append(fw, firmwareCase{name: name, graph: build, vecs: []map[string]*graph.Data{{"a": a, "b": b}},
			check: func(t *testing.T, _ int, outs []*graph.Data) {
				if !slices.Equal(outs[0].F, want[cv]) {
					t.Errorf("%v, want %v", outs[0].F, want[cv])
				}
			}})
	}
	matchesOnBoards(t, "ctl_", fw)
}

// rnnWhileModel is a simple RNN over T time steps written as the TFLite
// converter writes a Keras recurrent layer it does not fuse: a WHILE over
// (i, h, seq, x) whose condition is i < T and whose body gathers x's time
// step i, computes h = tanh(x_i·Wx + bx + h·Wh), writes h into seq at
// step i with DYNAMIC_UPDATE_SLICE (start indices packed from i), and adds
// one to i.
func rnnWhileModel(T, F, H int, wx, bx, wh []float32) *tg.Model {
	i32 := func(name string, v ...int32) tg.Tensor {
		t := tg.Tensor{Name: name, Type: tg.Int32, Shape: []int32{}}
		if v != nil {
			t.Data = tg.I32Bytes(v...)
		}
		return t
	}
	t32, f32s, h32 := int32(T), int32(F), int32(H)
	m := &tg.Model{}
	x := m.AddTensor(f32("x", 1, t32, f32s))
	i0 := m.AddTensor(i32("i0", 0))
	h0 := m.AddTensor(tg.Tensor{Name: "h0", Type: tg.Float32, Shape: []int32{1, h32}, Data: tg.F32Bytes(make([]float32, H)...)})
	s0 := m.AddTensor(tg.Tensor{Name: "seq0", Type: tg.Float32, Shape: []int32{1, t32, h32}, Data: tg.F32Bytes(make([]float32, T*H)...)})
	oi, oh, os, ox := m.AddTensor(i32("i_out")), m.AddTensor(f32("h_out", 1, h32)), m.AddTensor(f32("seq", 1, t32, h32)), m.AddTensor(f32("x_out", 1, t32, f32s))
	m.Inputs, m.Outputs = []int32{x}, []int32{os, oh}
	m.AddOp(opWhile, &tg.Options{Type: optWhile, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 2)}}, []int32{i0, h0, s0, x}, oi, oh, os, ox)

	cond := &tg.Model{}
	ci, ch, cs, cx := cond.AddTensor(i32("i")), cond.AddTensor(f32("h", 1, h32)), cond.AddTensor(f32("seq", 1, t32, h32)), cond.AddTensor(f32("x", 1, t32, f32s))
	ct := cond.AddTensor(i32("T", t32))
	cl := cond.AddTensor(tg.Tensor{Name: "more", Type: tg.BoolT, Shape: []int32{}})
	cond.Inputs, cond.Outputs = []int32{ci, ch, cs, cx}, []int32{cl}
	cond.AddOp(opLess, nil, []int32{ci, ct}, cl)

	b := &tg.Model{}
	bi, bh, bs, bxx := b.AddTensor(i32("i")), b.AddTensor(f32("h", 1, h32)), b.AddTensor(f32("seq", 1, t32, h32)), b.AddTensor(f32("x", 1, t32, f32s))
	xt := b.AddTensor(f32("x_t", 1, f32s))
	b.AddOp(opGather, &tg.Options{Type: optGather, Fields: []tg.Field{tg.I32(0, 1)}}, []int32{bxx, bi}, xt)
	wxT := b.AddTensor(tg.Tensor{Name: "wx", Type: tg.Float32, Shape: []int32{h32, f32s}, Data: tg.F32Bytes(wx...)})
	bxT := b.AddTensor(tg.Tensor{Name: "bx", Type: tg.Float32, Shape: []int32{h32}, Data: tg.F32Bytes(bx...)})
	whT := b.AddTensor(tg.Tensor{Name: "wh", Type: tg.Float32, Shape: []int32{h32, h32}, Data: tg.F32Bytes(wh...)})
	p, q, s, hn := b.AddTensor(f32("xw", 1, h32)), b.AddTensor(f32("hw", 1, h32)), b.AddTensor(f32("pre", 1, h32)), b.AddTensor(f32("h_new", 1, h32))
	b.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(0, false), []int32{xt, wxT, bxT}, p)
	b.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(0, false), []int32{bh, whT, -1}, q)
	b.AddOp(tg.OpAdd, nil, []int32{p, q}, s)
	b.AddOp(tg.OpTanh, nil, []int32{s}, hn)
	shape3 := b.AddTensor(tg.Tensor{Name: "shape3", Type: tg.Int32, Shape: []int32{3}, Data: tg.I32Bytes(1, 1, h32)})
	hr := b.AddTensor(f32("h_row", 1, 1, h32))
	b.AddOp(tg.OpReshape, nil, []int32{hn, shape3}, hr)
	zero, one := b.AddTensor(i32("zero", 0)), b.AddTensor(i32("one", 1))
	start := b.AddTensor(tg.Tensor{Name: "start", Type: tg.Int32, Shape: []int32{3}})
	b.AddOp(opPack, &tg.Options{Type: optPack, Fields: []tg.Field{tg.I32(0, 3), tg.I32(1, 0)}}, []int32{zero, bi, zero}, start)
	sn := b.AddTensor(f32("seq_new", 1, t32, h32))
	b.AddOp(opDUS, nil, []int32{bs, hr, start}, sn)
	in := b.AddTensor(i32("i_next"))
	b.AddOp(tg.OpAdd, nil, []int32{bi, one}, in)
	b.Inputs, b.Outputs = []int32{bi, bh, bs, bxx}, []int32{in, hn, sn, bxx}
	m.Subgraphs = []*tg.Model{cond, b}
	return m
}

// TestWhileRNNUnrolled: the RNN's outputs equal a float64 recurrence
// worked in the test, in the reference interpreter, on the host with the
// sanitizers and on the M4.
func TestWhileRNNUnrolled(t *testing.T) {
	const T, F, H = 5, 3, 4
	r := tg.NewRand(36)
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = r.Float()
		}
		return v
	}
	wx, bx, wh := rnd(H*F), rnd(H), rnd(H*H)
	build := func(t *testing.T) *graph.Graph { return decodeOK(t, "rnn_while", rnnWhileModel(T, F, H, wx, bx, wh)) }
	g := build(t)
	for _, n := range g.Nodes {
		if n.Op == graph.Compare || n.Op == graph.Concat {
			t.Errorf("node %s (%s) should have folded at compile time", n.Name, n.Op)
		}
	}
	var vecs []map[string]*graph.Data
	var wants [][]float64
	for v := range 3 {
		xs := rnd(T * F)
		h := make([]float64, H)
		var seq []float64
		for step := range T {
			nh := make([]float64, H)
			for j := range H {
				acc := float64(bx[j])
				for k := range F {
					acc += float64(xs[step*F+k]) * float64(wx[j*F+k])
				}
				for k := range H {
					acc += float64(h[k]) * float64(wh[j*H+k])
				}
				nh[j] = math.Tanh(acc)
			}
			h = nh
			seq = append(seq, h...)
		}
		feeds := map[string]*graph.Data{"x": fdata([]int{1, T, F}, xs...)}
		out := runOK(t, g, feeds)
		got := out[g.Outputs[0]].F
		for i, w := range seq {
			if math.Abs(float64(got[i])-w) > 1e-5*math.Max(1, math.Abs(w)) {
				t.Errorf("vector %d: seq[%d] = %v, want %v", v, i, got[i], w)
			}
		}
		if hl := out[g.Outputs[1]].F; math.Abs(float64(hl[H-1])-h[H-1]) > 1e-5 {
			t.Errorf("vector %d: last h %v, want %v", v, hl, h)
		}
		vecs = append(vecs, feeds)
		wants = append(wants, seq)
	}
	matchesOnBoards(t, "ctl_", []firmwareCase{{name: "rnn_while", graph: build, vecs: vecs, check: func(t *testing.T, v int, outs []*graph.Data) {
		for i, w := range wants[v] {
			if got := outs[0].F[i]; math.Abs(float64(got)-w) > 1e-5*math.Max(1, math.Abs(w)) {
				t.Errorf("vector %d: seq[%d] = %v, want %v", v, i, got, w)
			}
		}
	}}})
}

// TestControlFlowRefusals: what mcugen cannot unroll gets one line naming
// the operator and the reason.
func TestControlFlowRefusals(t *testing.T) {
	// while a < b: a += b, from a = -5000, b = 1: 5001 times.
	long := tflmWhileModel(ptr[float32](-5000), ptr[float32](1))
	// The then branch runs an IF whose then branch is itself, always.
	selfLoop := tflmIfModel(ptr(true))
	s := selfLoop.Subgraphs[0]
	ct := s.AddTensor(tg.Tensor{Name: "yes", Type: tg.BoolT, Shape: []int32{1}, Data: []byte{1}})
	r := s.AddTensor(f32("r", 1, 2))
	s.AddOp(opIf, &tg.Options{Type: optIf, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 2)}}, []int32{ct, 0, 1}, r)
	s.Outputs = []int32{r}
	// Each of 4001 iterations runs an inner loop of 4001 that folds away:
	// 32 million operators to import.
	nested := tflmWhileModel(ptr[float32](-4000), ptr[float32](1))
	nb := nested.Subgraphs[1]
	c0 := nb.AddTensor(tg.Tensor{Name: "c0", Type: tg.Float32, Shape: []int32{1}, Data: tg.F32Bytes(-4000)})
	c1 := nb.AddTensor(tg.Tensor{Name: "c1", Type: tg.Float32, Shape: []int32{1}, Data: tg.F32Bytes(1)})
	r1, r2, r3 := nb.AddTensor(f32("r1", 1)), nb.AddTensor(f32("r2", 1)), nb.AddTensor(f32("r3", 1))
	nb.AddOp(opWhile, &tg.Options{Type: optWhile, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 3)}}, []int32{c0, c1, nb.Outputs[2]}, r1, r2, r3)
	nb.Outputs[2] = r3
	inner := &tg.Model{}
	ia, ib, ix, is := inner.AddTensor(f32("a", 1)), inner.AddTensor(f32("b", 1)), inner.AddTensor(f32("x", 1)), inner.AddTensor(f32("s", 1))
	inner.Inputs, inner.Outputs = []int32{ia, ib, ix}, []int32{is, ib, ix}
	inner.AddOp(tg.OpAdd, nil, []int32{ia, ib}, is)
	nested.Subgraphs = append(nested.Subgraphs, inner)
	badIndex := tflmIfModel(nil)
	badIndex.Ops[0].Options = &tg.Options{Type: optIf, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 7)}}
	shapes := tflmIfModel(nil)
	shapes.Subgraphs[1].Tensors[2].Shape = []int32{2, 1}
	cases := []struct {
		name string
		m    *tg.Model
		want []string
	}{
		{"long", long, []string{"operator 0 (WHILE)", "more than 4096 times"}},
		{"self", selfLoop, []string{"operator 0 (IF)", "nested more than"}},
		{"nested", nested, []string{"operator 0 (WHILE)", "more than 50000 operators"}},
		{"index", badIndex, []string{"operator 0 (IF)", "else branch (subgraph 7)", "3 subgraphs"}},
		{"shapes", shapes, []string{"operator 0 (IF)", "output 0", "must agree"}},
	}
	for _, c := range cases {
		_, err := tflite.Decode(c.name, c.m.Bytes())
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q in it", c.name, err, w)
			}
		}
		if strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%s: more than one line: %v", c.name, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestIfInt8: an int8 IF with a run-time condition; a, b and the output at
// scale 0.5, zero point 0, so the ADD is qa + qb and the MUL qa·qb·0.25/0.5
// (even products: no rounding). a (4, -6), b (2, 8): then (6, 2), else
// (4, -24).
func TestIfInt8(t *testing.T) {
	m := tflmIfModel(nil)
	q := func(tt *tg.Tensor) { tt.Type, tt.Scale, tt.ZeroPoint = tg.Int8, []float32{0.5}, []int64{0} }
	for i := 1; i < 4; i++ {
		q(&m.Tensors[i])
	}
	for _, s := range m.Subgraphs {
		for i := range s.Tensors {
			q(&s.Tensors[i])
		}
	}
	build := func(t *testing.T) *graph.Graph { return decodeOK(t, "if_int8", m) }
	g := build(t)
	i8 := func(v ...int64) *graph.Data { return &graph.Data{DType: graph.Int8, Shape: []int{1, 2}, I: v} }
	cond := func(v int64) *graph.Data { return &graph.Data{DType: graph.Bool, Shape: []int{1}, I: []int64{v}} }
	want := [][]int64{{6, 2}, {4, -24}}
	var vecs []map[string]*graph.Data
	for v, c := range []int64{1, 0} {
		feeds := map[string]*graph.Data{"cond": cond(c), "a": i8(4, -6), "b": i8(2, 8)}
		if got := runOK(t, g, feeds)[g.Outputs[0]].I; !slices.Equal(got, want[v]) {
			t.Errorf("cond %d: %v, want %v", c, got, want[v])
		}
		vecs = append(vecs, feeds)
	}
	matchesOnBoards(t, "ctl_", []firmwareCase{{name: "if_int8", graph: build, vecs: vecs, want: [][][]int64{{want[0]}, {want[1]}}}})
}

// TestControlFlowNote: compile prints one note naming the file and what
// was unrolled.
func TestControlFlowNote(t *testing.T) {
	for _, c := range []struct {
		m    *tg.Model
		want string
	}{
		{tflmWhileModel(ptr[float32](-5), ptr[float32](3)), "w.tflite: control flow unrolled at compile time: operator 0 (WHILE) 3 times"},
		{tflmIfModel(nil), "w.tflite: control flow unrolled at compile time: operator 0 (IF) both branches (the condition is known at run time; a Where selects)"},
	} {
		var notes []string
		if _, err := tflite.DecodeWith("w.tflite", c.m.Bytes(), tflite.Options{Warn: func(s string) { notes = append(notes, s) }}); err != nil {
			t.Fatal(err)
		}
		if len(notes) != 1 || notes[0] != c.want {
			t.Errorf("notes %q, want %q", notes, c.want)
		}
	}
}

// branchModel calls one branch subgraph, y = op(x, w), from two IFs whose
// condition is a constant true, with weights w1 and w2 of the main graph.
func branchModel(x, w1, w2, sx, sw, sy tg.Tensor, op func(s *tg.Model, x, w, y int32)) *tg.Model {
	m := &tg.Model{}
	ix := m.AddTensor(x)
	yes := m.AddTensor(tg.Tensor{Name: "yes", Type: tg.BoolT, Shape: []int32{1}, Data: []byte{1}})
	a, b := m.AddTensor(w1), m.AddTensor(w2)
	y1, y2 := sy, sy
	y1.Name, y2.Name = "y1", "y2"
	o1, o2 := m.AddTensor(y1), m.AddTensor(y2)
	m.Inputs, m.Outputs = []int32{ix}, []int32{o1, o2}
	opt := &tg.Options{Type: optIf, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 1)}}
	m.AddOp(opIf, opt, []int32{yes, ix, a}, o1)
	m.AddOp(opIf, opt, []int32{yes, ix, b}, o2)
	s := &tg.Model{}
	bx, bw, by := s.AddTensor(sx), s.AddTensor(sw), s.AddTensor(sy)
	op(s, bx, bw, by)
	s.Inputs, s.Outputs = []int32{bx, bw}, []int32{by}
	m.Subgraphs = []*tg.Model{s}
	return m
}

// TestControlFlowWeightsPerCopy: the caches by tensor index (a depthwise
// layer's transposed weights, a hybrid layer's dequantized ones) must not
// carry one copy's weights into another when the weights are a subgraph
// input (review finding: the second IF used the first's weights). A 1×1
// depthwise layer over x = (1, 3): w1 (1, 1) gives (1, 3), w2 (5, 7) gives
// (5, 21); a hybrid fully connected layer, int8 weights at scale 1, over x =
// (1, 2): w1 (1, 1) gives 3, w2 (3, 4) gives 11.
func TestControlFlowWeightsPerCopy(t *testing.T) {
	dw := func(s *tg.Model, x, w, y int32) {
		bias := s.AddTensor(tg.Tensor{Name: "bias", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(0, 0)})
		s.AddOp(tg.OpDepthwiseConv2D, tg.DepthwiseOptions(1, 1, 1, 1, 0, 1, 1), []int32{x, w, bias}, y)
	}
	wt := func(name string, v ...float32) tg.Tensor {
		return tg.Tensor{Name: name, Type: tg.Float32, Shape: []int32{1, 1, 1, 2}, Data: tg.F32Bytes(v...)}
	}
	m := branchModel(f32("x", 1, 1, 1, 2), wt("w1", 1, 1), wt("w2", 5, 7), f32("x", 1, 1, 1, 2), f32("w", 1, 1, 1, 2), f32("y", 1, 1, 1, 2), dw)
	g := decodeOK(t, "dw_branch", m)
	out := runOK(t, g, map[string]*graph.Data{"x": fdata([]int{1, 1, 1, 2}, 1, 3)})
	if a, b := out["y1"].F, out["y2"].F; !slices.Equal(a, []float32{1, 3}) || !slices.Equal(b, []float32{5, 21}) {
		t.Errorf("depthwise: %v %v, want [1 3] [5 21]", a, b)
	}

	fc := func(s *tg.Model, x, w, y int32) {
		s.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(0, false), []int32{x, w, -1}, y)
	}
	q := func(name string, v ...int8) tg.Tensor {
		return tg.Tensor{Name: name, Type: tg.Int8, Shape: []int32{1, 2}, Data: tg.I8Bytes(v...), Scale: []float32{1}, ZeroPoint: []int64{0}}
	}
	sw := q("w")
	sw.Data = nil
	m = branchModel(f32("x", 1, 2), q("w1", 1, 1), q("w2", 3, 4), f32("x", 1, 2), sw, f32("y", 1, 1), fc)
	g = decodeOK(t, "hybrid_branch", m)
	out = runOK(t, g, map[string]*graph.Data{"x": fdata([]int{1, 2}, 1, 2)})
	if a, b := out["y1"].F, out["y2"].F; !slices.Equal(a, []float32{3}) || !slices.Equal(b, []float32{11}) {
		t.Errorf("hybrid: %v %v, want [3] [11]", a, b)
	}
}

// TestControlFlowCallerLayout: a depthwise layer inside a branch reads the
// caller's weights, which the caller reads again afterwards in the file's
// layout (review finding: the branch's transposition took their name, and
// the caller read (1, 3, 2, 4) for (1, 2, 3, 4)). Then the weights as a
// loop variable doubled each time round, x = dw(x, w) three times: 8x
// (refused before: the transposed layout leaked into the loop variable).
func TestControlFlowCallerLayout(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(f32("x", 1, 1, 2, 2))
	yes := m.AddTensor(tg.Tensor{Name: "yes", Type: tg.BoolT, Shape: []int32{1}, Data: []byte{1}})
	w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Float32, Shape: []int32{1, 1, 2, 2}, Data: tg.F32Bytes(1, 2, 3, 4)})
	shp := m.AddTensor(tg.Tensor{Name: "shp", Type: tg.Int32, Shape: []int32{1}, Data: tg.I32Bytes(4)})
	y, wf := m.AddTensor(f32("y", 1, 1, 2, 2)), m.AddTensor(f32("wflat", 4))
	m.Inputs, m.Outputs = []int32{x}, []int32{y, wf}
	m.AddOp(opIf, &tg.Options{Type: optIf, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 1)}}, []int32{yes, x, w}, y)
	m.AddOp(tg.OpReshape, nil, []int32{w, shp}, wf)
	s := &tg.Model{}
	sx, sw, sy := s.AddTensor(f32("x", 1, 1, 2, 2)), s.AddTensor(f32("w", 1, 1, 2, 2)), s.AddTensor(f32("y", 1, 1, 2, 2))
	bias := s.AddTensor(tg.Tensor{Name: "bias", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(0, 0)})
	s.AddOp(tg.OpDepthwiseConv2D, tg.DepthwiseOptions(0, 1, 1, 1, 0, 1, 1), []int32{sx, sw, bias}, sy)
	s.Inputs, s.Outputs = []int32{sx, sw}, []int32{sy}
	m.Subgraphs = []*tg.Model{s}
	g := decodeOK(t, "dw_caller", m)
	out := runOK(t, g, map[string]*graph.Data{"x": fdata([]int{1, 1, 2, 2}, 0, 0, 0, 0)})
	if got := out["wflat"].F; !slices.Equal(got, []float32{1, 2, 3, 4}) {
		t.Errorf("the caller reads %v, want [1 2 3 4]", got)
	}

	// while w < 8: x = dw(x, w), w = 2w, from w = (1, 1).
	m = &tg.Model{}
	x = m.AddTensor(f32("x", 1, 1, 1, 2))
	w0 := m.AddTensor(tg.Tensor{Name: "w0", Type: tg.Float32, Shape: []int32{1, 1, 1, 2}, Data: tg.F32Bytes(1, 1)})
	ow, ox := m.AddTensor(f32("w_out", 1, 1, 1, 2)), m.AddTensor(f32("x_out", 1, 1, 1, 2))
	m.Inputs, m.Outputs = []int32{x}, []int32{ox}
	m.AddOp(opWhile, &tg.Options{Type: optWhile, Fields: []tg.Field{tg.I32(0, 1), tg.I32(1, 2)}}, []int32{w0, x}, ow, ox)
	cond := &tg.Model{}
	cw, cx := cond.AddTensor(f32("w", 1, 1, 1, 2)), cond.AddTensor(f32("x", 1, 1, 1, 2))
	eight := cond.AddTensor(tg.Tensor{Name: "eight", Type: tg.Float32, Shape: []int32{1, 1, 1, 2}, Data: tg.F32Bytes(8, 8)})
	less := cond.AddTensor(tg.Tensor{Name: "less", Type: tg.BoolT, Shape: []int32{1, 1, 1, 2}})
	ax := cond.AddTensor(tg.Tensor{Name: "axes", Type: tg.Int32, Shape: []int32{4}, Data: tg.I32Bytes(0, 1, 2, 3)})
	all := cond.AddTensor(tg.Tensor{Name: "all", Type: tg.BoolT, Shape: []int32{}})
	cond.AddOp(opLess, nil, []int32{cw, eight}, less)
	cond.AddOp(140, &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, false)}}, []int32{less, ax}, all) // REDUCE_ALL
	cond.Inputs, cond.Outputs = []int32{cw, cx}, []int32{all}
	b := &tg.Model{}
	bw, bx := b.AddTensor(f32("w", 1, 1, 1, 2)), b.AddTensor(f32("x", 1, 1, 1, 2))
	bb := b.AddTensor(tg.Tensor{Name: "bias", Type: tg.Float32, Shape: []int32{2}, Data: tg.F32Bytes(0, 0)})
	two := b.AddTensor(tg.Tensor{Name: "two", Type: tg.Float32, Shape: []int32{1}, Data: tg.F32Bytes(2)})
	nw, nx := b.AddTensor(f32("w_next", 1, 1, 1, 2)), b.AddTensor(f32("x_next", 1, 1, 1, 2))
	b.AddOp(tg.OpDepthwiseConv2D, tg.DepthwiseOptions(1, 1, 1, 1, 0, 1, 1), []int32{bx, bw, bb}, nx)
	b.AddOp(tg.OpMul, nil, []int32{bw, two}, nw)
	b.Inputs, b.Outputs = []int32{bw, bx}, []int32{nw, nx}
	m.Subgraphs = []*tg.Model{cond, b}
	g = decodeOK(t, "dw_loopvar", m)
	out = runOK(t, g, map[string]*graph.Data{"x": fdata([]int{1, 1, 1, 2}, 1, 3)})
	if got := out["x_out"].F; !slices.Equal(got, []float32{8, 24}) {
		t.Errorf("loop: %v, want [8 24]", got)
	}
}

// TestControlFlowFoldBound: a loop that sums a large constant every time
// round is refused at once (review finding: 113 s to import 16 MB).
func TestControlFlowFoldBound(t *testing.T) {
	m := tflmWhileModel(ptr[float32](-4000), ptr[float32](1))
	b := m.Subgraphs[1]
	const n = 1 << 18
	big := b.AddTensor(tg.Tensor{Name: "big", Type: tg.Float32, Shape: []int32{n}, Data: tg.F32Bytes(make([]float32, n)...)})
	ax := b.AddTensor(tg.Tensor{Name: "ax", Type: tg.Int32, Shape: []int32{1}, Data: tg.I32Bytes(0)})
	s, bs := b.AddTensor(f32("s", 1)), b.AddTensor(f32("b2", 1))
	b.AddOp(tg.OpSum, &tg.Options{Type: tg.OptReducer, Fields: []tg.Field{tg.Bool(0, true)}}, []int32{big, ax}, s)
	b.AddOp(tg.OpAdd, nil, []int32{b.Outputs[1], s}, bs)
	b.Outputs[1] = bs
	_, err := tflite.Decode("fold_bound", m.Bytes())
	if err == nil || !strings.Contains(err.Error(), "operator 0 (WHILE)") || !strings.Contains(err.Error(), "more than 64 MiB of constant data") {
		t.Fatalf("err = %v", err)
	}
}

// TestIfRunTimeIntegerDivision: with a run-time condition both branches
// run, so a branch that divides by b runs even where the condition keeps
// it from b = 0 (review question). Integer division by zero gives 0 in
// mcugen's kernels and the Where keeps the other branch: int32 a (7, -9),
// cond true, b (0, 0) gives a + b = (7, -9); cond false, b (2, 4) gives
// a / b truncated, (3, -2). On the host with the sanitizers and on the M4.
func TestIfRunTimeIntegerDivision(t *testing.T) {
	m := tflmIfModel(nil)
	for _, ts := range [][]tg.Tensor{m.Tensors, m.Subgraphs[0].Tensors, m.Subgraphs[1].Tensors} {
		for i := range ts {
			if ts[i].Type == tg.Float32 {
				ts[i].Type = tg.Int32
			}
		}
	}
	m.Subgraphs[1].Ops[0].Code = 42 // DIV
	build := func(t *testing.T) *graph.Graph { return decodeOK(t, "if_div", m) }
	g := build(t)
	i32 := func(v ...int64) *graph.Data { return &graph.Data{DType: graph.Int32, Shape: []int{1, 2}, I: v} }
	cond := func(v int64) *graph.Data { return &graph.Data{DType: graph.Bool, Shape: []int{1}, I: []int64{v}} }
	vecs := []map[string]*graph.Data{
		{"cond": cond(1), "a": i32(7, -9), "b": i32(0, 0)},
		{"cond": cond(0), "a": i32(7, -9), "b": i32(2, 4)},
	}
	want := [][]int64{{7, -9}, {3, -2}}
	for v, feeds := range vecs {
		if got := runOK(t, g, feeds)[g.Outputs[0]].I; !slices.Equal(got, want[v]) {
			t.Errorf("vector %d: %v, want %v", v, got, want[v])
		}
	}
	matchesOnBoards(t, "ctl_", []firmwareCase{{name: "if_div", graph: build, vecs: vecs, want: [][][]int64{{want[0]}, {want[1]}}}})
}
