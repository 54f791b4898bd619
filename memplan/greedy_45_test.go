package memplan

import (
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// fanOut is the review's graph: x[1,64] read by n multiplies listed first,
// then a chain of adds summing their outputs. Run as the file lists it,
// all n products are live before the first add; alternating a multiply and
// an add keeps x, the running sum and one or two products: a few 256 B
// tensors.
func fanOut(n int) *graph.Graph {
	b := newBuilder(graph.Float32)
	x := b.input(1, 64)
	prods := make([]string, n)
	for i := range prods {
		prods[i] = b.op(graph.Mul, nil, []string{x, b.konst(1, 64)}, 1, 64)
	}
	sum := prods[0]
	for _, p := range prods[1:] {
		sum = b.op(graph.Add, nil, []string{sum, p}, 1, 64)
	}
	return b.output(sum)
}

// Past the beam search's 600 nodes the greedy order plans the fan-out in a
// few tensors (the model's order took 77,056 B at n = 301), and at n = 1,100
// it plans at all (the model's order has 1,100 tensors live, past MaxLive,
// and was refused). At n = 5,000 the ready list is wider than the nodes
// greedyOrder weighs at one step: the adds made ready last must still be
// among them (a review: with the list's head alone, 231,936 B). The hand-worked bound: x stays live (the graph's input
// is outside the arena with separate I/O, so the arena holds the running
// sum, the next product and the sum being made, 3 × 256 B, less what
// in-place adds reuse).
func TestGreedyOrderPlansWideFanOut(t *testing.T) {
	for _, n := range []int{10, 290, 301, 1100, 5000} {
		g := fanOut(n)
		p := mustPlan(t, g, DefaultOptions())
		if p.ArenaBytes > 3*256 {
			t.Errorf("n = %d (%d nodes): arena %d B, want at most 768 B", n, len(g.Nodes), p.ArenaBytes)
		}
	}
}

// The greedy order is a topological order of every node, once each.
func TestGreedyOrderIsTopological(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		g := randomGraphN(rand.New(rand.NewPCG(seed, 45)), 40)
		a, err := analyze(g, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		ord := a.greedyOrder()
		if len(ord) != len(g.Nodes) {
			t.Fatalf("seed %d: %d of %d nodes ordered", seed, len(ord), len(g.Nodes))
		}
		pos := make([]int, len(ord))
		seen := make([]bool, len(ord))
		for i, n := range ord {
			if seen[n] {
				t.Fatalf("seed %d: node %d twice", seed, n)
			}
			seen[n], pos[n] = true, i
		}
		for n := range ord {
			for _, p := range a.preds[n] {
				if pos[p] >= pos[n] {
					t.Errorf("seed %d: node %d runs before its input's producer %d", seed, n, p)
				}
			}
		}
	}
}
