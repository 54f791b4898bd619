// Package tirtest builds small graphs, one per canonical op and dtype, that
// tir's and emitc's tests lower, run and compare with the reference
// interpreter.
package tirtest

import (
	"fmt"
	"hash/fnv"
	"math/rand"

	"github.com/mcugen/mcugen/graph"
)

// Case is one test graph.
type Case struct {
	Name  string
	Graph *graph.Graph
}

type builder struct {
	g     *graph.Graph
	r     *rand.Rand
	int8  bool
	count int
}

func (b *builder) q(scale float32, zp int32) *graph.Quant {
	if !b.int8 {
		return nil
	}
	return &graph.Quant{Scale: []float32{scale}, ZeroPoint: []int32{zp}}
}

func (b *builder) dt() graph.DType {
	if b.int8 {
		return graph.Int8
	}
	return graph.Float32
}

// act adds an activation tensor of the graph's dtype (shape inferred later).
func (b *builder) act(scale float32, zp int32) string {
	b.count++
	name := fmt.Sprintf("t%d", b.count)
	b.g.AddTensor(&graph.Tensor{Name: name, DType: b.dt(), Quant: b.q(scale, zp)})
	return name
}

func (b *builder) input(shape []int, scale float32, zp int32) string {
	name := fmt.Sprintf("in%d", len(b.g.Inputs))
	b.g.AddTensor(&graph.Tensor{Name: name, DType: b.dt(), Shape: shape, Quant: b.q(scale, zp)})
	b.g.Inputs = append(b.g.Inputs, name)
	return name
}

// typed adds a node whose output has type dt and no quantization (bools,
// casts, and float nodes in an int8 case).
func (b *builder) typed(op graph.Op, attrs any, dt graph.DType, ins ...string) string {
	out := fmt.Sprintf("t%d", len(b.g.Nodes))
	b.g.AddTensor(&graph.Tensor{Name: out, DType: dt})
	b.g.AddNode(&graph.Node{Name: out, Op: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs})
	return out
}

// weights adds a constant: int8 symmetric per-channel along axis 0, or float.
func (b *builder) weights(name string, shape []int) string {
	if !b.int8 {
		d := graph.NewData(graph.Float32, shape)
		for i := range d.F {
			d.F[i] = float32(b.r.NormFloat64() * 0.3)
		}
		b.g.AddConst(name, d)
		return name
	}
	d := graph.NewData(graph.Int8, shape)
	for i := range d.I {
		d.I[i] = int64(b.r.Intn(255) - 127)
	}
	t := b.g.AddConst(name, d)
	sc := make([]float32, shape[0])
	for i := range sc {
		sc[i] = 0.004 + 0.004*b.r.Float32()
	}
	t.Quant = &graph.Quant{Scale: sc, ZeroPoint: make([]int32, shape[0])}
	return name
}

func (b *builder) bias(name string, n int) string {
	if !b.int8 {
		d := graph.NewData(graph.Float32, []int{n})
		for i := range d.F {
			d.F[i] = float32(b.r.NormFloat64() * 0.1)
		}
		b.g.AddConst(name, d)
		return name
	}
	d := graph.NewData(graph.Int32, []int{n})
	for i := range d.I {
		d.I[i] = int64(b.r.Intn(4000) - 2000)
	}
	b.g.AddConst(name, d)
	return name
}

func (b *builder) node(op graph.Op, attrs any, outScale float32, outZP int32, ins ...string) string {
	out := b.act(outScale, outZP)
	b.g.AddNode(&graph.Node{Name: fmt.Sprintf("%s_%d", op, len(b.g.Nodes)), Op: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs})
	return out
}

func (b *builder) done(outs ...string) (*graph.Graph, error) {
	b.g.Outputs = outs
	if err := graph.InferShapes(b.g); err != nil {
		return nil, err
	}
	return b.g, nil
}

// Cases returns the op graphs: every canonical op tir lowers, in float32 and
// (where TFLite defines it) int8.
func Cases() ([]Case, error) {
	var out []Case
	for _, i8 := range []bool{false, true} {
		suffix := "f32"
		if i8 {
			suffix = "s8"
		}
		for _, c := range builders {
			if i8 && c.floatOnly {
				continue
			}
			h := fnv.New64a()
			h.Write([]byte(c.name + "_" + suffix))
			b := &builder{g: graph.New(c.name+"_"+suffix, "tflite"), r: rand.New(rand.NewSource(int64(h.Sum64() >> 1))), int8: i8}
			g, err := c.build(b)
			if err != nil {
				return nil, fmt.Errorf("tirtest: %s_%s: %v", c.name, suffix, err)
			}
			out = append(out, Case{Name: c.name + "_" + suffix, Graph: g})
		}
	}
	return out, nil
}

var conv = func(stride, dil, group int, pad graph.Padding, act graph.Activation) *graph.Conv2DAttrs {
	return &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{dil, dil}, Pad: pad, Group: group, Act: act}
}

var builders = []struct {
	name      string
	floatOnly bool
	build     func(b *builder) (*graph.Graph, error)
}{
	{"conv", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 9, 8, 3}, 0.05, -4)
		y := b.node(graph.Conv2D, conv(2, 1, 1, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 0}, graph.ActRelu6), 0.04, -100,
			x, b.weights("conv/w", []int{5, 3, 3, 3}), b.bias("conv/b", 5))
		return b.done(y)
	}},
	{"conv_transpose", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 4, 3, 4}, 0.05, -4)
		// Stride 2 with a crop and an extra row; a grouped stride-3 dilated one; a stride-1 one.
		y1 := b.node(graph.ConvTranspose2D, &graph.ConvTransposeAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1},
			Pad: graph.Padding{Top: 1, Left: 0, Bottom: 0, Right: 1}, OutPad: [2]int{1, 0}, Group: 1, Act: graph.ActRelu6}, 0.04, -100,
			x, b.weights("ct/w", []int{5, 3, 3, 4}), b.bias("ct/b", 5))
		y2 := b.node(graph.ConvTranspose2D, &graph.ConvTransposeAttrs{Stride: [2]int{3, 2}, Dilation: [2]int{2, 1}, Group: 2}, 0.1, 3,
			x, b.weights("ctg/w", []int{4, 2, 2, 2}), "")
		y3 := b.node(graph.ConvTranspose2D, &graph.ConvTransposeAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1},
			Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}, 0.08, 0, x, b.weights("ct1/w", []int{2, 3, 3, 4}), b.bias("ct1/b", 2))
		return b.done(y1, y2, y3)
	}},
	{"conv_dilated", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 9, 9, 2}, 0.05, 3)
		y := b.node(graph.Conv2D, conv(1, 2, 1, graph.Padding{Top: 2, Left: 2, Bottom: 2, Right: 2}, graph.ActNone), 0.2, 1,
			x, b.weights("w", []int{4, 3, 3, 2}), "")
		return b.done(y)
	}},
	{"depthwise", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 7, 7, 3}, 0.05, -1)
		y := b.node(graph.Conv2D, conv(1, 1, 3, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActRelu), 0.03, -128,
			x, b.weights("dw/w", []int{6, 3, 3, 1}), b.bias("dw/b", 6))
		return b.done(y)
	}},
	// True depthwise layers (one output channel per input channel) in the
	// shapes the M55 lays out as planes: rows of ten (two vectors and a
	// tail of two); a 13×2 map taken by columns, twelve channels (a last
	// four apart); stride 2 with TFLite's SAME padding (none above and left).
	{"depthwise_rows", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 5, 10, 8}, 0.05, -128)
		y := b.node(graph.Conv2D, conv(1, 1, 8, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActRelu), 0.03, -128,
			x, b.weights("dwr/w", []int{8, 3, 3, 1}), b.bias("dwr/b", 8))
		return b.done(y)
	}},
	{"depthwise_cols", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 13, 2, 12}, 0.05, 6)
		y := b.node(graph.Conv2D, conv(1, 1, 12, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActNone), 0.04, 3,
			x, b.weights("dwc/w", []int{12, 3, 3, 1}), b.bias("dwc/b", 12))
		return b.done(y)
	}},
	{"depthwise_stride2", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 11, 9, 8}, 0.05, -5)
		y := b.node(graph.Conv2D, conv(2, 1, 8, graph.Padding{Top: 0, Left: 0, Bottom: 1, Right: 1}, graph.ActRelu6), 0.03, -128,
			x, b.weights("dws/w", []int{8, 3, 3, 1}), b.bias("dws/b", 8))
		return b.done(y)
	}},
	{"grouped_conv", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 5, 5, 4}, 0.05, 0)
		y := b.node(graph.Conv2D, conv(1, 1, 2, graph.Padding{}, graph.ActNone), 0.1, 2,
			x, b.weights("gw", []int{6, 1, 1, 2}), b.bias("gb", 6))
		return b.done(y)
	}},
	{"fully_connected", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 24}, 0.05, 7)
		y := b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{Act: graph.ActRelu}, 0.1, -20,
			x, b.weights("fc.w", []int{10, 24}), b.bias("fc.b", 10))
		return b.done(y)
	}},
	{"conv_rgb", false, func(b *builder) (*graph.Graph, error) {
		// Three input channels: a window row of nine bytes, a reduction
		// of 27 (the M55 groups three windows, split at 16-byte chunk
		// edges, and runs the reduction as 32).
		x := b.input([]int{1, 5, 8, 3}, 0.05, 2)
		y := b.node(graph.Conv2D, conv(1, 1, 1, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActRelu), 0.04, -128,
			x, b.weights("rgb/w", []int{8, 3, 3, 3}), b.bias("rgb/b", 8))
		return b.done(y)
	}},
	{"pointwise_short", false, func(b *builder) (*graph.Graph, error) {
		// A reduction of 8 (the M55's fused short-reduction kernel, pixels
		// in pairs and an odd last one).
		x := b.input([]int{1, 3, 5, 8}, 0.05, -6)
		y := b.node(graph.Conv2D, conv(1, 1, 1, graph.Padding{}, graph.ActRelu), 0.05, -128,
			x, b.weights("pws/w", []int{12, 1, 1, 8}), b.bias("pws/b", 12))
		return b.done(y)
	}},
	{"fully_connected_short", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 13}, 0.05, 7)
		y := b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{Act: graph.ActNone}, 0.1, -3,
			x, b.weights("fcs.w", []int{8, 13}), b.bias("fcs.b", 8))
		return b.done(y)
	}},
	{"fully_connected_band", true, func(b *builder) (*graph.Graph, error) {
		// A mel-like filter bank: output j weighs inputs 5j..5j+6 (one
		// of them zero inside the run), output 3 nothing; tir sums the
		// runs only (graph.WeightRuns).
		x := b.input([]int{3, 40}, 0, 0)
		d := graph.NewData(graph.Float32, []int{7, 40})
		for j := range 7 {
			for t := range 7 {
				if k := 5*j + t; j != 3 && t != 4 && k < 40 {
					d.F[j*40+k] = float32(1 + b.r.NormFloat64()*0.3)
				}
			}
		}
		b.g.AddConst("mel", d)
		y := b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{Act: graph.ActRelu}, 0, 0, x, "mel", b.bias("melb", 7))
		z := b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{}, 0, 0, x, "mel", "")
		return b.done(y, z)
	}},
	{"batch_matmul", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4}, 0.05, 7)
		w := b.input([]int{1, 5, 4}, 0.04, -2)
		y := b.node(graph.BatchMatMul, &graph.BatchMatMulAttrs{AdjY: true}, 0.1, 3, x, w)
		return b.done(y)
	}},
	{"binary", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 3, 4, 5}, 0.05, 2)
		z := b.input([]int{4, 1}, 0.08, -9)
		s := b.node(graph.Add, &graph.BinaryAttrs{Act: graph.ActRelu}, 0.1, -5, x, z)
		d := b.node(graph.Sub, nil, 0.12, 4, x, z)
		m := b.node(graph.Mul, nil, 0.01, 1, s, d)
		return b.done(s, d, m)
	}},
	{"div", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3}, 0, 0)
		z := b.input([]int{3}, 0, 0)
		return b.done(b.node(graph.Div, nil, 0, 0, x, z))
	}},
	{"min_max", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{3, 4}, 0.05, 2)
		z := b.input([]int{3, 4}, 0.05, 2)
		return b.done(b.node(graph.Maximum, nil, 0.05, 2, x, z), b.node(graph.Minimum, nil, 0.05, 2, x, z))
	}},
	{"min_max_mixed_quant", false, func(b *builder) (*graph.Graph, error) {
		// int8: TFLite compares the raw values whatever the quantizations
		// (round-3 fuzzer: mcugen refused such a model).
		x := b.input([]int{3, 4}, 0.05, 2)
		z := b.input([]int{4}, 0.02, -7)
		return b.done(b.node(graph.Maximum, nil, 0.1, -3, x, z), b.node(graph.Minimum, nil, 0.03, 5, z, x))
	}},
	{"pools", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 7, 6, 3}, 0.05, 2)
		mp := b.node(graph.MaxPool2D, &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}, 0.05, 2, x)
		ap := b.node(graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Pad: graph.Padding{Top: 1, Left: 0, Bottom: 1, Right: 1}}, 0.05, 2, x)
		return b.done(mp, ap)
	}},
	{"maxpool_indices", true, func(b *builder) (*graph.Graph, error) {
		// ONNX MaxPool's Indices: row major with padding and a dilation,
		// column major with a ceil-mode bottom row (batch 2, 3 channels).
		x := b.input([]int{2, 5, 6, 3}, 0.05, 2)
		row := b.typed(graph.MaxPoolIndices, &graph.MaxPoolIndicesAttrs{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Dilation: [2]int{1, 2},
			Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1}}, graph.Int64, x)
		col := b.typed(graph.MaxPoolIndices, &graph.MaxPoolIndicesAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2},
			Pad: graph.Padding{Bottom: 1}, ColumnMajor: true}, graph.Int64, x)
		return b.done(row, col)
	}},
	{"avgpool_include_pad", false, func(b *builder) (*graph.Graph, error) {
		// int8 too (ONNX QDQ): each padded tap adds the zero point.
		x := b.input([]int{1, 5, 5, 2}, 0.05, -7)
		return b.done(b.node(graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, CountIncludePad: true}, 0.05, -7, x),
			b.node(graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Dilation: [2]int{2, 1}, Pad: graph.Padding{Top: 2, Left: 0, Bottom: 2, Right: 1}, CountIncludePad: true}, 0.05, -7, x))
	}},
	{"mean", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 5, 4, 3}, 0.05, 2)
		return b.done(b.node(graph.Mean, &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}, 0.03, -3, x))
	}},
	{"reduce", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4, 5}, 0, 0)
		var outs []string
		for i, k := range []graph.ReduceKind{graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd,
			graph.ReduceL1, graph.ReduceL2, graph.ReduceSumSquare, graph.ReduceLogSumExp} {
			axes := [][]int{{1}, {0, 2}, {3}, {1, 3}, {0, 1, 2, 3}, {2}, {-1}, {1, 2}}[i]
			outs = append(outs, b.node(graph.Reduce, &graph.ReduceAttrs{Kind: k, Axes: axes, KeepDims: i%2 == 0}, 0, 0, x))
		}
		e := b.node(graph.Math, &graph.MathAttrs{Fn: graph.MathExp}, 0, 0, x)
		outs = append(outs, b.node(graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceLogSum, Axes: []int{3}}, 0, 0, e))
		return b.done(outs...)
	}},
	{"argmax", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 5}, 0.05, 3)
		var outs []string
		for i, a := range []graph.ArgAttrs{{Axis: 2}, {Axis: 1, KeepDims: true, Min: true}, {Axis: 0, SelectLast: true}, {Axis: -1, Min: true, SelectLast: true}} {
			out := fmt.Sprintf("arg%d", i)
			dt := graph.Int32
			if i%2 == 1 {
				dt = graph.Int64
			}
			b.g.AddTensor(&graph.Tensor{Name: out, DType: dt})
			a := a
			b.g.AddNode(&graph.Node{Name: out, Op: graph.ArgMax, Inputs: []string{x}, Outputs: []string{out}, Attrs: &a})
			outs = append(outs, out)
		}
		return b.done(outs...)
	}},
	{"reduce_max_min", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4}, 0.05, 3)
		mx := b.act(0.05, 3)
		b.g.AddNode(&graph.Node{Name: mx, Op: graph.Reduce, Inputs: []string{x}, Outputs: []string{mx},
			Attrs: &graph.ReduceAttrs{Kind: graph.ReduceMax, Axes: []int{0, 2}}})
		mn := b.act(0.05, 3)
		b.g.AddNode(&graph.Node{Name: mn, Op: graph.Reduce, Inputs: []string{x}, Outputs: []string{mn},
			Attrs: &graph.ReduceAttrs{Kind: graph.ReduceMin, Axes: []int{1}, KeepDims: true}})
		return b.done(mx, mn)
	}},
	{"topk", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 6, 3}, 0.05, 3)
		var outs []string
		for i, a := range []graph.TopKAttrs{{Axis: 1, K: 3, Largest: true}, {Axis: 1, K: 3, Largest: true, Indices: true},
			{Axis: 2, K: 2}, {Axis: 0, K: 2, Largest: true, Indices: true}, {Axis: 1, K: 6, Indices: true}} {
			out := fmt.Sprintf("top%d", i)
			t := &graph.Tensor{Name: out}
			switch {
			case i == 1:
				t.DType = graph.Int32
			case a.Indices:
				t.DType = graph.Int64
			default:
				t.DType = b.g.Tensor(x).DType
				t.Quant = b.g.Tensor(x).Quant
			}
			b.g.AddTensor(t)
			a := a
			b.g.AddNode(&graph.Node{Name: out, Op: graph.TopK, Inputs: []string{x}, Outputs: []string{out}, Attrs: &a})
			outs = append(outs, out)
		}
		return b.done(outs...)
	}},
	{"detection", true, func(b *builder) (*graph.Graph, error) {
		// 24 anchors on a 4×6 grid of overlapping squares; random
		// encodings and scores (one background column) make candidates,
		// suppressions and, at 0.2, some anchors below the threshold.
		enc := b.input([]int{1, 24, 4}, 0, 0)
		sc := b.input([]int{1, 24, 4}, 0, 0)
		anc := graph.NewData(graph.Float32, []int{24, 4})
		for i := 0; i < 24; i++ {
			anc.F[4*i], anc.F[4*i+1] = 0.1+0.2*float32(i/6), 0.1+0.15*float32(i%6)
			anc.F[4*i+2], anc.F[4*i+3] = 0.3, 0.25
		}
		b.g.AddConst("anchors", anc)
		out := b.typed(graph.DetectionPostProcess, &graph.DetectionAttrs{MaxDetections: 5, NumClasses: 3, LabelOffset: 1,
			ScoreThreshold: 0.2, IoUThreshold: 0.3, Scale: [4]float32{10, 10, 5, 5}}, graph.Float32, enc, sc, "anchors")
		return b.done(out)
	}},
	{"softmax_modes", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4}, 0, 0)
		var outs []string
		for _, a := range []graph.SoftmaxAttrs{{Axis: -1, Beta: 1, Mode: graph.SoftmaxLog}, {Axis: 1, Beta: 0.5, Mode: graph.SoftmaxLog},
			{Axis: 0, Beta: 1, Mode: graph.SoftmaxHard}, {Axis: -1, Beta: 1, Mode: graph.SoftmaxHard}, {Axis: 1, Beta: 1}} {
			a := a
			outs = append(outs, b.node(graph.Softmax, &a, 0, 0, x))
		}
		// Ties: Hardmax marks the first of equal maxima only.
		r := b.node(graph.Relu, nil, 0, 0, x)
		outs = append(outs, b.node(graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1, Mode: graph.SoftmaxHard}, 0, 0, r))
		return b.done(outs...)
	}},
	{"pow", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4}, 0, 0)
		z := b.input([]int{3, 1}, 0, 0)
		e := b.node(graph.Math, &graph.MathAttrs{Fn: graph.MathExp}, 0, 0, x)
		p1 := b.node(graph.Pow, nil, 0, 0, e, z)
		p2 := b.node(graph.Pow, nil, 0, 0, x, b.weights("exp", []int{4}))
		return b.done(p1, p2)
	}},
	{"logic", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 3, 4}, 0.05, 3)
		z := b.input([]int{3, 1}, 0.05, 3)
		var outs []string
		for _, k := range []string{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"} {
			outs = append(outs, b.typed(graph.Compare, &graph.CompareAttrs{Kind: k}, graph.Bool, x, z))
		}
		lt, gt := outs[1], outs[2]
		for _, k := range []string{"And", "Or", "Xor"} {
			outs = append(outs, b.typed(graph.Logic, &graph.LogicAttrs{Kind: k}, graph.Bool, lt, gt))
		}
		outs = append(outs, b.typed(graph.Logic, &graph.LogicAttrs{Kind: "Not"}, graph.Bool, lt))
		dt := graph.Float32
		if b.int8 {
			dt = graph.Int8
		}
		w := b.typed(graph.Where, nil, dt, lt, x, z)
		b.g.Tensor(w).Quant = b.g.Tensor(x).Quant
		outs = append(outs, w)
		return b.done(outs...)
	}},
	{"cast", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{4, 9}, 0, 0)
		scaled := func(k float32) string {
			c := graph.NewData(graph.Float32, nil)
			c.F[0] = k
			name := fmt.Sprintf("k%d", len(b.g.Nodes))
			b.g.AddConst(name, c)
			return b.typed(graph.Mul, &graph.BinaryAttrs{}, graph.Float32, x, name)
		}
		cast := func(in string, to graph.DType) string { return b.typed(graph.Cast, &graph.CastAttrs{To: to}, to, in) }
		// Values inside the small types, far outside all of them (int32 and
		// int64 saturate), infinities, and NaN (the log of a negative).
		small, big, huge := scaled(90), scaled(4e9), scaled(3e38)
		inf := b.typed(graph.Mul, &graph.BinaryAttrs{}, graph.Float32, huge, huge)
		nan := b.typed(graph.Math, &graph.MathAttrs{Fn: graph.MathLog}, graph.Float32, x)
		var outs []string
		for _, in := range []string{small, big, inf, nan} {
			for _, to := range []graph.DType{graph.Int8, graph.UInt8, graph.Int16, graph.Int32, graph.Int64, graph.Bool} {
				outs = append(outs, cast(in, to))
			}
		}
		// Integers: wrap to narrower types, round to float (int64 beyond
		// 2^24), bools to numbers.
		i64 := cast(big, graph.Int64)
		i32 := cast(small, graph.Int32)
		outs = append(outs, cast(i64, graph.Int8), cast(i64, graph.Int32), cast(i64, graph.Float32), cast(i32, graph.Float32),
			cast(i32, graph.UInt8), cast(cast(small, graph.Bool), graph.Float32), cast(cast(i32, graph.Bool), graph.Int32))
		return b.done(outs...)
	}},
	{"cumsum_mod", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{2, 5, 3}, 0, 0)
		z := b.input([]int{5, 1}, 0, 0)
		var outs []string
		for _, a := range []graph.CumSumAttrs{{Axis: 1}, {Axis: 1, Exclusive: true}, {Axis: -1, Reverse: true}, {Axis: 0, Exclusive: true, Reverse: true}} {
			a := a
			outs = append(outs, b.node(graph.CumSum, &a, 0, 0, x))
		}
		outs = append(outs, b.node(graph.Mod, &graph.ModAttrs{Fmod: true}, 0, 0, x, z))
		return b.done(outs...)
	}},
	// Unsigned plain integers: division and remainder by a divisor that is
	// never negative (zero among the random values). The C once compared a
	// uint8 with -1, which -Wtype-limits rejects under -Werror.
	{"div_mod_u8", true, func(b *builder) (*graph.Graph, error) {
		in := func(shape ...int) string {
			name := fmt.Sprintf("in%d", len(b.g.Inputs))
			b.g.AddTensor(&graph.Tensor{Name: name, DType: graph.UInt8, Shape: shape})
			b.g.Inputs = append(b.g.Inputs, name)
			return name
		}
		x, z := in(4, 6), in(4, 6)
		return b.done(b.typed(graph.Div, &graph.BinaryAttrs{}, graph.UInt8, x, z),
			b.typed(graph.Mod, &graph.ModAttrs{}, graph.UInt8, x, z),
			b.typed(graph.Mod, &graph.ModAttrs{Fmod: true}, graph.UInt8, x, z))
	}},
	{"gather", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{4, 3, 5}, 0.05, 3)
		idx := "idx"
		b.g.AddTensor(&graph.Tensor{Name: idx, DType: graph.Int64, Shape: []int{2, 3, 2}})
		b.g.Inputs = append(b.g.Inputs, idx)
		node := func(a *graph.GatherAttrs, ins ...string) string {
			out := fmt.Sprintf("g%d", len(b.g.Nodes))
			b.g.AddTensor(&graph.Tensor{Name: out, DType: b.g.Tensor(x).DType, Quant: b.g.Tensor(x).Quant})
			b.g.AddNode(&graph.Node{Name: out, Op: graph.Gather, Inputs: ins, Outputs: []string{out}, Attrs: a})
			return out
		}
		// Embedding-style rows, a middle axis, and elements; random int64
		// indices go far outside every axis (clamped) and negative.
		return b.done(node(&graph.GatherAttrs{Axis: 0}, x, idx), node(&graph.GatherAttrs{Axis: 2}, x, idx),
			node(&graph.GatherAttrs{Axis: 1, Elements: true}, x, idx))
	}},
	{"scatter", true, func(b *builder) (*graph.Graph, error) {
		in := func(dt graph.DType, shape ...int) string {
			name := fmt.Sprintf("in%d", len(b.g.Inputs))
			b.g.AddTensor(&graph.Tensor{Name: name, DType: dt, Shape: shape})
			b.g.Inputs = append(b.g.Inputs, name)
			return name
		}
		k64 := func(v int64) string {
			c := graph.NewData(graph.Int64, nil)
			c.I[0] = v
			return b.g.AddConst(b.g.UniqueName("k"), c).Name
		}
		// Run-time indices from random integers: (raw mod m) - off, so
		// some are negative, some below -dim and some past the axis.
		indices := func(off, m int64, shape ...int) string {
			md := b.typed(graph.Mod, &graph.ModAttrs{}, graph.Int64, in(graph.Int64, shape...), k64(m))
			return b.typed(graph.Sub, &graph.BinaryAttrs{}, graph.Int64, md, k64(off))
		}
		scatter := func(a *graph.ScatterAttrs, dt graph.DType, ins ...string) string {
			return b.typed(graph.Scatter, a, dt, ins...)
		}
		x := in(graph.Float32, 4, 3, 5)
		el := indices(6, 13, 3, 3, 4) // -6..6 on an axis of 5
		u := in(graph.Float32, 3, 3, 4)
		nd := indices(1, 5, 5, 2) // -1..3 on axes of 4 and 3
		rows := in(graph.Float32, 5, 5)
		xi := in(graph.Int32, 6)
		ii := indices(2, 9, 7, 1) // -2..6 on 6
		ui := in(graph.Int32, 7)
		xl := in(graph.Int64, 6)
		ul := in(graph.Int64, 7)
		return b.done(
			scatter(&graph.ScatterAttrs{Axis: 2}, graph.Float32, x, el, u),
			scatter(&graph.ScatterAttrs{Axis: 2, Reduction: "add"}, graph.Float32, x, el, u),
			scatter(&graph.ScatterAttrs{Axis: 0, Reduction: "min"}, graph.Float32, x, indices(5, 9, 3, 3, 4), u),
			scatter(&graph.ScatterAttrs{ND: true, Reduction: "max"}, graph.Float32, x, nd, rows),
			scatter(&graph.ScatterAttrs{ND: true}, graph.Float32, x, nd, rows),
			scatter(&graph.ScatterAttrs{ND: true, Reduction: "mul"}, graph.Int32, xi, ii, ui),
			scatter(&graph.ScatterAttrs{ND: true, Reduction: "add"}, graph.Int64, xl, ii, ul),
			scatter(&graph.ScatterAttrs{Axis: 0, Reduction: "mul"}, graph.Int64, xl, indices(2, 9, 7), ul))
	}},
	{"dft", true, func(b *builder) (*graph.Graph, error) {
		dft := func(a graph.DFTAttrs, ins ...string) string { return b.typed(graph.DFT, &a, graph.Float32, ins...) }
		real := b.input([]int{2, 12, 3, 1}, 0, 0)
		cplx := b.input([]int{5, 3, 2}, 0, 0)
		sig := b.input([]int{2, 40, 1}, 0, 0)
		win := b.input([]int{8}, 0, 0)
		csig := b.input([]int{1, 30, 2}, 0, 0)
		return b.done(
			dft(graph.DFTAttrs{Axis: 1, N: 12}, real),
			dft(graph.DFTAttrs{Axis: 1, N: 9, Onesided: true}, real), // zero-padded
			dft(graph.DFTAttrs{Axis: 2, N: 2}, real),                 // truncated
			dft(graph.DFTAttrs{Axis: 0, N: 8, Inverse: true}, cplx),  // complex, padded
			dft(graph.DFTAttrs{Axis: 1, N: 3}, cplx),                 // complex forward
			dft(graph.DFTAttrs{N: 8, Onesided: true, Frames: 7, Step: 5}, sig, win),
			dft(graph.DFTAttrs{N: 6, Frames: 4, Step: 7}, csig),
			dft(graph.DFTAttrs{N: 8, Onesided: true, Frames: 7, Step: 5, Power: true}, sig, win),  // FFT, power
			dft(graph.DFTAttrs{Axis: 1, N: 12, Power: true}, real),                                // direct, power
			dft(graph.DFTAttrs{Axis: 0, N: 4, Power: true}, cplx),                                 // FFT, complex, power
			dft(graph.DFTAttrs{Axis: 1, N: 64}, real),                                             // real FFT of N/2, padded, mirrored bins
			dft(graph.DFTAttrs{Axis: 1, N: 128, Onesided: true}, b.input([]int{1, 200, 1}, 0, 0)), // real FFT of N/2, truncated
			// Mixed radix: 400 = 2^4 5^2 (real, as N/2 = 200), 105 = 3 5 7
			// complex inverse, 98 = 2 7^2 real and odd-padded, 11 prime (direct).
			dft(graph.DFTAttrs{N: 400, Onesided: true, Frames: 2, Step: 160, Power: true}, b.input([]int{1, 560, 1}, 0, 0)),
			dft(graph.DFTAttrs{Axis: 1, N: 105, Inverse: true}, b.input([]int{2, 100, 2}, 0, 0)),
			dft(graph.DFTAttrs{Axis: 1, N: 98, Onesided: true}, b.input([]int{1, 97, 1}, 0, 0)),
			dft(graph.DFTAttrs{Axis: 1, N: 45}, b.input([]int{1, 45, 2}, 0, 0)),
			dft(graph.DFTAttrs{Axis: 1, N: 11}, real))
	}},
	{"scalars", true, func(b *builder) (*graph.Graph, error) {
		// Rank-0 tensors: pointers in the generated C, read as p[0].
		x := b.input([]int{}, 0, 0)
		z := b.input([]int{}, 0, 0)
		return b.done(b.node(graph.Div, nil, 0, 0, x, z), b.node(graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: []int{0, 1}}, 0, 0, b.input([]int{2, 3}, 0, 0)))
	}},
	{"softmax", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{3, 10}, 0.1, 5)
		return b.done(b.node(graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1}, 1.0/256, -128, x))
	}},
	{"unary", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{4, 9}, 0.05, 3)
		var outs []string
		outs = append(outs, b.node(graph.Relu, nil, 0.05, -128, x))
		outs = append(outs, b.node(graph.Sigmoid, nil, 1.0/256, -128, x))
		outs = append(outs, b.node(graph.Tanh, nil, 1.0/128, 0, x))
		outs = append(outs, b.node(graph.HardSwish, nil, 0.04, -10, x))
		outs = append(outs, b.node(graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: 0.1}, 0.05, 3, x))
		outs = append(outs, b.node(graph.Clip, &graph.ClipAttrs{Min: -1, Max: 1}, 0.05, 3, x))
		return b.done(outs...)
	}},
	{"math", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{3, 7}, 0.05, 3)
		m := func(fn graph.MathFn, in string, alpha, gamma float32) string {
			return b.node(graph.Math, &graph.MathAttrs{Fn: fn, Alpha: alpha, Gamma: gamma}, 0.04, -5, in)
		}
		var outs []string
		for _, fn := range []graph.MathFn{graph.MathExp, graph.MathAbs, graph.MathNeg, graph.MathFloor, graph.MathCeil,
			graph.MathRound, graph.MathSign, graph.MathErf, graph.MathSin, graph.MathCos, graph.MathTan, graph.MathAtan,
			graph.MathSinh, graph.MathCosh, graph.MathAsinh, graph.MathSoftplus, graph.MathSoftsign, graph.MathSquare} {
			outs = append(outs, m(fn, x, 0, 0))
		}
		shrink := b.node(graph.Math, &graph.MathAttrs{Fn: graph.MathShrink, Alpha: 0.3, Beta: 0.1}, 0.04, -5, x)
		outs = append(outs, shrink, m(graph.MathElu, x, 0.7, 0), m(graph.MathCelu, x, 1.3, 0), m(graph.MathThresholdedRelu, x, 0.2, 0),
			m(graph.MathSelu, x, 1.67326319217681884765625, 1.05070102214813232421875))
		// Functions of a restricted domain, on the range of another.
		e, sg, ch := m(graph.MathExp, x, 0, 0), m(graph.MathSoftsign, x, 0, 0), m(graph.MathCosh, x, 0, 0)
		outs = append(outs, m(graph.MathSqrt, e, 0, 0), m(graph.MathLog, e, 0, 0), m(graph.MathRsqrt, e, 0, 0),
			m(graph.MathReciprocal, e, 0, 0), m(graph.MathAsin, sg, 0, 0), m(graph.MathAcos, sg, 0, 0),
			m(graph.MathAtanh, sg, 0, 0), m(graph.MathAcosh, ch, 0, 0))
		return b.done(outs...)
	}},
	{"hard_sigmoid", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{4, 5}, 0, 0)
		return b.done(b.node(graph.HardSigmoid, &graph.HardSigmoidAttrs{Alpha: 0.2, Beta: 0.5}, 0, 0, x))
	}},
	{"movement", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 4, 5, 3}, 0.05, 3)
		tr := b.node(graph.Transpose, &graph.TransposeAttrs{Perm: []int{0, 3, 1, 2}}, 0.05, 3, x)
		pd := b.node(graph.Pad, &graph.PadAttrs{Pads: []int{0, 1, 2, 0, 0, 2, 0, 1}, Value: 3}, 0.05, 3, x)
		sl := b.node(graph.Slice, &graph.SliceAttrs{Begin: []int{0, 1, 0, 0}, End: []int{1, 4, 5, 3}, Stride: []int{1, 2, 2, 1}}, 0.05, 3, x)
		z := b.input([]int{1, 4, 5, 2}, 0.1, -7)
		cc := b.node(graph.Concat, &graph.ConcatAttrs{Axis: 3}, 0.05, 3, x, z)
		return b.done(tr, pd, sl, cc)
	}},
	{"pad_modes", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 4, 5, 2}, 0, 0)
		r := b.node(graph.Pad, &graph.PadAttrs{Pads: []int{0, 2, 1, 0, 0, 1, 2, 0}, Mode: "reflect"}, 0, 0, x)
		e := b.node(graph.Pad, &graph.PadAttrs{Pads: []int{0, 2, 1, 0, 0, 1, 2, 0}, Mode: "edge"}, 0, 0, x)
		return b.done(r, e)
	}},
	{"reshape_chain", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 2, 3, 4}, 0.05, 3)
		r1 := b.act(0.05, 3)
		b.g.Tensor(r1).Shape = []int{6, 4}
		b.g.AddNode(&graph.Node{Name: "reshape", Op: graph.Reshape, Inputs: []string{x}, Outputs: []string{r1}})
		y := b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{}, 0.1, 0, r1, b.weights("w", []int{3, 4}), "")
		r2 := b.act(0.1, 0)
		b.g.Tensor(r2).Shape = []int{18}
		b.g.AddNode(&graph.Node{Name: "flatten", Op: graph.Reshape, Inputs: []string{y}, Outputs: []string{r2}})
		return b.done(r2)
	}},
	{"resize_nearest", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 3, 4, 2}, 0.05, 3)
		y := b.act(0.05, 3)
		b.g.Tensor(y).Shape = []int{1, 6, 7, 2}
		b.g.AddNode(&graph.Node{Name: "resize", Op: graph.Resize, Inputs: []string{x}, Outputs: []string{y},
			Attrs: &graph.ResizeAttrs{Mode: "nearest", Coord: "asymmetric", Nearest: "floor"}})
		return b.done(y)
	}},
	{"resize_bilinear", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 3, 4, 2}, 0.05, 3)
		y := b.act(0.05, 3)
		b.g.Tensor(y).Shape = []int{1, 6, 8, 2}
		b.g.AddNode(&graph.Node{Name: "resize", Op: graph.Resize, Inputs: []string{x}, Outputs: []string{y},
			Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "half_pixel"}})
		return b.done(y)
	}},
	{"resize_bilinear_corners_down", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 7, 5, 3}, 0.05, -2)
		y := b.act(0.05, -2)
		b.g.Tensor(y).Shape = []int{1, 3, 4, 3}
		b.g.AddNode(&graph.Node{Name: "resize", Op: graph.Resize, Inputs: []string{x}, Outputs: []string{y},
			Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "align_corners"}})
		z := b.act(0.05, -2)
		b.g.Tensor(z).Shape = []int{1, 5, 9, 3}
		b.g.AddNode(&graph.Node{Name: "resize2", Op: graph.Resize, Inputs: []string{y}, Outputs: []string{z},
			Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "asymmetric"}})
		return b.done(z)
	}},
	{"resize_cubic", true, func(b *builder) (*graph.Graph, error) {
		// Up with edge taps, down with the outside taps excluded and
		// a = -0.5, and by align_corners (whole coordinates: t = 1).
		x := b.input([]int{1, 6, 5, 2}, 0, 0)
		resize := func(in string, h, w int, a graph.ResizeAttrs) string {
			y := b.act(0, 0)
			b.g.Tensor(y).Shape = []int{1, h, w, 2}
			b.g.AddNode(&graph.Node{Name: y, Op: graph.Resize, Inputs: []string{in}, Outputs: []string{y}, Attrs: &a})
			return y
		}
		up := resize(x, 9, 8, graph.ResizeAttrs{Mode: "cubic", Coord: "half_pixel", CubicA: -0.75})
		down := resize(x, 4, 3, graph.ResizeAttrs{Mode: "cubic", Coord: "half_pixel", CubicA: -0.5, ExcludeOutside: true})
		corners := resize(x, 11, 9, graph.ResizeAttrs{Mode: "cubic", Coord: "align_corners"}) // a = 0
		return b.done(up, down, corners)
	}},
	{"conv_then_table", false, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{1, 5, 5, 3}, 0.05, 1)
		c := b.node(graph.Conv2D, conv(1, 1, 1, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActNone), 0.08, 2,
			x, b.weights("w", []int{4, 3, 3, 3}), b.bias("b", 4))
		s := b.node(graph.Sigmoid, nil, 1.0/256, -128, c)
		a := b.node(graph.Add, nil, 0.05, 0, x, x)
		h := b.node(graph.Tanh, nil, 1.0/128, 0, a)
		return b.done(s, h)
	}},
	{"quantize", true, func(b *builder) (*graph.Graph, error) {
		x := b.input([]int{3, 7}, 0, 0)
		q := b.act(0, 0)
		b.g.Tensor(q).DType = graph.Int8
		b.g.Tensor(q).Quant = &graph.Quant{Scale: []float32{0.02}, ZeroPoint: []int32{-5}}
		b.g.AddNode(&graph.Node{Name: "quantize", Op: graph.Quantize, Inputs: []string{x}, Outputs: []string{q}})
		rq := b.act(0, 0)
		b.g.Tensor(rq).DType = graph.Int8
		b.g.Tensor(rq).Quant = &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{9}}
		b.g.AddNode(&graph.Node{Name: "requantize", Op: graph.Quantize, Inputs: []string{q}, Outputs: []string{rq}})
		dq := b.act(0, 0)
		b.g.AddNode(&graph.Node{Name: "dequantize", Op: graph.Dequantize, Inputs: []string{rq}, Outputs: []string{dq}})
		return b.done(dq, q)
	}},
}

// Conv3x3 is one int8 3x3 convolution (group 1 or c: depthwise, stride 1
// or 2, padding 1) over 6x6xc with per-channel weight scales, an output zero point yzp and
// activation act: the shapes the dsp target's algorithm knobs (Winograd,
// planar depthwise) take, for tests that build and run their C.
func Conv3x3(c, group, stride int, act graph.Activation, yzp int32) *graph.Graph {
	return Conv3x3Size(6, 6, c, group, stride, act, yzp)
}

// Conv3x3Size is Conv3x3 over an h×wd×c input: other output widths, for the
// kernels whose C steps over several output columns at a time.
func Conv3x3Size(h, wd, c, group, stride int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, wd, c, c, 3, group, stride, 1, act, yzp)
}

// convGraph is a k×k convolution cin → cout (group groups, stride, padding
// pad on every side) over an h×wd input: deterministic weights across the
// int8 range, per-channel scales, small biases, input zero point -3.
func convGraph(h, wd, cin, cout, k, group, stride, pad int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, cin, cout, k, k, group, stride, graph.Padding{Top: pad, Left: pad, Bottom: pad, Right: pad}, act, yzp)
}

// ConvRect is a kh×kw convolution cin → cout at stride 1 with the padding
// that keeps the size (kh/2 and kw/2 each side): kh = 1 is a 1-D
// convolution along W.
func ConvRect(h, wd, cin, cout, kh, kw int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, cin, cout, kh, kw, 1, 1, graph.Padding{Top: kh / 2, Bottom: kh / 2, Left: kw / 2, Right: kw / 2}, act, yzp)
}

// ConvRectPad is a kh×kw convolution cin → cout at stride with the given
// padding: KWS's 10×4 stride-2 first layer over one channel is
// ConvRectPad(49, 10, 1, 64, 10, 4, 2, graph.Padding{Top: 4, Bottom: 5, Left: 1, Right: 1}, …).
func ConvRectPad(h, wd, cin, cout, kh, kw, stride int, pad graph.Padding, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, cin, cout, kh, kw, 1, stride, pad, act, yzp)
}

// convGraphRect is convGraph for a kh×kw kernel and any padding.
func convGraphRect(h, wd, cin, cout, kh, kw, group, stride int, pad graph.Padding, act graph.Activation, yzp int32) *graph.Graph {
	g := graph.New("alg", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, wd, cin}, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	w := graph.NewData(graph.Int8, []int{cout, kh, kw, cin / group})
	for i := range w.I {
		w.I[i] = int64(i*37%255 - 127)
	}
	ws := make([]float32, cout)
	for i := range ws {
		ws[i] = 0.002 + 0.001*float32(i%5)
	}
	g.AddConst("w", w).Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, cout)}
	b := graph.NewData(graph.Int32, []int{cout})
	for i := range b.I {
		b.I[i] = int64(50*i - 100)
	}
	g.AddConst("b", b)
	oh, ow := (h+pad.Top+pad.Bottom-kh)/stride+1, (wd+pad.Left+pad.Right-kw)/stride+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, cout}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{yzp}}})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{1, 1}, Pad: pad, Group: group, Act: act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// ConvK is a k×k convolution (padding 1) from an h×wd×cin input to cout
// channels.
func ConvK(h, wd, cin, cout, k, stride int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, wd, cin, cout, k, 1, stride, 1, act, yzp)
}

// DepthwiseK is a k×k depthwise convolution over h×wd×c at stride, padding
// pad on every side.
func DepthwiseK(h, wd, c, k, stride, pad int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, wd, c, c, k, c, stride, pad, act, yzp)
}

// DepthwisePad is DepthwiseK with the padding pad (any, ONNX's explicit
// pads: a left padding as wide as the row, say).
func DepthwisePad(h, wd, c, k, stride int, pad graph.Padding, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, c, c, k, k, c, stride, pad, act, yzp)
}

// DepthwiseRect is a kh×kw depthwise convolution over h×wd×c at stride,
// padding pad.
func DepthwiseRect(h, wd, c, kh, kw, stride int, pad graph.Padding, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, c, c, kh, kw, c, stride, pad, act, yzp)
}

// DepthwiseMult is a k×k depthwise convolution with a depth multiplier m
// (cin·m output channels, output channel oc over input channel oc/m) over
// h×wd×cin at stride, padding pad on every side.
func DepthwiseMult(h, wd, cin, m, k, stride, pad int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, wd, cin, cin*m, k, cin, stride, pad, act, yzp)
}

// ConvRGB is a 3×3 convolution (padding 1) from an h×wd×3 input to cout
// channels, as a network's first layer over an RGB image.
func ConvRGB(h, wd, cout, stride int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, wd, 3, cout, 3, 1, stride, 1, act, yzp)
}

// ConvRGBPad is ConvRGB with the padding pad (TensorFlow's SAME at stride
// 2 over an even size pads only the bottom and the right).
func ConvRGBPad(h, wd, cout, stride int, pad graph.Padding, act graph.Activation, yzp int32) *graph.Graph {
	return convGraphRect(h, wd, 3, cout, 3, 3, 1, stride, pad, act, yzp)
}

// Pointwise is a 1×1 convolution cin → cout over an h×w input with a ReLU
// (output zero point -128), Conv3x3Size's weights, scales and biases.
func Pointwise(h, w, cin, cout int) *graph.Graph {
	return convGraph(h, w, cin, cout, 1, 1, 1, 0, graph.ActRelu, -128)
}

// Conv1x1 is Pointwise with activation act and output zero point yzp.
func Conv1x1(h, w, cin, cout int, act graph.Activation, yzp int32) *graph.Graph {
	return convGraph(h, w, cin, cout, 1, 1, 1, 0, act, yzp)
}

// DeadChain is a pointwise convolution (8 → 8 channels, ReLU) whose output
// channels in dead have all-zero weights, followed by a 3×3 depthwise
// convolution and a 2×2 average pool, then by tail: "conv" (a pointwise
// convolution 8 → 5, the graph output), "fc" (a reshape to [1, 72] is not
// channel-preserving, so: a global 3×3 average pool, a reshape to [1, 8]
// and a fully connected 8 → 4), or "add" (the pool's output added to
// itself: not a channel-wise chain). For graph.PermuteDeadChannels and the
// dead-channel schedules.
func DeadChain(seed int64, dead []int, tail string) *graph.Graph {
	b := &builder{g: graph.New("dead", "tflite"), r: rand.New(rand.NewSource(seed)), int8: true}
	x := b.input([]int{1, 6, 6, 8}, 0.05, -3)
	w1 := b.weights("w1", []int{8, 1, 1, 8})
	for _, oc := range dead {
		for k := 0; k < 8; k++ {
			b.g.Tensors[w1].Data.I[oc*8+k] = 0
		}
	}
	one := [2]int{1, 1}
	t1 := b.node(graph.Conv2D, &graph.Conv2DAttrs{Stride: one, Dilation: one, Group: 1, Act: graph.ActRelu}, 0.08, -128, x, w1, b.bias("b1", 8))
	t2 := b.node(graph.Conv2D, &graph.Conv2DAttrs{Stride: one, Dilation: one, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, Group: 8, Act: graph.ActRelu},
		0.1, -128, t1, b.weights("w2", []int{8, 3, 3, 1}), b.bias("b2", 8))
	t3 := b.node(graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: one}, 0.1, -128, t2)
	var y string
	switch tail {
	case "conv":
		y = b.node(graph.Conv2D, &graph.Conv2DAttrs{Stride: one, Dilation: one, Group: 1}, 0.2, 3, t3, b.weights("w3", []int{5, 1, 1, 8}), b.bias("b3", 5))
	case "fc":
		t4 := b.node(graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{3, 3}, Dilation: one}, 0.1, -128, t3)
		b.g.AddTensor(&graph.Tensor{Name: "flat", DType: graph.Int8, Shape: []int{1, 8}, Quant: b.q(0.1, -128)})
		b.g.AddNode(&graph.Node{Name: "reshape", Op: graph.Reshape, Inputs: []string{t4}, Outputs: []string{"flat"}})
		y = b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{}, 0.2, 3, "flat", b.weights("w3", []int{4, 8}), b.bias("b3", 4))
	case "add":
		y = b.node(graph.Add, nil, 0.2, 3, t3, t3)
	}
	g, err := b.done(y)
	if err != nil {
		panic(err)
	}
	return g
}

// SignalFront is x (int16, shape) -> one of the signal library's front ops
// (SignalWindow, SignalFftAutoScale, SignalRfft, SignalEnergy) -> y; a
// window, when given, is the op's constant second input. y's type is the
// exponent's int32 scalar for SignalFftAutoScale's Bits form, else left to
// shape inference.
func SignalFront(op graph.Op, attrs any, shape []int, window []int64) *graph.Graph {
	g := graph.New("signal", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int16, Shape: shape})
	g.Inputs = []string{"x"}
	ins := []string{"x"}
	if window != nil {
		d := graph.NewData(graph.Int16, []int{len(window)})
		copy(d.I, window)
		g.AddConst("window", d)
		ins = append(ins, "window")
	}
	out := &graph.Tensor{Name: "y"}
	if a, ok := attrs.(*graph.SignalFftAutoScaleAttrs); ok && a.Bits {
		out.DType, out.Shape = graph.Int32, []int{}
	}
	g.AddTensor(out)
	g.AddNode(&graph.Node{Name: "y", Op: op, Attrs: attrs, Inputs: ins, Outputs: []string{"y"}})
	g.Outputs = []string{"y"}
	return g
}

// MaxPool is an int8 k×k max pool over h×wd×c at stride, padding pad,
// activation act (input and output quantized alike, as TFLite's).
func MaxPool(h, wd, c, k, stride int, pad graph.Padding, act graph.Activation) *graph.Graph {
	return pool(graph.MaxPool2D, h, wd, c, k, stride, pad, false, act)
}

// AvgPool is MaxPool's average pool, the padded elements in the divisor
// where countPad.
func AvgPool(h, wd, c, k, stride int, pad graph.Padding, countPad bool, act graph.Activation) *graph.Graph {
	return pool(graph.AvgPool2D, h, wd, c, k, stride, pad, countPad, act)
}

func pool(op graph.Op, h, wd, c, k, stride int, pad graph.Padding, countPad bool, act graph.Activation) *graph.Graph {
	g := graph.New("pool", "tflite")
	q := func() *graph.Quant { return &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, wd, c}, Quant: q()})
	oh, ow := (h+pad.Top+pad.Bottom-k)/stride+1, (wd+pad.Left+pad.Right-k)/stride+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, c}, Quant: q()})
	g.AddNode(&graph.Node{Name: "pool", Op: op, Inputs: []string{"x"}, Outputs: []string{"y"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{k, k}, Stride: [2]int{stride, stride}, Dilation: [2]int{1, 1}, Pad: pad, CountIncludePad: countPad, Act: act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}
