package emitc

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// dspConv is one int8 3x3 stride-1 convolution (group 1 or depthwise) over
// 6x6xc with per-channel weight scales, for the dsp algorithm knobs.
func dspConv(c, group int, act graph.Activation, yzp int32) *graph.Graph {
	g := graph.New("alg", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 6, 6, c}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	w := graph.NewData(graph.Int8, []int{c, 3, 3, c / group})
	for i := range w.I {
		w.I[i] = int64(i*37%255 - 127)
	}
	ws := make([]float32, c)
	for i := range ws {
		ws[i] = 0.002 + 0.001*float32(i%5)
	}
	g.AddConst("w", w).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, c)}
	b := graph.NewData(graph.Int32, []int{c})
	for i := range b.I {
		b.I[i] = int64(50*i - 100)
	}
	g.AddConst("b", b)
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 6, 6, c}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{yzp}}})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, Group: group, Act: act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// The dsp target's algorithm knobs print C that builds warning-free for a
// Cortex-M4, with every helper after the helpers it calls: Winograd, and
// planar depthwise in its general form (which calls dsp_requant_s8) and its
// ReLU form.
func TestDSPAlgorithmsCrossCompile(t *testing.T) {
	cases := []struct {
		name   string
		g      *graph.Graph
		knobs  map[string]int
		op     string
		helper string
	}{
		{"winograd", dspConv(8, 1, graph.ActNone, 5), map[string]int{"winograd": 1}, "conv2d", tir.IntrDSPWinoIn},
		{"planar", dspConv(8, 8, graph.ActNone, 5), map[string]int{"dw_planar": 1}, "depthwise_conv2d", tir.IntrDSPDWPlanar},
		{"planar-relu", dspConv(8, 8, graph.ActRelu, -128), map[string]int{"dw_planar": 1}, "depthwise_conv2d", tir.IntrDSPDWPlanarR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := tir.DSP.WithKnobs(c.op, c.knobs)
			m, err := tir.Lower(c.g, planFor(t, c.g, false), target)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Emit(m, Options{Prefix: "m", Target: "dsp"})
			if err != nil {
				t.Fatal(err)
			}
			src := files["m.c"]
			def := func(name string) int { return bytes.Index(src, []byte(fmt.Sprintf(" %s(", name))) }
			if def(c.helper) < 0 {
				t.Fatalf("%s is not in the C", c.helper)
			}
			for _, dep := range helperText[c.helper].deps {
				if dep == "dsp_acle" {
					continue
				}
				if def(dep) < 0 || def(dep) > def(c.helper) {
					t.Errorf("%s is printed after %s, which calls it", dep, c.helper)
				}
			}
			crossCompile(t, files, "m")
		})
	}
}
