package tir

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// IntrDW16Row(y *int16, x *int16, w *int32, p *int32, H, W, C, OW, ih0,
// sw, pl, KH, KW, dh, dw, lo, hi) writes one output row of a 16x8
// depthwise convolution (depth multiplier 1, C a multiple of 4) whose
// window's top row is input row ih0 (negative above the image):
//
//	y[ow·C + c] = clamp(smmulr(p[2q+j] + Σ x[ih][iw][c]·w_c[kh][kw], p[2q+4+j]), lo, hi)
//
// for c = q + j (q a multiple of 4, j < 4), over the taps inside the image
// (ih = ih0 + kh·dh, iw = ow·sw − pl + kw·dw), where smmulr(a, m) =
// (a·m + 2^31) >> 32, x is the image [H][W][C], and w holds each channel
// quad's taps as int16 pairs, two words a tap: [C/4][KH][KW] × (w_q |
// w_q+1 << 16, w_q+2 | w_q+3 << 16). p holds each quad's four biases and
// then its four multipliers. The sums are 32-bit: the compiler takes this only
// where every channel's Σ|w|·2^15 + |bias| stays inside int32 (the
// interpreter checks). On a core with the DSP extension each tap is two
// loads of input pairs, two of weight pairs and four SMLAxy; the
// requantization is one SMMULR a channel.
const IntrDW16Row = "dw16_row_s16s8"

// IntrMVEDW16Row has IntrDW16Row's arguments and sums for C a multiple of
// 8, with Helium's layouts: w holds each channel octet's taps as eight
// int16 in channel order ([C/8][KH][KW][8], one VLDRH), p each octet's
// biases of channels 0, 2, 4, 6, then of 1, 3, 5, 7, then the multipliers
// in the same order (VMULLB and VMULLT multiply the even and the odd
// lanes into two vectors of 32-bit sums; VRMULH is SMMULR on four lanes;
// VMOVNB and VMOVNT interleave them back into channel order).
const IntrMVEDW16Row = "mve_dw16_row_s16s8"

// IntrNEONDW16Row is IntrMVEDW16Row (the same arguments, layouts and sums)
// on the "neon" target: SMLAL and SMLAL2 over eight channels, the
// requantization SMULL and a rounding narrowing shift by 32.
const IntrNEONDW16Row = "neon_dw16_row_s16s8"

// IntrSMMULR(a int64, m int32) int32 is (a·m + 2^31) >> 32 (SMMULR) for an
// a that fits int32 (the interpreter checks): a 16x8 layer's requantization
// where narrow64 proved 32 bits enough.
const IntrSMMULR = "smmulr_s32"

func init() {
	extIntrinsics[IntrSMMULR] = func(a []val) val {
		x, m := a[0].i, a[1].i
		if x != int64(int32(x)) || m != int64(int32(m)) {
			panic(fmt.Sprintf("%s(%d, %d): operands leave int32", IntrSMMULR, x, m))
		}
		return val{i: smmulr(x, m)}
	}
	extIntrinsics[IntrDW16Row] = func(a []val) val { return dw16RowRef(IntrDW16Row, a, 4) }
	extIntrinsics[IntrMVEDW16Row] = func(a []val) val { return dw16RowRef(IntrMVEDW16Row, a, 8) }
	extIntrinsics[IntrNEONDW16Row] = func(a []val) val { return dw16RowRef(IntrNEONDW16Row, a, 8) }
}

// smmulr is SMMULR: (a·m + 2^31) >> 32, for a and m in int32.
func smmulr(a, m int64) int64 { return (a*m + 1<<31) >> 32 }

// dw16RowRef is IntrDW16Row (group 4) and IntrMVEDW16Row (group 8).
func dw16RowRef(name string, a []val, group int64) val {
	y, x, w, p := a[0], a[1], a[2], a[3]
	ar := make([]int64, 13)
	for i := range ar {
		ar[i] = a[4+i].i
	}
	H, W, C, OW, ih0, sw, pl, KH, KW, dh, dw, lo, hi := ar[0], ar[1], ar[2], ar[3], ar[4], ar[5], ar[6], ar[7], ar[8], ar[9], ar[10], ar[11], ar[12]
	if C%group != 0 || C <= 0 || KH <= 0 || KW <= 0 {
		panic(fmt.Sprintf("%s: C = %d, KH = %d, KW = %d", name, C, KH, KW))
	}
	half := func(word int64, hi bool) int64 {
		if hi {
			return int64(int16(uint32(word) >> 16))
		}
		return int64(int16(uint32(word)))
	}
	// weight is channel c's tap (kh, kw); bias and mult its parameters.
	weight := func(c, kh, kw int64) int64 {
		q, j := c/group, c%group
		if group == 8 {
			return w.p.I[w.i+((q*KH+kh)*KW+kw)*8+j]
		}
		return half(w.p.I[w.i+((q*KH+kh)*KW+kw)*2+j/2], j%2 == 1)
	}
	param := func(c, k int64) int64 {
		q, j := c/group, c%group
		if group == 8 {
			return p.p.I[p.i+16*q+8*k+4*(j%2)+j/2]
		}
		return p.p.I[p.i+8*q+4*k+j]
	}
	for ow := int64(0); ow < OW; ow++ {
		iw0 := ow*sw - pl
		for c := int64(0); c < C; c++ {
			acc := param(c, 0)
			for kh := int64(0); kh < KH; kh++ {
				ih := ih0 + kh*dh
				if ih < 0 || ih >= H {
					continue
				}
				for kw := int64(0); kw < KW; kw++ {
					iw := iw0 + kw*dw
					if iw < 0 || iw >= W {
						continue
					}
					acc += x.p.I[x.i+(ih*W+iw)*C+c] * weight(c, kh, kw)
					if acc > math.MaxInt32 || acc < math.MinInt32 {
						panic(fmt.Sprintf("%s: a partial sum %d leaves int32", name, acc))
					}
				}
			}
			v := smmulr(acc, param(c, 1))
			y.p.I[y.i+ow*C+c] = min(max(v, lo), hi)
		}
	}
	return val{}
}

// dw16Rows lowers a 16x8 depthwise convolution (int16 input, int8 weights,
// a 64-bit accumulator as TFLite's 16x8 kernels keep) as one IntrDW16Row
// call per output row, where that is exact:
//   - depth multiplier 1, channels a multiple of 4 (a review measured the
//     plain-C tail that took the last one to three channels up to 2.7 times
//     slower than the patch form: 24×24×3 on the M4, 306,210 against
//     113,477), symmetric weights;
//   - the requantization runs on 32 bits (requantEpilogue.narrow64, which
//     convSetup runs, proved every channel's Σ|w|·2^15 + |bias| ≤ 2^31 − 1
//     and its shift in SMMULR's range, and holds the multipliers);
//   - the output's zero point is 0 (TFLite's int16 tensors).
//
// on the dsp, mve and neon targets. Otherwise (ok false) the convolution keeps
// the patch and dot_s16s8 form.
func (k *kctx) dw16Rows(cs *convSetup, a *graph.Conv2DAttrs) (Stmt, bool) {
	// (DSP cores, Helium and NEON only: without SMLAxy the helper's plain C
	// measured slower on the Cortex-M3 than the patch form, 367,309 against
	// 352,759 instructions for a 25×5×64 layer; NEON takes channel octets.)
	if k.target != DSP.Name && k.target != MVE.Name && (k.target != NEON.Name || cs.Cin%8 != 0) {
		return nil, false
	}
	// narrow64 (run by convSetup) proved both conditions for every
	// channel and holds the SMMULR multipliers.
	ep := cs.ep
	if !cs.intMode || cs.xt.DType != graph.Int16 || cs.wt.DType != graph.Int8 || cs.yt.DType != graph.Int16 || ep == nil || !ep.smmulr || ep.zp != 0 ||
		cs.group != cs.Cin || cs.Cg != 1 || cs.coPerG != 1 || cs.Cin%4 != 0 || a.Pad.Top < 0 || a.Pad.Left < 0 {
		return nil, false
	}
	Cn, KH, KW := cs.Cin, cs.KH, cs.KW
	taps := KH * KW
	wv := cs.wt.Data.I
	// Helium and NEON take channel octets where the channels divide by 8;
	// otherwise quads, whose SMLAxy code the M55 runs too.
	mve := (k.target == MVE.Name || k.target == NEON.Name) && Cn%8 == 0
	words := make([]int64, Cn*taps/2)
	if mve {
		words = make([]int64, Cn*taps)
	}
	params := make([]int64, Cn*2)
	for c := 0; c < Cn; c++ {
		var b int64
		if cs.bias != nil {
			b = cs.bias.Data.I[c]
		}
		mp := ep.sm0
		if ep.sm != nil {
			mp = ep.sm.Data.I[c]
		}
		if mve {
			q, j := c/8, c%8
			at := 16*q + 4*(j%2) + j/2
			params[at], params[at+8] = b, mp
			for tp := 0; tp < taps; tp++ {
				words[(q*taps+tp)*8+j] = wv[c*taps+tp]
			}
			continue
		}
		q, j := c/4, c%4
		params[8*q+j], params[8*q+4+j] = b, mp
		for tp := 0; tp < taps; tp++ {
			at := ((q*taps)+tp)*2 + j/2
			h := uint32(uint16(int16(wv[c*taps+tp])))
			if j%2 == 1 {
				h <<= 16
			}
			words[at] = int64(int32(uint32(words[at]) | h))
		}
	}
	wb, intr := constBuf(k.n.Name+"_dw16_weights", I32, []int{len(words)}, words), IntrDW16Row
	if mve {
		wb, intr = constBuf(k.n.Name+"_dw16_weights", graph.Int16, []int{len(words)}, words), IntrMVEDW16Row
		if k.target == NEON.Name {
			intr = IntrNEONDW16Row
		}
	}
	pb := constBuf(k.n.Name+"_dw16_params", I32, []int{len(params)}, params)
	k.f.Op = "depthwise_conv2d"
	H, W, OH, OW := cs.H, cs.W, cs.OH, cs.OW
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	return Loops([]string{"n", "oh"}, []int{cs.N, OH}, func(o []Expr) Stmt {
		n, oh := o[0], o[1]
		y := &Ptr{Buf: cs.y, Index: Mul(Add(Mul(n, C(int64(OH))), oh), C(int64(OW*Cn)))}
		x := &Ptr{Buf: cs.x, Index: Mul(n, C(int64(H*W*Cn)))}
		ih0 := Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top)))
		return &Evaluate{X: Call(intr, I32, y, x, &Ptr{Buf: wb, Index: C(0)}, &Ptr{Buf: pb, Index: C(0)},
			C(int64(H)), C(int64(W)), C(int64(Cn)), C(int64(OW)), ih0, C(int64(sw)), C(int64(a.Pad.Left)),
			C(int64(KH)), C(int64(KW)), C(int64(dh)), C(int64(dw)), C(cs.ep.lo), C(cs.ep.hi))}
	}), true
}
