package pipeline

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// ortDynamicMatMul is the graph ONNX Runtime's quantize_dynamic writes for
// a MatMul: DynamicQuantizeLinear of the float input, MatMulInteger with the
// run-time zero point and the constant weights' zero point, the int32
// product cast to float and scaled by x_scale × w_scale. rawOut makes
// MatMulInteger's int32 result the output.
func ortDynamicMatMul(rawOut bool) *onnx.Builder {
	b := onnx.NewBuilder("dynq", 13, 1)
	x := b.Input("x", graph.Float32, 1, 3)
	q := b.NodeN("DynamicQuantizeLinear", []string{x}, 3)
	w := b.Init("w", ints47(graph.Int8, []int{3, 2}, 1, -1, 2, -2, 3, 5))
	mm := b.Node("MatMulInteger", []string{q[0], w, q[2], b.Scalar("wz", graph.Int8, 1)})
	if rawOut {
		b.Output(mm, graph.Int32)
		return b
	}
	f := b.Node("Cast", []string{mm}, onnx.IntAttr("to", 1))
	s := b.Node("Mul", []string{q[1], b.Scalar("ws", graph.Float32, 0.5)})
	b.Output(b.Node("Mul", []string{f, s}), graph.Float32)
	return b
}

// ONNX Runtime's dynamic quantization feeds DynamicQuantizeLinear's zero
// point to MatMulInteger; it was refused ("zero point must be a
// constant"). By hand, x = [−1, 0.6, 2]: scale 3/255, zero point 85,
// x_q = [0, 136, 255]; x_q − 85 = [−85, 51, 170] against w − 1 =
// [[0, −2], [1, −3], [2, 4]] is [391, 697]; × (3/255 × 0.5) = [2.3, 4.1].
func TestORTDynamicMatMul49(t *testing.T) {
	in := graph.NewData(graph.Float32, []int{1, 3})
	copy(in.F, []float32{-1, 0.6, 2})
	raw := evalModelData49(t, writeONNX(t, ortDynamicMatMul(true), "dynq_raw"), in)
	if raw.DType != graph.Int32 || len(raw.I) != 2 || raw.I[0] != 391 || raw.I[1] != 697 {
		t.Errorf("MatMulInteger: got %v %v, want int32 [391 697]", raw.DType, raw.I)
	}
	got := evalModel47(t, writeONNX(t, ortDynamicMatMul(false), "dynq"), in)
	want := []float32{2.3, 4.1}
	for i := range want {
		if len(got) != 2 || math.Abs(float64(got[i]-want[i])) > 1e-5*math.Abs(float64(want[i])) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func evalModelData49(t *testing.T, path string, in *graph.Data) *graph.Data {
	t.Helper()
	s, err := RunUntil(path, Options{Warn: func(string) {}}, "fold-qdq")
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.Run(s.Graph, map[string]*graph.Data{s.Graph.Inputs[0]: in})
	if err != nil {
		t.Fatal(err)
	}
	return out[s.Graph.Outputs[0]]
}

// A two-layer perceptron as quantize_dynamic writes it (uint8 weights with a
// zero point a column and int8 weights with one, batched 3-D input, bias,
// ReLU) runs in the C as the interpreter runs it, on the host, the M4 and
// the M55.
func TestORTDynamicMLPInC49(t *testing.T) {
	b := onnx.NewBuilder("dynmlp", 13, 1)
	x := b.Input("x", graph.Float32, 2, 5, 8)
	layer := func(in string, w *graph.Data, wz string, ws *graph.Data, bias []float32) string {
		q := b.NodeN("DynamicQuantizeLinear", []string{in}, 3)
		mm := b.Node("MatMulInteger", []string{q[0], b.Init(in+"_w", w), q[2], wz})
		f := b.Node("Cast", []string{mm}, onnx.IntAttr("to", 1))
		s := b.Node("Mul", []string{q[1], b.Init(in+"_ws", ws)})
		y := b.Node("Mul", []string{f, s})
		if bias != nil {
			bd := graph.NewData(graph.Float32, []int{len(bias)})
			copy(bd.F, bias)
			y = b.Node("Relu", []string{b.Node("Add", []string{y, b.Init(in+"_b", bd)})})
		}
		return y
	}
	w1 := graph.NewData(graph.UInt8, []int{8, 6})
	for i := range w1.I {
		w1.I[i] = int64((i*97 + 13) % 256)
	}
	z1 := graph.NewData(graph.UInt8, []int{6})
	copy(z1.I, []int64{128, 0, 255, 100, 131, 7})
	s1 := graph.NewData(graph.Float32, []int{6})
	copy(s1.F, []float32{0.01, 0.02, 0.005, 0.03, 0.011, 0.007})
	h := layer(x, w1, b.Init("z1", z1), s1, []float32{0.1, -0.2, 0.3, 0, -0.05, 0.2})
	w2 := graph.NewData(graph.Int8, []int{6, 4})
	for i := range w2.I {
		w2.I[i] = int64((i*53+5)%256) - 128
	}
	s2 := graph.NewData(graph.Float32, []int{})
	s2.F[0] = 0.02
	b.Output(layer(h, w2, b.Scalar("z2", graph.Int8, 0), s2, nil), graph.Float32)
	g, err := onnx.Import("dynmlp", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkedRun(t, g, "dynmlp", Options{Board: qemuBoard(t, "host"), Version: "test"}, 10, 3)
	if testing.Short() {
		return
	}
	for _, bn := range []string{"mps2-an386", "mps3-an547"} {
		n := checkedRun(t, g, "dynmlp", Options{Board: qemuBoard(t, bn), Version: "test"}, 10, 3)
		t.Logf("%s: %d instructions", bn, n)
	}
}
