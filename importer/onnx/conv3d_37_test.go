package onnx_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// ONNX's 3-D Conv, MaxPool and AveragePool (input [N, C, D, H, W]) are
// lowered at import into 2-D graph ops. These tests check them against
// values worked by hand and against direct float64 loops over the 3-D
// definition written here, independent of the lowering.

// win3 is one 3-D window geometry, as the ONNX attributes give it.
type win3 struct {
	k, s, d [3]int
	pads    [6]int // D, H, W begin, then D, H, W end
	ceil    bool
}

// outSize is ONNX's output size along axis a of an input of size in.
func (g win3) outSize(a, in int) int {
	ek := (g.k[a]-1)*g.d[a] + 1
	span := in + g.pads[a] + g.pads[a+3] - ek
	if !g.ceil {
		return span/g.s[a] + 1
	}
	o := (span+g.s[a]-1)/g.s[a] + 1
	if (o-1)*g.s[a] >= in+g.pads[a] {
		o--
	}
	return o
}

func (g win3) attrs() []*onnx.Attribute {
	at := []*onnx.Attribute{
		onnx.IntsAttr("kernel_shape", int64(g.k[0]), int64(g.k[1]), int64(g.k[2])),
		onnx.IntsAttr("strides", int64(g.s[0]), int64(g.s[1]), int64(g.s[2])),
		onnx.IntsAttr("dilations", int64(g.d[0]), int64(g.d[1]), int64(g.d[2])),
		onnx.IntsAttr("pads", int64(g.pads[0]), int64(g.pads[1]), int64(g.pads[2]), int64(g.pads[3]), int64(g.pads[4]), int64(g.pads[5])),
	}
	if g.ceil {
		at = append(at, onnx.IntAttr("ceil_mode", 1))
	}
	return at
}

func idx5(s []int, a, b, c, d, e int) int { return (((a*s[1]+b)*s[2]+c)*s[3]+d)*s[4] + e }

// conv3DRef is ONNX Conv on x [N,C,D,H,W], w [M,C/G,KD,KH,KW] in float64.
func conv3DRef(x, w *graph.Data, bias []float32, g win3, group int) *graph.Data {
	N := x.Shape[0]
	M, Cg := w.Shape[0], w.Shape[1]
	var in, out [3]int
	for a := 0; a < 3; a++ {
		in[a] = x.Shape[2+a]
		out[a] = g.outSize(a, in[a])
	}
	y := graph.NewData(graph.Float32, []int{N, M, out[0], out[1], out[2]})
	Mg := M / group
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			for od := 0; od < out[0]; od++ {
				for oh := 0; oh < out[1]; oh++ {
					for ow := 0; ow < out[2]; ow++ {
						var sum float64
						if bias != nil {
							sum = float64(bias[m])
						}
						for ci := 0; ci < Cg; ci++ {
							c := (m/Mg)*Cg + ci
							for kd := 0; kd < g.k[0]; kd++ {
								id := od*g.s[0] - g.pads[0] + kd*g.d[0]
								for kh := 0; kh < g.k[1]; kh++ {
									ih := oh*g.s[1] - g.pads[1] + kh*g.d[1]
									for kw := 0; kw < g.k[2]; kw++ {
										iw := ow*g.s[2] - g.pads[2] + kw*g.d[2]
										if id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2] {
											continue
										}
										sum += float64(x.F[idx5(x.Shape, n, c, id, ih, iw)]) * float64(w.F[idx5(w.Shape, m, ci, kd, kh, kw)])
									}
								}
							}
						}
						y.F[idx5(y.Shape, n, m, od, oh, ow)] = float32(sum)
					}
				}
			}
		}
	}
	return y
}

// pool3DRef is ONNX MaxPool (avg false) or AveragePool on x [N,C,D,H,W] in
// float64: the count of a window is its taps inside the input, or with
// includePad inside the input padded by pads (no ceil_mode extension).
func pool3DRef(x *graph.Data, g win3, avg, includePad bool) *graph.Data {
	N, C := x.Shape[0], x.Shape[1]
	var in, out [3]int
	for a := 0; a < 3; a++ {
		in[a] = x.Shape[2+a]
		out[a] = g.outSize(a, in[a])
	}
	y := graph.NewData(graph.Float32, []int{N, C, out[0], out[1], out[2]})
	for n := 0; n < N; n++ {
		for c := 0; c < C; c++ {
			for od := 0; od < out[0]; od++ {
				for oh := 0; oh < out[1]; oh++ {
					for ow := 0; ow < out[2]; ow++ {
						sum, m, cnt, cntPad := 0.0, math.Inf(-1), 0, 0
						for kd := 0; kd < g.k[0]; kd++ {
							id := od*g.s[0] - g.pads[0] + kd*g.d[0]
							for kh := 0; kh < g.k[1]; kh++ {
								ih := oh*g.s[1] - g.pads[1] + kh*g.d[1]
								for kw := 0; kw < g.k[2]; kw++ {
									iw := ow*g.s[2] - g.pads[2] + kw*g.d[2]
									if id < in[0]+g.pads[3] && ih < in[1]+g.pads[4] && iw < in[2]+g.pads[5] {
										cntPad++
									}
									if id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2] {
										continue
									}
									v := float64(x.F[idx5(x.Shape, n, c, id, ih, iw)])
									sum += v
									m = math.Max(m, v)
									cnt++
								}
							}
						}
						r := m
						if avg {
							r = sum / float64(cnt)
							if includePad {
								r = sum / float64(cntPad)
							}
						}
						y.F[idx5(y.Shape, n, c, od, oh, ow)] = float32(r)
					}
				}
			}
		}
	}
	return y
}

// wave fills a tensor with distinct, irregular values in [-1, 1].
func wave(shape []int, seed float64) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32(math.Sin(float64(i)*0.731 + seed))
	}
	return d
}

func closeTo(t *testing.T, what string, got, want *graph.Data) {
	t.Helper()
	if got == nil || got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		t.Fatalf("%s: got %v, want shape %v", what, got, want.Shape)
	}
	for i := range want.F {
		g, w := float64(got.F[i]), float64(want.F[i])
		if math.Abs(g-w) > 1e-5*max(1, math.Abs(w)) {
			t.Fatalf("%s: element %d is %v, want %v", what, i, g, w)
		}
	}
}

// conv3DModel is one Conv node "conv3" over x with constant weights w and
// an optional bias.
func conv3DModel(xShape []int, w *graph.Data, bias []float32, yShape []int, attrs ...*onnx.Attribute) *onnx.Builder {
	bl := onnx.NewBuilder("conv3d", 13, 1)
	bl.Input("x", graph.Float32, xShape...)
	ins := []string{"x", bl.Init("w", w)}
	if bias != nil {
		ins = append(ins, bl.Floats("b", bias...))
	}
	nodeN(bl, "conv3", "Conv", ins, []string{"y"}, attrs...)
	bl.Output("y", graph.Float32, yShape...)
	return bl
}

// TestConv3DDepthHand: x is 1, 2, 3 along D (one pixel, one channel), the
// kernel 10, 1 along D with pads 1 before and 0 after: the padded depths
// are 0, 1, 2, 3 and y[d] = 10·p[d] + p[d+1] + 0.5 (bias), that is
// 0 + 1, 10 + 2, 20 + 3 plus 0.5: 1.5, 12.5, 23.5.
func TestConv3DDepthHand(t *testing.T) {
	w := f32([]int{1, 1, 2, 1, 1}, 10, 1)
	bl := conv3DModel([]int{1, 1, 3, 1, 1}, w, []float32{0.5}, []int{1, 1, 3, 1, 1}, onnx.IntsAttr("pads", 1, 0, 0, 0, 0, 0))
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 1, 3, 1, 1}, 1, 2, 3)})
	checkData(t, "y", got[0], graph.Float32, []int{1, 1, 3, 1, 1}, []float64{1.5, 12.5, 23.5})
}

// TestConv3DDepthDilationStrideHand: x is 1..5 along D, kernel 1, 100
// with dilation 2 and stride 2: the taps of output d are depths 2d and
// 2d + 2, the output (5 − 3)/2 + 1 = 2 long: 1 + 300 = 301, 3 + 500 = 503.
// A second output channel (kernel 0, 1) reads the later tap alone: 3, 5.
func TestConv3DDepthDilationStrideHand(t *testing.T) {
	w := f32([]int{2, 1, 2, 1, 1}, 1, 100, 0, 1)
	bl := conv3DModel([]int{1, 1, 5, 1, 1}, w, nil, []int{1, 2, 2, 1, 1},
		onnx.IntsAttr("dilations", 2, 1, 1), onnx.IntsAttr("strides", 2, 1, 1))
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 1, 5, 1, 1}, 1, 2, 3, 4, 5)})
	checkData(t, "y", got[0], graph.Float32, []int{1, 2, 2, 1, 1}, []float64{301, 503, 3, 5})
}

// TestConv3DGroupsHand: two groups, one channel each, batch 2. x: batch 0
// channel 0 is 1, 2 along D, channel 1 is 3, 4; batch 1 is 10 times that.
// Output channel 0 (group 0) sums channel 0 along D with kernel 1, 1;
// output channel 1 (group 1) takes channel 1 with kernel 2, −1:
// batch 0: 1 + 2 = 3, 2·3 − 4 = 2; batch 1: 30, 20.
func TestConv3DGroupsHand(t *testing.T) {
	w := f32([]int{2, 1, 2, 1, 1}, 1, 1, 2, -1)
	bl := conv3DModel([]int{2, 2, 2, 1, 1}, w, nil, []int{2, 2, 1, 1, 1}, onnx.IntAttr("group", 2))
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{2, 2, 2, 1, 1}, 1, 2, 3, 4, 10, 20, 30, 40)})
	checkData(t, "y", got[0], graph.Float32, []int{2, 2, 1, 1, 1}, []float64{3, 2, 30, 20})
}

// TestConv3DAgainstLoop checks the lowering against conv3DRef over
// strides, pads and dilations on every axis, groups, batch 2, auto_pad.
func TestConv3DAgainstLoop(t *testing.T) {
	for _, c := range []struct {
		name    string
		x, w    []int
		g       win3
		group   int
		bias    bool
		autoPad string
	}{
		{"grouped_batch2", []int{2, 4, 5, 4, 3}, []int{6, 2, 3, 2, 2},
			win3{k: [3]int{3, 2, 2}, s: [3]int{2, 1, 2}, d: [3]int{1, 2, 1}, pads: [6]int{1, 0, 1, 0, 1, 1}}, 2, true, ""},
		{"depth_dilated", []int{1, 3, 7, 3, 3}, []int{2, 3, 3, 1, 3},
			win3{k: [3]int{3, 1, 3}, s: [3]int{1, 1, 1}, d: [3]int{3, 1, 1}, pads: [6]int{2, 0, 1, 1, 0, 1}}, 1, false, ""},
		{"depthwise_same_upper", []int{1, 3, 5, 5, 4}, []int{3, 1, 2, 3, 3},
			win3{k: [3]int{2, 3, 3}, s: [3]int{2, 2, 1}, d: [3]int{1, 1, 1}}, 3, true, "SAME_UPPER"},
		{"same_lower", []int{2, 2, 4, 3, 3}, []int{4, 2, 2, 2, 2},
			win3{k: [3]int{2, 2, 2}, s: [3]int{1, 1, 1}, d: [3]int{1, 1, 1}}, 1, false, "SAME_LOWER"},
		{"kd1_stride", []int{1, 2, 5, 3, 3}, []int{3, 2, 1, 3, 3},
			win3{k: [3]int{1, 3, 3}, s: [3]int{3, 1, 1}, d: [3]int{1, 1, 1}, pads: [6]int{0, 1, 1, 0, 1, 1}}, 1, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, w := wave(c.x, 0.1), wave(c.w, 2.3)
			var bias []float32
			if c.bias {
				bias = wave([]int{c.w[0]}, 4.7).F
			}
			g := c.g
			attrs := []*onnx.Attribute{onnx.IntAttr("group", int64(c.group))}
			if c.autoPad != "" {
				// SAME: the output is ceil(in / stride); the total pad
				// splits with the odd one after (UPPER) or before (LOWER).
				for a := 0; a < 3; a++ {
					o := (c.x[2+a] + g.s[a] - 1) / g.s[a]
					total := max(0, (o-1)*g.s[a]+(g.k[a]-1)*g.d[a]+1-c.x[2+a])
					g.pads[a], g.pads[a+3] = total/2, total-total/2
					if c.autoPad == "SAME_LOWER" {
						g.pads[a], g.pads[a+3] = total-total/2, total/2
					}
				}
				attrs = append(attrs, onnx.StringAttr("auto_pad", c.autoPad),
					onnx.IntsAttr("strides", int64(g.s[0]), int64(g.s[1]), int64(g.s[2])))
			} else {
				attrs = append(attrs, g.attrs()[1:]...)
			}
			want := conv3DRef(x, w, bias, g, c.group)
			bl := conv3DModel(c.x, w, bias, want.Shape, attrs...)
			got := runOne(t, bl, map[string]*graph.Data{"x": x})
			closeTo(t, "y", got[0], want)
		})
	}
}

func pool3DModel(op string, xShape, yShape []int, attrs ...*onnx.Attribute) *onnx.Builder {
	bl := onnx.NewBuilder("pool3d", 19, 1)
	bl.Input("x", graph.Float32, xShape...)
	nodeN(bl, "pool3", op, []string{"x"}, []string{"y"}, attrs...)
	bl.Output("y", graph.Float32, yShape...)
	return bl
}

// TestPool3DHand: x [1,1,3,2,2] holds 0..11, so depth d holds 4d..4d+3.
// A 2×2×2 max over depths 0-1 is 7, over 1-2 is 11. Along D alone (x
// 2, 4; kernel 2, pads 1 and 1, stride 1) the windows are {pad, 2},
// {2, 4}, {4, pad}: averages 2, 3, 4 without the padding in the count, 1,
// 3, 2 with it. With ceil_mode over 1..5 (kernel 2, stride 2) the windows
// are {1, 2}, {3, 4}, {5}: averages 1.5, 3.5, 5 and maxima 2, 4, 5.
func TestPool3DHand(t *testing.T) {
	x := seqF(1, 1, 3, 2, 2)
	got := runOne(t, pool3DModel("MaxPool", []int{1, 1, 3, 2, 2}, []int{1, 1, 2, 1, 1}, onnx.IntsAttr("kernel_shape", 2, 2, 2)), map[string]*graph.Data{"x": x})
	checkData(t, "max", got[0], graph.Float32, []int{1, 1, 2, 1, 1}, []float64{7, 11})

	x2 := f32([]int{1, 1, 2, 1, 1}, 2, 4)
	for incl, want := range [][]float64{{2, 3, 4}, {1, 3, 2}} {
		bl := pool3DModel("AveragePool", []int{1, 1, 2, 1, 1}, []int{1, 1, 3, 1, 1}, onnx.IntsAttr("kernel_shape", 2, 1, 1),
			onnx.IntsAttr("pads", 1, 0, 0, 1, 0, 0), onnx.IntAttr("count_include_pad", int64(incl)))
		got := runOne(t, bl, map[string]*graph.Data{"x": x2})
		checkData(t, "avg", got[0], graph.Float32, []int{1, 1, 3, 1, 1}, want)
	}

	x5 := f32([]int{1, 1, 5, 1, 1}, 1, 2, 3, 4, 5)
	for op, want := range map[string][]float64{"AveragePool": {1.5, 3.5, 5}, "MaxPool": {2, 4, 5}} {
		bl := pool3DModel(op, []int{1, 1, 5, 1, 1}, []int{1, 1, 3, 1, 1}, onnx.IntsAttr("kernel_shape", 2, 1, 1),
			onnx.IntsAttr("strides", 2, 1, 1), onnx.IntAttr("ceil_mode", 1))
		got := runOne(t, bl, map[string]*graph.Data{"x": x5})
		checkData(t, op+" ceil", got[0], graph.Float32, []int{1, 1, 3, 1, 1}, want)
	}
}

// TestPool3DAgainstLoop checks both pools against pool3DRef: batch 2,
// strides, pads, dilations on every axis, ceil_mode, count_include_pad.
func TestPool3DAgainstLoop(t *testing.T) {
	for _, c := range []struct {
		name       string
		op         string
		x          []int
		g          win3
		includePad bool
	}{
		{"max_ceil_dilated", "MaxPool", []int{2, 2, 5, 4, 5},
			win3{k: [3]int{2, 3, 2}, s: [3]int{2, 1, 2}, d: [3]int{1, 1, 2}, pads: [6]int{1, 1, 0, 0, 1, 1}, ceil: true}, false},
		{"max_depth_dilated", "MaxPool", []int{1, 3, 7, 3, 3},
			win3{k: [3]int{3, 2, 2}, s: [3]int{1, 1, 1}, d: [3]int{2, 1, 1}, pads: [6]int{1, 0, 0, 1, 0, 0}}, false},
		{"avg_ceil_pads", "AveragePool", []int{2, 2, 6, 5, 4},
			win3{k: [3]int{3, 2, 3}, s: [3]int{2, 2, 2}, d: [3]int{1, 1, 1}, pads: [6]int{1, 0, 1, 1, 1, 0}, ceil: true}, false},
		{"avg_include_pad", "AveragePool", []int{1, 3, 5, 5, 5},
			win3{k: [3]int{3, 3, 2}, s: [3]int{2, 2, 1}, d: [3]int{1, 1, 1}, pads: [6]int{1, 1, 0, 1, 1, 1}}, true},
		{"avg_dilated", "AveragePool", []int{2, 1, 6, 4, 4},
			win3{k: [3]int{2, 2, 2}, s: [3]int{1, 1, 1}, d: [3]int{2, 1, 2}, pads: [6]int{1, 0, 1, 0, 1, 0}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := wave(c.x, 0.4)
			want := pool3DRef(x, c.g, c.op == "AveragePool", c.includePad)
			attrs := c.g.attrs()
			if c.op == "AveragePool" && c.includePad {
				attrs = append(attrs, onnx.IntAttr("count_include_pad", 1))
			}
			got := runOne(t, pool3DModel(c.op, c.x, want.Shape, attrs...), map[string]*graph.Data{"x": x})
			closeTo(t, "y", got[0], want)
		})
	}
}

// TestLowered3DNamesDeterministic: a chain Conv → MaxPool → Conv keeps
// NDHWC between its 3-D ops (one Transpose in, one out), and two imports
// give the same graph, node names included.
func TestLowered3DNamesDeterministic(t *testing.T) {
	bl := chain3D()
	var prints []string
	for i := 0; i < 2; i++ {
		g, err := onnx.Import("m", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		transposes := 0
		names := map[string]bool{}
		for _, n := range g.Nodes {
			if n.Op == graph.Transpose {
				transposes++
			}
			if names[n.Name] {
				t.Errorf("node name %q is used twice", n.Name)
			}
			names[n.Name] = true
		}
		if transposes != 2 {
			t.Errorf("%d Transposes, want 2 (into NDHWC once, out once):\n%s", transposes, graph.Print(g))
		}
		prints = append(prints, graph.Print(g))
	}
	if prints[0] != prints[1] {
		t.Errorf("two imports differ:\n%s\n---\n%s", prints[0], prints[1])
	}
}

// chain3D is x [1,2,4,5,5] → Conv (3 out, 3×3×3, pads 1, strides 1,2,2,
// bias) → MaxPool (2×2×2, stride 2, ceil_mode) → Conv (depthwise over 3
// channels, 2×1×2, dilation 2 and pads 1, 1 in depth), with the shapes
// [1,3,4,3,3] → [1,3,2,2,2] → [1,3,2,2,1].
func chain3D() *onnx.Builder {
	bl := onnx.NewBuilder("chain3d", 13, 1)
	bl.Input("x", graph.Float32, 1, 2, 4, 5, 5)
	w1 := bl.Init("w1", wave([]int{3, 2, 3, 3, 3}, 1.1))
	b1 := bl.Floats("b1", 0.25, -0.5, 0.125)
	nodeN(bl, "c1", "Conv", []string{"x", w1, b1}, []string{"h1"},
		onnx.IntsAttr("pads", 1, 1, 1, 1, 1, 1), onnx.IntsAttr("strides", 1, 2, 2))
	nodeN(bl, "p1", "MaxPool", []string{"h1"}, []string{"h2"},
		onnx.IntsAttr("kernel_shape", 2, 2, 2), onnx.IntsAttr("strides", 2, 2, 2), onnx.IntAttr("ceil_mode", 1))
	w2 := bl.Init("w2", wave([]int{3, 1, 2, 1, 2}, 3.3))
	nodeN(bl, "c2", "Conv", []string{"h2", w2}, []string{"y"},
		onnx.IntAttr("group", 3), onnx.IntsAttr("dilations", 2, 1, 1), onnx.IntsAttr("pads", 1, 0, 0, 1, 0, 0))
	bl.Output("y", graph.Float32, 1, 3, 2, 2, 1)
	return bl
}

// chain3DWant is chain3D's output by the float64 loops.
func chain3DWant(x *graph.Data) *graph.Data {
	one := [3]int{1, 1, 1}
	h1 := conv3DRef(x, wave([]int{3, 2, 3, 3, 3}, 1.1), []float32{0.25, -0.5, 0.125},
		win3{k: [3]int{3, 3, 3}, s: [3]int{1, 2, 2}, d: one, pads: [6]int{1, 1, 1, 1, 1, 1}}, 1)
	h2 := pool3DRef(h1, win3{k: [3]int{2, 2, 2}, s: [3]int{2, 2, 2}, d: one, ceil: true}, false, false)
	return conv3DRef(h2, wave([]int{3, 1, 2, 1, 2}, 3.3), nil,
		win3{k: [3]int{2, 1, 2}, s: one, d: [3]int{2, 1, 1}, pads: [6]int{1, 0, 0, 1, 0, 0}}, 3)
}

func TestChain3DInterp(t *testing.T) {
	x := wave([]int{1, 2, 4, 5, 5}, 0.7)
	want := chain3DWant(x)
	if !slices.Equal(want.Shape, []int{1, 3, 2, 2, 1}) {
		t.Fatalf("reference shape %v", want.Shape)
	}
	got := runOne(t, chain3D(), map[string]*graph.Data{"x": x})
	closeTo(t, "y", got[0], want)
}

// TestConv3DHostC compiles chain3D to C for the host (AddressSanitizer and
// UndefinedBehaviorSanitizer, -pedantic -Werror), runs it, and checks its
// output against graph/interp and against the float64 loops.
func TestConv3DHostC(t *testing.T) {
	x := wave([]int{1, 2, 4, 5, 5}, 0.7)
	res := sanitizedHostRun(t, chain3D().Model(), "chain3d", []map[string]*graph.Data{{"x": x}}, 2*time.Minute)
	if len(res.Outputs[0]) != 1 {
		t.Fatalf("%d outputs, want 1", len(res.Outputs[0]))
	}
	closeTo(t, "C y", res.Outputs[0][0], chain3DWant(x))
}

// TestLowered3DRefusals: what the lowering does not take is refused with
// a reason that names the node, never a panic.
func TestLowered3DRefusals(t *testing.T) {
	indices := onnx.NewBuilder("idx", 13, 1)
	indices.Input("x", graph.Float32, 1, 1, 2, 2, 2)
	nodeN(indices, "mp3", "MaxPool", []string{"x"}, []string{"y", "i"}, onnx.IntsAttr("kernel_shape", 2, 2, 2))
	indices.Output("y", graph.Float32, 1, 1, 1, 1, 1)
	indices.Output("i", graph.Int64, 1, 1, 1, 1, 1)

	qconv := onnx.NewBuilder("qconv", 13, 1)
	qconv.Input("x", graph.UInt8, 1, 1, 2, 2, 2)
	ins := []string{"x", qconv.Scalar("xs", graph.Float32, 0.1), qconv.Scalar("xz", graph.UInt8, 0),
		qconv.Init("w", &graph.Data{DType: graph.UInt8, Shape: []int{1, 1, 1, 1, 1}, I: []int64{1}}),
		qconv.Scalar("ws", graph.Float32, 0.1), qconv.Scalar("wz", graph.UInt8, 0),
		qconv.Scalar("ys", graph.Float32, 0.1), qconv.Scalar("yz", graph.UInt8, 0)}
	nodeN(qconv, "qc3", "QLinearConv", ins, []string{"y"})
	qconv.Output("y", graph.UInt8, 1, 1, 2, 2, 2)

	deep := conv3DModel([]int{1, 1, 300, 1, 1}, graph.NewData(graph.Float32, []int{1, 1, 300, 1, 1}), nil, []int{1, 1, 1, 1, 1})
	pads4 := conv3DModel([]int{1, 1, 3, 3, 3}, graph.NewData(graph.Float32, []int{1, 1, 2, 2, 2}), nil, []int{1, 1, 2, 2, 2},
		onnx.IntsAttr("pads", 0, 0, 0, 0))
	stride0 := pool3DModel("AveragePool", []int{1, 1, 3, 3, 3}, []int{1, 1, 2, 2, 2}, onnx.IntsAttr("kernel_shape", 2, 2, 2), onnx.IntsAttr("strides", 0, 1, 1))
	negPads := conv3DModel([]int{1, 1, 3, 3, 3}, graph.NewData(graph.Float32, []int{1, 1, 2, 2, 2}), nil, []int{1, 1, 2, 2, 2},
		onnx.IntsAttr("pads", 0, -1, 0, 0, 0, 0))
	hugeDilation := pool3DModel("MaxPool", []int{1, 1, 3, 3, 3}, []int{1, 1, 2, 2, 2}, onnx.IntsAttr("kernel_shape", 2, 2, 2),
		onnx.IntsAttr("dilations", 1, 1, 1<<62))
	kernel2 := pool3DModel("MaxPool", []int{1, 1, 3, 3, 3}, []int{1, 1, 2, 2, 2}, onnx.IntsAttr("kernel_shape", 2, 2))
	bigKernel := pool3DModel("MaxPool", []int{1, 1, 3, 3, 3}, []int{1, 1, 1, 1, 1}, onnx.IntsAttr("kernel_shape", 4, 2, 2))
	badGroup := conv3DModel([]int{1, 3, 3, 3, 3}, graph.NewData(graph.Float32, []int{2, 1, 1, 1, 1}), nil, []int{1, 2, 3, 3, 3}, onnx.IntAttr("group", 2))

	for _, c := range []struct {
		name string
		bl   *onnx.Builder
		want []string
	}{
		{"indices", indices, []string{`node "mp3" (MaxPool)`, "Indices output of a 3-D MaxPool"}},
		{"qlinearconv", qconv, []string{`node "qc3" (QLinearConv)`, "3-D QLinearConv", "not supported"}},
		{"deep", deep, []string{`node "conv3" (Conv)`, "kernel depth 300", "at most 256"}},
		{"pads4", pads4, []string{`node "conv3" (Conv)`, "want 6 values"}},
		{"stride0", stride0, []string{`node "pool3" (AveragePool)`, "strides [0 1 1]"}},
		{"negPads", negPads, []string{`node "conv3" (Conv)`, "negative pads"}},
		{"hugeDilation", hugeDilation, []string{`node "pool3" (MaxPool)`, "dilations [1 1 4611686018427387904]"}},
		{"kernel2", kernel2, []string{`node "pool3" (MaxPool)`, "want 3 values"}},
		{"bigKernel", bigKernel, []string{`node "pool3" (MaxPool)`, "depth axis", "larger than padded input"}},
		{"badGroup", badGroup, []string{`node "conv3" (Conv)`, "group 2 does not fit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Import("m", c.bl.Model(), onnx.Options{})
			if err == nil {
				t.Fatal("imported; want a refusal")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}
