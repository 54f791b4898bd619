package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// TestFoldQDQFloatBias: a QDQ model whose Conv and FullyConnected biases
// are float initializers (as PyTorch QAT, NNCF and tf2onnx write them)
// folds to the int8 layers with int32 biases, round(b / (s_x * s_w)), and
// gives the int8 graph's results; it ran the layers in float.
func TestFoldQDQFloatBias(t *testing.T) {
	_, q, samples := quantSmall(t)
	d, biased := handQDQ(q, true)
	if biased == 0 {
		t.Fatal("the small net has no biased layer")
	}
	folded, err := FoldQDQ(d)
	if err != nil {
		t.Fatal(err)
	}
	ff := IntIO(folded)
	for _, n := range ff.Nodes {
		if (n.Op == graph.Conv2D || n.Op == graph.FullyConnected) && ff.Tensors[n.Outputs[0]].DType != graph.Int8 {
			t.Fatalf("%s stayed float:\n%s", n.Name, graph.Print(ff))
		}
		if (n.Op == graph.Conv2D || n.Op == graph.FullyConnected) && len(n.Inputs) > 2 && n.Inputs[2] != "" {
			if b := ff.Tensors[n.Inputs[2]]; b.DType != graph.Int32 {
				t.Errorf("%s: bias %s", n.Name, b.DType)
			}
		}
	}
	if len(ff.Nodes) != len(q.Nodes) {
		t.Fatalf("folded graph has %d nodes, want %d:\n%s", len(ff.Nodes), len(q.Nodes), graph.Print(ff))
	}
	sameResults(t, q, ff, samples)
}

// TestFoldQDQGemmFloatBias: a QDQ Gemm (dequantized int8 weights, a float
// C) folds to one int8 FullyConnected whose int32 bias is round(C / (s_x *
// s_w)), hand-computed here; the importer's Add of C was left in float,
// and the layer with it.
func TestFoldQDQGemmFloatBias(t *testing.T) {
	b := onnx.NewBuilder("gemm", 14, 3)
	x := b.Input("x", graph.Float32, 1, 4)
	sx, sw := 0.05, 0.01
	xq := b.Node("QuantizeLinear", []string{x, b.Scalar("x_s", graph.Float32, sx), b.Scalar("x_z", graph.Int8, 0)})
	xd := b.Node("DequantizeLinear", []string{xq, "x_s", "x_z"})
	w := &graph.Data{DType: graph.Int8, Shape: []int{3, 4}, I: []int64{1, -2, 3, -4, 5, 6, -7, 8, 9, 10, 11, -12}}
	wd := b.Node("DequantizeLinear", []string{b.Init("wq", w), b.Scalar("w_s", graph.Float32, sw), b.Scalar("w_z", graph.Int8, 0)})
	c := b.Floats("c", 0.0123, -0.5, 0.25)
	y := b.Node("Gemm", []string{xd, wd, c}, onnx.IntAttr("transB", 1))
	yq := b.Node("QuantizeLinear", []string{y, b.Scalar("y_s", graph.Float32, 0.02), b.Scalar("y_z", graph.Int8, 3)})
	out := b.Node("DequantizeLinear", []string{yq, "y_s", "y_z"})
	b.Output(out, graph.Float32)
	g, err := onnx.Import("gemm", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := FoldQDQ(g)
	if err != nil {
		t.Fatal(err)
	}
	var fc *graph.Node
	for _, n := range f.Nodes {
		switch n.Op {
		case graph.FullyConnected:
			fc = n
		case graph.Add, graph.BatchMatMul:
			t.Errorf("%s %s left:\n%s", n.Op, n.Name, graph.Print(f))
		}
	}
	if fc == nil || f.Tensors[fc.Outputs[0]].DType != graph.Int8 {
		t.Fatalf("no int8 FullyConnected:\n%s", graph.Print(f))
	}
	bias := f.Tensors[fc.Inputs[2]]
	// 0.0123/0.0005 = 24.6 -> 25; -0.5/0.0005 = -1000; 0.25/0.0005 = 500.
	if bias == nil || bias.DType != graph.Int32 || len(bias.Data.I) != 3 || bias.Data.I[0] != 25 || bias.Data.I[1] != -1000 || bias.Data.I[2] != 500 {
		t.Errorf("bias %+v", bias)
	}
}

// TestFoldQDQFloatBiasBeyondInt32: a float bias that would not fit int32 on
// s_x * s_w (a tiny weight scale under a large bias) keeps its layer
// float, exact, where folding clamped the bias.
func TestFoldQDQFloatBiasBeyondInt32(t *testing.T) {
	b := onnx.NewBuilder("gemm", 14, 3)
	x := b.Input("x", graph.Float32, 1, 4)
	xq := b.Node("QuantizeLinear", []string{x, b.Scalar("x_s", graph.Float32, 0.05), b.Scalar("x_z", graph.Int8, 0)})
	xd := b.Node("DequantizeLinear", []string{xq, "x_s", "x_z"})
	w := &graph.Data{DType: graph.Int8, Shape: []int{2, 4}, I: []int64{1, -2, 3, -4, 5, 6, -7, 8}}
	wd := b.Node("DequantizeLinear", []string{b.Init("wq", w), b.Scalar("w_s", graph.Float32, 1e-9), b.Scalar("w_z", graph.Int8, 0)})
	y := b.Node("Gemm", []string{xd, wd, b.Floats("c", 1.5, -0.75)}, onnx.IntAttr("transB", 1))
	yq := b.Node("QuantizeLinear", []string{y, b.Scalar("y_s", graph.Float32, 0.01), b.Scalar("y_z", graph.Int8, 0)})
	b.Output(b.Node("DequantizeLinear", []string{yq, "y_s", "y_z"}), graph.Float32)
	g, err := onnx.Import("gemm", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := FoldQDQ(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Op == graph.FullyConnected && f.Tensors[n.Outputs[0]].DType == graph.Int8 {
			t.Fatalf("folded to int8 with a bias beyond int32:\n%s", graph.Print(f))
		}
	}
	in := &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{0.5, -0.25, 1, 0.1}}
	a, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	c, err := interp.Run(f, map[string]*graph.Data{f.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	// 1.5 and -0.75 (the products are ~1e-9): 127 and -75 steps of 0.01.
	if got, want := c[f.Outputs[0]].F, a[g.Outputs[0]].F; got[0] != want[0] || got[1] != want[1] || want[0] != 1.27 || want[1] != -0.75 {
		t.Errorf("folded %v, QDQ %v, want [1.27 -0.75]", got, want)
	}
}
