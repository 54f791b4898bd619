package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// batchMatMul16 checks a BatchMatMul with int16 operands and reports
// whether it is one: TFLite Micro's BATCH_MATMUL on int16
// (reference_ops::BatchMatMul<int16_t, int64_t>) takes both operands and
// the output int16, quantized per tensor with zero points 0, accumulates
// in 64 bits and requantizes with MultiplyByQuantizedMultiplier's int64
// overload (the multiplier rounded to 16 bits: requantizer.apply64), the
// multiplier being QuantizeMultiplier(double(float(s_a · s_b)) / s_y) as
// for int8.
func batchMatMul16(g *graph.Graph, n *graph.Node, ts ...*graph.Tensor) (bool, error) {
	wide := false
	for _, t := range ts {
		wide = wide || (t != nil && t.DType == graph.Int16)
	}
	if !wide {
		return false, nil
	}
	for _, t := range ts {
		if t == nil || t.DType != graph.Int16 {
			return false, fmt.Errorf("int16 BatchMatMul needs int16 operands and output (TFLite Micro's 16x8 kernel)")
		}
		if t.Quant == nil || len(t.Quant.Scale) != 1 {
			return false, fmt.Errorf("int16 BatchMatMul needs %q quantized per tensor", t.Name)
		}
	}
	if err := check16x8(ts...); err != nil {
		return false, err
	}
	return Wide16x8(g, n), nil
}
