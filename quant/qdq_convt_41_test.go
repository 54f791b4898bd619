package quant

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// TestFoldQDQConvTranspose: a QDQ ConvTranspose (int8 weights [Cin, Cout,
// KH, KW] behind a DequantizeLinear, per tensor or per output channel on
// axis 1, as ONNX Runtime's quantizer writes them) imports and folds to an
// int8 ConvTranspose2D; it was refused as "weights must be a constant of
// rank 4". The folded graph gives the QDQ graph's outputs within one step.
func TestFoldQDQConvTranspose(t *testing.T) {
	for _, axis := range []int{-1, 1, 0} { // per tensor; per output channel; per input channel
		perChannel := axis >= 0
		b := onnx.NewBuilder("convt", 14, 3)
		x := b.Input("x", graph.Float32, 1, 4, 5, 5)
		xq := b.Node("QuantizeLinear", []string{x, b.Scalar("x_s", graph.Float32, 0.02), b.Scalar("x_z", graph.Int8, -3)})
		xd := b.Node("DequantizeLinear", []string{xq, "x_s", "x_z"})
		w := graph.NewData(graph.Int8, []int{4, 3, 3, 3})
		for i := range w.I {
			w.I[i] = int64((i*53)%251 - 125)
		}
		ws := b.Scalar("w_s", graph.Float32, 0.01)
		wz := b.Scalar("w_z", graph.Int8, 0)
		var attrs []*onnx.Attribute
		switch axis {
		case 1:
			ws = b.Floats("w_sc", 0.01, 0.004, 0.02)
			wz = b.Init("w_zc", &graph.Data{DType: graph.Int8, Shape: []int{3}, I: make([]int64, 3)})
			attrs = append(attrs, onnx.IntAttr("axis", 1))
		case 0:
			// ONNX allows the input channels' axis too (older ONNX
			// Runtime quantizers wrote it): the int8 kernel reads its
			// scales by output channel, so this one must stay float
			// (it folded, and the outputs were wrong by up to 118 steps).
			ws = b.Floats("w_sc", 0.01, 0.004, 0.02, 0.03)
			wz = b.Init("w_zc", &graph.Data{DType: graph.Int8, Shape: []int{4}, I: make([]int64, 4)})
			attrs = append(attrs, onnx.IntAttr("axis", 0))
		}
		wd := b.Node("DequantizeLinear", []string{b.Init("wq", w), ws, wz}, attrs...)
		y := b.Node("ConvTranspose", []string{xd, wd}, onnx.IntsAttr("strides", 2, 2), onnx.IntsAttr("pads", 1, 1, 1, 1))
		yq := b.Node("QuantizeLinear", []string{y, b.Scalar("y_s", graph.Float32, 0.04), b.Scalar("y_z", graph.Int8, 1)})
		out := b.Node("DequantizeLinear", []string{yq, "y_s", "y_z"})
		b.Output(out, graph.Float32)
		g, err := onnx.Import("convt", b.Model(), onnx.Options{})
		if err != nil {
			t.Fatalf("per channel %v: %v", perChannel, err)
		}
		f, err := FoldQDQ(g)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range f.Nodes {
			if n.Op == graph.ConvTranspose2D {
				found = f.Tensors[n.Outputs[0]].DType == graph.Int8 && f.Tensors[n.Inputs[1]].DType == graph.Int8
			}
		}
		if found != (axis != 0) {
			t.Fatalf("axis %d: int8 ConvTranspose2D %v:\n%s", axis, found, graph.Print(f))
		}
		in := graph.NewData(graph.Float32, []int{1, 4, 5, 5})
		for i := range in.F {
			in.F[i] = float32(math.Cos(float64(i)*0.71)) * 1.5
		}
		withinOneStep(t, fmt.Sprintf("axis %d", axis), g, f, in, 0.04)
	}
}
