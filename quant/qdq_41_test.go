package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestWriteQDQRoundTripGather: Gather and GatherElements of an int8
// activation, with constant int64 indices, survive the QDQ round trip bit
// for bit (the writer refused them).
func TestWriteQDQRoundTripGather(t *testing.T) {
	for _, elements := range []bool{false, true} {
		g := graph.New("gather", "onnx")
		act := func(name string, shape ...int) {
			g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
		}
		act("x", 1, 4, 4, 2)
		act("r", 1, 32)
		act("h", 1, 6)
		act("y", 1, 3)
		g.AddConst("fw", f32([]int{6, 32}, func() []float32 {
			v := make([]float32, 6*32)
			for i := range v {
				v[i] = float32((i*7)%13-6) / 10
			}
			return v
		}()...))
		idx := &graph.Data{DType: graph.Int64, Shape: []int{3}, I: []int64{4, 0, 5}}
		if elements {
			idx.Shape = []int{1, 3}
		}
		g.AddConst("idx", idx)
		g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{"x"}, Outputs: []string{"r"}})
		g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"r", "fw", ""}, Outputs: []string{"h"}, Attrs: &graph.FullyConnectedAttrs{}})
		g.AddNode(&graph.Node{Name: "pick", Op: graph.Gather, Inputs: []string{"h", "idx"}, Outputs: []string{"y"}, Attrs: &graph.GatherAttrs{Axis: 1, Elements: elements}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		if err := graph.Validate(g); err != nil {
			t.Fatal(err)
		}
		samples := smallSamples(8)
		q, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gathers := 0
		for _, n := range q.Nodes {
			if n.Op == graph.Gather && q.Tensors[n.Outputs[0]].DType == graph.Int8 {
				gathers++
			}
		}
		if gathers != 1 {
			t.Fatalf("elements %v: %d int8 Gathers in the quantized graph:\n%s", elements, gathers, graph.Print(q))
		}
		sameFloatOutputs(t, q, qdqRoundTrip(t, q), samples)
	}
}
