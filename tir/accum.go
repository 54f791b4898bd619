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
		if ws := maxChannelSum(n, w); ws >= 0 {
			// Constant weights: each channel's own Σ|w − z| against the
			// input's largest offset, which is the most its products can
			// add to (K × 127 refused a K = 102,400 layer TFLite runs:
			// review finding).
			// One more than the offset: a kernel that folds z_x·Σw into
			// the bias adds raw products, up to 128·Σ|w| on either side.
			bound = min(bound, ws*(maxOffsetMagnitude(x)+1))
		}
		products := bound
		mb := maxBias(g.In(n, 2))
		if mb > math.MaxInt64-bound {
			bound = math.MaxInt64
		} else {
			bound += mb
		}
		// Splitting the layer shrinks the products, not the bias: a bias
		// past int32's half is the quantization's (a scale s_in·s_w tiny
		// for its value), and says so.
		advice := "split the layer"
		if mb > products {
			advice = fmt.Sprintf("the bias alone is up to %d: its scale, the input's times the weights', is too small for its value", mb)
		}
		if interp.Wide16x8(g, n) {
			// A 16x8 layer's 64-bit accumulator: TFLite's requantization
			// assumes |acc| < 2^47.
			if bound >= 1<<47 {
				return fmt.Errorf("tir: node %q (%s): %d products of up to %d x %d plus the bias could reach %d, beyond the 2^47 a 16x8 layer's requantization takes (%s)",
					n.Name, OpLabel(g, n), k, maxOffsetMagnitude(x), maxOffsetMagnitude(w), bound, advice)
			}
			continue
		}
		if bound > math.MaxInt32 {
			return fmt.Errorf("tir: node %q (%s): %d products of up to %d x %d plus the bias could reach %d, beyond an int32 accumulator (%s)",
				n.Name, OpLabel(g, n), k, maxOffsetMagnitude(x), maxOffsetMagnitude(w), bound, advice)
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

// maxChannelSum is the largest Σ|w − z| over the output channels of a
// Conv2D's or FullyConnected's constant weights (axis 0), or -1 where the
// weights are not constant (or the op has no such layout).
func maxChannelSum(n *graph.Node, w *graph.Tensor) int64 {
	if w.Data == nil || len(w.Shape) == 0 || w.Shape[0] <= 0 || (n.Op != graph.Conv2D && n.Op != graph.FullyConnected) {
		return -1
	}
	per := w.Data.Len() / w.Shape[0]
	var m int64
	for c := 0; c < w.Shape[0]; c++ {
		var z int64
		if q := w.Quant; q != nil && len(q.ZeroPoint) > 0 {
			z = int64(q.ZeroPoint[min(c, len(q.ZeroPoint)-1)])
		}
		var sum int64
		for _, v := range w.Data.I[c*per : (c+1)*per] {
			sum += max(v-z, z-v)
		}
		m = max(m, sum)
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
