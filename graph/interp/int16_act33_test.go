package interp

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// act33Tensor is a per-tensor quantized tensor.
func act33Tensor(name string, dt graph.DType, shape []int, s float32, z int32) *graph.Tensor {
	return &graph.Tensor{Name: name, DType: dt, Shape: shape, Quant: &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}}}
}

// run33 runs x -> op -> y on xs (x's shape) and returns y.
func run33(op graph.Op, attrs any, x, y *graph.Tensor, xs []int64) ([]int64, error) {
	g := graph.New("act33", "tflite")
	g.AddTensor(x)
	g.AddTensor(y)
	g.AddNode(&graph.Node{Name: "n", Op: op, Inputs: []string{x.Name}, Outputs: []string{y.Name}, Attrs: attrs})
	g.Inputs, g.Outputs = []string{x.Name}, []string{y.Name}
	d := graph.NewData(x.DType, x.Shape)
	copy(d.I, xs)
	r, err := Run(g, map[string]*graph.Data{x.Name: d})
	if err != nil {
		return nil, err
	}
	return r[y.Name].I, nil
}

func want33(t *testing.T, what string, got, hand []int64) {
	t.Helper()
	for i := range hand {
		if got[i] != hand[i] {
			t.Errorf("%s[%d] = %d, by hand %d (all: %v)", what, i, got[i], hand[i], got)
		}
	}
}

// TestLeakyReluInt16HandWorked: TFLite Micro's int16 LEAKY_RELU, with
// scales that make the float32 ratios exact. Input scale 0.5, output 0.25,
// zero points 3 and -5:
//
//	identity 0.5/0.25 = 2 = 0.5·2^2: multiplier 2^30, shift 2;
//	alpha 0.25: 0.5·0.25/0.25 = 0.5 = 0.5·2^0: multiplier 2^30, shift 0.
//
// x = 10: d = 7, 7 << 2 = 28, SRDHM(28, 2^30) = 14, + (-5) = 9.
// x = 0: d = -3, SRDHM(-3, 2^30) = -1.5, rounded half up (gemmlowp's
// nudge) to -1, + (-5) = -6.
// x = -32768: d = -32771, SRDHM = -16385.5 -> -16385, -5: -16390.
// x = 32767: d = 32764, 65528 - 5 clamps to 32767.
// TFLite Micro's reference kernel (built from its sources) gives the same.
func TestLeakyReluInt16HandWorked(t *testing.T) {
	x := act33Tensor("x", graph.Int16, []int{4}, 0.5, 3)
	y := act33Tensor("y", graph.Int16, []int{4}, 0.25, -5)
	got, err := run33(graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: 0.25}, x, y, []int64{10, 0, -32768, 32767})
	if err != nil {
		t.Fatal(err)
	}
	want33(t, "alpha 0.25", got, []int64{9, -6, -16390, 32767})
	// alpha -0.25: the alpha multiplier is -2^30 (frexp(-0.5) = -0.5·2^0).
	// TFLite Micro applies its magnitude and negates: x = 0, d = -3,
	// SRDHM(-3, 2^30) = -1, negated 1, + (-5) = -4 (applying -2^30
	// itself gives SRDHM(-3, -2^30) = 1.5 -> 2, and -3). x = 10 as above.
	got, err = run33(graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: -0.25}, x, y, []int64{0, 10, -32768})
	if err != nil {
		t.Fatal(err)
	}
	// x = -32768: d = -32771, SRDHM(-32771, 2^30) = -16385, negated
	// 16385, -5: 16380.
	want33(t, "alpha -0.25", got, []int64{-4, 9, 16380})
}

// TestLeakyReluInt8NegativeAlpha: the int8 kernel is the same template in
// TFLite Micro; a negative alpha takes the same negation (x = 0 of the
// case above: -4).
func TestLeakyReluInt8NegativeAlpha(t *testing.T) {
	x := act33Tensor("x", graph.Int8, []int{3}, 0.5, 3)
	y := act33Tensor("y", graph.Int8, []int{3}, 0.25, -5)
	got, err := run33(graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: -0.25}, x, y, []int64{0, 10, -128})
	if err != nil {
		t.Fatal(err)
	}
	// x = -128: d = -131, SRDHM(-131, 2^30) = -65.5 -> -65, negated 65,
	// -5: 60.
	want33(t, "int8 alpha -0.25", got, []int64{-4, 9, 60})
}

// TestSoftmaxInt8ToInt16HandWorked: the int8 kernel with 16 output bits
// (scale 1/65536, zero point -32768).
//
// [0, 0]: each exp(0) is 1 (Q0.31 2^31 - 1), Q12.19 2^19 after the
// rounding shift by 12; the sum 2^20 has 11 leading zeros, so 1 bit over
// unit and a reciprocal of (2^20 << 11) - 2^31 = 0 -> 1/(1+0), Q0.31
// 2^31 - 1. Each output: SRDHM(2^31 - 1, 2^31 - 1) = 2^31 - 2, divided by
// 2^(1 + 31 - 16) = 2^16: 32768 (rounded), - 32768 = 0.
//
// [-128, 127] at input scale 0.1: beta·scale·2^26 = 0.8·2^23, so left
// shift 23 and an input radius of 31·2^26 / 2^23 = 248; the difference
// -255 is below -248 and writes -32768. The maximum's exp is the whole
// sum (2^19, 0 bits over unit): (2^31 - 2) / 2^15 = 65536, - 32768 =
// 32768, clamped to 32767.
//
// [10, 0, -20, 5] at scale 0.05 are TFLite Micro's reference kernel's
// outputs (float: -7643.6, -17529.3, -27162.0, -13201.1).
func TestSoftmaxInt8ToInt16HandWorked(t *testing.T) {
	for _, c := range []struct {
		sx       float32
		in, hand []int64
	}{
		{0.05, []int64{0, 0}, []int64{0, 0}},
		{0.1, []int64{-128, 127}, []int64{-32768, 32767}},
		{0.05, []int64{10, 0, -20, 5}, []int64{-7644, -17529, -27162, -13201}},
	} {
		n := len(c.in)
		x := act33Tensor("x", graph.Int8, []int{1, n}, c.sx, 0)
		y := act33Tensor("y", graph.Int16, []int{1, n}, 1.0/65536, -32768)
		got, err := run33(graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1}, x, y, c.in)
		if err != nil {
			t.Fatal(err)
		}
		want33(t, "softmax", got, c.hand)
	}
}

// TestInt16Act33Refused: the quantizations TFLite Micro's Prepare refuses
// (and the shifts mcugen's C cannot do).
func TestInt16Act33Refused(t *testing.T) {
	lr := &graph.LeakyReluAttrs{Alpha: 0.2}
	sm := &graph.SoftmaxAttrs{Axis: -1, Beta: 1}
	s16 := func(s float32, z int32) *graph.Tensor { return act33Tensor("y", graph.Int16, []int{1, 4}, s, z) }
	for _, c := range []struct {
		name  string
		op    graph.Op
		attrs any
		x, y  *graph.Tensor
		want  string
	}{
		{"softmax_zero_point", graph.Softmax, sm, act33Tensor("x", graph.Int8, []int{1, 4}, 0.1, 0), s16(1.0/65536, 0),
			`output "y" is quantized as scale 1.5258789e-05, zero point 0: TFLite Micro's kernel writes scale 1/65536 and zero point -32768`},
		{"softmax_scale", graph.Softmax, sm, act33Tensor("x", graph.Int8, []int{1, 4}, 0.1, 0), s16(1.0/32768, -32768),
			`TFLite Micro's kernel writes scale 1/65536`},
		{"softmax_tiny_input", graph.Softmax, sm, act33Tensor("x", graph.Int8, []int{1, 4}, 1e-9, 0), s16(1.0/65536, -32768),
			`beta × scale × 2^26`},
		{"softmax_16_to_8", graph.Softmax, sm, act33Tensor("x", graph.Int16, []int{1, 4}, 0.001, 0),
			act33Tensor("y", graph.Int8, []int{1, 4}, 1.0/256, -128), `takes int16 to int16 and int8 to int16 only`},
		{"leaky_mixed", graph.LeakyRelu, lr, act33Tensor("x", graph.Int8, []int{1, 4}, 0.1, 0), s16(0.001, 0),
			`from int8 to int16: TFLite Micro's takes the same type`},
		{"leaky_per_channel", graph.LeakyRelu, lr, act33Tensor("x", graph.Int16, []int{1, 4}, 0.1, 0),
			&graph.Tensor{Name: "y", DType: graph.Int16, Shape: []int{1, 4}, Quant: &graph.Quant{Scale: []float32{0.1, 0.2}, ZeroPoint: []int32{0, 0}, Axis: 0}},
			`is not quantized per tensor`},
		{"leaky_zero_point", graph.LeakyRelu, lr, act33Tensor("x", graph.Int16, []int{1, 4}, 0.1, 40000), s16(0.1, 0),
			`has zero point 40000, outside int16's range`},
		// 1 / 2^-16: a multiplier of 2^16 (shift 17).
		{"leaky_big_ratio", graph.LeakyRelu, lr, act33Tensor("x", graph.Int16, []int{1, 4}, 1, 0), s16(1.0/65536, 0),
			`a multiplier of 2^15 or more`},
	} {
		_, err := run33(c.op, c.attrs, c.x, c.y, make([]int64, c.x.NumElements()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}
