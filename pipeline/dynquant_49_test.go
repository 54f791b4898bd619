package pipeline

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	runDynamicModel49(t, b, "dynmlp")
}

// runDynamicModel49 imports the model b builds and runs its C against the
// interpreter on the host and, unless -short, on the M4 and the M55 (their
// counts logged).
func runDynamicModel49(t *testing.T, b *onnx.Builder, name string) {
	t.Helper()
	g, err := onnx.Import(name, b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkedRun(t, g, name, Options{Board: qemuBoard(t, "host"), Version: "test"}, 10, 3)
	if testing.Short() {
		return
	}
	for _, bn := range []string{"mps2-an386", "mps3-an547"} {
		n := checkedRun(t, g, name, Options{Board: qemuBoard(t, bn), Version: "test"}, 10, 3)
		t.Logf("%s: %d instructions", bn, n)
	}
}

// ConvInteger with a zero point computed at run time (quantize_dynamic of a
// Conv) was refused. By hand, x = [[10, 20], [30, 40]] at zero point 10,
// 2×2 weights [[1, 2], [3, 4]], padding 1: x − 10 padded with zeros is
// [[0,0,0,0], [0,0,10,0], [0,20,30,0], [0,0,0,0]], and its correlation
// with the weights [[0, 40, 30], [80, 200, 100], [40, 80, 30]].
func TestConvIntegerRuntimeZeroPoint49(t *testing.T) {
	b := onnx.NewBuilder("convint", 13, 1)
	x := b.Input("x", graph.UInt8, 1, 1, 2, 2)
	z := b.Input("z", graph.UInt8)
	w := b.Init("w", ints47(graph.Int8, []int{1, 1, 2, 2}, 1, 2, 3, 4))
	b.Output(b.Node("ConvInteger", []string{x, w, z}, onnx.IntsAttr("pads", 1, 1, 1, 1)), graph.Int32)
	s, err := RunUntil(writeONNX(t, b, "convint"), Options{Warn: func(string) {}}, "fold-qdq")
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.Run(s.Graph, map[string]*graph.Data{
		s.Graph.Inputs[0]: ints47(graph.UInt8, []int{1, 1, 2, 2}, 10, 20, 30, 40),
		s.Graph.Inputs[1]: ints47(graph.UInt8, []int{}, 10),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := out[s.Graph.Outputs[0]]
	want := []int64{0, 40, 30, 80, 200, 100, 40, 80, 30}
	if !slices.Equal(got.I, want) || !slices.Equal(got.Shape, []int{1, 1, 3, 3}) {
		t.Errorf("got %v %v, want [1 1 3 3] %v", got.Shape, got.I, want)
	}
}

// refConvInteger is ONNX ConvInteger by its definition: x − zx convolved
// with w − zw[oc], zero padding, NCHW.
func refConvInteger(x []int64, n, cin, h, wd int, zx int64, w []int64, cout, kh, kw int, zw []int64, pads [4]int, stride, dil [2]int, group int) ([]int64, int, int) {
	oh := (h+pads[0]+pads[2]-dil[0]*(kh-1)-1)/stride[0] + 1
	ow := (wd+pads[1]+pads[3]-dil[1]*(kw-1)-1)/stride[1] + 1
	cg, og := cin/group, cout/group
	out := make([]int64, n*cout*oh*ow)
	for b := 0; b < n; b++ {
		for oc := 0; oc < cout; oc++ {
			g := oc / og
			for y := 0; y < oh; y++ {
				for xx := 0; xx < ow; xx++ {
					var acc int64
					for ic := 0; ic < cg; ic++ {
						for a := 0; a < kh; a++ {
							for c := 0; c < kw; c++ {
								iy, ix := y*stride[0]-pads[0]+a*dil[0], xx*stride[1]-pads[1]+c*dil[1]
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								xv := x[((b*cin+g*cg+ic)*h+iy)*wd+ix] - zx
								acc += xv * (w[((oc*cg+ic)*kh+a)*kw+c] - zw[oc])
							}
						}
					}
					out[((b*cout+oc)*oh+y)*ow+xx] = acc
				}
			}
		}
	}
	return out, oh, ow
}

// ConvInteger at a run-time zero point against its definition on random
// inputs (asymmetric padding, stride, dilation, groups, uint8 weights with
// a zero point a channel), in the interpreter and, as quantize_dynamic
// writes a Conv (Cast, Mul by the scales), in the C on the host, the M4
// and the M55.
func TestConvIntegerRuntimeZPRandom49(t *testing.T) {
	t.Parallel()
	for i, c := range []convIntCase49{
		{1, 4, 7, 6, 6, 3, 2, 2, [4]int{1, 0, 2, 1}, [2]int{2, 1}, [2]int{1, 2}},
		{2, 3, 5, 4, 5, 1, 1, 1, [4]int{}, [2]int{1, 1}, [2]int{1, 1}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) { convIntegerRuntimeZP49(t, c) })
	}
}

type convIntCase49 struct {
	n, cin, h, wd, cout, kh, kw, group int
	pads                               [4]int
	stride, dil                        [2]int
}

func convIntegerRuntimeZP49(t *testing.T, cs convIntCase49) {
	n, cin, h, wd, cout, kh, kw, group := cs.n, cs.cin, cs.h, cs.wd, cs.cout, cs.kh, cs.kw, cs.group
	pads, stride, dil := cs.pads, cs.stride, cs.dil
	rng := uint64(7)
	next := func(m int64) int64 {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int64(rng>>33) % m
	}
	w := graph.NewData(graph.UInt8, []int{cout, cin / group, kh, kw})
	for i := range w.I {
		w.I[i] = next(256)
	}
	zw := graph.NewData(graph.UInt8, []int{cout})
	for i := range zw.I {
		zw.I[i] = next(256)
	}
	build := func(dyn bool) *onnx.Builder {
		b := onnx.NewBuilder("convint", 13, 1)
		attrs := []*onnx.Attribute{onnx.IntsAttr("pads", int64(pads[0]), int64(pads[1]), int64(pads[2]), int64(pads[3])),
			onnx.IntsAttr("strides", int64(stride[0]), int64(stride[1])), onnx.IntsAttr("dilations", int64(dil[0]), int64(dil[1])), onnx.IntAttr("group", int64(group))}
		if !dyn {
			x := b.Input("x", graph.UInt8, n, cin, h, wd)
			z := b.Input("z", graph.UInt8)
			b.Output(b.Node("ConvInteger", []string{x, b.Init("w", w), z, b.Init("zw", zw)}, attrs...), graph.Int32)
			return b
		}
		x := b.Input("x", graph.Float32, n, cin, h, wd)
		q := b.NodeN("DynamicQuantizeLinear", []string{x}, 3)
		ci := b.Node("ConvInteger", []string{q[0], b.Init("w", w), q[2], b.Init("zw", zw)}, attrs...)
		f := b.Node("Cast", []string{ci}, onnx.IntAttr("to", 1))
		b.Output(b.Node("Mul", []string{f, b.Node("Mul", []string{q[1], b.Scalar("ws", graph.Float32, 0.003)})}), graph.Float32)
		return b
	}
	s, err := RunUntil(writeONNX(t, build(false), "convint"), Options{Warn: func(string) {}}, "fold-qdq")
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 4; trial++ {
		x := graph.NewData(graph.UInt8, []int{n, cin, h, wd})
		for i := range x.I {
			x.I[i] = next(256)
		}
		za := []int64{0, 255, 128, next(256)}[trial]
		out, err := interp.Run(s.Graph, map[string]*graph.Data{s.Graph.Inputs[0]: x, s.Graph.Inputs[1]: ints47(graph.UInt8, []int{}, za)})
		if err != nil {
			t.Fatal(err)
		}
		want, oh, ow := refConvInteger(x.I, n, cin, h, wd, za, w.I, cout, kh, kw, zw.I, pads, stride, dil, group)
		got := out[s.Graph.Outputs[0]]
		if !slices.Equal(got.Shape, []int{n, cout, oh, ow}) || !slices.Equal(got.I, want) {
			t.Fatalf("zero point %d: got %v %v, want %v %v", za, got.Shape, got.I, []int{n, cout, oh, ow}, want)
		}
	}
	runDynamicModel49(t, build(true), "convdyn")
}

// What the run-time zero point path cannot take gets one line naming why.
func TestRuntimeZeroPointRefusals49(t *testing.T) {
	for _, c := range []struct {
		want  string
		build func(b *onnx.Builder)
	}{
		{"zero point is int8, data is uint8", func(b *onnx.Builder) {
			b.Output(b.Node("MatMulInteger", []string{b.Input("a", graph.UInt8, 2, 3), b.Init("w", graph.NewData(graph.Int8, []int{3, 3})), b.Input("z", graph.Int8)}), graph.Int32)
		}},
		{"per-row zero point of A", func(b *onnx.Builder) {
			b.Output(b.Node("MatMulInteger", []string{b.Input("a", graph.UInt8, 2, 3), b.Init("w", graph.NewData(graph.Int8, []int{3, 3})), b.Input("z", graph.UInt8, 2)}), graph.Int32)
		}},
		{"run-time zero point of A and a non-constant B", func(b *onnx.Builder) {
			b.Output(b.Node("MatMulInteger", []string{b.Input("a", graph.UInt8, 2, 3), b.Input("w", graph.Int8, 3, 3), b.Input("z", graph.UInt8)}), graph.Int32)
		}},
		{"ConvInteger of empty weights", func(b *onnx.Builder) {
			b.Output(b.Node("ConvInteger", []string{b.Input("x", graph.UInt8, 1, 2, 4, 4), b.Init("w", graph.NewData(graph.Int8, []int{0, 2, 1, 1})), b.Input("z", graph.UInt8)}), graph.Int32)
		}},
		{"2 weight zero points for 3 output channels", func(b *onnx.Builder) {
			b.Output(b.Node("ConvInteger", []string{b.Input("x", graph.UInt8, 1, 2, 4, 4), b.Init("w", graph.NewData(graph.Int8, []int{3, 2, 1, 1})), b.Input("z", graph.UInt8), b.Init("zw", graph.NewData(graph.Int8, []int{2}))}), graph.Int32)
		}},
	} {
		b := onnx.NewBuilder("h", 13, 1)
		c.build(b)
		_, err := onnx.Import("h", b.Model(), onnx.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want one line with %q, got %v", c.want, err)
		}
	}
}
