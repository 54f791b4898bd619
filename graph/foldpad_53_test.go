package graph_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// padConv is x [1,h,w,c] → Pad (pads: N, H, W, C before, then after; value
// v) → a 3×3 convolution (depthwise when dw, else c → 4 channels) at
// stride s with padding cp. Quantized (int8) unless float; the Pad's output
// gets zero point yzp (the input's is -5).
func padConv(float, dw bool, h, w, c, s int, pads []int, v float64, cp graph.Padding, yzp int32) *graph.Graph {
	g := graph.New("padconv", "tflite")
	dt := graph.Int8
	q := func(zp int32) *graph.Quant { return &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{zp}} }
	if float {
		dt = graph.Float32
		q = func(int32) *graph.Quant { return nil }
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: dt, Shape: []int{1, h, w, c}, Quant: q(-5)})
	ph, pw := h+pads[1]+pads[5], w+pads[2]+pads[6]
	g.AddTensor(&graph.Tensor{Name: "xp", DType: dt, Shape: []int{1, ph, pw, c + pads[3] + pads[7]}, Quant: q(yzp)})
	g.AddNode(&graph.Node{Name: "pad", Op: graph.Pad, Inputs: []string{"x"}, Outputs: []string{"xp"}, Attrs: &graph.PadAttrs{Mode: "constant", Pads: pads, Value: v}})
	cin := c + pads[3] + pads[7]
	cout, group, wc := 4, 1, cin
	if dw {
		cout, group, wc = cin, cin, 1
	}
	wd := graph.NewData(graph.Int8, []int{cout, 3, 3, wc})
	wf := graph.NewData(graph.Float32, []int{cout, 3, 3, wc})
	for i := range wd.I {
		wd.I[i] = int64(i*53%255 - 127)
		wf.F[i] = float32(i*53%255-127) / 64
	}
	bd := graph.NewData(graph.Int32, []int{cout})
	bf := graph.NewData(graph.Float32, []int{cout})
	for i := range bd.I {
		bd.I[i] = int64(300*i - 700)
		bf.F[i] = float32(i) - 1.5
	}
	if float {
		g.AddConst("w", wf)
		g.AddConst("b", bf)
	} else {
		ws := make([]float32, cout)
		for i := range ws {
			ws[i] = 0.003 + 0.001*float32(i%3)
		}
		g.AddConst("w", wd).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, cout)}
		g.AddConst("b", bd)
	}
	oh, ow := (ph+cp.Top+cp.Bottom-3)/s+1, (pw+cp.Left+cp.Right-3)/s+1
	yq := &graph.Quant{Scale: []float32{0.25}, ZeroPoint: []int32{3}}
	if float {
		yq = nil
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: []int{1, oh, ow, cout}, Quant: yq})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"xp", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{s, s}, Dilation: [2]int{1, 1}, Pad: cp, Group: group}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// FoldPadIntoConv: a Pad that is a convolution's own padding written out
// (Keras' ZeroPadding2D before a stride-2 depthwise layer) goes into the
// convolution's padding, and the outputs stay exactly those of the graph
// with the Pad (the reference interpreter runs both, on random inputs and
// the int8 extremes). A Pad of other values, of the channels, read twice,
// wider than the kernel or between other parameters stays.
func TestFoldPadIntoConv53(t *testing.T) {
	hw := []int{0, 1, 1, 0, 0, 1, 1, 0}
	none := graph.Padding{}
	for _, c := range []struct {
		name   string
		g      func() *graph.Graph
		folds  bool
		output bool // the Pad's output is a graph output too
		want   graph.Padding
	}{
		{"keras-dw-s2", func() *graph.Graph {
			return padConv(false, true, 8, 8, 8, 2, []int{0, 0, 0, 0, 0, 1, 1, 0}, -5, none, -5)
		}, true, false, graph.Padding{Bottom: 1, Right: 1}},
		{"keras-dw-s2-odd", func() *graph.Graph { return padConv(false, true, 9, 7, 4, 2, hw, -5, none, -5) }, true, false, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}},
		{"conv-plus-own", func() *graph.Graph {
			return padConv(false, false, 6, 6, 3, 1, []int{0, 1, 0, 0, 0, 0, 1, 0}, -5, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, -5)
		}, true, false, graph.Padding{Top: 2, Left: 1, Bottom: 1, Right: 2}},
		{"float", func() *graph.Graph { return padConv(true, false, 6, 5, 3, 1, hw, 0, none, 0) }, true, false, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}},
		{"value-not-zero-point", func() *graph.Graph { return padConv(false, true, 8, 8, 8, 2, hw, 3, none, -5) }, false, false, none},
		{"float-value-1", func() *graph.Graph { return padConv(true, false, 6, 5, 3, 1, hw, 1, none, 0) }, false, false, none},
		{"other-parameters", func() *graph.Graph { return padConv(false, true, 8, 8, 8, 2, hw, 7, none, 7) }, false, false, none},
		{"channels", func() *graph.Graph {
			return padConv(false, false, 6, 6, 3, 1, []int{0, 1, 1, 1, 0, 1, 1, 0}, -5, none, -5)
		}, false, false, none},
		{"wider-than-kernel", func() *graph.Graph {
			return padConv(false, false, 6, 6, 3, 1, []int{0, 3, 0, 0, 0, 0, 0, 0}, -5, none, -5)
		}, false, false, none},
		{"read-twice", func() *graph.Graph { return padConv(false, true, 8, 8, 8, 2, hw, -5, none, -5) }, false, true, none},
	} {
		pristine, g := c.g(), c.g()
		if c.output {
			pristine.Outputs = append(pristine.Outputs, "xp")
			g.Outputs = append(g.Outputs, "xp")
		}
		n := graph.FoldPadIntoConv(g)
		if (n == 1) != c.folds || len(g.Nodes) != 2-n {
			t.Errorf("%s: folded %d, %d nodes left", c.name, n, len(g.Nodes))
			continue
		}
		if err := graph.Validate(g); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.folds {
			conv := g.Nodes[0]
			if conv.Inputs[0] != "x" || g.Tensors["xp"] != nil {
				t.Errorf("%s: the convolution reads %q (tensor xp kept: %v)", c.name, conv.Inputs[0], g.Tensors["xp"] != nil)
			}
			if p := conv.Attrs.(*graph.Conv2DAttrs).Pad; p != c.want {
				t.Errorf("%s: padding %+v, want %+v", c.name, p, c.want)
			}
		}
		sameOutputs(t, c.name+": the graph with the Pad and without", pristine, g, 53)
	}
}

// sameOutputs runs the reference interpreter on pristine and g over six
// values of input x (all -128, all 127, then random int8 values; normal
// floats for a float32 x) and reports every output of g that differs from
// pristine's (values or shape).
func sameOutputs(t *testing.T, what string, pristine, g *graph.Graph, seed uint64) {
	t.Helper()
	x := g.Tensors["x"]
	r := rand.New(rand.NewPCG(seed, uint64(len(what))))
	for v := 0; v < 6; v++ {
		in := graph.NewData(x.DType, x.Shape)
		for i := range in.F {
			in.F[i] = float32(r.NormFloat64())
		}
		for i := range in.I {
			switch v {
			case 0:
				in.I[i] = -128
			case 1:
				in.I[i] = 127
			default:
				in.I[i] = int64(r.IntN(256) - 128)
			}
		}
		want, err := interp.Run(pristine, map[string]*graph.Data{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		got, err := interp.Run(g, map[string]*graph.Data{"x": in})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range g.Outputs {
			if !slices.Equal(got[o].I, want[o].I) || !slices.Equal(got[o].F, want[o].F) || !slices.Equal(got[o].Shape, want[o].Shape) {
				t.Errorf("%s: vector %d: output %s differs", what, v, o)
			}
		}
	}
}
