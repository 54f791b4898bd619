package quant

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// mlp3: x[1,4,4,2] -> Reshape [1,32] -> fc1 [6] -> relu1 -> fc2 [5] ->
// fc3 [3] -> y.
func mlp3() *graph.Graph {
	g := graph.New("mlp3", "onnx")
	act := func(name string, shape ...int) {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
	}
	act("x", 1, 4, 4, 2)
	act("r", 1, 32)
	act("h1", 1, 6)
	act("a1", 1, 6)
	act("h2", 1, 5)
	act("y", 1, 3)
	w := func(name string, rows, cols int) {
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = float32((i*7+rows)%13-6) / 9
		}
		g.AddConst(name, f32([]int{rows, cols}, v...))
	}
	w("w1", 6, 32)
	w("w2", 5, 6)
	w("w3", 3, 5)
	g.AddConst("b2", f32([]int{5}, 0.5, -0.25, 0.125, 1, -1))
	g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{"x"}, Outputs: []string{"r"}})
	g.AddNode(&graph.Node{Name: "fc1", Op: graph.FullyConnected, Inputs: []string{"r", "w1", ""}, Outputs: []string{"h1"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.AddNode(&graph.Node{Name: "relu1", Op: graph.Relu, Inputs: []string{"h1"}, Outputs: []string{"a1"}})
	g.AddNode(&graph.Node{Name: "fc2", Op: graph.FullyConnected, Inputs: []string{"a1", "w2", "b2"}, Outputs: []string{"h2"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.AddNode(&graph.Node{Name: "fc3", Op: graph.FullyConnected, Inputs: []string{"h2", "w3", ""}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// TestFloatNodesResolves: names, globs and a quantize report row "a+b"
// (both nodes) resolve to node names; a pattern matching nothing is an
// error naming it and listing nodes; a malformed glob is an error.
func TestFloatNodesResolves(t *testing.T) {
	g := mlp3()
	for _, c := range []struct {
		pats []string
		want string
	}{
		{[]string{"fc2"}, "fc2"},
		{[]string{"fc*"}, "fc1 fc2 fc3"},
		{[]string{"fc1+relu1"}, "fc1 relu1"},
		{[]string{"fc3", "fc?"}, "fc1 fc2 fc3"},
	} {
		got, err := FloatNodes(g, c.pats)
		if err != nil {
			t.Fatalf("%v: %v", c.pats, err)
		}
		var names []string
		for _, n := range g.Nodes {
			if got[n.Name] {
				names = append(names, n.Name)
			}
		}
		if strings.Join(names, " ") != c.want || len(got) != len(names) {
			t.Errorf("%v: %v, want %s", c.pats, got, c.want)
		}
	}
	if _, err := FloatNodes(g, []string{"fc9"}); err == nil || !strings.Contains(err.Error(), `"fc9" matches no node`) || !strings.Contains(err.Error(), "fc1, relu1, fc2, fc3") {
		t.Errorf("unknown name: %v", err)
	}
	// TFLite's path-like names: * reaches past '/', and a name cut with
	// "..." as the report's table shows it matches the names it starts.
	tg := graph.New("paths", "tflite")
	tg.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	for i, name := range []string{"model/act_1/Relu;model/dense_1/MatMul", "model/act_2/Relu;model/dense_2/MatMul", "Identity"} {
		y := fmt.Sprintf("y%d", i)
		tg.AddTensor(&graph.Tensor{Name: y, DType: graph.Float32, Shape: []int{1, 4}})
		tg.AddNode(&graph.Node{Name: name, Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{y}})
	}
	for pat, want := range map[string]int{"model/act_1/*": 1, "model/*/Relu;*": 2, "model/act_2/Relu;mod...": 1, "model/act_?/*": 2, "Identity": 1, "model/act_1": 0, "...": 0} {
		got, err := FloatNodes(tg, []string{pat})
		if want == 0 {
			if err == nil {
				t.Errorf("%q: matched %v, want an error", pat, got)
			}
			continue
		}
		if err != nil || len(got) != want {
			t.Errorf("%q: %v (%v), want %d nodes", pat, got, err, want)
		}
	}
	if m, err := FloatNodes(g, nil); m != nil || err != nil {
		t.Errorf("no patterns: %v, %v", m, err)
	}
}

// TestQuantizeKeepsNamedNodesFloat: fc1 kept float is not fused with its
// Relu; fc2 and fc3 kept float form one float chain with no int8 round
// trip between them (the float tensor keeps the float graph's name h2);
// the kept nodes hold float32 weights and the others int8; fc2's float
// output equals the float node run on what the int8 graph gives it; the
// report marks the float rows.
func TestQuantizeKeepsNamedNodesFloat(t *testing.T) {
	g := mlp3()
	samples := smallSamples(8)
	keep, err := FloatNodes(g, []string{"fc2", "fc3"})
	if err != nil {
		t.Fatal(err)
	}
	q, rep, err := PTQ(g, samples, Options{Float: keep}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*graph.Node{}
	for _, n := range q.Nodes {
		byName[n.Name] = n
	}
	for name, float := range map[string]bool{"fc1": false, "fc2": true, "fc3": true} {
		n := byName[name]
		if n == nil {
			t.Fatalf("no node %s in\n%s", name, graph.Print(q))
		}
		if w := q.In(n, 1); (w.DType == graph.Float32) != float {
			t.Errorf("%s: weights %s, want float %v", name, w.DType, float)
		}
	}
	if h2 := q.Tensors["h2"]; h2 == nil || h2.DType != graph.Float32 || byName["fc2"].Outputs[0] != "h2" || byName["fc3"].Inputs[0] != "h2" {
		t.Errorf("fc2 -> fc3 is not one float tensor h2:\n%s", graph.Print(q))
	}
	for _, n := range q.Nodes {
		if n.Op == graph.Dequantize && n.Inputs[0] == "h2" || n.Op == graph.Quantize && n.Outputs[0] == "h2" {
			t.Errorf("an int8 round trip at h2: %s", n.Name)
		}
	}
	// fc2 in float on the dequantized int8 input it reads.
	qs := interp.NewSession(q)
	in := q.Tensors[q.Inputs[0]]
	sc, z := in.Quant.At(0)
	xq := QuantizeInput(samples[0]["x"], sc, z)
	xq.DType = in.DType
	qv, err := qs.RunAll(map[string]*graph.Data{q.Inputs[0]: xq})
	if err != nil {
		t.Fatal(err)
	}
	fin := qv[byName["fc2"].Inputs[0]]
	if fin == nil || fin.DType != graph.Float32 {
		t.Fatalf("fc2 reads %v", fin)
	}
	want := make([]float64, 5)
	w2, b2 := g.Tensors["w2"].Data.F, g.Tensors["b2"].Data.F
	for o := range want {
		acc := float64(b2[o])
		for i := 0; i < 6; i++ {
			acc += float64(w2[o*6+i]) * float64(fin.F[i])
		}
		want[o] = acc
	}
	for o, w := range want {
		if got := float64(qv["h2"].F[o]); got-w > 1e-5 || w-got > 1e-5 {
			t.Errorf("h2[%d] = %v, float fc2 on the int8 graph's input gives %v", o, got, w)
		}
	}
	rows := map[string]LayerReport{}
	for _, l := range rep.Layers {
		rows[l.Name] = l
	}
	if !rows["fc2"].Float || !rows["fc3"].Float || rows["fc1+relu1"].Float || rows["fc1+relu1"].Name == "" {
		t.Errorf("report rows: %+v", rep.Layers)
	}

	// fc1 kept float: its Relu is not fused into it.
	keep, _ = FloatNodes(g, []string{"fc1"})
	q, _, err = PTQ(g, samples, Options{Float: keep}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	relus := 0
	for _, n := range q.Nodes {
		if n.Op == graph.Relu {
			relus++
		}
	}
	if relus != 1 {
		t.Errorf("fc1 kept float: %d Relu nodes, want 1 (not fused):\n%s", relus, graph.Print(q))
	}
}

// TestKeepFloatSurvivesQDQ: nodes kept float carry the mark through the
// QDQ file, and folding it leaves them float, as the quantized graph had
// them (folding quantized their float weights); the results agree bit for
// bit.
func TestKeepFloatSurvivesQDQ(t *testing.T) {
	g := mlp3()
	samples := smallSamples(8)
	keep, err := FloatNodes(g, []string{"fc2"})
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := PTQ(g, samples, Options{Float: keep, FloatIO: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !q.KeepFloat["fc2"] {
		t.Fatalf("the quantized graph does not mark fc2: %v", q.KeepFloat)
	}
	ff := qdqRoundTrip(t, q)
	found := false
	for _, n := range ff.Nodes {
		if n.Name == "fc2" {
			found = true
			if w := ff.In(n, 1); w.DType != graph.Float32 || ff.Tensors[n.Outputs[0]].DType != graph.Float32 {
				t.Errorf("fc2 folded: weights %s, output %s", w.DType, ff.Tensors[n.Outputs[0]].DType)
			}
		}
	}
	if !found || !ff.KeepFloat["fc2"] {
		t.Fatalf("fc2 %v, marks %v:\n%s", found, ff.KeepFloat, graph.Print(ff))
	}
	sameFloatOutputs(t, q, ff, samples)
}
