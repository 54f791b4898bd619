package pipeline

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/quant"
)

// A QDQ model whose graph input and output are uint8 (DequantizeLinear
// reads the input, QuantizeLinear writes the output) ran its Conv in
// float32: the uint8 sets touching the graph's edges stayed uint8. The edges
// are requantized now and the Conv folds to int8 (review: 48,329 → 22,825
// instructions on the M4 for an 8×8 Conv). The folded layer requantizes
// as TFLite does (the project's rule): the accumulator Σ (x−128)·w times
// 0.5·0.37/0.5 by a Q31 multiplier with TFLite's double rounding (worked in
// tfliteRequant below from TFLite's definitions), plus 100, clamped to
// 0..255; that can be one step from ONNX's float rounding (−109·0.37 =
// −40.33 rounds to −41 there: −80.66 → −81, then −40.5 away from zero).
func TestUint8EdgesFold50(t *testing.T) {
	bl := onnx.NewBuilder("u8edge", 13, 1)
	x := bl.Input("x", graph.UInt8, 1, 2, 2, 2)
	xs, xz := bl.Scalar("xs", graph.Float32, 0.5), bl.Scalar("xz", graph.UInt8, 128)
	w := []int64{3, -2, 1, 4, -5, 2}
	ws, wz := bl.Scalar("ws", graph.Float32, 0.37), bl.Scalar("wz", graph.Int8, 0)
	wi := bl.Init("w", &graph.Data{DType: graph.Int8, Shape: []int{3, 2, 1, 1}, I: w})
	conv := bl.Node("Conv", []string{bl.Node("DequantizeLinear", []string{x, xs, xz}), bl.Node("DequantizeLinear", []string{wi, ws, wz})})
	ys, yz := bl.Scalar("ys", graph.Float32, 0.5), bl.Scalar("yz", graph.UInt8, 100)
	bl.Output(bl.Node("QuantizeLinear", []string{conv, ys, yz}), graph.UInt8)
	g, f := msFold(t, bl)
	for _, n := range f.Nodes {
		for _, o := range n.Outputs {
			if f.Tensors[o].DType == graph.Float32 {
				t.Errorf("node %s (%s) computes in float", n.Name, n.Op)
			}
		}
	}
	// NCHW input, values away from rounding ties.
	xv := []int64{131, 120, 140, 129, 100, 137, 126, 133}
	want := make([]int64, 12)
	for oc := 0; oc < 3; oc++ {
		for p := 0; p < 4; p++ {
			acc := int64(0)
			for ic := 0; ic < 2; ic++ {
				acc += (xv[ic*4+p] - 128) * w[oc*2+ic]
			}
			want[oc*4+p] = min(255, max(0, tfliteRequant(acc, float64(float32(0.5))*float64(float32(0.37))/float64(float32(0.5)))+100))
		}
	}
	if want[4] != 59 {
		t.Fatalf("the worked case: %d, want 59", want[4])
	}
	in := map[string]*graph.Data{"x": {DType: graph.UInt8, Shape: []int{1, 2, 2, 2}, I: xv}}
	out, err := interp.Run(f, in)
	if err != nil {
		t.Fatal(err)
	}
	y := out[f.Outputs[0]]
	if y.DType != graph.UInt8 || !slices.Equal(y.I, want) {
		t.Fatalf("folded graph gives %v %v, want uint8 %v", y.DType, y.I, want)
	}
	if testing.Short() {
		return
	}
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileGraph(g, "u8edge", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Execute([]map[string]*graph.Data{in}, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.AllMatch() || !slices.Equal(ex.Outputs[0][0].I, want) {
		t.Errorf("the C gives %v, want %v", ex.Outputs[0][0].I, want)
	}
}

// tfliteRequant is TFLite's MultiplyByQuantizedMultiplier(acc, m) for a real
// multiplier m < 1: m = q·2^(e−31) with q in [2^30, 2^31), then
// SaturatingRoundingDoublingHighMul (round half away from zero of
// acc·q/2^31), then RoundingDivideByPOT by −e (half away from zero).
func tfliteRequant(acc int64, m float64) int64 {
	fr, e := math.Frexp(m)
	q := int64(math.Round(fr * (1 << 31)))
	if q == 1<<31 {
		q, e = q/2, e+1
	}
	p := acc * q
	nudge := int64(1 << 30)
	if p < 0 {
		nudge = 1 - (1 << 30)
	}
	h := (p + nudge) / (1 << 31) // Go's division truncates, as C's
	s := -e
	if s <= 0 {
		return h << -s
	}
	mask := int64(1)<<s - 1
	rem, th := h&mask, mask>>1
	if h < 0 {
		th++
	}
	r := h >> s
	if rem > th {
		r++
	}
	return r
}

// Weights with a zero point other than 0 (ONNX Runtime's uint8 weights are
// asymmetric by default) make the kernel subtract it in the inner loop,
// about 3x the instructions on the M4, which nothing said: the layer is
// named in a warning; symmetric weights give none.
func TestWeightZeroPointWarns50(t *testing.T) {
	// The Cortex-M55's kernels (session 51: the dsp ones fold the zero
	// point, and do not warn: TestWeightZeroPointQuietOnDSP51).
	b, err := LoadBoard("mps3-an547", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, wzv := range []int64{0, 3} {
		bl := onnx.NewBuilder("wzp", 13, 1)
		x := bl.Input("x", graph.Float32, 1, 4, 3, 3)
		xs, xz := bl.Scalar("xs", graph.Float32, 0.05), bl.Scalar("xz", graph.Int8, 0)
		wd := graph.NewData(graph.Int8, []int{2, 4, 1, 1})
		for i := range wd.I {
			wd.I[i] = int64(i%7) - 3
		}
		wi := bl.Init("w", wd)
		ws, wz := bl.Scalar("ws", graph.Float32, 0.02), bl.Scalar("wz", graph.Int8, float64(wzv))
		dq := bl.Node("DequantizeLinear", []string{bl.Node("QuantizeLinear", []string{x, xs, xz}), xs, xz})
		conv := bl.Node("Conv", []string{dq, bl.Node("DequantizeLinear", []string{wi, ws, wz})})
		ys, yz := bl.Scalar("ys", graph.Float32, 0.1), bl.Scalar("yz", graph.Int8, 0)
		bl.Output(bl.Node("DequantizeLinear", []string{bl.Node("QuantizeLinear", []string{conv, ys, yz}), ys, yz}), graph.Float32)
		g, err := onnx.Import("wzp", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var warns []string
		if _, err := CompileGraph(g, "wzp", Options{Board: b, Version: "test",
			Warn: func(w string) { warns = append(warns, w) }}); err != nil {
			t.Fatal(err)
		}
		var hit string
		for _, w := range warns {
			if strings.Contains(w, "zero point other than 0") {
				hit = w
			}
		}
		switch {
		case wzv == 0 && hit != "":
			t.Errorf("symmetric weights warned: %s", hit)
		case wzv != 0 && (hit == "" || !strings.Contains(hit, "(Conv2D)")):
			t.Errorf("weights at zero point %d: warnings %q", wzv, warns)
		}
	}
}

// A uint8 graph input that cannot shift (a Gather reads it beside its
// DequantizeLinear) keeps no requantization: the graph reads the input
// itself, as before, with no extra pass over it (ShiftUint8 left an
// identity requantization of it: session 50).
func TestUint8EdgeThatCannotShiftAddsNothing50(t *testing.T) {
	bl := onnx.NewBuilder("u8cast", 13, 1)
	x := bl.Input("x", graph.UInt8, 1, 4)
	dq := bl.Node("DequantizeLinear", []string{x, bl.Scalar("xs", graph.Float32, 0.5), bl.Scalar("xz", graph.UInt8, 128)})
	bl.Output(dq, graph.Float32)
	idx := bl.Init("idx", &graph.Data{DType: graph.Int64, Shape: []int{2}, I: []int64{3, 0}})
	gat := bl.Node("Gather", []string{x, idx}, onnx.IntAttr("axis", 1))
	bl.Output(bl.Node("DequantizeLinear", []string{gat, "xs", "xz"}), graph.Float32)
	g, f := msFold(t, bl)
	// Both ways a graph's uint8 is shifted: in the fold, and alone (an
	// ONNX Runtime QOperator graph with nothing in float to fold).
	for what, h := range map[string]*graph.Graph{"FoldQDQ": f, "ShiftUint8": quant.ShiftUint8(g)} {
		for _, n := range h.Nodes {
			if n.Op == graph.Quantize {
				t.Errorf("%s: a requantization is left: %s %v -> %v", what, n.Name, n.Inputs, n.Outputs)
			}
		}
		if h.Tensors["x_s8"] != nil {
			t.Errorf("%s: the input's copy x_s8 is left", what)
		}
	}
	in := map[string]*graph.Data{"x": {DType: graph.UInt8, Shape: []int{1, 4}, I: []int64{0, 127, 128, 255}}}
	got := foldedMatches(t, g, f, in)
	if w := []float32{-64, -0.5, 0, 63.5}; !slices.Equal(got[f.Outputs[0]].F, w) {
		t.Errorf("dequantized %v, want %v", got[f.Outputs[0]].F, w)
	}
}

// A float island next to uint8 edges (a graph output written by a float
// QuantizeLinear and read again by a DequantizeLinear into a float
// Softmax) keeps no requantization at its edges: the fold takes out those
// that let no layer fold (session 50 review: a pass more each).
func TestUint8EdgesOfAFloatIslandAddNothing50(t *testing.T) {
	bl := onnx.NewBuilder("u8island", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 8)
	s, z := bl.Scalar("s", graph.Float32, 0.05), bl.Scalar("z", graph.UInt8, 128)
	q := bl.Node("QuantizeLinear", []string{x, s, z})
	bl.Output(q, graph.UInt8)
	sm := bl.Node("Softmax", []string{bl.Node("DequantizeLinear", []string{q, s, z})})
	bl.Output(bl.Node("QuantizeLinear", []string{sm, bl.Scalar("ys", graph.Float32, 0.5), z}), graph.UInt8)
	g, f := msFold(t, bl)
	for _, n := range f.Nodes {
		if n.Op == graph.Quantize && f.Tensors[n.Inputs[0]].DType != graph.Float32 {
			t.Errorf("an integer requantization is left: %s %v -> %v", n.Name, n.Inputs, n.Outputs)
		}
	}
	in := map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 8}, F: []float32{0, 0.1, -0.1, 6.4, -6.4, 1, 2.5, -3}}}
	foldedMatches(t, g, f, in)
}

// An ONNX QLinearConv graph with a uint8 input and output (integer all
// through, no float layer to fold) keeps reading and writing its edges as
// they are: no requantization pass (session 50 review: +3.9% instructions
// when the edges were requantized there too).
func TestQLinearConvUint8EdgesNoPass50(t *testing.T) {
	bl := onnx.NewBuilder("qlc_u8", 13, 1)
	x := bl.Input("x", graph.UInt8, 1, 2, 3, 3)
	w := bl.Init("w", &graph.Data{DType: graph.UInt8, Shape: []int{2, 2, 1, 1}, I: []int64{130, 120, 128, 140}})
	y := bl.Node("QLinearConv", []string{x, bl.Scalar("xs", graph.Float32, 0.5), bl.Scalar("xz", graph.UInt8, 128),
		w, bl.Scalar("ws", graph.Float32, 0.1), bl.Scalar("wz", graph.UInt8, 128), bl.Scalar("ys", graph.Float32, 0.25), bl.Scalar("yz", graph.UInt8, 128)})
	bl.Output(y, graph.UInt8)
	// A QuantizeLinear elsewhere, for which the graph's uint8 is shifted
	// (FoldQDQ's path for a graph with nothing in float).
	bl.Output(bl.Node("QuantizeLinear", []string{bl.Input("x2", graph.Float32, 1, 4), "xs", "xz"}), graph.UInt8)
	g, err := onnx.Import("qlc_u8", bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := FoldQDQ(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Op == graph.Quantize && f.Tensors[n.Inputs[0]].DType != graph.Float32 {
			t.Errorf("a requantization: %s %v -> %v", n.Name, n.Inputs, n.Outputs)
		}
	}
	in := map[string]*graph.Data{"x": {DType: graph.UInt8, Shape: []int{1, 2, 3, 3}, I: []int64{128, 130, 126, 140, 100, 128, 129, 127, 255, 0, 128, 131, 133, 120, 128, 128, 90, 200}},
		"x2": {DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, -2, 3, 0}}}
	foldedMatches(t, g, f, in)
}

// foldedMatches runs the imported graph g and its fold f on in and fails
// where an output differs (float or integer, exactly); it returns f's.
func foldedMatches(t *testing.T, g, f *graph.Graph, in map[string]*graph.Data) map[string]*graph.Data {
	t.Helper()
	want, err := interp.Run(g, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := interp.Run(f, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range f.Outputs {
		a, b := got[o], want[g.Outputs[i]]
		if !slices.Equal(a.F, b.F) || !slices.Equal(a.I, b.I) {
			t.Errorf("output %d: %v %v, want %v %v", i, a.F, a.I, b.F, b.I)
		}
	}
	return got
}
