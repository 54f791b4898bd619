package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/quant"
)

// A float model that overflows to infinity on the calibration data gave
// the int8 model an SQNR of NaN, and NaN < 20 is false: no warning (review
// finding). NaN is low, and the line says where it comes from; 25 dB still
// says nothing.
func TestLowSQNRWarnsOnNaN47(t *testing.T) {
	for _, c := range []struct {
		db   float64
		want string
	}{
		{math.NaN(), `int8 output SQNR NaN dB against the float model on the calibration data; the first layer below 20 dB is "exp" (Math, NaN dB) (NaN: the float model gives NaN or infinities on these inputs)`},
		{25, ""},
	} {
		var got []string
		rep := &quant.Report{Samples: 4, OutputSQNRdB: c.db, Layers: []quant.LayerReport{{Name: "exp", Op: "Math", SQNRdB: c.db}}}
		warnLowSQNR(Options{Calib: "calib", Warn: func(s string) { got = append(got, s) }}, rep)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%v dB: warned %q", c.db, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%v dB: warned %q, want it to start %q", c.db, got, c.want)
		}
	}
}

// The NaN note is for NaN figures, not for a layer whose name holds "NaN"
// (diff review: the message text was searched).
func TestLowSQNRNaNNoteOnlyForNaN47(t *testing.T) {
	var got []string
	rep := &quant.Report{Samples: 4, OutputSQNRdB: 12, Layers: []quant.LayerReport{{Name: "NaNGuard", Op: "Mul", SQNRdB: 12}}}
	warnLowSQNR(Options{Calib: "calib", Warn: func(s string) { got = append(got, s) }}, rep)
	if len(got) != 1 || !strings.Contains(got[0], `"NaNGuard" (Mul, 12.0 dB)`) || strings.Contains(got[0], "(NaN:") {
		t.Errorf("warned %q, want the layer named and no NaN note", got)
	}
}

// evalModel47 runs a model as eval does (folded QDQ) on one float or
// integer input.
func evalModel47(t *testing.T, path string, in *graph.Data) []float32 {
	t.Helper()
	return evalModelData49(t, path, in).F
}

func ints47(dt graph.DType, shape []int, v ...int64) *graph.Data {
	d := graph.NewData(dt, shape)
	copy(d.I, v)
	return d
}

// A DequantizeLinear of MatMulInteger's int32 accumulator put its scale on
// the accumulator, and the integer kernel requantized to it: the scale
// cancelled (quantized-ONNX review: -100 where -25 was due). By hand:
// a − 60 = [10, −10, 0], b − 1 = [[0, −2], [1, −3], [2, 4]], a·b =
// [−10, 10], × 0.25 = [−2.5, 2.5]. An int32 zero point other than 0 is
// refused, as DequantizeLinear defines it.
func TestDequantizeIntegerAccumulator47(t *testing.T) {
	build := func(zp int64) *onnx.Builder {
		b := onnx.NewBuilder("mmi", 13, 1)
		a := b.Input("a", graph.UInt8, 1, 3)
		w := b.Init("w", ints47(graph.Int8, []int{3, 2}, 1, -1, 2, -2, 3, 5))
		mm := b.Node("MatMulInteger", []string{a, w, b.Scalar("az", graph.UInt8, 60), b.Scalar("wz", graph.Int8, 1)})
		b.Output(b.Node("DequantizeLinear", []string{mm, b.Scalar("s", graph.Float32, 0.25), b.Scalar("z", graph.Int32, float64(zp))}), graph.Float32)
		return b
	}
	got := evalModel47(t, writeONNX(t, build(0), "mmi"), ints47(graph.UInt8, []int{1, 3}, 70, 50, 60))
	if len(got) != 2 || got[0] != -2.5 || got[1] != 2.5 {
		t.Errorf("got %v, want [-2.5 2.5]", got)
	}
	_, err := RunUntil(writeONNX(t, build(3), "mmi3"), Options{Warn: func(string) {}}, "fold-qdq")
	if err == nil || !strings.Contains(err.Error(), "an int32 input's zero point must be 0") {
		t.Errorf("int32 zero point 3: %v", err)
	}
}

// A QDQ Conv's int32 bias at a scale other than input × weight scale was
// added as if at that product (quantized-ONNX review: 12.7 came out 0.5).
// By hand, x = 1.0 at scale 0.1 (10), weights [2, −3] at [0.05, 0.2], bias
// [100, −300] at [0.5, 0.001]: channel 0 is 0.1 + 50 = 50.1, clamped at
// 127 steps of 0.1 to 12.7; channel 1 is −0.6 − 0.3 = −0.9. At the
// product's scales [0.005, 0.02] the bias is [0.5, −6]: [0.6, −6.6].
func TestQDQBiasAtItsOwnScale47(t *testing.T) {
	for _, c := range []struct {
		bs   []float32
		want []float32
	}{{[]float32{0.5, 0.001}, []float32{12.7, -0.9}}, {[]float32{0.005, 0.02}, []float32{0.6, -6.6}}} {
		b := onnx.NewBuilder("qconv", 13, 1)
		x := b.Input("x", graph.Float32, 1, 1, 1, 1)
		xs, xz := b.Scalar("xs", graph.Float32, 0.1), b.Scalar("xz", graph.Int8, 0)
		w := b.Init("w", ints47(graph.Int8, []int{2, 1, 1, 1}, 2, -3))
		bsd := graph.NewData(graph.Float32, []int{2})
		copy(bsd.F, c.bs)
		wd := b.Node("DequantizeLinear", []string{w, b.Floats("ws", 0.05, 0.2), b.Init("wz", ints47(graph.Int8, []int{2}, 0, 0))}, onnx.IntAttr("axis", 0))
		bd := b.Node("DequantizeLinear", []string{b.Init("bq", ints47(graph.Int32, []int{2}, 100, -300)), b.Init("bs", bsd), b.Init("bz", ints47(graph.Int32, []int{2}, 0, 0))}, onnx.IntAttr("axis", 0))
		xd := b.Node("DequantizeLinear", []string{b.Node("QuantizeLinear", []string{x, xs, xz}), xs, xz})
		conv := b.Node("Conv", []string{xd, wd, bd})
		ys, yz := b.Scalar("ys", graph.Float32, 0.1), b.Scalar("yz", graph.Int8, 0)
		b.Output(b.Node("DequantizeLinear", []string{b.Node("QuantizeLinear", []string{conv, ys, yz}), ys, yz}), graph.Float32)
		in := graph.NewData(graph.Float32, []int{1, 1, 1, 1})
		in.F[0] = 1
		got := evalModel47(t, writeONNX(t, b, "qconv"), in)
		for i := range c.want {
			if len(got) != 2 || math.Abs(float64(got[i]-c.want[i])) > 1e-6 {
				t.Errorf("bias scales %v: got %v, want %v", c.bs, got, c.want)
				break
			}
		}
	}
}

// QuantizeLinear-21's output_dtype must match its zero point's type; an
// int8 zero point with output_dtype uint8 was written as int8.
func TestQuantizeOutputDTypeConflict47(t *testing.T) {
	b := onnx.NewBuilder("q21", 21, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	q := b.Node("QuantizeLinear", []string{x, b.Scalar("s", graph.Float32, 0.1), b.Scalar("z", graph.Int8, 0)}, onnx.IntAttr("output_dtype", 2))
	b.Output(b.Node("DequantizeLinear", []string{q, b.Scalar("s2", graph.Float32, 0.1), b.Scalar("z2", graph.Int8, 0)}), graph.Float32)
	_, err := RunUntil(writeONNX(t, b, "q21"), Options{Warn: func(string) {}}, "fold-qdq")
	if err == nil || !strings.Contains(err.Error(), "output_dtype uint8, but the zero point is int8: ONNX wants them equal") {
		t.Errorf("error %v", err)
	}
}
