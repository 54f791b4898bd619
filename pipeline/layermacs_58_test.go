package pipeline

import (
	"testing"
	"time"
)

// A float kernel fused from a convolution and its activation ("Conv_1 +
// Relu_3") profiles with the convolution's MACs, counted by hand from
// testdata/gen/onnxmodels.CNN (review: bench --layers showed "-" for every
// fused float layer): the 3×3 3 → 8 convolution over 16×16 pixels
// 16·16·8·27, the 3×3 depthwise layer with its Clip over 8×8 pixels 8·8·8·9,
// the 1×1 8 → 16 layer 8·8·16·8 and the 16 → 10 Gemm 160.
func TestLayerMACsFused58(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	s, err := Compile("../testdata/onnx/cnn.onnx", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.ExecuteLayers(RandomInputs(s.Graph, 1, 58), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Fatal("outputs differ from the reference interpreter")
	}
	want := map[string]int64{"Conv_1 + Relu_3": 16 * 16 * 8 * 27, "Conv_5 + Clip_6": 8 * 8 * 8 * 9, "Conv_7": 8 * 8 * 16 * 8, "Gemm_10": 160}
	for _, l := range x.Layers {
		if w, ok := want[l.Node]; ok {
			if l.MACs != w {
				t.Errorf("%s: %d MACs, want %d", l.Node, l.MACs, w)
			}
			delete(want, l.Node)
		}
	}
	if len(want) > 0 {
		t.Errorf("no layer for %v", want)
	}
}
