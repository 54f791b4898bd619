package onnx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Control flow is unrolled at import (control.go). These models are built
// here and their values worked by hand; the backend tests test_if,
// test_scan_sum and test_scan9_sum check the same against ONNX's files.

// sub starts a subgraph (a branch or a body): its inputs and outputs are
// declared with Input and Output, its nodes added with node.
func sub(name string) *onnx.Builder { return onnx.NewBuilder(name, 13, 1) }

// node adds a node of one output named out to b's graph.
func node(b *onnx.Builder, op string, ins []string, out string, attrs ...*onnx.Attribute) string {
	g := b.Model().Graph
	g.Nodes = append(g.Nodes, &onnx.Node{Name: out + "_node", OpType: op, Input: ins, Output: []string{out}, Attribute: attrs})
	return out
}

// nodeN adds a named node with several outputs.
func nodeN(b *onnx.Builder, name, op string, ins, outs []string, attrs ...*onnx.Attribute) {
	g := b.Model().Graph
	g.Nodes = append(g.Nodes, &onnx.Node{Name: name, OpType: op, Input: ins, Output: outs, Attribute: attrs})
}

func graphAttr(name string, b *onnx.Builder) *onnx.Attribute {
	return &onnx.Attribute{Name: name, Type: onnx.AttrGraph, G: b.Model().Graph}
}

func boolScalar(v bool) *graph.Data {
	d := graph.NewData(graph.Bool, []int{})
	if v {
		d.I[0] = 1
	}
	return d
}

// runCtl imports bl's model and runs it on inputs in the interpreter.
func runCtl(t *testing.T, bl *onnx.Builder, inputs map[string]*graph.Data) []*graph.Data {
	t.Helper()
	g, err := onnx.Decode("m", bl.Model().Marshal(), onnx.Options{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	out, err := interp.Run(g, inputs)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	res := make([]*graph.Data, len(g.Outputs))
	for i, nm := range g.Outputs {
		res[i] = out[nm]
	}
	return res
}

// loopModel: y carried from x for 3 iterations (M constant, cond absent),
// y <- 2y + i, each iteration's y a scan output.
func loopModel() *onnx.Builder {
	body := sub("body")
	body.Input("i", graph.Int64)
	body.Input("c", graph.Bool)
	body.Input("y", graph.Float32, 2)
	body.Scalar("two", graph.Float32, 2)
	node(body, "Identity", []string{"c"}, "c_out")
	node(body, "Cast", []string{"i"}, "i_f", onnx.IntAttr("to", 1))
	node(body, "Mul", []string{"y", "two"}, "y2")
	node(body, "Add", []string{"y2", "i_f"}, "y_out")
	node(body, "Identity", []string{"y_out"}, "y_scan")
	body.Output("c_out", graph.Bool)
	body.Output("y_out", graph.Float32, 2)
	body.Output("y_scan", graph.Float32, 2)

	bl := onnx.NewBuilder("loop", 13, 1)
	x := bl.Input("x", graph.Float32, 2)
	bl.Scalar("M", graph.Int64, 3)
	nodeN(bl, "loop", "Loop", []string{"M", "", x}, []string{"y_final", "y_all"}, graphAttr("body", body))
	bl.Output("y_final", graph.Float32, 2)
	bl.Output("y_all", graph.Float32, 3, 2)
	return bl
}

// TestLoopConstantTripCount: x = (1, -1); y = 2y + i for i = 0, 1, 2:
// (2, -2), (5, -3), (12, -4).
func TestLoopConstantTripCount(t *testing.T) {
	got := runCtl(t, loopModel(), map[string]*graph.Data{"x": f32([]int{2}, 1, -1)})
	checkData(t, "final y", got[0], graph.Float32, []int{2}, []float64{12, -4})
	checkData(t, "scan of y", got[1], graph.Float32, []int{3, 2}, []float64{2, -2, 5, -3, 12, -4})
}

// TestLoopCondStopsEarly: M = 10 but the body's condition i < 2 is false
// at iteration 2, so the body runs for i = 0, 1, 2: s = 0 + x + x + x
// with x read from the enclosing scope; the scan outputs are s after each
// iteration and i as a float.
func TestLoopCondStopsEarly(t *testing.T) {
	body := sub("body")
	body.Input("i", graph.Int64)
	body.Input("c", graph.Bool)
	body.Input("s", graph.Float32, 1)
	body.Scalar("two", graph.Int64, 2)
	node(body, "Less", []string{"i", "two"}, "c_out")
	node(body, "Add", []string{"s", "x"}, "s_out")
	node(body, "Identity", []string{"s_out"}, "s_scan")
	node(body, "Cast", []string{"i"}, "i_scan", onnx.IntAttr("to", 1))
	body.Output("c_out", graph.Bool)
	body.Output("s_out", graph.Float32, 1)
	body.Output("s_scan", graph.Float32, 1)
	body.Output("i_scan", graph.Float32)

	bl := onnx.NewBuilder("while", 13, 1)
	bl.Input("x", graph.Float32, 1)
	bl.Scalar("M", graph.Int64, 10)
	bl.Init("cond", boolScalar(true))
	bl.Floats("s0", 0)
	nodeN(bl, "while", "Loop", []string{"M", "cond", "s0"}, []string{"s_final", "s_all", "i_all"}, graphAttr("body", body))
	bl.Output("s_final", graph.Float32, 1)
	bl.Output("s_all", graph.Float32, 3, 1)
	bl.Output("i_all", graph.Float32, 3)
	got := runCtl(t, bl, map[string]*graph.Data{"x": f32([]int{1}, 1.5)})
	checkData(t, "final s", got[0], graph.Float32, []int{1}, []float64{4.5})
	checkData(t, "scan of s", got[1], graph.Float32, []int{3, 1}, []float64{1.5, 3, 4.5})
	checkData(t, "scan of i", got[2], graph.Float32, []int{3}, []float64{0, 1, 2})
}

// ifModel: then x + 1, else x - 1, the condition given by cond (a
// constant when c is non-nil, else the graph input "cond").
func ifModel(c *graph.Data) *onnx.Builder {
	then := sub("then")
	then.Floats("one_t", 1)
	node(then, "Add", []string{"x", "one_t"}, "t_out")
	then.Output("t_out", graph.Float32, 2)
	els := sub("else")
	els.Floats("one_e", 1)
	node(els, "Sub", []string{"x", "one_e"}, "e_out")
	els.Output("e_out", graph.Float32, 2)

	bl := onnx.NewBuilder("if", 13, 1)
	bl.Input("x", graph.Float32, 2)
	if c != nil {
		bl.Init("cond", c)
	} else {
		bl.Input("cond", graph.Bool)
	}
	nodeN(bl, "if", "If", []string{"cond"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))
	bl.Output("y", graph.Float32, 2)
	return bl
}

// TestIfConstantCond: x = (1, 2); true takes x + 1 = (2, 3), false
// x - 1 = (0, 1), and only the branch taken is in the graph.
func TestIfConstantCond(t *testing.T) {
	x := map[string]*graph.Data{"x": f32([]int{2}, 1, 2)}
	for _, c := range []struct {
		cond bool
		want []float64
		op   graph.Op
	}{{true, []float64{2, 3}, graph.Add}, {false, []float64{0, 1}, graph.Sub}} {
		bl := ifModel(boolScalar(c.cond))
		got := runCtl(t, bl, x)
		checkData(t, "If", got[0], graph.Float32, []int{2}, c.want)
		g, err := onnx.Import("m", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Nodes {
			if n.Op == graph.Where || (n.Op == graph.Add || n.Op == graph.Sub) && n.Op != c.op {
				t.Errorf("cond %v: node %s (%s) of the branch not taken", c.cond, n.Name, n.Op)
			}
		}
	}
}

// TestIfRunTimeCond: the condition is an input; both branches are in the
// graph and a Where selects: true gives (2, 3), false (0, 1).
func TestIfRunTimeCond(t *testing.T) {
	bl := ifModel(nil)
	for _, c := range []struct {
		cond bool
		want []float64
	}{{true, []float64{2, 3}}, {false, []float64{0, 1}}} {
		got := runCtl(t, bl, map[string]*graph.Data{"x": f32([]int{2}, 1, 2), "cond": boolScalar(c.cond)})
		checkData(t, "If", got[0], graph.Float32, []int{2}, c.want)
	}
}

// TestScanReverseAxis1: state s = (0, 10); X = [[1,2,3],[4,5,6]] scanned
// along axis 1 in reverse, so the slices are (3,6), (2,5), (1,4) and s
// goes (3,16), (5,21), (6,25). Scan output 0 stacks s along axis 1
// ([[3,5,6],[16,21,25]]); scan output 1 stacks the slices along axis 0 in
// reverse ([[1,4],[2,5],[3,6]]).
func TestScanReverseAxis1(t *testing.T) {
	body := sub("body")
	body.Input("s", graph.Float32, 2)
	body.Input("col", graph.Float32, 2)
	node(body, "Add", []string{"s", "col"}, "s_out")
	node(body, "Identity", []string{"s_out"}, "s_scan")
	node(body, "Identity", []string{"col"}, "col_scan")
	body.Output("s_out", graph.Float32, 2)
	body.Output("s_scan", graph.Float32, 2)
	body.Output("col_scan", graph.Float32, 2)

	bl := onnx.NewBuilder("scan", 16, 1)
	bl.Input("s0", graph.Float32, 2)
	bl.Input("X", graph.Float32, 2, 3)
	nodeN(bl, "scan", "Scan", []string{"s0", "X"}, []string{"s_final", "s_all", "cols"}, graphAttr("body", body),
		onnx.IntAttr("num_scan_inputs", 1), onnx.IntsAttr("scan_input_axes", 1), onnx.IntsAttr("scan_input_directions", 1),
		onnx.IntsAttr("scan_output_axes", 1, 0), onnx.IntsAttr("scan_output_directions", 0, 1))
	bl.Output("s_final", graph.Float32, 2)
	bl.Output("s_all", graph.Float32, 2, 3)
	bl.Output("cols", graph.Float32, 3, 2)
	got := runCtl(t, bl, map[string]*graph.Data{"s0": f32([]int{2}, 0, 10), "X": f32([]int{2, 3}, 1, 2, 3, 4, 5, 6)})
	checkData(t, "final s", got[0], graph.Float32, []int{2}, []float64{6, 25})
	checkData(t, "scan of s", got[1], graph.Float32, []int{2, 3}, []float64{3, 5, 6, 16, 21, 25})
	checkData(t, "reversed slices", got[2], graph.Float32, []int{3, 2}, []float64{1, 4, 2, 5, 3, 6})
}

// nestedModel: If(cond) then a Loop of M = 2 (an initializer of the
// branch) carrying v from x, v <- v + x, with x read two scopes up; else x.
func nestedModel() *onnx.Builder {
	body := sub("body")
	body.Input("i", graph.Int64)
	body.Input("c", graph.Bool)
	body.Input("v", graph.Float32, 2)
	node(body, "Identity", []string{"c"}, "c_out")
	node(body, "Add", []string{"v", "x"}, "v_out")
	body.Output("c_out", graph.Bool)
	body.Output("v_out", graph.Float32, 2)

	then := sub("then")
	then.Scalar("M", graph.Int64, 2)
	nodeN(then, "inner_loop", "Loop", []string{"M", "", "x"}, []string{"t_out"}, graphAttr("body", body))
	then.Output("t_out", graph.Float32, 2)
	els := sub("else")
	node(els, "Identity", []string{"x"}, "e_out")
	els.Output("e_out", graph.Float32, 2)

	bl := onnx.NewBuilder("nested", 13, 1)
	bl.Input("x", graph.Float32, 2)
	bl.Input("cond", graph.Bool)
	nodeN(bl, "outer_if", "If", []string{"cond"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))
	bl.Output("y", graph.Float32, 2)
	return bl
}

// TestNestedLoopInIf: x = (1, 2); true gives x + x + x = (3, 6), false x.
func TestNestedLoopInIf(t *testing.T) {
	bl := nestedModel()
	for _, c := range []struct {
		cond bool
		want []float64
	}{{true, []float64{3, 6}}, {false, []float64{1, 2}}} {
		got := runCtl(t, bl, map[string]*graph.Data{"x": f32([]int{2}, 1, 2), "cond": boolScalar(c.cond)})
		checkData(t, "If(Loop)", got[0], graph.Float32, []int{2}, c.want)
	}
}

// TestControlDeterministic: unrolled names are the same on every import.
func TestControlDeterministic(t *testing.T) {
	for _, bl := range []*onnx.Builder{loopModel(), nestedModel()} {
		var prints []string
		for range 3 {
			g, err := onnx.Decode("m", bl.Model().Marshal(), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			prints = append(prints, graph.Print(g))
		}
		if prints[0] != prints[1] || prints[1] != prints[2] {
			t.Errorf("%s: imports differ", bl.Model().Graph.Name)
		}
	}
}

// TestControlRefusals: a loop of a run-time trip count or condition, one
// too long, and an If with a run-time condition whose branches differ in
// shape are refused, naming the node and the reason.
func TestControlRefusals(t *testing.T) {
	counter := func() *onnx.Builder {
		body := sub("body")
		body.Input("i", graph.Int64)
		body.Input("c", graph.Bool)
		body.Input("y", graph.Float32, 1)
		node(body, "Identity", []string{"c"}, "c_out")
		node(body, "Add", []string{"y", "y"}, "y_out")
		body.Output("c_out", graph.Bool)
		body.Output("y_out", graph.Float32, 1)
		return body
	}
	loop := func(name string, m, cond *graph.Data, body *onnx.Builder) *onnx.Builder {
		bl := onnx.NewBuilder("refuse", 13, 1)
		bl.Input("y", graph.Float32, 1)
		if m != nil {
			bl.Init("M", m)
		} else {
			bl.Input("M", graph.Int64)
		}
		cin := ""
		if cond != nil {
			cin = bl.Init("cond", cond)
		}
		nodeN(bl, name, "Loop", []string{"M", cin, "y"}, []string{"y_final"}, graphAttr("body", body))
		bl.Output("y_final", graph.Float32, 1)
		return bl
	}
	runTimeCond := sub("body")
	runTimeCond.Input("i", graph.Int64)
	runTimeCond.Input("c", graph.Bool)
	runTimeCond.Input("y", graph.Float32, 1)
	runTimeCond.Floats("lim", 100)
	node(runTimeCond, "Less", []string{"y", "lim"}, "lt")
	node(runTimeCond, "Squeeze", []string{"lt"}, "c_out")
	node(runTimeCond, "Add", []string{"y", "y"}, "y_out")
	runTimeCond.Output("c_out", graph.Bool)
	runTimeCond.Output("y_out", graph.Float32, 1)

	then := sub("then")
	node(then, "Identity", []string{"x"}, "t_out")
	then.Output("t_out", graph.Float32, 2)
	els := sub("else")
	els.Floats("k", 7)
	node(els, "Identity", []string{"k"}, "e_out")
	els.Output("e_out", graph.Float32, 1)
	shapeIf := onnx.NewBuilder("refuse", 13, 1)
	shapeIf.Input("x", graph.Float32, 2)
	shapeIf.Input("cond", graph.Bool)
	nodeN(shapeIf, "pick", "If", []string{"cond"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))
	shapeIf.Output("y", graph.Float32, 2)

	// 4000 iterations of 20 nodes: within the iteration bound, past the
	// 50,000 nodes unrolling may make.
	wide := counter()
	prev := "y"
	for i := range 19 {
		prev = node(wide, "Relu", []string{prev}, fmt.Sprintf("r%d", i))
	}
	wide.Model().Graph.Output[1].Name = prev

	for _, c := range []struct {
		what string
		bl   *onnx.Builder
		want []string
	}{
		{"too many nodes", loop("wide_loop", i64([]int{}, 4000), nil, wide),
			[]string{`node "wide_loop" (Loop)`, "4000 iterations of 21 body nodes", "more than 50000"}},
		{"run-time trip count", loop("count_loop", nil, nil, counter()),
			[]string{`node "count_loop" (Loop)`, `trip count M ("M") depends on the input at run time`, "known at compile time"}},
		{"too many iterations", loop("long_loop", i64([]int{}, 5000), nil, counter()),
			[]string{`node "long_loop" (Loop)`, "5000 iterations", "at most 4096"}},
		{"while loop that does not end", loop("while_loop", i64([]int{}, 1<<40), boolScalar(true), counter()),
			[]string{`node "while_loop" (Loop)`, "still true after 4096 iterations", "at most 4096"}},
		{"run-time condition", loop("cond_loop", i64([]int{}, 3), boolScalar(true), runTimeCond),
			[]string{`node "cond_loop" (Loop)`, `condition the body computes (output "c_out") at iteration 0 depends on the input at run time`}},
		{"branch shapes", shapeIf,
			[]string{`node "pick" (If)`, "then_branch gives shape [2], else_branch [1]", `condition ("cond") is known at run time only`}},
	} {
		_, err := onnx.Decode("m", c.bl.Model().Marshal(), onnx.Options{})
		if err == nil {
			t.Errorf("%s: imported", c.what)
			continue
		}
		t.Logf("%s: %v", c.what, err)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\n  does not say %q", c.what, err, w)
			}
		}
	}
}

// TestCapturedValueNotFolded: c = Conv(x, 2) is read by a BatchNormalization
// in the graph and, by name, by the branches of an If. The normalization
// must not fold into the convolution, whose output the branches still
// read: x = (1, -2) gives c = (2, -4), the normalization 3c + 1 =
// (7, -11), and the If's output c itself.
func TestCapturedValueNotFolded(t *testing.T) {
	branch := func(name string) *onnx.Builder {
		b := sub(name)
		node(b, "Identity", []string{"c"}, name+"_out")
		b.Output(name+"_out", graph.Float32, 1, 1, 1, 2)
		return b
	}
	bl := onnx.NewBuilder("captured", 13, 1)
	bl.Input("x", graph.Float32, 1, 1, 1, 2)
	bl.Input("cond", graph.Bool)
	bl.Init("w", f32([]int{1, 1, 1, 1}, 2))
	bl.Floats("scale", 3)
	bl.Floats("bias", 1)
	bl.Floats("mean", 0)
	bl.Floats("var", 1)
	node(bl, "Conv", []string{"x", "w"}, "c")
	node(bl, "BatchNormalization", []string{"c", "scale", "bias", "mean", "var"}, "bn", onnx.FloatAttr("epsilon", 0))
	nodeN(bl, "if", "If", []string{"cond"}, []string{"y"}, graphAttr("then_branch", branch("then")), graphAttr("else_branch", branch("else")))
	bl.Output("bn", graph.Float32, 1, 1, 1, 2)
	bl.Output("y", graph.Float32, 1, 1, 1, 2)
	got := runCtl(t, bl, map[string]*graph.Data{"x": f32([]int{1, 1, 1, 2}, 1, -2), "cond": boolScalar(true)})
	checkData(t, "normalized", got[0], graph.Float32, []int{1, 1, 1, 2}, []float64{7, -11})
	checkData(t, "If of c", got[1], graph.Float32, []int{1, 1, 1, 2}, []float64{2, -4})
}

// TestIfRunTimeIntegerDivision: with a run-time condition both branches
// run, the dividing one too where the condition keeps it from d = 0;
// integer division by zero gives 0 and the Where keeps the other branch:
// x (7, -9), d (0, 0), cond false gives x; d (2, 4), cond true gives x / d
// truncated, (3, -2).
func TestIfRunTimeIntegerDivision(t *testing.T) {
	then := sub("then")
	node(then, "Div", []string{"x", "d"}, "t_out")
	then.Output("t_out", graph.Int32, 2)
	els := sub("else")
	node(els, "Identity", []string{"x"}, "e_out")
	els.Output("e_out", graph.Int32, 2)
	bl := onnx.NewBuilder("if_div", 13, 1)
	bl.Input("x", graph.Int32, 2)
	bl.Input("d", graph.Int32, 2)
	bl.Input("cond", graph.Bool)
	nodeN(bl, "if", "If", []string{"cond"}, []string{"y"}, graphAttr("then_branch", then), graphAttr("else_branch", els))
	bl.Output("y", graph.Int32, 2)
	i32 := func(v ...int64) *graph.Data { return &graph.Data{DType: graph.Int32, Shape: []int{2}, I: v} }
	got := runCtl(t, bl, map[string]*graph.Data{"x": i32(7, -9), "d": i32(0, 0), "cond": boolScalar(false)})
	checkData(t, "If (d = 0, else)", got[0], graph.Int32, []int{2}, []float64{7, -9})
	got = runCtl(t, bl, map[string]*graph.Data{"x": i32(7, -9), "d": i32(2, 4), "cond": boolScalar(true)})
	checkData(t, "If (then)", got[0], graph.Int32, []int{2}, []float64{3, -2})
}

// TestControlNote: one note names the model and what was unrolled.
func TestControlNote(t *testing.T) {
	for _, c := range []struct {
		bl   *onnx.Builder
		want string
	}{
		{loopModel(), `m: control flow unrolled at compile time: node "loop" (Loop) 3 times`},
		{ifModel(nil), `m: control flow unrolled at compile time: node "if" (If) both branches (the condition is known at run time; a Where selects)`},
		{ifModel(boolScalar(true)), ""},
	} {
		var notes []string
		if _, err := onnx.Decode("m", c.bl.Model().Marshal(), onnx.Options{Warn: func(s string) { notes = append(notes, s) }}); err != nil {
			t.Fatal(err)
		}
		var ctl []string
		for _, n := range notes {
			if strings.Contains(n, "control flow") {
				ctl = append(ctl, n)
			}
		}
		if (c.want == "" && len(ctl) != 0) || (c.want != "" && (len(ctl) != 1 || ctl[0] != c.want)) {
			t.Errorf("notes %q, want %q", ctl, c.want)
		}
	}
}
