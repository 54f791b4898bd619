package emitc

import (
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func randConst(r *rand.Rand, g *graph.Graph, name string, shape []int, scale float64) {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32(r.NormFloat64() * scale)
	}
	g.AddConst(name, d)
}

func act(g *graph.Graph, name string) {
	g.AddTensor(&graph.Tensor{Name: name})
}

// smallFloatCNN: conv 3x3 pad 1 + relu, depthwise 3x3 stride 2, maxpool,
// avgpool with padding, add, reshape, fc, softmax.
func smallFloatCNN() *graph.Graph {
	r := rand.New(rand.NewSource(7))
	g := graph.New("small float cnn", "onnx")
	g.AddTensor(&graph.Tensor{Name: "input.1", DType: graph.Float32, Shape: []int{1, 8, 8, 3}})
	g.Inputs = []string{"input.1"}
	randConst(r, g, "conv1/weights", []int{4, 3, 3, 3}, 0.5)
	randConst(r, g, "conv1/bias", []int{4}, 0.1)
	act(g, "c1")
	g.AddNode(&graph.Node{Name: "conv1", Op: graph.Conv2D, Inputs: []string{"input.1", "conv1/weights", "conv1/bias"}, Outputs: []string{"c1"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, Group: 1}})
	act(g, "r1")
	g.AddNode(&graph.Node{Name: "relu1", Op: graph.Relu, Inputs: []string{"c1"}, Outputs: []string{"r1"}})
	randConst(r, g, "dw/weights", []int{4, 3, 3, 1}, 0.5)
	act(g, "d1")
	g.AddNode(&graph.Node{Name: "dw", Op: graph.Conv2D, Inputs: []string{"r1", "dw/weights", ""}, Outputs: []string{"d1"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 0, Left: 0, Bottom: 1, Right: 1}, Group: 4, Act: graph.ActRelu6}})
	act(g, "m1")
	g.AddNode(&graph.Node{Name: "pool", Op: graph.MaxPool2D, Inputs: []string{"d1"}, Outputs: []string{"m1"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Pad: graph.Padding{Bottom: 1, Right: 1}}})
	act(g, "a1")
	g.AddNode(&graph.Node{Name: "avg", Op: graph.AvgPool2D, Inputs: []string{"d1"}, Outputs: []string{"a1"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}})
	act(g, "s1")
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"m1", "a1"}, Outputs: []string{"s1"}})
	act(g, "flat")
	g.AddNode(&graph.Node{Name: "flatten", Op: graph.Reshape, Inputs: []string{"s1"}, Outputs: []string{"flat"}})
	randConst(r, g, "fc/weights", []int{5, 64}, 0.2)
	randConst(r, g, "fc/bias", []int{5}, 0.1)
	act(g, "logits")
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"flat", "fc/weights", "fc/bias"}, Outputs: []string{"logits"}})
	act(g, "probs")
	g.AddNode(&graph.Node{Name: "softmax", Op: graph.Softmax, Inputs: []string{"logits"}, Outputs: []string{"probs"}, Attrs: &graph.SoftmaxAttrs{Axis: -1, Beta: 1}})
	g.Outputs = []string{"probs"}
	return g
}

func inferOrDie(t *testing.T, g *graph.Graph) *graph.Graph {
	t.Helper()
	// The reshape's output shape is the graph's to give.
	if tt := g.Tensor("flat"); tt != nil && tt.Shape == nil {
		tt.DType = graph.Float32
		tt.Shape = []int{1, 64}
	}
	if err := graph.InferShapes(g); err != nil {
		t.Fatalf("shapes: %v", err)
	}
	return g
}

func TestFloatCNNHost(t *testing.T) {
	g := inferOrDie(t, smallFloatCNN())
	all := []Options{
		{Prefix: "net", Model: "small"},
		{Prefix: "net", Model: "small", ArenaExternal: true, IOInArena: true},
	}
	if testing.Short() {
		all = all[:1]
	}
	for _, opts := range all {
		checkModel(t, g, opts, 10)
	}
}
