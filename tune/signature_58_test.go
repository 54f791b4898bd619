package tune

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Conv2DAttrs' ZeroTaps field (session 58) leaves every other convolution's
// signature as the records hold it: KWS's pointwise layer hashes to the
// #31459d26 that tune/measure/testdata/mlperf_an386.json was written with
// before the field existed, and a layer with a zero tap to another.
func TestSignatureKeepsOldHashes58(t *testing.T) {
	pc := func(n int) *graph.Quant {
		return &graph.Quant{Scale: make([]float32, n), ZeroPoint: make([]int32, n), Axis: 0}
	}
	g := graph.New("kws", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 25, 5, 64}, Quant: &graph.Quant{Scale: []float32{1}, ZeroPoint: []int32{0}}})
	g.AddConst("w", graph.NewData(graph.Int8, []int{64, 1, 1, 64})).Quant = pc(64)
	g.AddConst("b", graph.NewData(graph.Int32, []int{64})).Quant = pc(64)
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 25, 5, 64}, Quant: &graph.Quant{Scale: []float32{1}, ZeroPoint: []int32{0}}})
	a := &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1, Act: graph.ActRelu}
	n := &graph.Node{Name: "pw", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: a}
	g.AddNode(n)
	const want = "Conv2D int8 1x25x5x64,cp64x1x1x64,cp64:int32->1x25x5x64 #31459d26"
	if got := Signature(g, n); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	a.ZeroTaps = 1
	if got := Signature(g, n); strings.HasSuffix(got, "#31459d26") {
		t.Errorf("a layer with a zero tap signs as one without: %q", got)
	}
}
