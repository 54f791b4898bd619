package tir

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// Packed int4 weights for fully connected layers (knob dsp.weights = 4):
// where every weight of a layer is in [−8, 7] (a model quantized to four
// bits, TFLite's INT4 tensors), two weights share a byte in flash, a
// quarter of the int16 layout and half of the int8 one. The pipeline's fit
// pass chooses it after int8 weights, where those still do not fit.
//
// Layout: channel blocks as DSPPackWeights' (channelBlocks, dead channels
// left out), K padded with zero weights to a multiple of 8, each weight
// stored offset by 8 as an unsigned nibble u = w + 8 in [0, 15]. Channel j
// of a block of C, group G of eight k (k = 8G..8G+7) is the word of four
// bytes at byte 4C·G + 4j, whose byte b (b < 4) holds u[8G+b] in its low
// nibble and u[8G+4+b] in its high nibble.
//
// For such a word p and M = 0x000F000F, p & M, (p >> 8) & M, (p >> 4) & M
// and (p >> 12) & M are already pair words, (u[8G], u[8G+2]),
// (u[8G+1], u[8G+3]), (u[8G+4], u[8G+6]) and (u[8G+5], u[8G+7]): the ones
// IntrDSPWiden's activation words 4G..4G+3 pair with. One AND (with a
// shifted operand) a pair word, no sign extension: SMLAD then sums
// Σ x·u = Σ x·w + 8·Σ x, and the schedule starts each row's accumulators
// 8·Σ x lower (IntrDSPSumPairs, once a row for every channel). It checks
// at compile time that no partial sum can leave int32 (int4Fits).

// DSPMacW4Name is DSPMacName with packed int4 weights, offset by 8 (U
// even: whole words of eight k per channel):
//
//	dsp_mac_s4w_RxC_uU(acc *int32, x *int32, xs, w *int8, n), n % (2U) == 0, n % 4 == 0:
//	acc[i·C + j] += Σ_{G < n/4} Σ_{t<2} Σ_{h<2} dot2(x[i·xs + 4G + 2t + h],
//	                  pair(nib(w[4C·G + 4j + h], t), nib(w[4C·G + 4j + h + 2], t)))
//
// where nib(b, 0) is byte b's low nibble and nib(b, 1) its high one,
// unsigned (the weight plus 8).
func DSPMacW4Name(r, c, u int) string { return fmt.Sprintf("dsp_mac_s4w_%dx%d_u%d", r, c, u) }

// IntrDSPSumPairs is the sum of both int16 halves of n pair words:
//
//	dsp_sum_pairs(x *int32, n) = Σ_{i < n} lo(x[i]) + hi(x[i])
//
// a row's Σ x, whose multiple of 8 the int4 kernels' accumulators start
// below their bias.
const IntrDSPSumPairs = "dsp_sum_pairs"

// DSPW4Block is the packed int4 form's default block (rows, channels):
// one row by four channels, its one-row asm (emitc/dsp_w4.go). Tuning
// records, tuned with int8 weights, leave it as it is (pipeline's
// tuneTarget).
var DSPW4Block = [2]int{1, 4}

// unibble is the unsigned 4-bit value t (0: low, 1: high) of byte b.
func unibble(b, t int64) int64 { return (b >> (4 * t)) & 15 }

// w4Pair is the pair word h of half t of channel j, word group G of a
// packed int4 block of c channels at w.
func w4Pair(name string, w val, c, G, t, j, h int64) int64 {
	if w.p == nil || w.p.DType != graph.Int8 {
		panic(name + ": weights are not int8 bytes")
	}
	at := w.i + 4*c*G + 4*j + h
	return pack16(unibble(w.p.I[at], t), unibble(w.p.I[at+2], t))
}

func mac4Intrinsic(name string, r, c int64, u int) func([]val) val {
	return func(a []val) val {
		acc, x, xs, w, n := a[0], a[1], a[2].i, a[3], a[4].i
		if u%2 != 0 || n%int64(2*u) != 0 || n%4 != 0 || n < 0 {
			panic(fmt.Sprintf("%s: n = %d", name, n))
		}
		for i := int64(0); i < r; i++ {
			for j := int64(0); j < c; j++ {
				s := acc.p.I[acc.i+i*c+j]
				for G := int64(0); G < n/4; G++ {
					for t := int64(0); t < 2; t++ {
						for h := int64(0); h < 2; h++ {
							s += dot2(x.p.I[x.i+i*xs+4*G+2*t+h], w4Pair(name, w, c, G, t, j, h))
							if s > math.MaxInt32 || s < math.MinInt32 {
								panic("int32 overflow in " + name)
							}
						}
					}
				}
				acc.p.I[acc.i+i*c+j] = s
			}
		}
		return val{}
	}
}

func init() {
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			if u%2 != 0 {
				continue
			}
			name := DSPMacW4Name(b[0], b[1], u)
			extIntrinsics[name] = mac4Intrinsic(name, int64(b[0]), int64(b[1]), u)
		}
	}
	extIntrinsics[IntrDSPSumPairs] = func(a []val) val {
		x, n := a[0], a[1].i
		var s int64
		for i := int64(0); i < n; i++ {
			v := x.p.I[x.i+i]
			s += int64(int16(v)) + int64(int16(v>>16))
		}
		if s > math.MaxInt32 || s < math.MinInt32 {
			panic("int32 overflow in " + IntrDSPSumPairs)
		}
		return val{i: s}
	}
}

// Int4Range reports whether every value of w is in [−8, 7]: weights that
// the packed int4 layout holds exactly.
func Int4Range(w []int64) bool {
	for _, v := range w {
		if v < -8 || v > 7 {
			return false
		}
	}
	return len(w) > 0
}

// int4Fits reports whether the int4 kernel's sums stay in int32 for a
// cout×K matrix (K padded to k8) whose accumulators start at most
// initAbs from zero: they start at init − 8·Σx and add x·u with u <= 15, so
// every partial sum is within initAbs + 23·k8·xAbs of zero.
func int4Fits(k8 int, xAbs, initAbs int64) bool {
	if xAbs <= 0 {
		xAbs = 1 << 15 // any int16 activation word
	}
	return initAbs >= 0 && initAbs+23*int64(k8)*xAbs <= math.MaxInt32
}

// constAbs bounds |e| for an accumulator's init: a constant, or a load of
// a constant buffer; ok is false for anything else.
func constAbs(e Expr) (int64, bool) {
	switch x := e.(type) {
	case *IntImm:
		return abs64(x.V), true
	case *Load:
		if x.Buf.Scope != ScopeConst || x.Buf.Data == nil || len(x.Buf.Data.I) == 0 {
			return 0, false
		}
		var m int64
		for _, v := range x.Buf.Data.I {
			m = max(m, abs64(v))
		}
		return m, true
	case *Cast:
		return constAbs(x.X)
	}
	return 0, false
}

// packBlocks4 lays out int4 weights w[oc][k] (K per channel, each in
// [−8, 7]) for DSPMacW4Name kernels: the plan's live channels, K padded
// with zero weights to k8 (a multiple of 8), as bytes (int8 values) of two
// nibbles w + 8 each (see above). Channel block starting at packed channel
// at begins at byte at·k8/2.
func packBlocks4(w []int64, K, k8 int, blocks []gemmBlock) []int64 {
	at := func(oc, k int) int64 {
		if k >= K {
			return 0
		}
		return w[oc*K+k]
	}
	out := make([]int64, liveCount(blocks)*k8/2)
	for _, b := range blocks {
		for i := 0; i < b.count*b.c; i++ {
			oc, base := b.from+i, b.at+i/b.c*b.c
			j := i % b.c
			for G := 0; G < k8/8; G++ {
				for by := 0; by < 4; by++ {
					v := (at(oc, 8*G+by)+8)&15 | ((at(oc, 8*G+4+by)+8)&15)<<4
					out[base*k8/2+4*b.c*G+4*j+by] = int64(int8(uint8(v)))
				}
			}
		}
	}
	return out
}

// DSPPackWeights4 is packBlocks4 over every channel, blocks of c.
func DSPPackWeights4(w []int64, cout, K, k8, c int) []int64 {
	return packBlocks4(w, K, k8, channelBlocks(cout, c, nil))
}

// unrollFor4 is unrollFor for the int4 kernels: an even unroll (whole
// weight words) that divides the k8/2 pair words in groups of 2U.
func unrollFor4(want, k8 int) int {
	u := 2
	for _, c := range DSPMacUnrolls {
		if c%2 == 0 && c <= want && (k8/2)%(2*c) == 0 {
			u = c
		}
	}
	return u
}
