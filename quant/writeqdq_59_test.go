package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// HardSwish (opset 14) and Resize (nearest from sizes, bilinear from the
// model's scales) are written to a QDQ model (quantize -o refused
// MobileNetV3- and U-Net-style models: "op not supported by the QDQ
// writer"), and the model read back folds to the same int8 layers and
// gives the in-memory model's outputs bit for bit.
func TestWriteQDQRoundTripHardSwishResize59(t *testing.T) {
	g := graph.New("hsr", "onnx")
	for name, shape := range map[string][]int{"x": {1, 4, 4, 2}, "c": {1, 4, 4, 2}, "h": {1, 4, 4, 2}, "n": {1, 8, 8, 2}, "y": {1, 12, 12, 2}} {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
	}
	g.AddConst("w", f32([]int{2, 1, 1, 2}, 0.3, -2, 0.5, 0.2))
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", ""}, Outputs: []string{"c"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}})
	g.AddNode(&graph.Node{Name: "hs", Op: graph.HardSwish, Inputs: []string{"c"}, Outputs: []string{"h"}})
	g.AddNode(&graph.Node{Name: "up", Op: graph.Resize, Inputs: []string{"h"}, Outputs: []string{"n"},
		Attrs: &graph.ResizeAttrs{Mode: "nearest", Coord: "asymmetric", Nearest: "floor"}})
	g.AddNode(&graph.Node{Name: "up2", Op: graph.Resize, Inputs: []string{"n"}, Outputs: []string{"y"},
		Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "half_pixel", Scale: [2]float32{1.5, 1.5}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	q, ff, samples := ptqRoundTrip(t, g)
	m, err := QDQModel(q)
	if err != nil {
		t.Fatal(err)
	}
	if v := m.OpsetImport[0].Version; v != 14 {
		t.Errorf("opset %d, want 14 (HardSwish)", v)
	}
	ints := map[graph.Op]int{}
	for _, n := range ff.Nodes {
		if x := ff.In(n, 0); x != nil && x.DType == graph.Int8 {
			ints[n.Op]++
		}
	}
	if ints[graph.HardSwish] != 1 || ints[graph.Resize] != 2 {
		t.Errorf("int8 layers after the round trip %v, want a HardSwish and two Resizes:\n%s", ints, graph.Print(ff))
	}
	sameFloatOutputs(t, q, ff, samples)
}

// A ConvTranspose (stride 2, padding, output padding, a bias) is written
// too, its [Cout, KH, KW, Cin] weights dequantized and transposed to
// ONNX's [Cin, Cout, KH, KW]: read back, it folds to an int8
// ConvTranspose2D with the in-memory model's outputs (quantize -o refused
// a U-Net).
func TestWriteQDQRoundTripConvTranspose59(t *testing.T) {
	g := graph.New("ct", "onnx")
	for name, shape := range map[string][]int{"x": {1, 4, 4, 2}, "y": {1, 8, 8, 3}} {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
	}
	w := make([]float32, 3*3*3*2)
	for i := range w {
		w[i] = float32(i%7-3) * 0.15
	}
	g.AddConst("w", f32([]int{3, 3, 3, 2}, w...))
	g.AddConst("b", f32([]int{3}, 0.1, -0.2, 0.05))
	g.AddNode(&graph.Node{Name: "ct", Op: graph.ConvTranspose2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.ConvTransposeAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Group: 1, OutPad: [2]int{1, 1},
			Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	q, ff, samples := ptqRoundTrip(t, g)
	n := 0
	for _, nd := range ff.Nodes {
		if nd.Op == graph.ConvTranspose2D && ff.In(nd, 0).DType == graph.Int8 && ff.In(nd, 1).IsConst() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d int8 ConvTranspose2D layers with constant weights after the round trip, want 1:\n%s", n, graph.Print(ff))
	}
	sameFloatOutputs(t, q, ff, samples)
}
