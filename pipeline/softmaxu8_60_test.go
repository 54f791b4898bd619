package pipeline

import (
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A uint8 → uint8 softmax (TF1's quantized classifiers end with one: a
// review's coral MobileNets were refused at it) is TFLite's int8 kernel
// from output zero point 0: every row of uint8 logits gives 128 more than
// the same logits less 128 through the int8 softmax (zero points −128),
// and two equal logits give a half each, 128. The firmware agrees with the
// reference interpreter on the host and the M4.
func TestSoftmaxUint8_60(t *testing.T) {
	const rows, depth = 6, 10
	build := func(dt graph.DType, zx, zy int32) *graph.Graph {
		g := graph.New("smu8", "tflite")
		g.AddTensor(&graph.Tensor{Name: "x", DType: dt, Shape: []int{rows, depth}, Quant: &graph.Quant{Scale: []float32{0.08}, ZeroPoint: []int32{zx}}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: []int{rows, depth}, Quant: &graph.Quant{Scale: []float32{1.0 / 256}, ZeroPoint: []int32{zy}}})
		g.AddNode(&graph.Node{Name: "sm", Op: graph.Softmax, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.SoftmaxAttrs{Axis: -1, Beta: 1}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		return g
	}
	r := rand.New(rand.NewPCG(60, 8))
	xu := graph.NewData(graph.UInt8, []int{rows, depth})
	for i := range xu.I {
		xu.I[i] = int64(r.IntN(256))
	}
	xu.I[0], xu.I[1] = 255, 255 // row 0: two equal largest logits
	for i := 2; i < depth; i++ {
		xu.I[i] = 0 // far below them: 0 after the kernel's exp
	}
	xi := graph.NewData(graph.Int8, []int{rows, depth})
	for i, v := range xu.I {
		xi.I[i] = v - 128
	}
	run := func(g *graph.Graph, board string, in *graph.Data) []int64 {
		return runOn60(t, g, "smu8", board, []map[string]*graph.Data{{"x": in}}).Outputs[0][0].I
	}
	for _, board := range []string{"host", "mps2-an386"} {
		u := run(build(graph.UInt8, 0, 0), board, xu)
		i8 := run(build(graph.Int8, -128, -128), board, xi)
		for k := range u {
			if u[k] != i8[k]+128 {
				t.Fatalf("%s: uint8 output %d is %d, the int8 one %d: want 128 more", board, k, u[k], i8[k])
			}
		}
		if u[0] != 128 || u[1] != 128 || u[2] != 0 {
			t.Errorf("%s: row 0 %v, want 128, 128, then 0", board, u[:depth])
		}
	}
}
