package memplan

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

type avail struct {
	name    string
	h, w, c int
}

// randomGraph builds an NHWC graph of chains, branches joined by Concat or
// Add, residual blocks, depthwise and pointwise convolutions, element-wise
// ops, pools, Reshape views and FC layers, with random sizes.
func randomGraph(rng *rand.Rand) *graph.Graph { return randomGraphN(rng, 2+rng.IntN(14)) }

func randomGraphN(rng *rand.Rand, steps int) *graph.Graph {
	dt := graph.Int8
	if rng.IntN(5) == 0 {
		dt = graph.Float32
	}
	b := newBuilder(dt)
	var av []avail
	nIn := 1 + rng.IntN(2)
	for range nIn {
		h, w, c := 1+rng.IntN(10), 1+rng.IntN(10), 1+rng.IntN(12)
		av = append(av, avail{b.input(1, h, w, c), h, w, c})
	}
	pick := func() avail {
		if rng.IntN(10) < 7 {
			return av[len(av)-1]
		}
		return av[rng.IntN(len(av))]
	}
	conv := func(x avail, cout, k, stride int) avail {
		oh, ow := (x.h+stride-1)/stride, (x.w+stride-1)/stride
		p := k / 2
		at := &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{1, 1}, Group: 1,
			Pad: graph.Padding{Top: p, Left: p, Bottom: p, Right: p}}
		y := b.op(graph.Conv2D, at, []string{x.name, b.konst(cout, k, k, x.c), b.konst(cout)}, 1, oh, ow, cout)
		return avail{y, oh, ow, cout}
	}
	unary := func(x avail) avail {
		ops := []graph.Op{graph.Relu, graph.Clip, graph.Sigmoid}
		return avail{b.op(ops[rng.IntN(len(ops))], nil, []string{x.name}, 1, x.h, x.w, x.c), x.h, x.w, x.c}
	}
	for range steps {
		x := pick()
		var y avail
		switch rng.IntN(10) {
		case 0:
			y = conv(x, 1+rng.IntN(24), 3, 1+rng.IntN(2))
		case 1:
			s := 1 + rng.IntN(2)
			y = avail{b.depthwise(x.name, x.h, x.w, x.c, s), (x.h + s - 1) / s, (x.w + s - 1) / s, x.c}
		case 2:
			y = conv(x, 1+rng.IntN(24), 1, 1)
		case 3:
			y = unary(x)
		case 4: // residual block
			r := conv(x, x.c, 3, 1)
			if rng.IntN(2) == 0 {
				r = unary(r)
			}
			y = avail{b.op(graph.Add, &graph.BinaryAttrs{}, []string{r.name, x.name}, 1, x.h, x.w, x.c), x.h, x.w, x.c}
		case 5: // parallel branches joined by Concat
			k := 2 + rng.IntN(2)
			var parts []string
			c := 0
			for range k {
				br := conv(x, 1+rng.IntN(16), 1+2*rng.IntN(2), 1)
				if rng.IntN(2) == 0 {
					br = conv(br, 1+rng.IntN(16), 3, 1)
				}
				parts = append(parts, br.name)
				c += br.c
			}
			y = avail{b.op(graph.Concat, &graph.ConcatAttrs{Axis: 3}, parts, 1, x.h, x.w, c), x.h, x.w, c}
		case 6: // flatten, FC, reshape back
			v := b.op(graph.Reshape, nil, []string{x.name}, 1, x.h*x.w*x.c)
			n := 1 + rng.IntN(64)
			f := b.fc(v, x.h*x.w*x.c, n)
			y = avail{b.op(graph.Reshape, nil, []string{f}, 1, 1, 1, n), 1, 1, n}
		case 7:
			oh, ow := (x.h+1)/2, (x.w+1)/2
			at := &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}
			y = avail{b.op(graph.MaxPool2D, at, []string{x.name}, 1, oh, ow, x.c), oh, ow, x.c}
		case 8: // broadcast multiply by a per-channel mean
			m := b.op(graph.Mean, &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}, []string{x.name}, 1, 1, 1, x.c)
			y = avail{b.op(graph.Mul, &graph.BinaryAttrs{}, []string{x.name, m}, 1, x.h, x.w, x.c), x.h, x.w, x.c}
		case 9: // two pickers joined by Add when shapes agree, else a Relu
			z := av[rng.IntN(len(av))]
			if z.h == x.h && z.w == x.w && z.c == x.c && z.name != x.name {
				y = avail{b.op(graph.Add, &graph.BinaryAttrs{}, []string{x.name, z.name}, 1, x.h, x.w, x.c), x.h, x.w, x.c}
			} else {
				y = unary(x)
			}
		}
		av = append(av, y)
	}
	outs := []string{av[len(av)-1].name}
	if rng.IntN(4) == 0 {
		if o := av[rng.IntN(len(av))].name; o != outs[0] {
			outs = append(outs, o)
		}
	}
	return b.output(outs...)
}

func nameHash(s string) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32())
}

// TestRandomGraphs: on 1,000 random graphs with random options, every
// algorithm's plan passes Validate, "best" is never worse than greedy by
// size, and the exact search is never worse than either greedy.
func TestRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	algos := []string{"greedy-size", "greedy-conflicts", "hill-climb", "exact", "best"}
	var stats [5]int // best < greedy-size, in-place nodes, order searched, IO outside, with scratch
	for i := range 1000 {
		g := randomGraph(rng)
		g.Name = fmt.Sprintf("random%d", i)
		base := Options{
			Align:       []int{4, 16, 32}[rng.IntN(3)],
			IOInArena:   rng.IntN(4) != 0,
			InPlace:     rng.IntN(4) != 0,
			OrderSearch: rng.IntN(2) == 0,
			ExactBudget: 5 * time.Millisecond,
		}
		if rng.IntN(3) == 0 {
			base.Scratch = func(n *graph.Node) int { return nameHash(n.Name) % 300 }
		}
		arena := map[string]int{}
		for _, algo := range algos {
			opt := base
			opt.Algorithm = algo
			p, err := Build(g, opt)
			if err != nil {
				t.Fatalf("graph %d %s: %v", i, algo, err)
			}
			if err := p.Validate(g); err != nil {
				t.Fatalf("graph %d %s (%+v): %v\n%s", i, algo, base, err, p.Table())
			}
			arena[algo] = p.ArenaBytes
			if algo == "best" {
				stats[1] += len(p.InPlace)
				if p.OrderSearched {
					stats[2]++
				}
			}
		}
		if arena["best"] > arena["greedy-size"] {
			t.Errorf("graph %d: best %d B > greedy-size %d B", i, arena["best"], arena["greedy-size"])
		}
		if arena["best"] < arena["greedy-size"] {
			stats[0]++
		}
		if !base.IOInArena {
			stats[3]++
		}
		if base.Scratch != nil {
			stats[4]++
		}
	}
	t.Logf("best beat greedy-size on %d graphs; %d in-place nodes; %d searched orders kept; %d with IO outside; %d with scratch",
		stats[0], stats[1], stats[2], stats[3], stats[4])
}

// TestExactVersusGreedy: without scratch, the exact search (when it finishes)
// is never above the greedy placements and never below the lower bound.
func TestExactVersusGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		g := randomGraph(rng)
		opt := DefaultOptions()
		opt.OrderSearch = false
		res := map[string]*Plan{}
		for _, algo := range []string{"greedy-size", "greedy-conflicts", "exact"} {
			opt.Algorithm = algo
			res[algo] = mustPlan(t, g, opt)
		}
		e := res["exact"].ActivationBytes
		if e > res["greedy-size"].ActivationBytes || e > res["greedy-conflicts"].ActivationBytes || e < res["exact"].LowerBoundBytes {
			t.Errorf("graph %d: exact %d, greedy-size %d, greedy-conflicts %d, bound %d", i, e,
				res["greedy-size"].ActivationBytes, res["greedy-conflicts"].ActivationBytes, res["exact"].LowerBoundBytes)
		}
	}
}

// TestOrderSearchExhaustive compares the order search with brute force over
// every topological order of small random graphs: the peak it finds is the
// smallest there is.
func TestOrderSearchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for i := 0; checked < 150 && i < 5000; i++ {
		g := randomGraph(rng)
		if len(g.Nodes) > 9 || len(g.Nodes) < 3 {
			continue
		}
		checked++
		opt := DefaultOptions()
		opt.Align = 16
		opt.InPlace = rng.IntN(2) == 0
		a, err := analyze(g, opt)
		if err != nil {
			t.Fatal(err)
		}
		best := -1
		var walk func(order []int, done []bool)
		walk = func(order []int, done []bool) {
			if len(order) == len(g.Nodes) {
				if lb := peakOf(g, order, opt); best < 0 || lb < best {
					best = lb
				}
				return
			}
			for n := range g.Nodes {
				if done[n] || !readyBrute(g, done, n) {
					continue
				}
				done[n] = true
				walk(append(order, n), done)
				done[n] = false
			}
		}
		walk(nil, make([]bool, len(g.Nodes)))
		got := a.lifetimes(a.searchOrder()).lowerBound()
		if got != best {
			t.Errorf("graph %d (%d nodes): order search peak %d, brute force %d", i, len(g.Nodes), got, best)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d small graphs", checked)
	}
}

// readyBrute: every activation input of n is a graph input or written by a
// node already done.
func readyBrute(g *graph.Graph, done []bool, n int) bool {
	for _, in := range g.Nodes[n].Inputs {
		for m, o := range g.Nodes {
			if m != n && slices.Contains(o.Outputs, in) && !done[m] {
				return false
			}
		}
	}
	return true
}

// peakOf is the live-set peak of a fixed order from the lifetimes (which
// Validate recomputes independently in the other tests); the search itself
// uses incremental step costs instead.
func peakOf(g *graph.Graph, order []int, opt Options) int {
	a, _ := analyze(g, opt)
	return a.lifetimes(order).lowerBound()
}

// TestLargeGraphs: graphs of several hundred nodes (where the order search
// is a beam search and "best" skips the exact search) plan fast and validly.
func TestLargeGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping large graphs in -short mode")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 3 {
		g := randomGraphN(rng, 150)
		start := time.Now()
		p := mustPlan(t, g, DefaultOptions())
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("graph %d (%d nodes): %v", i, len(g.Nodes), d)
		}
		t.Logf("%d nodes, %d buffers: arena %d B, bound %d B, %s, searched order kept: %v, %v",
			len(g.Nodes), len(p.Buffers), p.ArenaBytes, p.LowerBoundBytes, p.Algorithm, p.OrderSearched, time.Since(start))
	}
}

// A graph past maxSearchNodes (an LSTM unrolled over 251 steps had 12,054
// nodes, and the search held compile for minutes) keeps its own order; a
// chain of 2,000 one-in one-out nodes then needs two buffers' room: the
// live-set bound, reached.
func TestLongGraphSkipsOrderSearch(t *testing.T) {
	b := newBuilder(graph.Float32)
	x := b.input(1, 64)
	for range 2000 {
		x = b.op(graph.Tanh, nil, []string{x}, 1, 64)
	}
	b.g.Outputs = []string{x}
	p := mustPlan(t, b.g, DefaultOptions())
	if p.OrderSearched || p.ArenaBytes != p.LowerBoundBytes {
		t.Errorf("searched %v, arena %d B, bound %d B", p.OrderSearched, p.ArenaBytes, p.LowerBoundBytes)
	}
}
