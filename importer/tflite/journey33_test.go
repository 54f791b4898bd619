package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Old converters wrote the filter's quantized_dimension (3) on a depthwise
// convolution's per-channel int32 bias, a 1-D tensor: TFLite Micro's
// person_detect.tflite has 14 such biases, and TFLite Micro reads their
// scales along the only axis there is (user journey, session 33: the model
// was refused). The depthwise case of intCases with that bias: c0 (scale
// 1·1) 1+4+9+16 = 30 plus bias 0; c1 (scale 1·0.5) 20·2 + 40·(−2) = −40,
// −20 in real terms, plus a bias of 4 (real 2): −18.
func TestBiasScalesAlongTheirOnlyAxis(t *testing.T) {
	c := opCase{name: "depthwise_bias_dim3", code: tg.OpDepthwiseConv2D, opts: tg.DepthwiseOptions(tg.Valid, 1, 1, 1, tg.ActNone, 1, 1),
		ins: []spec{qin(1, 0, 1, 2, 2, 2),
			qc(tg.Int8, []int32{1, 2, 2, 2}, []float32{1, 0.5}, []int64{0, 0}, 3, 1, 0, 2, 2, 3, 0, 4, -2),
			qc(tg.Int32, []int32{2}, []float32{1, 0.5}, []int64{0, 0}, 3, 0, 4)},
		out: qin(1, 0, 1, 1, 1, 2), feed: [][]float64{{1, 10, 2, 20, 3, 30, 4, 40}}, want: f64(30, -18)}
	c.run(t)

	// Three scales on a 1-D tensor of two values still match no axis.
	bad := c
	bad.name = "depthwise_bias_three_scales"
	bad.ins = []spec{c.ins[0], c.ins[1], qc(tg.Int32, []int32{2}, []float32{1, 0.5, 0.25}, []int64{0, 0, 0}, 3, 0, 4)}
	_, err := tflite.Decode(bad.name, bad.model().Bytes())
	if err == nil || !strings.Contains(err.Error(), "3 scales do not match") {
		t.Fatalf("decode: %v, want the scales refused", err)
	}
}

// A TRANSPOSE_CONV whose output shape is a model input, not a constant
// (TFLM's seanet transpose_conv models): the output tensor's shape in the
// file sizes it, as in TFLite Micro. transpose_conv_valid of ops_test.go
// with input 0 fed at run time: the same 4x4 output.
func TestTransposeConvShapeFromOutput(t *testing.T) {
	c := opCase{name: "transpose_conv_fed_shape", code: tg.OpTransposeConv,
		opts: &tg.Options{Type: tg.OptTransposeConv, Fields: []tg.Field{tg.I8(0, tg.Valid), tg.I32(1, 2), tg.I32(2, 2)}},
		ins:  []spec{{typ: tg.Int32, shape: []int32{4}}, fc([]int32{1, 2, 2, 1}, 1, 0, 0, 1), fin(1, 2, 2, 1), fc([]int32{1}, 0.5)}, out: fin(1, 4, 4, 1),
		feed: [][]float64{{1, 4, 4, 1}, {1, 2, 3, 4}}, want: f64(1.5, 0.5, 2.5, 0.5, 0.5, 1.5, 0.5, 2.5, 3.5, 0.5, 4.5, 0.5, 0.5, 3.5, 0.5, 4.5), tol: 1e-6}
	c.run(t)

	// A fed shape of another length than 4 is still refused.
	bad := c
	bad.ins = append([]spec{{typ: tg.Int32, shape: []int32{3}}}, c.ins[1:]...)
	if _, err := tflite.Decode("bad", bad.model().Bytes()); err == nil || !strings.Contains(err.Error(), "4 values") {
		t.Fatalf("decode: %v, want the shape input refused", err)
	}
}
