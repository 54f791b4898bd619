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
