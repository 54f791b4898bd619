package graph_test

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// randomIn is a deterministic int8 input for x of the chain graphs.
func randomIn(g *graph.Graph, seed int) map[string]*graph.Data {
	t := g.Tensors[g.Inputs[0]]
	d := graph.NewData(t.DType, t.Shape)
	for i := range d.I {
		d.I[i] = int64((i*37+seed*101)%256 - 128)
	}
	return map[string]*graph.Data{g.Inputs[0]: d}
}

// Reordering channels so the dead ones come last keeps every output of the
// graph bit for bit, moves the producer's dead channels to the end, and
// leaves alone the graphs where the channels reach anything but channel-wise
// ops and one channel-mixing layer.
func TestPermuteDeadChannels(t *testing.T) {
	for _, c := range []struct {
		tail    string
		dead    []int
		permute bool
	}{
		{"conv", []int{1, 4, 5}, true},
		{"conv", []int{0}, true},
		{"fc", []int{2, 3, 6}, true},
		{"conv", []int{6, 7}, false}, // already last
		{"conv", nil, false},
		{"conv", []int{0, 1, 2, 3, 4, 5, 6, 7}, false}, // all dead: nothing to reorder
		{"add", []int{1, 4}, false},
	} {
		g := tirtest.DeadChain(3, c.dead, c.tail)
		h := tirtest.DeadChain(3, c.dead, c.tail)
		n := graph.PermuteDeadChannels(h)
		if (n == 1) != c.permute || n > 1 {
			t.Errorf("%s dead %v: %d layers reordered, want permute=%v", c.tail, c.dead, n, c.permute)
		}
		conv := h.Nodes[0]
		d := graph.DeadChannels(h, conv)
		if len(c.dead) > 0 && len(c.dead) < 8 && c.tail != "add" {
			want := make([]bool, 8)
			for i := 8 - len(c.dead); i < 8; i++ {
				want[i] = true
			}
			if !slices.Equal(d, want) {
				t.Errorf("%s dead %v: dead channels now %v", c.tail, c.dead, d)
			}
		}
		for seed := 0; seed < 4; seed++ {
			in := randomIn(g, seed)
			a, err := interp.Run(g, in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := interp.Run(h, in)
			if err != nil {
				t.Fatal(err)
			}
			for k := range a {
				if !slices.Equal(a[k].I, b[k].I) {
					t.Errorf("%s dead %v seed %d: output %s %v, was %v", c.tail, c.dead, seed, k, b[k].I, a[k].I)
				}
			}
		}
	}
}

// A dead-channel producer whose output is also a graph output, or has two
// consumers, keeps its order.
func TestPermuteDeadChannelsLeavesSharedOutputs(t *testing.T) {
	g := tirtest.DeadChain(4, []int{1}, "conv")
	g.Outputs = append(g.Outputs, g.Nodes[0].Outputs[0])
	if n := graph.PermuteDeadChannels(g); n != 0 {
		t.Errorf("output tensor reordered (%d)", n)
	}
	h := tirtest.DeadChain(4, []int{1}, "conv")
	h.Nodes[1].Inputs = append([]string{}, h.Nodes[1].Inputs...)
	extra := &graph.Node{Name: "pool2", Op: graph.AvgPool2D, Inputs: []string{h.Nodes[0].Outputs[0]}, Outputs: []string{"p2"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}}
	h.AddTensor(&graph.Tensor{Name: "p2", DType: graph.Int8, Shape: []int{1, 3, 3, 8}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{-128}}})
	h.AddNode(extra)
	h.Outputs = append(h.Outputs, "p2")
	if n := graph.PermuteDeadChannels(h); n != 0 {
		t.Errorf("tensor with two consumers reordered (%d)", n)
	}
}
