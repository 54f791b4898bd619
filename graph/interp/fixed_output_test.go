package interp

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// FixedOutputOK: an int8 LOGISTIC, TANH or SOFTMAX must be quantized as
// TFLite's kernels write (round-3 fuzzer: a TANH of zero point 5 gave
// x = 0 -> 5 where TFLite Micro gives 0, and a SOFTMAX of input scale 1e-9
// gave -128 everywhere where the interpreter gave -96); others pass. The
// scales are TFLite's: LOGISTIC exactly 1/256, SOFTMAX within 0.1% of it.
func TestFixedOutputOK(t *testing.T) {
	q := func(s float32, z int32) *graph.Tensor {
		return &graph.Tensor{Name: "y", DType: graph.Int8, Quant: &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}}}
	}
	x := q(0.1, 0)
	for _, c := range []struct {
		op   graph.Op
		y    *graph.Tensor
		beta float32
		want string
	}{
		{graph.Sigmoid, q(1.0/256, -128), 1, ""},
		{graph.Sigmoid, q(1.0/256, 0), 1, `int8 LOGISTIC output "y" is quantized as scale 0.00390625, zero point 0: TFLite's kernel writes scale 1/256 and zero point -128`},
		{graph.Sigmoid, q(1.0/255, -128), 1, "int8 LOGISTIC"},
		{graph.Tanh, q(1.0/128, 0), 1, ""},
		{graph.Tanh, q(1.0/128, 5), 1, "TFLite's kernel writes scale 1/128 and zero point 0"},
		{graph.Softmax, q(1.0/256*1.0005, -128), 1, ""},
		{graph.Softmax, q(1.0/256*1.002, -128), 1, "int8 SOFTMAX"},
		{graph.Softmax, q(1.0/256, -128), 1e-7, "int8 SOFTMAX of input scale 0.1 and beta 1e-07: beta × scale × 2^26 = 0.671, where TFLite needs more than 1"},
		{graph.Softmax, q(1.0/256, -128), 2e-7, ""},
		{graph.Tanh, &graph.Tensor{Name: "y", DType: graph.UInt8, Quant: &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{3}}}, 1, ""},
	} {
		err := FixedOutputOK(c.op, x, c.y, c.beta)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %v beta %g: %v, want %q", c.op, c.y.Quant, c.beta, err, c.want)
		}
	}
}
