package pipeline

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/quant"
)

// A quantized ONNX softmax over an axis that is not the last of NHWC (a
// Conv's output, softmax over W of NCHW: axis 2 here) stays float, as
// TFLite's integer kernel is over the last axis only; it was refused
// after quantization, naming the internal axis (user-journey finding).
func TestQuantizedSoftmaxOverAnotherAxis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	board, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	// ONNX axis 1 (channels) is NHWC's last: int8; -1 and 2 (W, H) are not.
	for axis, want := range map[int]graph.DType{-1: graph.Float32, 1: graph.Int8, 2: graph.Float32} {
		b := onnx.NewBuilder("convsoftmax", 13, 1)
		x := b.Input("x", graph.Float32, 1, 3, 6, 5)
		c := b.Node("Conv", []string{x, b.Rand("w", 0.5, 4, 3, 3, 3)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
		b.Output(b.Node("Softmax", []string{c}, onnx.IntAttr("axis", int64(axis))), graph.Float32)
		s, err := Compile(writeONNX(t, b, "convsoftmax"), Options{Board: board, Version: "test", CalibRandom: 4})
		if err != nil {
			t.Fatalf("axis %d: %v", axis, err)
		}
		for _, n := range s.Graph.Nodes {
			if n.Op == graph.Softmax && s.Graph.Out(n, 0).DType != want {
				t.Errorf("axis %d: the softmax is %v, want %v", axis, s.Graph.Out(n, 0).DType, want)
			}
		}
		ex, err := s.Execute(RandomInputs(s.Graph, 2, 3), t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !ex.AllMatch() {
			t.Fatalf("axis %d: outputs differ from the reference interpreter (max abs diff %g)", axis, ex.MaxAbsDiff)
		}
	}
}

// An int8 build of the log-mel front end keeps the spectrum float up to the
// Log (quant's spectrumTail) and joins no two float nodes through int8:
// the DFT and its sum of squares stay one fused node. Its log-mel output,
// on a chirp through both builds' reference interpreters, has at least 20 dB
// SQNR against the float build's (it was -6.8 dB: quiet bins quantized to zero,
// user-journey finding); the int8 input's own rounding bounds it.
func TestQuantizedLogMelFrontEnd(t *testing.T) {
	t.Parallel()
	path := logMelModel(t, 400, 160)
	fl, err := RunUntil(path, Options{Version: "test"}, "plan")
	if err != nil {
		t.Fatal(err)
	}
	// Calibrated on chirps over a microphone's noise floor (white noise
	// alone has no quiet bins: its log-mel range is another; a pure tone's
	// quiet bins hold nothing but the int8 input's own rounding).
	r := rand.New(rand.NewPCG(1, 2))
	chirp := func(f0, f1, amp float64) *graph.Data {
		d := graph.NewData(graph.Float32, []int{1, 16000, 1})
		for i := range d.F {
			ts := float64(i) / 16000
			d.F[i] = float32(amp*math.Sin(2*math.Pi*(f0+(f1-f0)/2*ts)*ts) + 0.02*(r.Float64()*2-1))
		}
		return d
	}
	calib := t.TempDir()
	for i, c := range [][3]float64{{100, 4000, 0.6}, {3000, 300, 0.3}, {500, 7000, 0.8}} {
		var buf bytes.Buffer
		if err := npy.Write(&buf, chirp(c[0], c[1], c[2])); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(calib, fmt.Sprintf("sample_%d.npy", i)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q, err := RunUntil(path, Options{Version: "test", Calib: calib}, "plan")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range q.Graph.Nodes {
		switch {
		case n.Op == graph.Quantize && q.Graph.In(n, 0) != nil && n.Outputs[0] != q.Graph.Outputs[0]:
			t.Errorf("a Quantize (%s) inside the front end", n.Name)
		case n.Op == graph.Reduce:
			t.Errorf("the sum of squares %s was not fused into the STFT", n.Name)
		}
	}
	wav := chirp(200, 3200, 0.5)
	want, err := interp.Run(fl.Graph, map[string]*graph.Data{"audio": wav})
	if err != nil {
		t.Fatal(err)
	}
	in := q.Graph.Tensors["audio"]
	s, z := in.Quant.At(0)
	got, err := interp.Run(q.Graph, map[string]*graph.Data{"audio": quant.QuantizeData(wav, s, z)})
	if err != nil {
		t.Fatal(err)
	}
	out := q.Graph.Outputs[0]
	deq := quant.DequantizeData(got[out], q.Graph.Tensors[out].Quant)
	var sig, noise float64
	for i, w := range want[fl.Graph.Outputs[0]].F {
		sig += float64(w) * float64(w)
		d := float64(w - deq.F[i])
		noise += d * d
	}
	if sqnr := 10 * math.Log10(sig/noise); sqnr < 20 {
		t.Errorf("int8 log-mel SQNR %.1f dB against the float build, want at least 20 (it was -6.8 with int8 inside)", sqnr)
	} else {
		t.Logf("int8 log-mel SQNR %.1f dB", sqnr)
	}
}

// A 1-D conv net (Conv1d, BatchNorm, ReLU twice, a strided and dilated
// conv, max pool, global average pool, Gemm) imports as its 2-D twin
// does: the batch norms fold into the convs, the ReLUs follow them
// directly, and no Transpose, Mul or Add is left between the layers (it
// was 24 nodes, 2.3 times the twin's instructions: user-journey finding).
// Its outputs equal the twin's, written with [1, k] kernels over
// [N, C, 1, L], in the reference interpreter, and its C on the host
// matches.
func TestConv1DImportsLikeConv2D(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	data := func(shape ...int) *graph.Data {
		d := graph.NewData(graph.Float32, shape)
		for i := range d.F {
			d.F[i] = float32(r.Float64()*2 - 1)
		}
		return d
	}
	type layer struct {
		w, b, scale, bias, mean, vr *graph.Data
		attrs                       []int64 // stride, dilation, pad
	}
	layers := []layer{
		{data(8, 3, 5), data(8), data(8), data(8), data(8), data(8), []int64{1, 1, 2}},
		{data(16, 8, 3), data(16), data(16), data(16), data(16), data(16), []int64{2, 2, 2}},
	}
	for _, l := range layers {
		for i := range l.vr.F {
			l.vr.F[i] = 0.5 + l.vr.F[i]*l.vr.F[i]
		}
	}
	fcW, fcB := data(16, 5), data(5)
	build := func(twoD bool) string {
		b := onnx.NewBuilder("conv1d", 13, 1)
		shape := []int{1, 3, 64}
		if twoD {
			shape = []int{1, 3, 1, 64}
		}
		x := b.Input("x", graph.Float32, shape...)
		for i, l := range layers {
			w := l.w
			k := []int64{int64(w.Shape[2])}
			st, dil, pads := []int64{l.attrs[0]}, []int64{l.attrs[1]}, []int64{l.attrs[2], l.attrs[2]}
			if twoD {
				w = &graph.Data{DType: graph.Float32, Shape: []int{w.Shape[0], w.Shape[1], 1, w.Shape[2]}, F: w.F}
				k, st, dil, pads = []int64{1, k[0]}, []int64{1, st[0]}, []int64{1, dil[0]}, []int64{0, pads[0], 0, pads[1]}
			}
			p := fmt.Sprintf("l%d_", i)
			x = b.Node("Conv", []string{x, b.Init(p+"w", w), b.Init(p+"b", l.b)}, onnx.IntsAttr("kernel_shape", k...),
				onnx.IntsAttr("strides", st...), onnx.IntsAttr("dilations", dil...), onnx.IntsAttr("pads", pads...))
			x = b.Node("BatchNormalization", []string{x, b.Init(p+"s", l.scale), b.Init(p+"o", l.bias), b.Init(p+"m", l.mean), b.Init(p+"v", l.vr)})
			x = b.Node("Relu", []string{x})
			if i == 0 {
				k := []int64{2}
				if twoD {
					k = []int64{1, 2}
				}
				x = b.Node("MaxPool", []string{x}, onnx.IntsAttr("kernel_shape", k...), onnx.IntsAttr("strides", k...))
			}
		}
		x = b.Node("Flatten", []string{b.Node("GlobalAveragePool", []string{x})})
		b.Output(b.Node("Gemm", []string{x, b.Init("fcw", fcW), b.Init("fcb", fcB)}), graph.Float32)
		name := "conv1d"
		if twoD {
			name = "conv2d"
		}
		return writeONNX(t, b, name)
	}
	one, err := RunUntil(build(false), Options{Version: "test"}, "plan")
	if err != nil {
		t.Fatal(err)
	}
	two, err := RunUntil(build(true), Options{Version: "test"}, "plan")
	if err != nil {
		t.Fatal(err)
	}
	convs := 0
	for _, n := range one.Graph.Nodes {
		switch n.Op {
		case graph.Conv2D:
			convs++
		case graph.Transpose, graph.Mul, graph.Add:
			if convs > 0 {
				t.Errorf("%s (%s) after the first conv", n.Name, n.Op)
			}
		}
	}
	// The one extra node is the input's view as [1, 3, 1, 64] (a Reshape
	// the plan aliases: no copy).
	if len(one.Graph.Nodes) != len(two.Graph.Nodes)+1 || one.Graph.Nodes[0].Op != graph.Reshape {
		t.Errorf("1-D: %d nodes, its 2-D twin %d", len(one.Graph.Nodes), len(two.Graph.Nodes))
	}
	x := data(1, 3, 64)
	got, err := interp.Run(one.Graph, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	want, err := interp.Run(two.Graph, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 3, 1, 64}, F: x.F}})
	if err != nil {
		t.Fatal(err)
	}
	g, w := got[one.Graph.Outputs[0]].F, want[two.Graph.Outputs[0]].F
	for i := range w {
		if math.Abs(float64(g[i]-w[i])) > 1e-5*math.Max(1, math.Abs(float64(w[i]))) {
			t.Fatalf("output[%d] = %g, the 2-D twin's %g", i, g[i], w[i])
		}
	}
	if testing.Short() {
		return
	}
	board, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(build(false), Options{Board: board, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Execute(RandomInputs(s.Graph, 2, 3), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.AllMatch() {
		t.Fatalf("C differs from the reference interpreter (max abs diff %g)", ex.MaxAbsDiff)
	}
}

// The float tail after a DFT ends at the front end: without a Log (a Sqrt
// instead, or nothing) the network after it is still int8 (review
// finding: everything after the DFT stayed float32). STFT, power, mel
// product, then either Sqrt or nothing, Unsqueeze, a 3x3 Conv and Relu,
// GlobalAveragePool, Gemm: the Conv and the Gemm are int8, and so is the
// output; the mel product stays float.
func TestSpectrumTailEndsAtTheNetwork(t *testing.T) {
	for _, sqrt := range []bool{true, false} {
		b := onnx.NewBuilder("audio_net", 17, 1)
		x := b.Input("audio", graph.Float32, 1, 4000, 1)
		win := make([]float32, 256)
		for i := range win {
			win[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/256))
		}
		spec := b.Node("STFT", []string{x, b.Scalar("step", graph.Int64, 128), b.Floats("window", win...)})
		p := b.Node("ReduceSumSquare", []string{spec}, onnx.IntsAttr("axes", -1), onnx.IntAttr("keepdims", 0))
		mel := graph.NewData(graph.Float32, []int{129, 20})
		for i := range mel.F {
			mel.F[i] = float32(i%13) / 130 // non-negative, as filter weights are
		}
		m := b.Node("MatMul", []string{p, b.Init("mel", mel)})
		if sqrt {
			m = b.Node("Sqrt", []string{m})
		}
		u := b.Node("Unsqueeze", []string{m, b.Ints("ax", 1)})
		c := b.Node("Relu", []string{b.Node("Conv", []string{u, b.Rand("w", 0.3, 4, 1, 3, 3)}, onnx.IntsAttr("pads", 1, 1, 1, 1))})
		f := b.Node("Flatten", []string{b.Node("GlobalAveragePool", []string{c})})
		b.Output(b.Node("Gemm", []string{f, b.Rand("fc", 0.5, 4, 3)}), graph.Float32)
		s, err := RunUntil(writeONNX(t, b, "audio_net"), Options{Version: "test", CalibRandom: 4}, "plan")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range s.Graph.Nodes {
			out := s.Graph.Out(n, 0)
			switch {
			case n.Op == graph.Conv2D && out.DType != graph.Int8:
				t.Errorf("sqrt %v: the Conv is %v", sqrt, out.DType)
			case n.Op == graph.FullyConnected && n.Inputs[0] != "" && s.Graph.In(n, 0).DType == graph.Float32 && out.DType == graph.Float32 && s.Graph.In(n, 1).Shape[0] == 3:
				t.Errorf("sqrt %v: the Gemm is float", sqrt)
			}
		}
		if out := s.Graph.Tensors[s.Graph.Outputs[0]]; out.DType != graph.Int8 {
			t.Errorf("sqrt %v: the output is %v", sqrt, out.DType)
		}
	}
}
