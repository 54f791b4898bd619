package tir

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int8ConvHW is int8Conv with the input size, the input zero point and the
// weights' range chosen (extreme: every weight ±127).
func int8ConvHW(r *rand.Rand, h, w, cin, cout, k, stride, pad int, zpIn int32, extreme bool) (*graph.Graph, *graph.Node) {
	g := graph.New("conv", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, w, cin}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{zpIn}}})
	wd := graph.NewData(graph.Int8, []int{cout, k, k, cin})
	for i := range wd.I {
		wd.I[i] = int64(r.Intn(255) - 127)
		if extreme {
			wd.I[i] = int64(127 - 254*r.Intn(2))
		}
	}
	ws := make([]float32, cout)
	for i := range ws {
		ws[i] = 0.0002 + 0.001*r.Float32()
	}
	g.AddConst("w", wd).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, cout)}
	b := graph.NewData(graph.Int32, []int{cout})
	for i := range b.I {
		b.I[i] = int64(r.Intn(2000) - 1000)
	}
	g.AddConst("b", b)
	oh := (h+2*pad-k)/stride + 1
	ow := (w+2*pad-k)/stride + 1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, cout}, Quant: &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{5}}})
	n := g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Pad: graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, Group: 1, Act: graph.ActRelu}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, n
}

// extremeArgs are random arguments whose int8 inputs are all -128 or 127.
func extremeArgs(r *rand.Rand, f *PrimFunc) []*graph.Data {
	args := randomArgs(r, f)
	for i, p := range f.Params {
		if !p.Writes && p.DType == graph.Int8 {
			for j := range args[i].I {
				args[i].I[j] = int64(127 - 255*r.Intn(2))
			}
		}
	}
	return args
}

// TestDSPConvRowsKeepResults runs the row-widened convolution (knob
// conv_rows = 1) against the unscheduled definition in the interpreter.
func TestDSPConvRowsKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	cases := []struct {
		h, w, cin, cout, k, stride, pad int
		zp                              int32
		knobs                           map[string]int
	}{
		{7, 6, 16, 4, 3, 1, 1, -3, nil},
		{7, 7, 4, 5, 3, 1, 1, 0, nil},     // odd width, odd channels
		{7, 7, 8, 6, 3, 2, 1, 12, nil},    // stride 2, odd width
		{8, 8, 12, 4, 3, 2, 1, -128, nil}, // stride 2, even width: a zero column on the right only
		{6, 5, 8, 4, 3, 1, 0, 127, nil},   // unpadded
		{5, 9, 4, 3, 3, 2, 0, -3, nil},    // unpadded, stride 2
		{6, 6, 8, 4, 2, 1, 0, 3, nil},     // 2x2
		{5, 5, 4, 2, 5, 1, 2, -3, nil},    // 5x5, padding 2
		{4, 3, 8, 2, 3, 1, 1, -3, nil},    // one pixel block and a tail
		{1, 5, 8, 2, 3, 1, 1, -3, nil},    // one input row
		{7, 6, 32, 8, 3, 1, 1, -3, map[string]int{"block_px": 1, "block_oc": 4}},
		{7, 7, 16, 6, 3, 2, 1, -3, map[string]int{"block_oc": 4, "unroll_k": 1}},
		{7, 6, 8, 5, 3, 1, 1, -3, map[string]int{"weights": 8}},
		{7, 6, 16, 4, 3, 1, 1, -3, map[string]int{"gemm_fuse": 0}},
		{7, 6, 16, 4, 3, 1, 1, -3, map[string]int{"rows_gather": 1}},
		// RGB: three channels widened with a zero fourth (IntrDSPWiden3), the
		// windows gathered into a column by default.
		{7, 6, 3, 8, 3, 1, 1, -3, nil},
		{9, 9, 3, 4, 3, 2, 1, -128, nil}, // stride 2, odd width
		{8, 8, 3, 6, 3, 2, 1, 127, nil},  // stride 2, even width
		{6, 5, 3, 5, 3, 1, 0, 12, map[string]int{"rows_gather": 0}},
		{7, 7, 3, 4, 3, 2, 1, -3, map[string]int{"weights": 8}},
		{5, 5, 3, 2, 5, 1, 2, -3, map[string]int{"block_oc": 4}}, // 5x5, padding 2
	}
	for _, c := range cases {
		for _, extreme := range []bool{false, true} {
			name := fmt.Sprintf("%dx%dx%d_cout%d_k%d_s%d_p%d_zp%d_%v_extreme%v", c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, c.knobs, extreme)
			g, n := int8ConvHW(r, c.h, c.w, c.cin, c.cout, c.k, c.stride, c.pad, c.zp, extreme)
			f := Finalize(computeFunc(t, g, n))
			knobs := map[string]int{"conv_rows": 1}
			for k, v := range c.knobs {
				knobs[k] = v
			}
			s := dspSchedule(t, computeFunc(t, g, n), knobs)
			if !strings.Contains(s.String(), "alloc k_rows") || !usesIntrinsic(s, "dsp_mac") && !usesIntrinsic(s, "dsp_gemm") {
				t.Fatalf("%s: not the row-widened schedule:\n%s", name, s)
			}
			if s.InPlaceSafe {
				t.Errorf("%s: claims InPlaceSafe", name)
			}
			if extreme {
				sameResultArgs(t, name, f, s, extremeArgs)
			} else {
				sameResult(t, name, f, s)
			}
			// Off: today's im2col schedule.
			knobs["conv_rows"] = 0
			if s := dspSchedule(t, computeFunc(t, g, n), knobs); strings.Contains(s.String(), "alloc k_rows") {
				t.Fatalf("%s: conv_rows 0 still widens rows:\n%s", name, s)
			}
		}
	}
	// Not eligible: Cin 2, 5 and 1x1 keep their schedules.
	for _, c := range []struct{ cin, k int }{{2, 3}, {5, 3}, {8, 1}} {
		g, n := int8ConvHW(r, 6, 6, c.cin, 4, c.k, 1, 0, -3, false)
		s := dspSchedule(t, computeFunc(t, g, n), map[string]int{"conv_rows": 1})
		if strings.Contains(s.String(), "alloc k_rows") {
			t.Errorf("cin %d k %d: row-widened schedule taken", c.cin, c.k)
		}
	}
}

// sameResultArgs is sameResult with the arguments drawn by gen.
func sameResultArgs(t *testing.T, what string, f, g *PrimFunc, gen func(*rand.Rand, *PrimFunc) []*graph.Data) {
	t.Helper()
	compareRuns(t, what, f, g, rand.New(rand.NewSource(13)), 3, gen)
}

// The row form takes three-pixel blocks by default only where their asm's
// LDRD offsets reach the third row (4·stride·Cin + 8·(u − 1) <= 1020):
// 64 channels at stride 2 does, 128 at stride 2 does not (its C form was
// slower than the 2x2 asm: a review), and neither do three channels.
func TestDSPConvRowsThreePixelDefault(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct{ cin, stride, want int }{{64, 2, 3}, {128, 2, 2}, {16, 1, 3}, {3, 1, 2}} {
		g, n := int8ConvHW(r, 5, 9, c.cin, 4, 3, c.stride, 1, -3, false)
		s := dspSchedule(t, computeFunc(t, g, n), nil)
		if got := s.Knobs["block_px"]; got != c.want {
			t.Errorf("Cin %d stride %d: block_px %d, want %d", c.cin, c.stride, got, c.want)
		}
	}
}
