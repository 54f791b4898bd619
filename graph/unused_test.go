package graph_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// unusedChain is tirtest.DeadChain with the consumer's input columns in
// unused set to zero (w3: the pointwise "conv" tail [5,1,1,8] or the
// "fc" tail [4,8]).
func unusedChain(dead, unused []int, tail string) *graph.Graph {
	g := tirtest.DeadChain(7, dead, tail)
	w := g.Tensors["w3"]
	if w == nil { // the "add" tail has no consumer weights
		return g
	}
	outs := w.Shape[0]
	for o := 0; o < outs; o++ {
		for _, c := range unused {
			w.Data.I[o*8+c] = 0
		}
	}
	return g
}

// Removing the channels nobody reads keeps every output of the graph bit
// for bit (on the reference interpreter, over inputs across the int8
// range), shrinks every tensor of the chain to the channels kept (a
// multiple of four, as the eight were), and
// leaves alone what it must: no zero column, a consumer reached through
// anything but channel-wise ops, a chain whose output is also read
// elsewhere.
func TestPruneUnusedChannels(t *testing.T) {
	for _, c := range []struct {
		dead, unused []int
		tail         string
		kept         int // channels left; 8: untouched
	}{
		{[]int{1, 4, 5, 6}, []int{1, 4, 5, 6}, "conv", 4}, // VWW's pattern: dead rows, then zero columns
		{nil, []int{0, 2, 5, 7}, "conv", 4},               // live channels nobody reads
		{[]int{2}, []int{0, 2, 3, 6, 7}, "fc", 4},         // through a global pool and a reshape; one unused kept for a multiple of four
		{[]int{3}, nil, "conv", 8},                        // dead but read: kept
		{nil, []int{1, 2, 3}, "conv", 8},                  // five left: rounded up to all eight
		{nil, []int{0, 1, 2, 3, 4, 5, 6, 7}, "conv", 4},
		{[]int{1}, []int{1, 2, 4, 5}, "add", 8}, // not a channel-wise chain
	} {
		name := fmt.Sprintf("%s dead %v unused %v", c.tail, c.dead, c.unused)
		g := unusedChain(c.dead, c.unused, c.tail)
		h := unusedChain(c.dead, c.unused, c.tail)
		n, removed := graph.PruneUnusedChannels(h)
		if (n == 1) != (c.kept < 8) || n > 1 || removed != 8-c.kept {
			t.Errorf("%s: %d chains pruned, %d channels removed", name, n, removed)
		}
		if err := graph.Validate(h); err != nil {
			t.Fatalf("%s: pruned graph invalid: %v", name, err)
		}
		conv := h.Nodes[0]
		if got := h.Tensors[conv.Outputs[0]].Shape[3]; got != c.kept {
			t.Errorf("%s: producer output has %d channels, want %d", name, got, c.kept)
		}
		if got := h.Tensors[conv.Inputs[1]].Shape[0]; got != c.kept {
			t.Errorf("%s: producer weights have %d rows, want %d", name, got, c.kept)
		}
		if dw := h.Nodes[1]; dw.Attrs.(*graph.Conv2DAttrs).Group != c.kept || h.Tensors[dw.Inputs[1]].Shape[0] != c.kept {
			t.Errorf("%s: depthwise group %d, weights %v, want %d channels", name, dw.Attrs.(*graph.Conv2DAttrs).Group, h.Tensors[dw.Inputs[1]].Shape, c.kept)
		}
		for seed := 0; seed < 6; seed++ {
			in := randomIn(g, seed)
			if seed >= 4 { // the extremes
				for i := range in[g.Inputs[0]].I {
					in[g.Inputs[0]].I[i] = []int64{-128, 127}[(seed+i)%2]
				}
			}
			a, err := interp.Run(g, in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := interp.Run(h, in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for k := range a {
				if !slices.Equal(a[k].I, b[k].I) {
					t.Errorf("%s seed %d: output %s %v, was %v", name, seed, k, b[k].I, a[k].I)
				}
			}
		}
	}
	// A chain tensor that is also a graph output keeps its channels.
	g := unusedChain(nil, []int{0, 2, 5, 7}, "conv")
	g.Outputs = append(g.Outputs, g.Nodes[1].Outputs[0])
	if n, _ := graph.PruneUnusedChannels(g); n != 0 {
		t.Errorf("pruned a chain whose depthwise output is a graph output")
	}
}
