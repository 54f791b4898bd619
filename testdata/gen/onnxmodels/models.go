// Package onnxmodels defines mcugen's own ONNX test models: small CNNs and
// MLPs with deterministic random weights that together cover every canonical
// op. The files under testdata/onnx/ are written from here by
// `go test ./importer/onnx -run TestModelFiles -update`.
package onnxmodels

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Model is one named test model.
type Model struct {
	Name  string
	Model *onnx.Model
}

// All returns every test model, in a fixed order.
func All() []Model {
	return []Model{
		{"cnn", CNN()},
		{"resnet", ResNet()},
		{"mlp", MLP()},
		{"matmul", MatMul()},
		{"qdq_conv", QDQConv()},
		{"qlinear", QLinear()},
		{"shape_arith", ShapeArith()},
		{"tf_nhwc", TFNHWC()},
	}
}

var (
	f32 = graph.Float32
	i64 = onnx.IntsAttr
	in  = onnx.IntAttr
)

// CNN: Conv+BatchNorm+Relu, MaxPool, depthwise Conv+Clip(0,6), pointwise
// Conv, GlobalAveragePool, Flatten, Gemm, Softmax. Input [1,3,16,16].
// MACs: 8*16*16*27 + 8*8*8*9 + 16*8*8*8 + 10*16 = 55296+4608+8192+160 = 68256.
func CNN() *onnx.Model {
	b := onnx.NewBuilder("cnn", 13, 1)
	x := b.Input("image", f32, 1, 3, 16, 16)
	c := b.Node("Conv", []string{x, b.Rand("conv1.w", 0.5, 8, 3, 3, 3), b.Rand("conv1.b", 0.1, 8)},
		i64("kernel_shape", 3, 3), i64("pads", 1, 1, 1, 1))
	gamma := b.Rand("bn.gamma", 0.5, 8)
	bn := b.Node("BatchNormalization", []string{c, gamma, b.Rand("bn.beta", 0.2, 8), b.Rand("bn.mean", 0.2, 8), positive(b, "bn.var", 8)})
	r := b.Node("Relu", []string{bn})
	p := b.Node("MaxPool", []string{r}, i64("kernel_shape", 2, 2), i64("strides", 2, 2))
	d := b.Node("Conv", []string{p, b.Rand("dw.w", 0.5, 8, 1, 3, 3), b.Rand("dw.b", 0.1, 8)},
		i64("kernel_shape", 3, 3), i64("pads", 1, 1, 1, 1), in("group", 8))
	cl := b.Node("Clip", []string{d, b.Scalar("clip.min", f32, 0), b.Scalar("clip.max", f32, 6)})
	pw := b.Node("Conv", []string{cl, b.Rand("pw.w", 0.5, 16, 8, 1, 1), b.Rand("pw.b", 0.1, 16)})
	g := b.Node("GlobalAveragePool", []string{pw})
	f := b.Node("Flatten", []string{g})
	fc := b.Node("Gemm", []string{f, b.Rand("fc.w", 0.5, 10, 16), b.Rand("fc.b", 0.1, 10)}, in("transB", 1))
	s := b.Node("Softmax", []string{fc}, in("axis", 1))
	b.Output(s, f32, 1, 10)
	return b.Model()
}

func positive(b *onnx.Builder, name string, n int) string {
	d := graph.NewData(graph.Float32, []int{n})
	for i := range d.F {
		d.F[i] = 0.5 + 0.1*float32(i)
	}
	return b.Init(name, d)
}

// ResNet: a residual block (Add), a concat of two branches, HardSwish,
// LeakyRelu, AveragePool, Pad, Resize, Sigmoid, Mul/Sub/Div/Max/Min with
// constants, HardSigmoid, Slice, ReduceMean, Transpose, Reshape, Tanh and a
// MatMul with constant weights. Input [1,4,8,8].
// MACs: stem 8*64*36 + two block convs 2*8*64*72 + 1x1 branch 4*64*8 +
// 3x3 branch 4*64*72 + head 6*80 = 18432+73728+2048+18432+480 = 113120.
func ResNet() *onnx.Model {
	b := onnx.NewBuilder("resnet", 14, 2)
	x := b.Input("input", f32, 1, 4, 8, 8)
	conv := func(x string, name string, cin, cout, k int) string {
		pad := int64(k / 2)
		return b.Node("Conv", []string{x, b.Rand(name+".w", 0.4, cout, cin, k, k), b.Rand(name+".b", 0.1, cout)},
			i64("kernel_shape", int64(k), int64(k)), i64("pads", pad, pad, pad, pad))
	}
	a := b.Node("Relu", []string{conv(x, "stem", 4, 8, 3)})
	r1 := b.Node("Relu", []string{conv(a, "block.conv1", 8, 8, 3)})
	r2 := conv(r1, "block.conv2", 8, 8, 3)
	res := b.Node("Relu", []string{b.Node("Add", []string{r2, a})})
	cat := b.Node("Concat", []string{conv(res, "branch1", 8, 4, 1), conv(res, "branch3", 8, 4, 3)}, in("axis", 1))
	hs := b.Node("HardSwish", []string{cat})
	lr := b.Node("LeakyRelu", []string{hs}, onnx.FloatAttr("alpha", 0.1))
	ap := b.Node("AveragePool", []string{lr}, i64("kernel_shape", 2, 2), i64("strides", 2, 2))
	pd := b.Node("Pad", []string{ap, b.Ints("pad.pads", 0, 0, 1, 1, 0, 0, 1, 1)})
	rs := b.Node("Resize", []string{pd, "", b.Floats("resize.scales", 1, 1, 2, 2)}, onnx.StringAttr("mode", "nearest"))
	sg := b.Node("Sigmoid", []string{rs})
	m := b.Node("Mul", []string{sg, b.Rand("mul.c", 1, 8, 1, 1)})
	sb := b.Node("Sub", []string{m, b.Scalar("sub.c", f32, 0.25)})
	dv := b.Node("Div", []string{sb, b.Floats("div.c", 2)})
	mx := b.Node("Max", []string{dv, b.Scalar("max.c", f32, -0.3)})
	mn := b.Node("Min", []string{mx, b.Rand("min.c", 1, 12)})
	hsg := b.Node("HardSigmoid", []string{mn}, onnx.FloatAttr("alpha", 0.3))
	sl := b.Node("Slice", []string{hsg, b.Ints("slice.starts", 1, 1), b.Ints("slice.ends", 11, 11), b.Ints("slice.axes", 2, 3)})
	rm := b.Node("ReduceMean", []string{sl}, i64("axes", 2), in("keepdims", 1))
	tr := b.Node("Transpose", []string{rm}, i64("perm", 0, 3, 1, 2))
	rsh := b.Node("Reshape", []string{tr, b.Ints("reshape.shape", 1, -1)})
	th := b.Node("Tanh", []string{rsh})
	mm := b.Node("MatMul", []string{th, b.Rand("head.w", 0.3, 80, 6)})
	b.Output(mm, f32, 1, 6)
	return b.Model()
}

// MLP: Gemm (transB), Relu, MatMul + Add, Tanh, Gemm with alpha, beta and an
// untransposed B, Sigmoid. Input [1,64].
// MACs: 32*64 + 16*32 + 4*16 = 2048+512+64 = 2624.
func MLP() *onnx.Model {
	b := onnx.NewBuilder("mlp", 13, 3)
	x := b.Input("features", f32, 1, 64)
	h := b.Node("Gemm", []string{x, b.Rand("fc1.w", 0.3, 32, 64), b.Rand("fc1.b", 0.1, 32)}, in("transB", 1))
	h = b.Node("Relu", []string{h})
	h = b.Node("MatMul", []string{h, b.Rand("fc2.w", 0.3, 32, 16)})
	h = b.Node("Add", []string{h, b.Rand("fc2.b", 0.1, 16)})
	h = b.Node("Tanh", []string{h})
	h = b.Node("Gemm", []string{h, b.Rand("fc3.w", 0.3, 16, 4), b.Rand("fc3.b", 0.1, 4)},
		onnx.FloatAttr("alpha", 0.5), onnx.FloatAttr("beta", 2))
	y := b.Node("Sigmoid", []string{h})
	b.Output(y, f32, 1, 4)
	return b.Model()
}

// MatMul: a MatMul of two activations (BatchMatMul), Unsqueeze, Squeeze and
// Softmax on the last axis, with a free batch dimension. Inputs [N,4,8] and [N,8,5].
func MatMul() *onnx.Model {
	b := onnx.NewBuilder("matmul", 13, 4)
	a := b.Input("a", f32, -1, 4, 8)
	c := b.Input("b", f32, -1, 8, 5)
	m := b.Node("MatMul", []string{a, c})
	u := b.Node("Unsqueeze", []string{m, b.Ints("unsq.axes", 1)})
	s := b.Node("Squeeze", []string{u, b.Ints("sq.axes", 1)})
	y := b.Node("Softmax", []string{s}, in("axis", -1))
	b.Output(y, f32)
	return b.Model()
}

// QDQConv: a QDQ-quantized conv (QuantizeLinear/DequantizeLinear around a
// float Conv with int8 per-channel weights and int32 bias), Relu.
// Input [1,3,8,8]; MACs 4*8*8*27 = 6912.
func QDQConv() *onnx.Model {
	b := onnx.NewBuilder("qdq_conv", 13, 5)
	x := b.Input("x", f32, 1, 3, 8, 8)
	i8 := func(name string, v float64) string { return b.Scalar(name, graph.Int8, v) }
	q := b.Node("QuantizeLinear", []string{x, b.Scalar("x.scale", f32, 0.02), i8("x.zp", 3)})
	dq := b.Node("DequantizeLinear", []string{q, "x.scale", "x.zp"})
	w := graph.NewData(graph.Int8, []int{4, 3, 3, 3})
	for i := range w.I {
		w.I[i] = int64((i*37)%255 - 127)
	}
	ws := []float32{0.004, 0.005, 0.003, 0.006}
	wdq := b.Node("DequantizeLinear", []string{b.Init("w.q", w), b.Floats("w.scale", ws...), b.Init("w.zp", graph.NewData(graph.Int8, []int{4}))}, in("axis", 0))
	bias := &graph.Data{DType: graph.Int32, Shape: []int{4}, I: []int64{1000, -500, 250, 0}}
	bs := make([]float32, 4)
	for i := range bs {
		bs[i] = 0.02 * ws[i]
	}
	bdq := b.Node("DequantizeLinear", []string{b.Init("b.q", bias), b.Floats("b.scale", bs...)}, in("axis", 0))
	c := b.Node("Conv", []string{dq, wdq, bdq}, i64("kernel_shape", 3, 3), i64("pads", 1, 1, 1, 1))
	r := b.Node("Relu", []string{c})
	q2 := b.Node("QuantizeLinear", []string{r, b.Scalar("y.scale", f32, 0.05), i8("y.zp", -128)})
	y := b.Node("DequantizeLinear", []string{q2, "y.scale", "y.zp"})
	b.Output(y, f32, 1, 4, 8, 8)
	return b.Model()
}

// QLinear: QLinearConv on uint8, Reshape, QLinearMatMul, DequantizeLinear.
// Input uint8 [1,2,6,6]; MACs 3*4*4*18 + 5*48 = 864+240 = 1104.
func QLinear() *onnx.Model {
	b := onnx.NewBuilder("qlinear", 13, 6)
	x := b.Input("x", graph.UInt8, 1, 2, 6, 6)
	u8 := func(name string, v float64) string { return b.Scalar(name, graph.UInt8, v) }
	w := graph.NewData(graph.UInt8, []int{3, 2, 3, 3})
	for i := range w.I {
		w.I[i] = int64((i * 53) % 256)
	}
	bias := &graph.Data{DType: graph.Int32, Shape: []int{3}, I: []int64{-300, 120, 40}}
	c := b.Node("QLinearConv", []string{x, b.Scalar("x.scale", f32, 0.03), u8("x.zp", 128),
		b.Init("w", w), b.Floats("w.scale", 0.01, 0.02, 0.015), b.Init("w.zp", &graph.Data{DType: graph.UInt8, Shape: []int{3}, I: []int64{120, 128, 135}}),
		b.Scalar("c.scale", f32, 0.4), u8("c.zp", 100), b.Init("bias", bias)})
	r := b.Node("Reshape", []string{c, b.Ints("shape", 1, 48)})
	m := graph.NewData(graph.UInt8, []int{48, 5})
	for i := range m.I {
		m.I[i] = int64((i * 29) % 256)
	}
	mm := b.Node("QLinearMatMul", []string{r, "c.scale", "c.zp", b.Init("m", m), b.Scalar("m.scale", f32, 0.01), u8("m.zp", 127),
		b.Scalar("y.scale", f32, 0.5), u8("y.zp", 90)})
	y := b.Node("DequantizeLinear", []string{mm, "y.scale", "y.zp"})
	b.Output(y, f32, 1, 5)
	return b.Model()
}

// ShapeArith: the PyTorch export pattern of a flatten through shape
// arithmetic (Shape, Gather, Unsqueeze, Concat, Cast, Reshape), with
// Constant, Identity and Dropout nodes, all folded at import. Input [1,8,4,4];
// MACs 4*4*4*72 + 3*64 = 4608+192 = 4800.
func ShapeArith() *onnx.Model {
	b := onnx.NewBuilder("shape_arith", 13, 7)
	x := b.Input("x", f32, 1, 8, 4, 4)
	w := b.Node("Constant", nil, onnx.TensorAttr("value", randData(b, []int{4, 8, 3, 3})))
	c := b.Node("Conv", []string{x, w}, i64("kernel_shape", 3, 3), i64("pads", 1, 1, 1, 1))
	c = b.Node("Identity", []string{c})
	c = b.Node("Dropout", []string{c})
	sh := b.Node("Shape", []string{c})
	n := b.Node("Gather", []string{sh, b.Scalar("zero", graph.Int64, 0)}, in("axis", 0))
	n = b.Node("Unsqueeze", []string{n, b.Ints("axes0", 0)})
	minus1 := b.Node("Cast", []string{b.Floats("minus1", -1)}, in("to", 7))
	shape := b.Node("Concat", []string{n, minus1}, in("axis", 0))
	r := b.Node("Reshape", []string{c, shape})
	y := b.Node("Gemm", []string{r, b.Rand("fc.w", 0.2, 64, 3)})
	b.Output(y, f32, 1, 3)
	return b.Model()
}

func randData(b *onnx.Builder, shape []int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32((i*13)%17-8) / 16
	}
	return d
}

// TFNHWC: the tf2onnx pattern of an NHWC model input transposed to NCHW
// around the convs and back before the classifier. Imported, the
// transposes cancel: the graph has none. Input [1,6,6,3];
// MACs 4*6*6*27 + 4*3*3*36 + 5*36 = 3888+1296+180 = 5364.
func TFNHWC() *onnx.Model {
	b := onnx.NewBuilder("tf_nhwc", 13, 8)
	x := b.Input("input_1", f32, 1, 6, 6, 3)
	t := b.Node("Transpose", []string{x}, i64("perm", 0, 3, 1, 2))
	c := b.Node("Conv", []string{t, b.Rand("c1.w", 0.5, 4, 3, 3, 3), b.Rand("c1.b", 0.1, 4)}, i64("kernel_shape", 3, 3), i64("pads", 1, 1, 1, 1))
	c = b.Node("Relu", []string{c})
	c = b.Node("Conv", []string{c, b.Rand("c2.w", 0.5, 4, 4, 3, 3), b.Rand("c2.b", 0.1, 4)}, i64("kernel_shape", 3, 3), i64("strides", 2, 2), i64("pads", 1, 1, 1, 1))
	t = b.Node("Transpose", []string{c}, i64("perm", 0, 2, 3, 1))
	r := b.Node("Reshape", []string{t, b.Ints("shape", 1, -1)})
	y := b.Node("MatMul", []string{r, b.Rand("fc.w", 0.3, 36, 5)})
	b.Output(y, f32, 1, 5)
	return b.Model()
}
