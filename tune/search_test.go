package tune

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// A cost with a known optimum: each knob adds its own term, so the optimum
// is every knob at its cheapest value (found by hand below).
var testSpace = Space{Dims: []Dim{
	{Name: "a", Values: []int{0, 1, 2, 3}},
	{Name: "b", Values: []int{1, 2, 4}},
	{Name: "c", Values: []int{0, 1}},
	{Name: "d", Values: []int{0, 2, 4, 8, 16}},
}}

func cost(k Knobs) int64 {
	ta := map[int]float64{0: 1.3, 1: 1.0, 2: 1.1, 3: 1.25}[k["a"]]
	tb := map[int]float64{1: 1.2, 2: 1.05, 4: 1.0}[k["b"]]
	tc := map[int]float64{0: 1.0, 1: 1.15}[k["c"]]
	td := map[int]float64{0: 1.4, 2: 1.1, 4: 1.0, 8: 1.02, 16: 1.3}[k["d"]]
	return int64(math.Round(10000 * ta * tb * tc * td))
}

var bestKnobs = Knobs{"a": 1, "b": 4, "c": 0, "d": 4} // 10000 instructions

func TestSpaceIndex(t *testing.T) {
	if testSpace.Size() != 120 {
		t.Fatalf("size %d, want 4*3*2*5", testSpace.Size())
	}
	seen := map[string]bool{}
	for i := 0; i < testSpace.Size(); i++ {
		k := testSpace.At(i)
		if testSpace.Index(k) != i {
			t.Fatalf("Index(At(%d)) = %d", i, testSpace.Index(k))
		}
		seen[k.String()] = true
	}
	if len(seen) != 120 {
		t.Fatalf("At is not one-to-one: %d distinct", len(seen))
	}
	if testSpace.Index(Knobs{"a": 9, "b": 1, "c": 0, "d": 0}) != -1 {
		t.Fatal("a value outside the space has an index")
	}
}

func run(s *Search, batch int) int {
	n := 0
	for !s.Done() {
		c := s.Next(batch)
		if len(c) == 0 {
			break
		}
		for _, k := range c {
			s.Report(k, cost(k), true)
			n++
		}
	}
	return n
}

func TestExhaustive(t *testing.T) {
	s := NewSearch(testSpace, Knobs{"a": 0, "b": 2, "c": 1, "d": 2}, 500, 1)
	if !s.Exhaustive() {
		t.Fatal("a 120-point space under a 500 budget should be exhaustive")
	}
	if n := run(s, 7); n != 120 {
		t.Fatalf("measured %d points, want each of the 120 once", n)
	}
	k, v, ok := s.Best()
	if !ok || v != 10000 || k.String() != bestKnobs.String() {
		t.Fatalf("best %v %d, want %v 10000", k, v, bestKnobs)
	}
	if s.Default() != cost(Knobs{"a": 0, "b": 2, "c": 1, "d": 2}) {
		t.Fatalf("default count %d", s.Default())
	}
}

// With 30 of 120 points the model-guided annealing must find the optimum
// of a cost the model can represent, for every seed tried.
func TestAnnealFindsSeparableOptimum(t *testing.T) {
	def := Knobs{"a": 0, "b": 1, "c": 1, "d": 0}
	for seed := uint64(1); seed <= 10; seed++ {
		s := NewSearch(testSpace, def, 30, seed)
		if s.Exhaustive() {
			t.Fatal("should search")
		}
		if n := run(s, 2); n != 30 {
			t.Fatalf("seed %d: measured %d, want the budget 30", seed, n)
		}
		k, v, _ := s.Best()
		if v != 10000 {
			t.Errorf("seed %d: best %v = %d, want %v = 10000", seed, k, v, bestKnobs)
		}
		if s.Default() != cost(def) {
			t.Errorf("seed %d: the defaults were not measured", seed)
		}
		if hit, judged := s.ModelHit(); !judged || !hit {
			t.Errorf("seed %d: model pick hit=%v judged=%v", seed, hit, judged)
		}
	}
}

func TestFailuresNeverBest(t *testing.T) {
	s := NewSearch(Space{Dims: []Dim{{Name: "x", Values: []int{1, 2, 3}}}}, Knobs{"x": 2}, 10, 1)
	for !s.Done() {
		for _, k := range s.Next(3) {
			s.Report(k, 100*int64(k["x"]), k["x"] != 1) // x=1 is the cheapest but fails
		}
	}
	k, v, ok := s.Best()
	if !ok || k["x"] != 2 || v != 200 {
		t.Fatalf("best %v %d %v, want x=2 at 200", k, v, ok)
	}
}

func TestModelFitsAdditiveLogCost(t *testing.T) {
	m := NewModel(testSpace)
	m.Lambda = 1e-6
	pts := map[int]int64{}
	r := rand.New(rand.NewPCG(1, 2))
	for len(pts) < 40 {
		i := r.IntN(testSpace.Size())
		pts[i] = cost(testSpace.At(i))
	}
	if err := m.Fit(pts); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < testSpace.Size(); i++ {
		want := float64(cost(testSpace.At(i)))
		if got := m.Predict(i); math.Abs(got-want) > 0.001*want {
			t.Fatalf("point %v: predicted %.1f, true %.0f", testSpace.At(i), got, want)
		}
	}
}

func TestValuesFor(t *testing.T) {
	tir.DeclareKnob("tunetest.block_oc", 3, 6)
	for _, c := range []struct {
		target, name string
		def          int
		want         []int
	}{
		{"generic", "unroll_k", 4, []int{0, 2, 4, 8, 16}},
		{"tunetest", "block_oc", 1, []int{1, 3, 6}}, // declared, plus the default
		{"tunetest2", "block_oc", 2, []int{1, 2, 4}},
		{"mve", "unroll_rows", 3, []int{0, 1, 2, 3, 4, 8}},
		{"mve", "block_cols", 2, []int{1, 2, 4}},
		{"mve", "prewiden", 1, []int{0, 1}},
		{"mve", "lanes", 16, []int{8, 16, 32}},
	} {
		got := ValuesFor(c.target, c.name, c.def)
		if len(got) != len(c.want) {
			t.Errorf("%s %s: %v, want %v", c.target, c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %s: %v, want %v", c.target, c.name, got, c.want)
				break
			}
		}
	}
}

// A schedule's own value set for its op comes first: the dsp depthwise
// schedule has no three-pixel block (a trial of block_px=3 measured the
// generic fallback), the convolution's has.
func TestSpaceForOp(t *testing.T) {
	tir.DeclareKnob("tunetest3.block_px", 1, 2, 3)
	tir.DeclareKnob("tunetest3.depthwise_conv2d.block_px", 1, 2)
	d := Knobs{"block_px": 1, "unroll_taps": 1}
	if got := SpaceFor("tunetest3", "depthwise_conv2d", d).Values("block_px"); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("depthwise block_px: %v, want [1 2]", got)
	}
	if got := SpaceFor("tunetest3", "conv2d", d).Values("block_px"); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("conv2d block_px: %v, want [1 2 3]", got)
	}
	if got := SpaceFor("dsp", "depthwise_conv2d", d).Values("block_px"); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("dsp depthwise block_px: %v, want [1 2]", got)
	}
	if _, bad := CheckOp("tunetest3", "depthwise_conv2d", d, Knobs{"block_px": 3}); len(bad) != 1 {
		t.Errorf("a depthwise record with block_px=3: %v, want it refused", bad)
	}
}

func TestSignature(t *testing.T) {
	g := graph.New("m", "tflite")
	q := &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{0}}
	add := func(name string, shape []int) {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Int8, Shape: shape, Quant: q})
	}
	add("x", []int{1, 8, 8, 4})
	add("y", []int{1, 8, 8, 4})
	add("z", []int{1, 8, 8, 4})
	add("w", []int{1, 4, 4, 4})
	add("v", []int{1, 4, 4, 4})
	w := g.AddConst("k", graph.NewData(graph.Int8, []int{4, 3, 3, 4}))
	w.Quant = q
	a1 := &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}
	a2 := *a1
	a2.Stride = [2]int{2, 2}
	n1 := g.AddNode(&graph.Node{Name: "c1", Op: graph.Conv2D, Inputs: []string{"x", "k"}, Outputs: []string{"y"}, Attrs: a1})
	n2 := g.AddNode(&graph.Node{Name: "c2", Op: graph.Conv2D, Inputs: []string{"y", "k"}, Outputs: []string{"z"}, Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}})
	n3 := g.AddNode(&graph.Node{Name: "c3", Op: graph.Conv2D, Inputs: []string{"z", "k"}, Outputs: []string{"w"}, Attrs: &a2})
	a4 := a2
	a4.Pad = graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}
	n4 := g.AddNode(&graph.Node{Name: "c4", Op: graph.Conv2D, Inputs: []string{"z", "k"}, Outputs: []string{"v"}, Attrs: &a4})
	s1, s2, s3, s4 := Signature(g, n1), Signature(g, n2), Signature(g, n3), Signature(g, n4)
	if s1 != s2 {
		t.Fatalf("same shapes and attributes, different signatures:\n%s\n%s", s1, s2)
	}
	if s1 == s3 || s3 == s4 {
		t.Fatalf("different kernels share a signature: %s / %s / %s", s1, s3, s4)
	}
	if want := "Conv2D int8 1x8x8x4,c4x3x3x4->1x8x8x4 #"; s1[:len(want)] != want {
		t.Fatalf("signature %q, want prefix %q", s1, want)
	}
}

// An algorithm knob's other values are measured in the first round, even in
// a space far larger than the budget, where the annealing alone could miss
// them.
func TestAlgorithmKnobMeasuredFirst(t *testing.T) {
	space := Space{Dims: []Dim{
		{Name: "algo", Values: []int{0, 1, 2}, Algorithm: true},
		{Name: "p", Values: []int{1, 2, 4, 8}},
		{Name: "q", Values: []int{0, 1, 2, 3}},
		{Name: "r", Values: []int{1, 2, 4, 8, 16}},
	}}
	def := Knobs{"algo": 0, "p": 2, "q": 1, "r": 4}
	s := NewSearch(space, def, 8, 3)
	first := s.Next(4)
	seen := map[int]bool{}
	for _, k := range first {
		if k["p"] == 2 && k["q"] == 1 && k["r"] == 4 {
			seen[k["algo"]] = true
		}
	}
	if !seen[0] || !seen[1] || !seen[2] {
		t.Fatalf("first round %v: want the defaults with algo 0, 1 and 2", first)
	}
}

// Spent counts an exhaustive search's copies (its progress stopped at
// 18/20 of a space of 20 with two copies: tuning journey finding), and an
// annealing search's budget, where copies up to the allowance are free.
func TestSearchSpent(t *testing.T) {
	x := Space{Dims: []Dim{{Name: "x", Values: []int{1, 2, 3, 4}}}}
	s := NewSearch(x, Knobs{"x": 1}, 10, 1)
	s.Report(Knobs{"x": 1}, 100, true)
	s.Report(Knobs{"x": 2}, 90, true)
	s.ReportCopy(Knobs{"x": 3}, 90, true)
	if got := s.Spent(); got != 3 {
		t.Errorf("exhaustive, 2 runs and a copy: Spent %d, want 3", got)
	}
	big := Space{Dims: []Dim{{Name: "x", Values: []int{1, 2, 3, 4, 5, 6, 7, 8}}}}
	a := NewSearch(big, Knobs{"x": 1}, 3, 1)
	a.Report(Knobs{"x": 1}, 100, true)
	a.ReportCopy(Knobs{"x": 2}, 100, true)
	a.Report(Knobs{"x": 3}, 90, true)
	if got := a.Spent(); got != 2 {
		t.Errorf("anneal of budget 3, 2 runs and a free copy: Spent %d, want 2", got)
	}
}
