package tir

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
)

// rowStagedPair lowers n twice for target tg: out of place (the reference)
// and row-staged for a plan that runs it in place.
func rowStagedPair(t *testing.T, g *graph.Graph, n *graph.Node, tg Target) (ref, staged *PrimFunc) {
	t.Helper()
	l := &lowerer{g: g, plan: &memplan.Plan{InPlace: map[string]bool{}}, target: tg}
	ref, err := l.kernel(n, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rowStageOK(g, n) {
		t.Fatalf("%s: row staging refused", n.Name)
	}
	l.plan.InPlace[n.Name] = true
	staged, err = l.rowStaged(n, nil, 0)
	if err != nil || staged == nil {
		t.Fatalf("%s: row staging: %v, %v", n.Name, staged, err)
	}
	if !staged.InPlaceSafe || !canRunInPlace(n, staged) {
		t.Fatalf("%s: the staged kernel does not claim to run in place", n.Name)
	}
	return ref, staged
}

// floatConv is a float32 Conv2D (group 1, or depthwise with group = c).
func floatConv(r *rand.Rand, h, w, cin, cout, k, stride, pad, dil int, depthwise bool) (*graph.Graph, *graph.Node) {
	g := graph.New("fconv", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, h, w, cin}})
	group, wc := 1, cin
	if depthwise {
		group, wc, cout = cin, 1, cin
	}
	wd := graph.NewData(graph.Float32, []int{cout, k, k, wc})
	for i := range wd.F {
		wd.F[i] = float32(r.NormFloat64())
	}
	g.AddConst("w", wd)
	b := graph.NewData(graph.Float32, []int{cout})
	for i := range b.F {
		b.F[i] = float32(r.NormFloat64())
	}
	g.AddConst("b", b)
	ke := (k-1)*dil + 1
	oh, ow := (h+2*pad-ke)/stride+1, (w+2*pad-ke)/stride+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, oh, ow, cout}})
	n := g.AddNode(&graph.Node{Name: "c", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{dil, dil},
			Pad: graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, Group: group, Act: graph.ActRelu}})
	return g, n
}

// Row staging (inplace_rows.go) runs the generic target's convolution
// kernels, and the Cortex-M3's channel-pair ones, with the output written
// over the input as the memory plan lays it out, and computes what the
// kernel computes out of place: pointwise layers forward (Cout <= Cin) and
// backward (Cout > Cin), in chunks of rows and row by row, depthwise 3×3 at strides 1 and 2 with padding 0
// and 1, a dilated one, int8 and float32.
func TestRowStagedInPlace(t *testing.T) {
	r := rand.New(rand.NewSource(43))
	// Pointwise layers run in chunks of rows that divide the height; a
	// small stack leaves one row a chunk.
	smallStack := *Generic
	smallStack.StackBytes = 500
	for _, tc := range []struct {
		name string
		tg   Target
	}{{"generic", *Generic}, {"generic-m3", Generic.ForCore("cortex-m3")}, {"generic-small-stack", smallStack}} {
		for _, c := range []struct{ h, w, cin, cout int }{{3, 5, 16, 16}, {2, 7, 64, 32}, {5, 5, 64, 64}, {3, 3, 8, 16}, {4, 5, 4, 12}, {1, 7, 24, 40}} {
			what := fmt.Sprintf("%s pointwise %dx%d %d->%d", tc.name, c.h, c.w, c.cin, c.cout)
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, 1, 1, 0, -128, false)
			ref, s := rowStagedPair(t, g, n, tc.tg)
			runAliased(t, what, ref, s, r)
		}
		for _, c := range []struct{ h, w, c, stride, pad int }{
			{5, 5, 4, 1, 1}, {6, 7, 8, 1, 1}, {7, 6, 4, 2, 1}, {8, 8, 12, 2, 1}, {6, 6, 8, 1, 0}, {9, 9, 8, 2, 0}, {25, 5, 16, 1, 1}, {4, 11, 3, 2, 0},
		} {
			for _, act := range []graph.Activation{graph.ActRelu, graph.ActNone} {
				what := fmt.Sprintf("%s depthwise %dx%dx%d s%d p%d act %v", tc.name, c.h, c.w, c.c, c.stride, c.pad, act)
				g, n := dwConv(r, c.h, c.w, c.c, c.stride, c.pad, -7, act)
				ref, s := rowStagedPair(t, g, n, tc.tg)
				runAliased(t, what, ref, s, r)
			}
		}
	}
	for _, c := range []struct {
		h, w, cin, cout, k, stride, pad, dil int
		dw                                   bool
	}{
		{4, 6, 8, 8, 1, 1, 0, 1, false}, {4, 6, 4, 10, 1, 1, 0, 1, false}, {7, 7, 6, 0, 3, 1, 1, 1, true},
		{8, 7, 4, 0, 3, 2, 1, 1, true}, {9, 9, 4, 0, 3, 1, 2, 2, true}, {6, 6, 4, 0, 5, 1, 2, 1, true},
	} {
		what := fmt.Sprintf("float %dx%d %d->%d k%d s%d p%d d%d dw %v", c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.dil, c.dw)
		g, n := floatConv(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.dil, c.dw)
		ref, s := rowStagedPair(t, g, n, *Generic)
		runAliased(t, what, ref, s, r)
	}
	// ONNX's float requantization (QLinearConv), which no SIMD in-place
	// schedule takes.
	g, n := dwConv(r, 6, 6, 8, 1, 1, -7, graph.ActRelu)
	n.Attrs.(*graph.Conv2DAttrs).Requant = graph.RequantFloat
	ref, s := rowStagedPair(t, g, n, *Generic)
	runAliased(t, "depthwise with float requantization", ref, s, r)
}

// Row staging is refused where it cannot be exact or would take too much
// stack: an output taller than its input, a batch above one, a stage over
// the target's stack.
func TestRowStagingRefused(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	g, n := dwConv(r, 6, 6, 4, 1, 2, -7, graph.ActRelu) // pad 2: 8×8 out of 6×6
	if rowStageOK(g, n) {
		t.Error("an output taller than its input is staged")
	}
	g, n = int8ConvHW(r, 3, 5, 8, 8, 1, 1, 0, -128, false)
	g.Tensor("x").Shape[0], g.Tensor("y").Shape[0] = 2, 2
	if rowStageOK(g, n) {
		t.Error("a batch of two is staged")
	}
	g, n = dwConv(r, 6, 64, 32, 1, 1, -7, graph.ActRelu) // 3 rows of 64×32 B: 6 KiB
	if rowStageOK(g, n) {
		t.Error("a stage over maxRowStage is offered")
	}
	g, n = dwConv(r, 6, 16, 16, 1, 1, -7, graph.ActRelu) // 768 B
	tg := *Generic
	tg.StackBytes = 600
	l := &lowerer{g: g, plan: &memplan.Plan{InPlace: map[string]bool{n.Name: true}}, target: tg}
	if f, err := l.rowStaged(n, nil, 0); err != nil || f != nil {
		t.Errorf("a 768 B stage under a 600 B stack: %v, %v", f, err)
	}
}

// On dsp and mve, a convolution the plan runs in place whose kernel has no
// in-place form (here ONNX's float requantization, which the planar and
// lanes depthwise schedules do not take) is an InPlaceError, so that the
// pipeline plans again without it; row staging is the generic target's
// only. (A review found the error check restricted to the generic target
// with the staging hook: the dsp kernel then ran over its own input.)
func TestInPlaceErrorOffGeneric(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, tg := range []Target{*DSP, *MVE} {
		g, n := dwConv(r, 6, 6, 8, 1, 1, -7, graph.ActRelu)
		n.Attrs.(*graph.Conv2DAttrs).Requant = graph.RequantFloat
		opt := memplan.DefaultOptions()
		opt.InPlaceOK = InPlaceOKFor(tg.Name, g)
		p, err := memplan.Build(g, opt)
		if err != nil || !p.InPlace[n.Name] {
			t.Fatalf("%s: the plan does not run the depthwise layer in place: %v", tg.Name, err)
		}
		_, err = Lower(g, p, tg)
		var ip *InPlaceError
		if !errors.As(err, &ip) || ip.Node != n.Name {
			t.Errorf("%s: Lower gave %v, want an InPlaceError for %q", tg.Name, err, n.Name)
		}
	}
}
