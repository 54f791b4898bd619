package tir

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// winoConv is an int8 3×3 convolution over an h×w×cin input whose
// requantization is fine enough (output scale twice the accumulator's) that
// an accumulator off by one changes the output: weights come from wv.
func winoConv(h, w, cin, cout, stride, pad int, xzp int32, wv func(i int) int64) (*graph.Graph, *graph.Node) {
	g := graph.New("conv", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, w, cin}, Quant: &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{xzp}}})
	wd := graph.NewData(graph.Int8, []int{cout, 3, 3, cin})
	for i := range wd.I {
		wd.I[i] = wv(i)
	}
	g.AddConst("w", wd).Quant = &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}
	b := graph.NewData(graph.Int32, []int{cout})
	for i := range b.I {
		b.I[i] = int64(7*i - 20)
	}
	g.AddConst("b", b)
	oh, ow := (h+2*pad-3)/stride+1, (w+2*pad-3)/stride+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, cout}, Quant: &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{-3}}})
	n := g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Pad: graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, Group: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, n
}

// runBoth runs the compute definition and the schedule on the input xv and
// requires the same output.
func runBoth(t *testing.T, what string, f, s *PrimFunc, xv func(i int) int64) {
	t.Helper()
	a := make([]*graph.Data, len(f.Params))
	for i, p := range f.Params {
		a[i] = graph.NewData(p.DType, []int{p.span()})
		if !p.Writes {
			for j := range a[i].I {
				a[i].I[j] = xv(j)
			}
		}
	}
	b := cloneArgs(a)
	if err := Run(f, a); err != nil {
		t.Fatalf("%s: reference: %v", what, err)
	}
	if err := Run(s, b); err != nil {
		t.Fatalf("%s: winograd: %v", what, err)
	}
	for i, p := range f.Params {
		if !p.Writes {
			continue
		}
		for j := range a[i].I {
			if a[i].I[j] != b[i].I[j] {
				t.Fatalf("%s: %s[%d] = %d, want %d", what, p.Name, j, b[i].I[j], a[i].I[j])
			}
		}
	}
}

// The Winograd schedule computes exactly what the direct definition does:
// small values where the output shows every accumulator, all shapes of
// border (odd and even output sizes, padding 0 and 1), and the extremes of
// the int8 ranges (inputs at -128 or 127 with the offset making them ±255,
// weights at -128 and 127), where an intermediate that did not fit its
// int16 lane or int32 would stop the interpreter.
func TestDSPWinogradExact(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	small := func(i int) int64 { return int64(r.Intn(5) - 2) }
	for _, c := range []struct{ h, w, cin, cout, pad int }{
		{4, 4, 4, 2, 1}, {5, 7, 4, 2, 1}, {6, 6, 8, 4, 0}, {7, 5, 8, 6, 0}, {3, 3, 4, 2, 1}, {9, 4, 12, 2, 1}, {2, 9, 4, 2, 1},
	} {
		for _, knobs := range []map[string]int{{"winograd": 1}, {"winograd": 1, "unroll_k": 1}} {
			what := fmt.Sprintf("%dx%dx%d->%d pad %d %v", c.h, c.w, c.cin, c.cout, c.pad, knobs)
			g, n := winoConv(c.h, c.w, c.cin, c.cout, 1, c.pad, 0, small)
			s := dspSchedule(t, computeFunc(t, g, n), knobs)
			if !usesIntrinsic(s, IntrDSPWinoIn) {
				t.Fatalf("%s: no Winograd transform in\n%s", what, s)
			}
			runBoth(t, what, Finalize(computeFunc(t, g, n)), s, small)
		}
	}
	// Extremes: x = -128 with zero point 127 is -255 after the offset; x =
	// 127 with zero point -128 is 255. Weights alternate or take one sign.
	for _, c := range []struct {
		cin   int
		xzp   int32
		x, wv func(i int) int64
	}{
		{128, 127, func(int) int64 { return -128 }, func(int) int64 { return -128 }},
		{128, -128, func(int) int64 { return 127 }, func(int) int64 { return -128 }},
		{128, -128, func(i int) int64 { return 127 - 255*int64(i%2) }, func(i int) int64 { return 127 - 255*int64(i/128%2) }},
		{64, 127, func(i int) int64 { return -128 + 255*int64(i%3/2) }, func(i int) int64 { return -128 + 255*int64(i%5%2) }},
	} {
		what := fmt.Sprintf("extreme cin %d zp %d", c.cin, c.xzp)
		g, n := winoConv(4, 6, c.cin, 2, 1, 1, c.xzp, c.wv)
		s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"winograd": 1})
		if !usesIntrinsic(s, IntrDSPWinoIn) {
			t.Fatalf("%s: no Winograd transform", what)
		}
		runBoth(t, what, Finalize(computeFunc(t, g, n)), s, c.x)
	}
	// Random full-range values through the model-like requantization.
	for _, c := range []struct{ cin, cout, pad int }{{8, 6, 1}, {16, 4, 0}} {
		g, n := int8Conv(r, c.cin, c.cout, 1, 3, 1, c.pad)
		s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"winograd": 1})
		if !usesIntrinsic(s, IntrDSPWinoIn) {
			t.Fatalf("cin %d: no Winograd transform", c.cin)
		}
		sameResult(t, fmt.Sprintf("random cin %d", c.cin), Finalize(computeFunc(t, g, n)), s)
	}
}

// Convolutions Winograd cannot take keep the direct schedule with the knob
// on: stride 2, 1×1, more than winoMaxCin or a channel count not a multiple
// of 4, an odd number of output channels.
func TestDSPWinogradOnlyWhereExact(t *testing.T) {
	small := func(i int) int64 { return int64(i%5 - 2) }
	for _, c := range []struct{ h, w, cin, cout, stride int }{
		{8, 8, 8, 4, 2}, {6, 6, 3, 4, 1}, {6, 6, 8, 3, 1}, {5, 5, 132, 2, 1},
	} {
		g, n := winoConv(c.h, c.w, c.cin, c.cout, c.stride, 1, 0, small)
		f, s := dspKernel(t, g, n, map[string]int{"winograd": 1})
		if usesIntrinsic(s, IntrDSPWinoIn) {
			t.Errorf("%+v: Winograd where it does not apply", c)
		}
		runBoth(t, fmt.Sprintf("%+v", c), f, s, small)
	}
	// The knob is offered (and defaults to off) only where it applies.
	g, n := winoConv(6, 6, 8, 4, 1, 1, 0, small)
	f := computeFunc(t, g, n)
	dspSchedule(t, f, nil)
	if v, ok := f.Knobs["winograd"]; !ok || v != 0 {
		t.Errorf("eligible conv: knobs %v, want winograd = 0 offered", f.Knobs)
	}
	g, n = winoConv(8, 8, 8, 4, 2, 1, 0, small)
	f = computeFunc(t, g, n)
	dspSchedule(t, f, nil)
	if _, ok := f.Knobs["winograd"]; ok {
		t.Errorf("stride-2 conv offers winograd: %v", f.Knobs)
	}
}

// The transformed weights are G'gG'ᵀ: a hand-worked 3×3 kernel.
func TestWinogradWeightTransform(t *testing.T) {
	// g = [1 2 3; 4 5 6; 7 8 9], one input and one output channel padded
	// to the 2-channel, 4-deep layout: read back position ξ's first word.
	g := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	// G' = [2 0 0; 1 1 1; 1 -1 1; 0 0 2]; G'g rows: [2 4 6], [12 15 18],
	// [4 5 6], [14 16 18]; times G'ᵀ (columns as G' rows):
	want := [16]int64{
		4, 12, 4, 12,
		24, 45, 15, 36,
		8, 15, 5, 12,
		28, 48, 16, 36,
	}
	// Cin 4 (weights in channel 0 only), Cout 2 (channel 1 zero).
	w := make([]int64, 2*9*4)
	for i, v := range g {
		w[i*4] = v
	}
	u := winoWeights(w, 2, 4)
	for xi := 0; xi < 16; xi++ {
		// Position ξ: 2 channels × 4 deep / 2 = 4 words; channel 0's
		// first word pairs input channels 0 and 2.
		if got := int64(int16(u[xi*4])); got != want[xi] {
			t.Errorf("U'[%d] = %d, want %d", xi, got, want[xi])
		}
	}
}
