package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A folded QDQ Sqrt's int8 table rounds as the QuantizeLinear after it
// (half to even): sqrt(0.25) = 0.5 at output scale 1 is 0, as ONNX gives
// it, and 1.5 (sqrt(2.25)) is 2. The table took the real value rounded
// half away from zero before (1 and 2).
func TestFoldedMathRoundsAsQuantize59(t *testing.T) {
	bl := onnx.NewBuilder("sq", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 2)
	xs, xz := bl.Scalar("xs", graph.Float32, 0.0625), bl.Scalar("xz", graph.Int8, 0)
	ys, yz := bl.Scalar("ys", graph.Float32, 1), bl.Scalar("yz", graph.Int8, 0)
	dq := bl.Node("DequantizeLinear", []string{bl.Node("QuantizeLinear", []string{x, xs, xz}), xs, xz})
	bl.Output(bl.Node("DequantizeLinear", []string{bl.Node("QuantizeLinear", []string{bl.Node("Sqrt", []string{dq}), ys, yz}), ys, yz}), graph.Float32)
	g, err := onnx.Import("sq", bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := FoldQDQ(g)
	if err != nil {
		t.Fatal(err)
	}
	maths := 0
	for _, n := range f.Nodes {
		if a, ok := n.Attrs.(*graph.MathAttrs); ok && n.Op == graph.Math && f.In(n, 0).DType == graph.Int8 && a.Float32Island && a.HalfEven {
			maths++
		}
	}
	if maths != 1 {
		t.Fatalf("%d int8 Math nodes rounding as QuantizeLinear, want 1:\n%s", maths, graph.Print(f))
	}
	in := graph.NewData(graph.Float32, []int{1, 2})
	in.F[0], in.F[1] = 0.25, 2.25
	out, err := interp.Run(f, map[string]*graph.Data{f.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	if y := out[f.Outputs[0]].F; y[0] != 0 || y[1] != 2 {
		t.Errorf("sqrt(0.25), sqrt(2.25) at output scale 1: %v, want [0 2]", y)
	}
}
