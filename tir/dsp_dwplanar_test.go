package tir

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// dwConv is an int8 3×3 depthwise convolution over h×w×c.
func dwConv(r *rand.Rand, h, w, c, stride, pad int, xzp int32, act graph.Activation) (*graph.Graph, *graph.Node) {
	g := graph.New("dw", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, w, c}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{xzp}}})
	wd := graph.NewData(graph.Int8, []int{c, 3, 3, 1})
	for i := range wd.I {
		wd.I[i] = int64(r.Intn(256) - 128)
	}
	ws := make([]float32, c)
	for i := range ws {
		ws[i] = 0.001 + 0.004*r.Float32()
	}
	g.AddConst("w", wd).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, c)}
	b := graph.NewData(graph.Int32, []int{c})
	for i := range b.I {
		b.I[i] = int64(r.Intn(4000) - 2000)
	}
	g.AddConst("b", b)
	oh, ow := (h+2*pad-3)/stride+1, (w+2*pad-3)/stride+1
	// A fused ReLU puts the output's zero point at its lowest value, where
	// the schedule takes its ReLU form; without one it sits inside.
	yzp := int32(-128)
	if act == graph.ActNone {
		yzp = 5
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, c}, Quant: &graph.Quant{Scale: []float32{0.02}, ZeroPoint: []int32{yzp}}})
	n := g.AddNode(&graph.Node{Name: "dw", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Pad: graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, Group: c, Act: act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, n
}

// The planar depthwise schedule computes what the definition does, at
// strides 1 and 2, odd and even widths and heights, with and without
// padding, at the extremes of the input range, and with a fused ReLU6, in
// steps of two and four outputs: output widths 1 to 8 at both strides give
// the four-output loop every remainder (pair, single, both, none).
func TestDSPDepthwisePlanarKeepsResults(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	for _, c := range []struct {
		h, w, c, stride, pad int
		xzp                  int32
		act                  graph.Activation
	}{
		{5, 5, 4, 1, 1, -128, graph.ActRelu6}, {6, 7, 8, 1, 1, 3, graph.ActNone}, {7, 6, 4, 2, 1, -128, graph.ActRelu},
		{8, 8, 12, 2, 1, 0, graph.ActNone}, {4, 3, 4, 1, 0, 127, graph.ActNone}, {9, 9, 8, 2, 0, -5, graph.ActRelu6},
		{25, 5, 16, 1, 1, -128, graph.ActRelu}, {3, 3, 4, 1, 1, -128, graph.ActNone}, {2, 2, 4, 1, 1, 127, graph.ActNone},
		{4, 4, 4, 1, 1, -128, graph.ActRelu}, {3, 9, 8, 1, 0, 7, graph.ActNone}, {5, 10, 4, 2, 0, -128, graph.ActRelu6},
		{4, 13, 4, 2, 0, 2, graph.ActNone}, {3, 15, 4, 2, 1, -128, graph.ActRelu}, {6, 13, 4, 2, 1, 0, graph.ActNone},
		{3, 17, 4, 2, 1, -1, graph.ActRelu}, {4, 10, 8, 1, 1, -128, graph.ActNone}, {3, 11, 4, 1, 1, 1, graph.ActRelu6},
	} {
		for _, step := range []int{2, 4} {
			what := fmt.Sprintf("%dx%dx%d s%d p%d zp%d step %d", c.h, c.w, c.c, c.stride, c.pad, c.xzp, step)
			g, n := dwConv(r, c.h, c.w, c.c, c.stride, c.pad, c.xzp, c.act)
			// requant_shift 0: the k0 form (TestDSPDepthwisePlanarShift has the other).
			s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"dw_planar": 1, "dw_step": step, "requant_shift": 0})
			want := IntrDSPDWPlanar
			if c.act != graph.ActNone {
				want = IntrDSPDWPlanarR
			}
			if !usesIntrinsic(s, want) {
				t.Fatalf("%s: does not use %s:\n%s", what, want, s)
			}
			sameResult(t, what, Finalize(computeFunc(t, g, n)), s)
			ext := func(i int) int64 { return []int64{-128, 127}[i%3%2] }
			runBoth(t, what+" extremes", Finalize(computeFunc(t, g, n)), s, ext)
		}
	}
	// On by default (session 9: faster than the shared helper on every
	// MLPerf Tiny layer, strides 1 and 2), off with dw_planar 0, and offered
	// only for 3x3 windows; four outputs a step by default.
	g, n := dwConv(r, 6, 6, 8, 1, 1, 0, graph.ActNone)
	f := computeFunc(t, g, n)
	if s := dspSchedule(t, f, nil); !usesIntrinsic(s, "dsp_dwp3") || f.Knobs["dw_planar"] != 1 {
		t.Errorf("not planar by default (knobs %v)", f.Knobs)
	}
	if s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"dw_planar": 0}); usesIntrinsic(s, "dsp_dwp3") {
		t.Errorf("planar with dw_planar 0")
	}
	if _, ok := f.Knobs["dw_planar"]; !ok {
		t.Errorf("3x3 depthwise does not offer dw_planar: %v", f.Knobs)
	}
	if f.Knobs["dw_step"] != 4 {
		t.Errorf("dw_step defaults to %d, not 4", f.Knobs["dw_step"])
	}
	// A step the C does not have leaves the planar form out.
	f = computeFunc(t, g, n)
	if s := dspSchedule(t, f, map[string]int{"dw_planar": 1, "dw_step": 3}); usesIntrinsic(s, "dsp_dwp3") {
		t.Errorf("planar form with dw_step 3")
	}
}

// The interpreter's planar kernel refuses what its C cannot do: a step
// other than 2 or 4, a stride other than 1 or 2, a channel whose two words
// of one kernel row disagree on the middle weight.
func TestDSPDepthwisePlanarPanics(t *testing.T) {
	call := func(stride, step int64, p []int64) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		rows := graph.NewData(graph.Int32, []int{16})
		out := graph.NewData(graph.Int8, []int{8})
		pd := graph.NewData(graph.Int32, []int{12})
		copy(pd.I, p)
		for _, name := range []string{IntrDSPDWPlanar, IntrDSPDWPlanarR} {
			extIntrinsics[name]([]val{{p: out}, {p: rows}, {i: 0}, {i: 0}, {i: 0}, {p: pd},
				{i: 1}, {i: 4}, {i: stride}, {i: step}, {i: 0}, {i: -128}, {i: 127}, {i: 1}})
		}
		return ""
	}
	ok := []int64{pack16(1, 2), pack16(2, 3), pack16(4, 5), pack16(5, 6), pack16(7, 8), pack16(8, 9), 0, -1 << 30, 0, 1 << 30, 0, 0}
	for _, step := range []int64{2, 4} {
		for _, stride := range []int64{1, 2} {
			if msg := call(stride, step, ok); msg != "" {
				t.Errorf("stride %d step %d: %s", stride, step, msg)
			}
		}
	}
	bad := slices.Clone(ok)
	bad[3] = pack16(6, 6)
	for _, c := range []struct {
		stride, step int64
		p            []int64
		want         string
	}{{1, 3, ok, "step 3"}, {1, 1, ok, "step 1"}, {3, 2, ok, "stride 3"}, {1, 4, bad, "inconsistent weight words"}} {
		if msg := call(c.stride, c.step, c.p); !strings.Contains(msg, c.want) {
			t.Errorf("stride %d step %d: panic %q, want %q", c.stride, c.step, msg, c.want)
		}
	}
}
