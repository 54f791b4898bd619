package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// model16x8 is a TFLite model quantized in TFLite's 16x8 scheme (int16
// activations with zero point 0, int8 weights, int64 or int32 biases):
//
//	x [1,8,8,10] -> conv 3x3 SAME, 10 channels, int64 bias, ReLU -> c1
//	c1 -> depthwise 3x3 SAME stride 2, no bias -> d
//	d -> conv 1x1, int32 bias (32-bit accumulator) -> e;  d + e -> f
//	f -> average pool 2x2 -> reshape [1,40] -> FC 6, int64 bias -> o1 -> o1*o1 -> softmax -> out1
//	x -> reshape [1,640] -> FC 4, no bias (64-bit) -> out2
//
// out2's first row of weights is all 127: on an input at full scale (the
// extreme vectors) its sum is 640 * 127 * 32767, past 2^31, which only a
// 64-bit accumulator holds.
func model16x8(floatIO bool) *tg.Model {
	r := tg.NewRand(16)
	m := &tg.Model{}
	act := func(name string, scale float32, shape ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int16, Shape: shape, Scale: []float32{scale}, ZeroPoint: []int64{0}})
	}
	weights := func(name string, shape []int32, all127 int) int32 {
		n, per := int(shape[0]), 1
		for _, d := range shape[1:] {
			per *= int(d)
		}
		v := make([]int8, n*per)
		scales := make([]float32, n)
		zps := make([]int64, n)
		for i := range v {
			v[i] = r.Int8(-127, 127)
			if i/per < all127 {
				v[i] = 127
			}
		}
		for c := range scales {
			scales[c] = 0.004 * float32(1+c%3)
		}
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int8, Shape: shape, Scale: scales, ZeroPoint: zps, Data: tg.I8Bytes(v...)})
	}
	bias64 := func(name string, n int) int32 {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(r.Int8(-127, 127)) << 14
		}
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int64, Shape: []int32{int32(n)}, Data: tg.I64Bytes(v...)})
	}
	shape := func(name string, dims ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int32, Shape: []int32{int32(len(dims))}, Data: tg.I32Bytes(dims...)})
	}
	x := act("x", 1.0/1024, 1, 8, 8, 10)
	var xf int32
	if floatIO {
		xf = m.AddTensor(tg.Tensor{Name: "xf", Type: tg.Float32, Shape: []int32{1, 8, 8, 10}})
		m.AddOp(tg.OpQuantize, nil, []int32{xf}, x)
	}
	c1 := act("c1", 1.0/64, 1, 8, 8, 10)
	m.AddOp(tg.OpConv2D, tg.Conv2DOptions(tg.Same, 1, 1, tg.ActRelu, 1, 1), []int32{x, weights("w1", []int32{10, 3, 3, 10}, 0), bias64("b1", 10)}, c1)
	d := act("d", 1.0/32, 1, 4, 4, 10)
	m.AddOp(tg.OpDepthwiseConv2D, tg.DepthwiseOptions(tg.Same, 2, 2, 1, tg.ActNone, 1, 1), []int32{c1, weights("wd", []int32{1, 3, 3, 10}, 0), -1}, d)
	e := act("e", 1.0/16, 1, 4, 4, 10)
	b2 := make([]int32, 10)
	for i := range b2 {
		b2[i] = int32(r.Int8(-127, 127)) * 1000
	}
	bt2 := m.AddTensor(tg.Tensor{Name: "b2", Type: tg.Int32, Shape: []int32{10}, Data: tg.I32Bytes(b2...)})
	m.AddOp(tg.OpConv2D, tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1), []int32{d, weights("w2", []int32{10, 1, 1, 10}, 0), bt2}, e)
	f := act("f", 1.0/16, 1, 4, 4, 10)
	m.AddOp(tg.OpAdd, tg.ActOptions(tg.OptAdd, tg.ActNone), []int32{d, e}, f)
	p := act("p", 1.0/16, 1, 2, 2, 10)
	m.AddOp(tg.OpAveragePool2D, tg.Pool2DOptions(tg.Valid, 2, 2, 2, 2, tg.ActNone), []int32{f}, p)
	pr := act("pr", 1.0/16, 1, 40)
	m.AddOp(tg.OpReshape, nil, []int32{p, shape("s1", 1, 40)}, pr)
	o1 := act("o1", 1.0/8, 1, 6)
	m.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(tg.ActNone, false), []int32{pr, weights("wf1", []int32{6, 40}, 0), bias64("bf1", 6)}, o1)
	sq := act("sq", 64, 1, 6)
	m.AddOp(tg.OpMul, tg.ActOptions(tg.OptMul, tg.ActNone), []int32{o1, o1}, sq)
	out1 := act("out1", 1.0/32768, 1, 6)
	m.AddOp(tg.OpSoftmax, &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 0.000006)}}, []int32{sq}, out1)
	cr := act("cr", 1.0/1024, 1, 640)
	m.AddOp(tg.OpReshape, nil, []int32{x, shape("s2", 1, 640)}, cr)
	out2 := act("out2", 1, 1, 4)
	m.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(tg.ActNone, false), []int32{cr, weights("wf2", []int32{4, 640}, 1), -1}, out2)
	m.Inputs, m.Outputs = []int32{x}, []int32{out1, out2}
	if floatIO {
		// As the converter writes a 16x8 model with float inputs and
		// outputs: QUANTIZE to int16 first, DEQUANTIZE last.
		o1f := m.AddTensor(tg.Tensor{Name: "out1f", Type: tg.Float32, Shape: []int32{1, 6}})
		m.AddOp(tg.OpDequantize, nil, []int32{out1}, o1f)
		m.Inputs, m.Outputs = []int32{xf}, []int32{o1f, out2}
	}
	return m
}

// A 16x8 model, with int16 or float inputs and outputs, runs bit-exactly
// with the reference interpreter on every target: the int16 layers take the generic schedules (the SIMD ones are
// int8 only), with 64-bit accumulators where the bias is int64 or absent.
func TestInt16x8UnderQEMU(t *testing.T) {
	t.Parallel()
	g, err := tflite.Decode("m16x8", model16x8(false).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	gf, err := tflite.Decode("m16x8f", model16x8(true).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Op == graph.FullyConnected && g.In(n, 0).Shape[len(g.In(n, 0).Shape)-1] == 640 && g.In(n, 0).DType != graph.Int16 {
			t.Fatalf("%s's input is %s", n.Name, g.In(n, 0).DType)
		}
	}
	for _, c := range []struct{ board, target string }{
		{"host", ""}, {"mps2-an385", "generic"}, {"mps2-an386", "dsp"}, {"mps3-an547", "mve"}, {"aarch64-linux", "neon"},
	} {
		t.Run(c.board, func(t *testing.T) {
			var b = hostOrQEMU(t, c.board)
			checkGraphUnderQEMU(t, b, g, "m16x8", c.target, nil, 6, 5, "requant64(")
			checkGraphUnderQEMU(t, b, gf, "m16x8f", c.target, nil, 6, 5, "requant64(")
		})
	}
}

// The hand-worked 16x8 operator models (importer/tflite's int16Cases, whose
// reference results are worked by hand there) run bit-exactly on the M4.
func TestInt16x8OpsOnM4(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	models, _ := filepath.Glob("../testdata/tflite/op_int16_*.tflite")
	if len(models) < 6 {
		t.Fatalf("%d op_int16 models", len(models))
	}
	for _, path := range models {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			g, err := tflite.Decode(filepath.Base(path), data)
			if err != nil {
				t.Fatal(err)
			}
			checkGraphUnderQEMU(t, b, g, "op16", "", nil, 8, 3, "requant")
		})
	}
}
