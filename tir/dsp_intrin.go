package tir

import (
	"fmt"
	"math"
)

// DSP micro-kernel intrinsics (Cortex-M4/M7/M33, ACLE SIMD). Each is a
// register-blocked int8 dot-product block with an exact semantic definition
// here, so the TIR interpreter runs schedules that use them; emitc prints
// each as one static inline helper built from __sxtb16 and __smlad.

// DSPMacName is the intrinsic for an R×C block of int8 dot products:
//
//	dsp_mac_s8_RxC(acc *int32, x *int8, xs, w *int8, ws, n)
//	acc[i·C + j] += Σ_{k<n} int32(x[i·xs + k]) · int32(w[j·ws + k])   (i < R, j < C)
//
// R rows of x (output pixels, or FC input rows) against C rows of w (output
// channels); each x word is sign-extended once and reused for all C channels.
func DSPMacName(r, c int) string { return fmt.Sprintf("dsp_mac_s8_%dx%d", r, c) }

// DSPMacBlocks are the block shapes that have a helper (rows × channels).
var DSPMacBlocks = [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}}

// IntrDSPDW4 is the depthwise channel-quad tap:
//
//	dsp_dw4_s8(acc *int32, x *int8, w *int16, xo)
//	acc[j] += (int32(x[j]) + xo) · int32(w[j])   (j < 4)
//
// Four adjacent channels of one input pixel times their four (pre-widened
// int16) weights of one tap; the C pairs channels with __sxtab16 and
// __smlabb/__smlatt.
const IntrDSPDW4 = "dsp_dw4_s8"

func init() {
	for _, b := range DSPMacBlocks {
		r, c := b[0], b[1]
		extIntrinsics[DSPMacName(r, c)] = func(a []val) val {
			acc, x, xs, w, ws, n := a[0], a[1], a[2].i, a[3], a[4].i, a[5].i
			for i := int64(0); i < int64(r); i++ {
				for j := int64(0); j < int64(c); j++ {
					s := acc.p.I[acc.i+i*int64(c)+j]
					for k := int64(0); k < n; k++ {
						s += x.p.I[x.i+i*xs+k] * w.p.I[w.i+j*ws+k]
					}
					if s > math.MaxInt32 || s < math.MinInt32 {
						panic("int32 overflow in " + DSPMacName(r, c))
					}
					acc.p.I[acc.i+i*int64(c)+j] = s
				}
			}
			return val{}
		}
	}
	extIntrinsics[IntrDSPDW4] = func(a []val) val {
		acc, x, w, xo := a[0], a[1], a[2], a[3].i
		for j := int64(0); j < 4; j++ {
			s := acc.p.I[acc.i+j] + (x.p.I[x.i+j]+xo)*w.p.I[w.i+j]
			if s > math.MaxInt32 || s < math.MinInt32 {
				panic("int32 overflow in " + IntrDSPDW4)
			}
			acc.p.I[acc.i+j] = s
		}
		return val{}
	}
}

// dspMac builds the statement acc[accIdx..] += block(x, w) for an r×c block.
func dspMac(r, c int, acc *Buffer, accIdx Expr, x *Buffer, xi Expr, xs int, w *Buffer, wi Expr, ws, n int) Stmt {
	return &Evaluate{X: Call(DSPMacName(r, c), I32, &Ptr{Buf: acc, Index: accIdx}, &Ptr{Buf: x, Index: xi}, C(int64(xs)),
		&Ptr{Buf: w, Index: wi}, C(int64(ws)), C(int64(n)))}
}
