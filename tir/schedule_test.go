package tir

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int8Conv builds a graph with one int8 conv (per-channel weights, padding,
// stride) and returns it with the node.
func int8Conv(r *rand.Rand, cin, cout, group, k, stride, pad int) (*graph.Graph, *graph.Node) {
	g := graph.New("conv", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 7, 6, cin}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	w := graph.NewData(graph.Int8, []int{cout, k, k, cin / group})
	for i := range w.I {
		w.I[i] = int64(r.Intn(255) - 127)
	}
	ws := make([]float32, cout)
	for i := range ws {
		ws[i] = 0.002 + 0.01*r.Float32()
	}
	g.AddConst("w", w).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, cout)}
	b := graph.NewData(graph.Int32, []int{cout})
	for i := range b.I {
		b.I[i] = int64(r.Intn(2000) - 1000)
	}
	g.AddConst("b", b)
	oh := (7+2*pad-k)/stride + 1
	ow := (6+2*pad-k)/stride + 1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, cout}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{5}}})
	n := g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Pad: graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, Group: group, Act: graph.ActRelu}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, n
}

// computeFunc is the unscheduled compute definition of node n.
func computeFunc(t *testing.T, g *graph.Graph, n *graph.Node) *PrimFunc {
	t.Helper()
	k := &kctx{g: g, n: n, f: &PrimFunc{Name: "k", Node: n.Name}, params: map[string]*Buffer{}}
	body, err := computes[n.Op](k)
	if err != nil {
		t.Fatal(err)
	}
	k.f.Body = body
	return k.f
}

func randomArgs(r *rand.Rand, f *PrimFunc) []*graph.Data {
	args := make([]*graph.Data, len(f.Params))
	for i, p := range f.Params {
		d := graph.NewData(p.DType, []int{p.span()})
		if !p.Writes {
			for j := range d.I {
				d.I[j] = int64(r.Intn(256) - 128)
			}
			for j := range d.F {
				d.F[j] = float32(r.NormFloat64())
			}
		}
		args[i] = d
	}
	return args
}

func cloneArgs(a []*graph.Data) []*graph.Data {
	out := make([]*graph.Data, len(a))
	for i, d := range a {
		out[i] = d.Clone()
	}
	return out
}

// sameResult runs f and g on the same random inputs (several draws) and
// requires identical outputs.
func sameResult(t *testing.T, what string, f, g *PrimFunc) {
	t.Helper()
	compareRuns(t, what, f, g, rand.New(rand.NewSource(11)), 4, randomArgs)
}

// compareRuns runs f and g on trials draws of gen's arguments and requires
// identical outputs (integers and floats alike).
func compareRuns(t *testing.T, what string, f, g *PrimFunc, r *rand.Rand, trials int, gen func(*rand.Rand, *PrimFunc) []*graph.Data) {
	t.Helper()
	for trial := 0; trial < trials; trial++ {
		a := gen(r, f)
		b := cloneArgs(a)
		if err := Run(f, a); err != nil {
			t.Fatalf("%s: before: %v", what, err)
		}
		if err := Run(g, b); err != nil {
			t.Fatalf("%s: after: %v\n%s", what, err, g)
		}
		for i, p := range f.Params {
			if !p.Writes {
				continue
			}
			for j := range a[i].I {
				if a[i].I[j] != b[i].I[j] {
					t.Fatalf("%s: %s[%d] = %d after, %d before\n%s", what, p.Name, j, b[i].I[j], a[i].I[j], g)
				}
			}
			for j := range a[i].F {
				if a[i].F[j] != b[i].F[j] {
					t.Fatalf("%s: %s[%d] = %g after, %g before", what, p.Name, j, b[i].F[j], a[i].F[j])
				}
			}
		}
	}
}

func musts(t *testing.T) func(*PrimFunc, error) *PrimFunc {
	return func(f *PrimFunc, err error) *PrimFunc {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
}

func TestSchedulePrimitivesKeepResults(t *testing.T) {
	must := musts(t)
	r := rand.New(rand.NewSource(5))
	for _, cfg := range []struct{ cin, cout, group, k, stride, pad int }{
		{3, 5, 1, 3, 1, 1}, {4, 4, 4, 3, 2, 1}, {6, 4, 2, 1, 1, 0},
	} {
		g, n := int8Conv(r, cfg.cin, cfg.cout, cfg.group, cfg.k, cfg.stride, cfg.pad)
		base := computeFunc(t, g, n)
		name := fmt.Sprintf("conv%+v", cfg)
		steps := []struct {
			what string
			fn   func(f *PrimFunc) (*PrimFunc, error)
		}{
			{"split oc by 3 (guarded)", func(f *PrimFunc) (*PrimFunc, error) { return Split(f, "oc", 3) }},
			{"split ow by 2", func(f *PrimFunc) (*PrimFunc, error) { return Split(f, "ow", 2) }},
			{"reorder oc outermost", func(f *PrimFunc) (*PrimFunc, error) { return Reorder(f, "oc", "n", "oh", "ow") }},
			{"reorder ic, kh, kw", func(f *PrimFunc) (*PrimFunc, error) { return Reorder(f, "ic", "kh", "kw") }},
			{"fuse oh, ow", func(f *PrimFunc) (*PrimFunc, error) { return Fuse(f, "oh", "ow") }},
			{"unroll kw", func(f *PrimFunc) (*PrimFunc, error) {
				f, err := Unroll(f, "kw")
				if err != nil {
					return nil, err
				}
				return ExpandUnrolled(f), nil
			}},
			{"hoist invariant ifs", func(f *PrimFunc) (*PrimFunc, error) { return HoistInvariantIf(f), nil }},
			{"prune conditions", func(f *PrimFunc) (*PrimFunc, error) { return PruneConditions(f), nil }},
			{"partition oh and ow", func(f *PrimFunc) (*PrimFunc, error) {
				return PartitionLoop(PartitionLoop(HoistInvariantIf(Simplify(f)), "ow"), "oh"), nil
			}},
			{"simplify", func(f *PrimFunc) (*PrimFunc, error) { return Simplify(f), nil }},
			{"flatten", func(f *PrimFunc) (*PrimFunc, error) { return Flatten(f), nil }},
			{"fold input offset", func(f *PrimFunc) (*PrimFunc, error) { return FoldInputOffset(f) }},
			{"fold input offset, then partition", func(f *PrimFunc) (*PrimFunc, error) {
				g, err := FoldInputOffset(f)
				if err != nil {
					return nil, err
				}
				return PartitionLoop(PartitionLoop(PruneConditions(g), "ow"), "oh"), nil
			}},
			{"cache input window", func(f *PrimFunc) (*PrimFunc, error) { return CacheWindow(f, f.Params[0], "oc") }},
			{"finalize", func(f *PrimFunc) (*PrimFunc, error) { return Finalize(f), nil }},
			{"generic schedule", func(f *PrimFunc) (*PrimFunc, error) { return scheduleConvGeneric(f) }},
		}
		for _, s := range steps {
			sameResult(t, name+": "+s.what, base, must(s.fn(base)))
		}
		if cfg.pad > 0 {
			if fo := must(FoldInputOffset(base)); !strings.Contains(fo.String(), "select(") {
				t.Errorf("%s: the padded reduction was not folded:\n%s", name, fo)
			}
		}
		// Tensorize the channel reduction into the dot intrinsic.
		if pre := HoistInvariantIf(Simplify(base)); findLoop(pre.Body, "ic") != nil {
			tz := must(Tensorize(pre, "ic", DotIntrin))
			if !strings.Contains(tz.String(), "@dot(") {
				t.Fatalf("%s: no dot call after tensorize:\n%s", name, tz)
			}
			sameResult(t, name+": tensorize ic", base, tz)
		}
		if _, err := Tensorize(base, "oc", DotIntrin); err == nil {
			t.Errorf("%s: tensorize accepted the output-channel loop", name)
		}
		// Chains of primitives.
		f := must(Split(base, "oc", 2))
		f = must(Reorder(f, "oc_o", "n", "oh", "ow"))
		f = must(Unroll(f, "oc_i"))
		sameResult(t, name+": split+reorder+unroll", base, Finalize(f))
	}
}

func TestSchedulePrimitiveErrors(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	g, n := int8Conv(r, 3, 4, 1, 3, 1, 1)
	f := computeFunc(t, g, n)
	if _, err := Split(f, "nope", 2); err == nil {
		t.Error("split of a missing loop")
	}
	if _, err := Split(f, "oc", 0); err == nil {
		t.Error("split by 0")
	}
	if _, err := Reorder(f, "oc", "kh"); err == nil {
		t.Error("reorder across the accumulator (not a perfect nest)")
	}
	if _, err := Fuse(f, "oh", "oc"); err == nil {
		t.Error("fuse of loops that are not adjacent")
	}
}

func TestComputeInline(t *testing.T) {
	// producer: t[i] = a[i] * 2 ; consumer: y[i] = max(t[i], 0) + t[i]
	a := NewBuffer("a", I32, []int{6}, ScopeParam)
	tb := NewBuffer("t", I32, []int{6}, ScopeParam)
	tb.Writes = true
	y := NewBuffer("y", I32, []int{6}, ScopeParam)
	y.Writes = true
	prod := &PrimFunc{Name: "p", Params: []*Buffer{a, tb}, Body: Loop("i", 6, func(i Expr) Stmt { return Put(tb, Mul(At(a, i), C(2)), i) })}
	cons := &PrimFunc{Name: "c", Params: []*Buffer{tb, y}, Body: Loop("i", 6, func(i Expr) Stmt {
		return Put(y, Add(Max(At(tb, i), C(0)), At(tb, i)), i)
	})}
	fused, err := ComputeInline(prod, cons, tb)
	if err != nil {
		t.Fatal(err)
	}
	if len(fused.Params) != 2 || fused.Params[0] != a || fused.Params[1] != y {
		t.Fatalf("fused params %v", fused.Params)
	}
	ad := &graph.Data{DType: I32, Shape: []int{6}, I: []int64{-3, -1, 0, 1, 2, 5}}
	yd := graph.NewData(I32, []int{6})
	if err := Run(fused, []*graph.Data{ad, yd}); err != nil {
		t.Fatal(err)
	}
	want := []int64{-6, -2, 0, 4, 8, 20}
	for i := range want {
		if yd.I[i] != want[i] {
			t.Fatalf("fused y = %v, want %v", yd.I, want)
		}
	}
}
