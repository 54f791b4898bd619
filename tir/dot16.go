package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// IntrDotS16S8(x *int16, w *int8, n) int64: Σ_{i<n} x[i]·w'[i], the inner
// product of a 16x8 layer, where w's groups of four are stored in the order
// 0, 2, 1, 3 (DotS16S8Weights) and a tail of n % 4 in order. On a core
// with the DSP extension the C helper takes each group as one word that
// SXTB16 splits into the pairs (w0, w1) and (w2, w3), multiplied with x's
// pairs by two SMLALDs into the 64-bit sum; elsewhere it is a plain loop
// over the same layout.
const IntrDotS16S8 = "dot_s16s8"

// minDotS16S8 is the shortest run a 16x8 kernel hands to IntrDotS16S8
// (a depthwise convolution's one-channel taps stay scalar products).
const minDotS16S8 = 4

func init() {
	extIntrinsics[IntrDotS16S8] = func(a []val) val {
		x, w, n := a[0], a[1], a[2].i
		if n < 0 {
			panic(fmt.Sprintf("%s: n = %d", IntrDotS16S8, n))
		}
		var acc int64
		for i := int64(0); i < n; i++ {
			acc += x.p.I[x.i+i] * w.p.I[w.i+dotS16S8Index(i, n)]
		}
		return val{i: acc}
	}
}

// dotS16S8Index is where element i of a run of n is stored: groups of four
// in the order 0, 2, 1, 3, the tail of n % 4 in order.
func dotS16S8Index(i, n int64) int64 {
	if i >= n/4*4 {
		return i
	}
	return i&^3 | [4]int64{0, 2, 1, 3}[i&3]
}

// DotS16S8Weights stores the int8 weights of a 16x8 layer, runs of n
// values one after another, in IntrDotS16S8's layout: each run's groups of
// four in the order 0, 2, 1, 3, its tail in order.
func DotS16S8Weights(name string, w []int64, shape []int, n int) *Buffer {
	out := make([]int64, len(w))
	for r := 0; r+n <= len(w); r += n {
		for i := 0; i < n; i++ {
			out[r+int(dotS16S8Index(int64(i), int64(n)))] = w[r+i]
		}
	}
	return constBuf(name, graph.Int8, shape, out)
}
