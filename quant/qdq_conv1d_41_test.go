package quant

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// TestFoldQDQConv1D: a QDQ 1-D convolution (int8 weights [O,C,K] behind a
// DequantizeLinear, per channel or per tensor) folds to an int8 Conv2D:
// the importer's view of it as 2-D put a Reshape between the weights'
// Dequantize and the conv (per-channel weights were refused as "computed
// at run time") and a Transpose and Reshape between the conv and its
// QuantizeLinear (per-tensor ones ran in float). The folded graph gives
// the QDQ graph's float outputs within one output step.
func TestFoldQDQConv1D(t *testing.T) {
	for _, perChannel := range []bool{true, false} {
		b := onnx.NewBuilder("conv1d", 14, 3)
		x := b.Input("x", graph.Float32, 1, 8, 20)
		xq := b.Node("QuantizeLinear", []string{x, b.Scalar("x_s", graph.Float32, 0.02), b.Scalar("x_z", graph.Int8, 0)})
		xd := b.Node("DequantizeLinear", []string{xq, "x_s", "x_z"})
		w := graph.NewData(graph.Int8, []int{4, 8, 3})
		for i := range w.I {
			w.I[i] = int64((i*37)%255 - 127)
		}
		ws := b.Scalar("w_s", graph.Float32, 0.01)
		wz := b.Scalar("w_z", graph.Int8, 0)
		var attrs []*onnx.Attribute
		if perChannel {
			ws = b.Floats("w_sc", 0.01, 0.02, 0.005, 0.015)
			wz = b.Init("w_zc", &graph.Data{DType: graph.Int8, Shape: []int{4}, I: make([]int64, 4)})
			attrs = append(attrs, onnx.IntAttr("axis", 0))
		}
		wd := b.Node("DequantizeLinear", []string{b.Init("wq", w), ws, wz}, attrs...)
		y := b.Node("Conv", []string{xd, wd}, onnx.IntsAttr("pads", 1, 1), onnx.IntsAttr("kernel_shape", 3))
		yq := b.Node("QuantizeLinear", []string{y, b.Scalar("y_s", graph.Float32, 0.05), b.Scalar("y_z", graph.Int8, 2)})
		out := b.Node("DequantizeLinear", []string{yq, "y_s", "y_z"})
		b.Output(out, graph.Float32)
		g, err := onnx.Import("conv1d", b.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := FoldQDQ(g)
		if err != nil {
			t.Fatal(err)
		}
		convs := 0
		for _, n := range f.Nodes {
			if n.Op == graph.Conv2D {
				convs++
				if f.Tensors[n.Outputs[0]].DType != graph.Int8 || f.Tensors[n.Inputs[1]].DType != graph.Int8 {
					t.Errorf("per channel %v: the conv is not int8:\n%s", perChannel, graph.Print(f))
				}
			}
		}
		if convs != 1 {
			t.Fatalf("per channel %v: %d convs:\n%s", perChannel, convs, graph.Print(f))
		}
		in := graph.NewData(graph.Float32, []int{1, 8, 20})
		for i := range in.F {
			in.F[i] = float32(math.Sin(float64(i)*0.37)) * 2
		}
		withinOneStep(t, fmt.Sprintf("per channel %v", perChannel), g, f, in, 0.05)
	}
}

// withinOneStep runs the QDQ graph g and its folded graph f on in and
// checks their first outputs agree within one output step.
func withinOneStep(t *testing.T, what string, g, f *graph.Graph, in *graph.Data, step float64) {
	t.Helper()
	want, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	got, err := interp.Run(f, map[string]*graph.Data{f.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	a, c := want[g.Outputs[0]].F, got[f.Outputs[0]].F
	if len(a) != len(c) {
		t.Fatalf("%s: %d outputs, folded %d", what, len(a), len(c))
	}
	for i := range a {
		if math.Abs(float64(a[i]-c[i])) > step+1e-6 {
			t.Fatalf("%s: output %d: QDQ %v, folded %v (more than one step of %g)", what, i, a[i], c[i], step)
		}
	}
}
