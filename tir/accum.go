package tir

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// CheckAccumulation proves that no integer convolution, fully connected or
// matmul kernel can overflow its int32 accumulator (its int64 one, for
// TFLite's 16x8 layers with an int64 bias or none), or refuses the layer.
//
// An accumulator starts at the bias and adds K products (x - zx)(w - zw),
// K = KH*KW*Cin/Group for a convolution and the inner dimension otherwise.
// Each factor is bounded by its dtype and zero point (|x - zx| <= 255 for
// int8 activations with any zero point; |w| <= 127 for TFLite's symmetric
// weights), so |acc| <= max|bias| + K*max|x - zx|*max|w - zw|. With int8
// inputs and symmetric int8 weights that allows K up to 66,311 (with a zero
// bias), far beyond any microcontroller layer (MLPerf Tiny's deepest is
// AD's first fully connected layer, K = 640). Every term is computed from
// the layer's actual constants and zero points, so a layer is refused only
// when it really could overflow.
func CheckAccumulation(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if n.Op != graph.Conv2D && n.Op != graph.FullyConnected && n.Op != graph.BatchMatMul {
			continue
		}
		x, w := g.In(n, 0), g.In(n, 1)
		if x == nil || w == nil || !x.DType.IsInt() || !w.DType.IsInt() {
			continue
		}
		var k int64
		switch n.Op {
		case graph.Conv2D:
			k = int64(w.Shape[1]) * int64(w.Shape[2]) * int64(w.Shape[3])
		case graph.FullyConnected:
			k = int64(w.Shape[1])
		default:
			k = int64(x.Shape[len(x.Shape)-1])
			if a, ok := n.Attrs.(*graph.BatchMatMulAttrs); ok && a.AdjX {
				k = int64(x.Shape[len(x.Shape)-2])
			}
		}
		// Saturating: a hostile int64 bias near 2^63 wrapped the sum
		// negative and passed (review finding). k is at most 2^24 and the
		// factors 2^16 and 2^8, so the product itself fits.
		bound := k * maxOffsetMagnitude(x) * maxOffsetMagnitude(w)
		if mb := maxBias(g.In(n, 2)); mb > math.MaxInt64-bound {
			bound = math.MaxInt64
		} else {
			bound += mb
		}
		if interp.Wide16x8(g, n) {
			// A 16x8 layer's 64-bit accumulator: TFLite's requantization
			// assumes |acc| < 2^47.
			if bound >= 1<<47 {
				return fmt.Errorf("tir: node %q (%s): %d products of up to %d x %d plus the bias could reach %d, beyond the 2^47 a 16x8 layer's requantization takes (split the layer)",
					n.Name, n.Op, k, maxOffsetMagnitude(x), maxOffsetMagnitude(w), bound)
			}
			continue
		}
		if bound > math.MaxInt32 {
			return fmt.Errorf("tir: node %q (%s): %d products of up to %d x %d plus the bias could reach %d, beyond an int32 accumulator (split the layer)",
				n.Name, n.Op, k, maxOffsetMagnitude(x), maxOffsetMagnitude(w), bound)
		}
	}
	return nil
}

// maxOffsetMagnitude bounds |v - zero point| over t's dtype (or over its
// values, for a constant).
func maxOffsetMagnitude(t *graph.Tensor) int64 {
	lo, hi := t.DType.Range()
	if t.Data != nil {
		lo, hi = math.MaxInt64, math.MinInt64
		for _, v := range t.Data.I {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	var m int64
	zps := []int32{0}
	if t.Quant != nil && len(t.Quant.ZeroPoint) > 0 {
		zps = t.Quant.ZeroPoint
	}
	for _, z := range zps {
		m = max(m, hi-int64(z), int64(z)-lo)
	}
	return m
}

func maxBias(b *graph.Tensor) int64 {
	var m int64
	if b == nil || b.Data == nil {
		return 0
	}
	for _, v := range b.Data.I {
		if v == math.MinInt64 {
			return math.MaxInt64 // -v overflows (review finding)
		}
		m = max(m, v, -v)
	}
	return m
}
