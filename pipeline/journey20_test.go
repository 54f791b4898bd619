package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
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
