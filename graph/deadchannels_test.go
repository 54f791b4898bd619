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
	// Depthwise weights whose per-channel scales lie along another axis
	// than the channels the reordering moves: left alone.
	k := tirtest.DeadChain(4, []int{1}, "conv")
	k.Tensors[k.Nodes[1].Inputs[1]].Quant.Axis = 3
	if n := graph.PermuteDeadChannels(k); n != 0 {
		t.Errorf("scales on another axis reordered (%d)", n)
	}
}

// Two fully connected layers: the first one's dead rows go last, the second
// one's input columns follow, and the outputs stay the same.
func TestPermuteDeadRowsFC(t *testing.T) {
	build := func() *graph.Graph {
		g := graph.New("fc2", "tflite")
		q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{2, 6}, Quant: q(0.05, -3)})
		w1 := graph.NewData(graph.Int8, []int{5, 6})
		for i := range w1.I {
			if r := i / 6; r != 1 && r != 3 {
				w1.I[i] = int64(i*53%255 - 127)
			}
		}
		g.AddConst("w1", w1).Quant = q(0.004, 0)
		b1 := graph.NewData(graph.Int32, []int{5})
		for i := range b1.I {
			b1.I[i] = int64(300*i - 500)
		}
		g.AddConst("b1", b1)
		g.AddTensor(&graph.Tensor{Name: "h", DType: graph.Int8, Shape: []int{2, 5}, Quant: q(0.1, -128)})
		g.AddNode(&graph.Node{Name: "fc1", Op: graph.FullyConnected, Inputs: []string{"x", "w1", "b1"}, Outputs: []string{"h"}, Attrs: &graph.FullyConnectedAttrs{Act: graph.ActRelu}})
		w2 := graph.NewData(graph.Int8, []int{4, 5})
		for i := range w2.I {
			w2.I[i] = int64(i*71%255 - 127)
		}
		g.AddConst("w2", w2).Quant = q(0.005, 0)
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{2, 4}, Quant: q(0.2, 3)})
		g.AddNode(&graph.Node{Name: "fc2", Op: graph.FullyConnected, Inputs: []string{"h", "w2", ""}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		return g
	}
	g, h := build(), build()
	if n := graph.PermuteDeadChannels(h); n != 1 {
		t.Fatalf("%d layers reordered", n)
	}
	if d := graph.DeadChannels(h, h.Nodes[0]); !slices.Equal(d, []bool{false, false, false, true, true}) {
		t.Errorf("dead rows now %v", d)
	}
	for seed := 0; seed < 4; seed++ {
		in := randomIn(g, seed)
		a, _ := interp.Run(g, in)
		b, _ := interp.Run(h, in)
		if !slices.Equal(a["y"].I, b["y"].I) {
			t.Errorf("seed %d: %v, was %v", seed, b["y"].I, a["y"].I)
		}
	}
}
