package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The plan pass removes unused channels once: when lowering plans again
// (a kernel that could not run in place), the model's MAC count and the
// number of channels removed stay those of the first plan. The chain has
// four of its eight channels read with zero weights by its last layer, so
// four go; its MACs are counted on an untouched copy of the graph.
func TestPlanPrunesOnce(t *testing.T) {
	mk := func() *graph.Graph {
		g := tirtest.DeadChain(9, nil, "conv")
		w := g.Tensors["w3"]
		for o := 0; o < w.Shape[0]; o++ {
			for _, c := range []int{0, 2, 5, 7} {
				w.Data.I[o*8+c] = 0
			}
		}
		return g
	}
	want := graph.TotalMACs(mk())
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileGraph(mk(), "chain", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if s.MACs != want || s.UnusedChannels != 4 {
			t.Errorf("plan %d: MACs %d, unused channels %d; want %d and 4", i+1, s.MACs, s.UnusedChannels, want)
		}
		if graph.TotalMACs(s.Graph) >= want {
			t.Errorf("plan %d: the graph still computes %d MACs", i+1, graph.TotalMACs(s.Graph))
		}
		if err := planPass(s); err != nil {
			t.Fatal(err)
		}
	}
}
