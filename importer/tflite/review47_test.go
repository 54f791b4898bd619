package tflite_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Files a structural mutator wrote from valid models (review findings):
// each imported, some then crashing the interpreter or computing what
// TFLite never would; TFLite's InterpreterBuilder or kernels refuse them,
// and so does the importer now, in one line each.

// q8 is an int8 (or other typed) activation quantized per tensor.
func q8(name string, typ int8, shape ...int32) tg.Tensor {
	return tg.Tensor{Name: name, Type: typ, Shape: shape, Scale: []float32{0.5}, ZeroPoint: []int64{0}}
}

// int8Weighted is a one-operator int8 CONV_2D (x [1,1,1,2], weights
// [2,1,1,2]) or FULLY_CONNECTED (x [1,2], weights [2,2]) with weights w,
// output y and, where given, bias b.
func int8Weighted(conv bool, w tg.Tensor, y tg.Tensor, b *tg.Tensor) *tg.Model {
	m := &tg.Model{}
	xs, code, opt := []int32{1, 2}, int32(tg.OpFullyConnected), tg.FullyConnectedOptions(tg.ActNone, false)
	if conv {
		xs, code, opt = []int32{1, 1, 1, 2}, tg.OpConv2D, tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1)
	}
	x := m.AddTensor(q8("x", tg.Int8, xs...))
	wi := m.AddTensor(w)
	bi := int32(-1)
	if b != nil {
		bi = m.AddTensor(*b)
	}
	return one(m, code, opt, []int32{x, wi, bi}, m.AddTensor(y))
}

func weights(name string, typ int8, shape []int32, scales []float32, axis int32) tg.Tensor {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	t := tg.Tensor{Name: name, Type: typ, Shape: shape, Data: make([]byte, n), Scale: scales, QuantDim: axis}
	if typ == tg.BoolT || typ == tg.UInt8 || typ == tg.Int8 {
		t.Data = tg.I8Bytes(make([]int8, n)...)
	}
	t.ZeroPoint = make([]int64, len(scales))
	return t
}

// F1: per-channel weights are read along the output channels (dimension
// 0; 3 for DEPTHWISE_CONV_2D), whatever quantized_dimension says, as
// TFLite's kernels read them; scales that are not one per output channel
// indexed past them in the interpreter (review finding), and are refused.
func TestReview47PerChannelAxis(t *testing.T) {
	w := weights("w", tg.Int8, []int32{2, 1, 1, 3}, []float32{0.1, 0.2, 0.3}, 3)
	mustErr(t, "conv axis 3", int8Weighted(true, w, q8("y", tg.Int8, 1, 1, 1, 2), nil).Bytes(),
		`operator 0 (CONV_2D): filter "w" has 3 scales along axis 3; CONV_2D wants one, or one per output channel (axis 0)`)
	w = weights("w", tg.Int8, []int32{2, 3}, []float32{0.1, 0.2, 0.3}, 1)
	mustErr(t, "fc axis 1", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), nil).Bytes(),
		`operator 0 (FULLY_CONNECTED): filter "w" has 3 scales along axis 1; FULLY_CONNECTED wants one, or one per output channel (axis 0)`)
	// Square filters marked along their inputs: per output channel, as
	// TFLite Micro runs them (second review: refused at first).
	for _, c := range []struct {
		conv  bool
		shape []int32
		y     tg.Tensor
	}{{true, []int32{2, 1, 1, 2}, q8("y", tg.Int8, 1, 1, 1, 2)}, {false, []int32{2, 2}, q8("y", tg.Int8, 1, 2)}} {
		w = weights("w", tg.Int8, c.shape, []float32{0.1, 0.2}, int32(len(c.shape)-1))
		g, err := tflite.Decode("square", int8Weighted(c.conv, w, c.y, nil).Bytes())
		if err != nil {
			t.Errorf("square %v: %v", c.shape, err)
			continue
		}
		if q := g.Tensors["w"].Quant; q == nil || q.Axis != 0 {
			t.Errorf("square %v: weights quantized %+v, want along axis 0", c.shape, q)
		}
	}
}

// F2: the types TFLite's kernels take and write.
func TestReview47KernelTypes(t *testing.T) {
	w8 := weights("w", tg.Int8, []int32{2, 2}, []float32{0.1}, 0)
	mustErr(t, "fc int32 output", int8Weighted(false, w8, q8("y", tg.Int32, 1, 2), nil).Bytes(),
		`operator 0 (FULLY_CONNECTED): int8 input "x", int32 output "y": TFLite's int8 FULLY_CONNECTED writes int8 or int16`)
	for _, typ := range []int8{tg.UInt8, tg.BoolT} {
		w := weights("w", typ, []int32{2, 2}, []float32{0.1}, 0)
		name := map[int8]string{tg.UInt8: "uint8", tg.BoolT: "bool"}[typ]
		mustErr(t, "fc "+name+" weights", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), nil).Bytes(),
			`operator 0 (FULLY_CONNECTED): int8 input "x" with `+name+` weights "w": TFLite's int8 FULLY_CONNECTED takes int8 (or int4) weights`)
	}
	// A float convolution writes float32.
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}})
	w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}, Data: tg.F32Bytes(1)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.BoolT, Shape: []int32{1, 1, 1, 1}})
	mustErr(t, "float conv bool output", one(m, tg.OpConv2D, tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1), []int32{x, w, -1}, y).Bytes(),
		`operator 0 (CONV_2D): float32 input "x", bool output "y": TFLite's float CONV_2D writes float32`)
	// ADD's inputs are of one type, and its output of theirs.
	add := func(a, b, y tg.Tensor) []byte {
		m := &tg.Model{}
		return one(m, tg.OpAdd, &tg.Options{Type: tg.OptAdd}, []int32{m.AddTensor(a), m.AddTensor(b)}, m.AddTensor(y)).Bytes()
	}
	mustErr(t, "add int32 input", add(q8("a", tg.Int8, 1, 4), q8("b", tg.Int32, 1, 4), q8("y", tg.Int8, 1, 4)),
		`operator 0 (ADD): inputs "a" (int8) and "b" (int32): TFLite's ADD wants inputs of one type`)
	mustErr(t, "add int64 output", add(q8("a", tg.Int8, 1, 4), q8("b", tg.Int8, 1, 4), q8("y", tg.Int64, 1, 4)),
		`operator 0 (ADD): int8 inputs, int64 output "y": TFLite's ADD writes its inputs' type`)
}

// F4: every input listed is a tensor of the subgraph, and no operator
// lists more inputs than its kernel takes.
func TestReview47InputIndices(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(tg.OpSoftmax, &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}}, []int32{x, 99999}, y)
	mustErr(t, "index 99999", m.Bytes(), `operator 0 (SOFTMAX): input 1: tensor index 99999 out of range (2 tensors)`)
	m.Ops[0].Inputs = []int32{x, x}
	mustErr(t, "softmax of 2", m.Bytes(), `operator 0 (SOFTMAX): 2 inputs: TFLite's SOFTMAX takes at most 1`)
	m.Ops[0] = tg.Operator{Code: tg.OpAdd, Options: &tg.Options{Type: tg.OptAdd}, Inputs: []int32{x, x, x}, Outputs: []int32{y}}
	mustErr(t, "add of 3", m.Bytes(), `operator 0 (ADD): 3 inputs: TFLite's ADD takes at most 2`)
}

// F5: RESHAPE's shape tensor gives the output's shape.
func TestReview47ReshapeShape(t *testing.T) {
	reshape := func(shape []int32, signature ...int32) []byte {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}, Signature: signature})
		s := m.AddTensor(tg.Tensor{Name: "s", Type: tg.Int32, Shape: []int32{int32(len(shape))}, Data: tg.I32Bytes(shape...)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
		return one(m, tg.OpReshape, nil, []int32{x, s}, y).Bytes()
	}
	mustErr(t, "8x1", reshape([]int32{8, 1}), `operator 0 (RESHAPE): shape tensor "s" [8 1] gives 8 elements, input "x" [1 4] has 4`)
	mustErr(t, "2x-1", reshape([]int32{2, -1}), `operator 0 (RESHAPE): shape tensor "s" [2 -1] gives shape [2 2], the output "y" is [1 4]`)
	// A dynamic batch, -1 in the shape tensor too, is TFLite's usual file.
	if _, err := tflite.Decode("dynamic", reshape([]int32{-1, 4}, -1, 4)); err != nil {
		t.Errorf("shape [-1 4]: %v", err)
	}
	// tf.reshape(x, []): a [1, 1] input, an empty shape vector ([0]), a
	// scalar output (second review: importing the shape tensor refused its
	// zero dimension). The shape stays out of the weights.
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 1}})
	sc := m.AddTensor(tg.Tensor{Name: "s", Type: tg.Int32, Shape: []int32{0}, Data: []byte{}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{}})
	g, err := tflite.Decode("scalar", one(m, tg.OpReshape, nil, []int32{x, sc}, y).Bytes())
	if err != nil {
		t.Fatalf("reshape to a scalar: %v", err)
	}
	if _, ok := g.Tensors["s"]; ok {
		t.Errorf("the shape tensor was imported: %v", g.Tensors["s"])
	}
}

// F6: the quantized kernels that rescale need their tensors' scales.
func TestReview47Unquantized(t *testing.T) {
	w := tg.Tensor{Name: "w", Type: tg.Int8, Shape: []int32{2, 2}, Data: tg.I8Bytes(1, 2, 3, 4)}
	mustErr(t, "fc weights", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), nil).Bytes(),
		`operator 0 (FULLY_CONNECTED): int8 tensor "w" has no quantization parameters: TFLite's int8 FULLY_CONNECTED rescales by them`)
	m := &tg.Model{}
	x := m.AddTensor(q8("x", tg.Int8, 1, 4))
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4}})
	mustErr(t, "leaky relu", one(m, tg.OpLeakyRelu, &tg.Options{Type: tg.OptLeakyRelu, Fields: []tg.Field{tg.F32(0, 0.2)}}, []int32{x}, y).Bytes(),
		`operator 0 (LEAKY_RELU): int8 tensor "y" has no quantization parameters: TFLite's LEAKY_RELU rescales by them`)
}

// F7: quantization parameters as TFLite's ParseQuantization takes them,
// and a per-tensor FULLY_CONNECTED's bias scale as its Prepare does.
func TestReview47QuantParams(t *testing.T) {
	w := weights("w", tg.Int8, []int32{2, 2}, []float32{0.1, 0.2}, 0)
	b := tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(0, 0), Scale: []float32{0.05, 0.1}, ZeroPoint: []int64{0, 0, 0}}
	mustErr(t, "3 zero points", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), &b).Bytes(),
		`tensor 2 ("b"): 3 zero points for 2 scales: TFLite wants one a scale (or one for all)`)
	// TFLite Micro's forms, which LiteRT refuses: one zero point for all
	// the scales, none (read as 0), quantized_dimension on one scale
	// (second review: refused at first).
	b.ZeroPoint = []int64{0}
	if _, err := tflite.Decode("1 zero point", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), &b).Bytes()); err != nil {
		t.Errorf("one zero point for two scales: %v", err)
	}
	y := q8("y", tg.Int8, 1, 2)
	y.ZeroPoint = nil
	if g, err := tflite.Decode("no zero point", int8Weighted(false, w, y, nil).Bytes()); err != nil || g.Tensors["y"].Quant.ZeroPoint[0] != 0 {
		t.Errorf("no zero point: %v", err)
	}
	y = q8("y", tg.Int8, 1, 2)
	y.QuantDim = 100
	if _, err := tflite.Decode("dimension 100", int8Weighted(false, w, y, nil).Bytes()); err != nil {
		t.Errorf("quantized_dimension 100 on one scale: %v", err)
	}
	// Per tensor: 0.5 × 0.1 is 0.05, not 1e30.
	w = weights("w", tg.Int8, []int32{2, 2}, []float32{0.1}, 0)
	b = tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{2}, Data: tg.I32Bytes(0, 0), Scale: []float32{1e30}, ZeroPoint: []int64{0}}
	mustErr(t, "bias scale", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), &b).Bytes(),
		`operator 0 (FULLY_CONNECTED): bias "b" has scale 1e+30, input scale × filter scale is 0.05: TFLite wants them within 0.02 of the output scale (0.5)`)
	b.Scale = []float32{0.05}
	if _, err := tflite.Decode("bias scale", int8Weighted(false, w, q8("y", tg.Int8, 1, 2), &b).Bytes()); err != nil {
		t.Errorf("bias scale 0.05: %v", err)
	}
}

// F8: SOFTMAX's beta is finite (+Inf was taken, NaN refused).
func TestReview47SoftmaxBeta(t *testing.T) {
	for _, beta := range []float32{float32(math.Inf(1)), float32(math.Inf(-1))} {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
		b := one(m, tg.OpSoftmax, &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, beta)}}, []int32{x}, y).Bytes()
		mustErr(t, "beta", b, "operator 0 (SOFTMAX): beta "+map[bool]string{true: "+Inf", false: "-Inf"}[beta > 0]+" is not finite")
	}
}

// F9: only -1 marks an absent input; -2 was read as no bias.
func TestReview47NegativeIndex(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}})
	w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}, Data: tg.F32Bytes(1)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}})
	mustErr(t, "bias -2", one(m, tg.OpConv2D, tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1), []int32{x, w, -2}, y).Bytes(),
		`operator 0 (CONV_2D): input 2 has tensor index -2: only -1 marks an absent input`)
}

// F10: padding is SAME or VALID; another value was read as VALID.
func TestReview47Padding(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}})
	w := m.AddTensor(tg.Tensor{Name: "w", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}, Data: tg.F32Bytes(1)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 1, 1, 1}})
	mustErr(t, "conv padding 100", one(m, tg.OpConv2D, tg.Conv2DOptions(100, 1, 1, tg.ActNone, 1, 1), []int32{x, w, -1}, y).Bytes(),
		`operator 0 (CONV_2D): padding 100 unknown (SAME is 0, VALID 1)`)
	m.Ops[0] = tg.Operator{Code: tg.OpMaxPool2D, Options: tg.Pool2DOptions(2, 1, 1, 1, 1, tg.ActNone), Inputs: []int32{x}, Outputs: []int32{y}}
	mustErr(t, "pool padding 2", m.Bytes(), `operator 0 (MAX_POOL_2D): padding 2 unknown (SAME is 0, VALID 1)`)
}

// F11: PACK's values_count is its number of inputs.
func TestReview47PackValuesCount(t *testing.T) {
	m := &tg.Model{}
	a := m.AddTensor(tg.Tensor{Name: "a", Type: tg.Float32, Shape: []int32{2}})
	b := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Float32, Shape: []int32{2}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{2, 2}})
	for _, n := range []int{0, 3} {
		mustErr(t, "values_count", one(m, opPack, opts(59, tg.I32(0, n)), []int32{a, b}, y).Bytes(),
			`operator 0 (PACK): values_count `+map[int]string{0: "0", 3: "3"}[n]+` with 2 inputs: TFLite's PACK wants them equal`)
		m.Ops = nil
	}
}
