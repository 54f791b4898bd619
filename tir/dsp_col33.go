package tir

import (
	"maps"
	"slices"
)

// IntrDSPCol33C3 gathers one 3×3 window of a three-channel (RGB) input
// into 14 pair words, the column of the im2col GEMM (knob col33, the
// default for 3×3 three-channel layers with int16 weights):
//
//	dsp_col33c3_s8(dst *int32, src *int8, rs, off):
//	with v(r, i) = src[r·rs + i] + off, row r < 3, byte i < 9 of its window:
//	  dst[4r]   = pair(v(r,0), v(r,2))   dst[4r+1] = pair(v(r,1), v(r,3))
//	  dst[4r+2] = pair(v(r,4), v(r,6))   dst[4r+3] = pair(v(r,5), v(r,7))
//	  dst[12]   = pair(v(0,8), v(1,8))   dst[13]   = v(2,8) (its high half the sign)
//
// Each kernel row's nine bytes are two words and a byte: one SXTAB16
// each for the pairs, the last bytes of the three rows packed two to a
// word. That is IntrDSPWiden's order for the logical K order col33Order
// gives (the weights are packed in it, DSPPackWeights, their 28th zero):
// 27 taps in 14 words, where the three-channel rows (IntrDSPWiden3) took
// 18 (a fourth channel of zero weights per pixel), and one gather a pixel
// where the rows' two-by-two blocks loaded every row word per block.
// Measured on mps2-an386: VWW's first layer (96×96×3 → 48×48×8, stride 2)
// 552,773 instructions against the rows form's 663,379; a MobileNetV2
// 0.35's (→ 16 channels) 1,014,402 against 1,252,676; IC's (32×32×3 →
// 16, stride 1) 456,429 against 537,774.
const IntrDSPCol33C3 = "dsp_col33c3_s8"

func init() {
	extIntrinsics[IntrDSPCol33C3] = func(a []val) val {
		dst, src, rs, off := a[0], a[1], a[2].i, a[3].i
		v := func(r, i int64) int64 { return src.p.I[src.i+r*rs+i] + off }
		for r := int64(0); r < 3; r++ {
			d := dst.i + 4*r
			dst.p.I[d] = pack16(v(r, 0), v(r, 2))
			dst.p.I[d+1] = pack16(v(r, 1), v(r, 3))
			dst.p.I[d+2] = pack16(v(r, 4), v(r, 6))
			dst.p.I[d+3] = pack16(v(r, 5), v(r, 7))
		}
		dst.p.I[dst.i+12] = pack16(v(0, 8), v(1, 8))
		dst.p.I[dst.i+13] = v(2, 8)
		return val{}
	}
}

// col33Order is the logical K order of IntrDSPCol33C3's column: entry k
// is the tap kh·9 + kw·3 + ic it holds, or -1 (a zero weight).
func col33Order() []int {
	o := make([]int, 28)
	for r := 0; r < 3; r++ {
		for i := 0; i < 8; i++ {
			o[8*r+i] = 9*r + i
		}
	}
	// Group six: words 12 = (L24, L26), 13 = (L25, L27).
	o[24], o[26], o[25], o[27] = 8, 17, 26, -1
	return o
}

// col33Weights reorders weights w[oc][27] (taps kh, kw, ic) into
// col33Order's 28 per channel.
func col33Weights(w []int64, cout int) []int64 {
	ord := col33Order()
	out := make([]int64, 0, cout*28)
	for oc := 0; oc < cout; oc++ {
		for _, k := range ord {
			if k < 0 {
				out = append(out, 0)
			} else {
				out = append(out, w[oc*27+k])
			}
		}
	}
	return out
}

// col33Eligible reports whether c is a 3×3 convolution of three input
// channels, NHWC rows, dilation 1, that IntrDSPCol33C3 can gather: it
// returns the input row stride in bytes.
func (c *convNest) col33Eligible() (rs int, ok bool) {
	a := c.accNest
	if c.KH != 3 || c.KW != 3 || c.Cg != 3 {
		return 0, false
	}
	xs := a.x.Buf.Shape
	if len(xs) != 4 || xs[3] != 3 || !rowMajor(a.x.Buf) || a.xOff < -255 || a.xOff > 255 {
		return 0, false
	}
	W := xs[2]
	_, step, ok := c.strides(flatIndex(a.x.Buf, a.x.Indices), c.kh, c.kw, c.ic)
	if !ok || !slices.Equal(step, []int64{int64(W * 3), 3, 1}) {
		return 0, false
	}
	return W * 3, true
}

// col33Fill gathers pixel i's window (the input index x0 at kh = kw = ic
// = 0) into col[at:at+14]: straight from the input where the whole window
// is inside it (cond true at kh = kw = 0 and at kh = kw = 2), else through
// a staging window of three rows of 12 bytes, padding taps the input zero
// point (which widens to 0).
func (c *convNest) col33Fill(col *Buffer, at int, x0 Expr, rs int, m map[*Var]Expr) Stmt {
	a := c.accNest
	direct := &Evaluate{X: Call(IntrDSPCol33C3, I32, ptr(col, C(int64(at))), ptr(a.x.Buf, x0), C(int64(rs)), C(a.xOff))}
	if a.cond == nil {
		return direct
	}
	// bind is m with the window position kh, kw (and channel ic) bound.
	bind := func(kh, kw int64, ic Expr) map[*Var]Expr {
		b := maps.Clone(m)
		b[c.kh], b[c.kw], b[c.ic] = C(kh), C(kw), ic
		return b
	}
	inside := func(kh, kw int64) Expr { return SimplifyExpr(SubstituteExpr(a.cond, bind(kh, kw, C(0)))) }
	stage := NewBuffer(col.Name+"_win", a.x.Buf.DType, []int{36}, ScopeLocal)
	zp := &IntImm{T: a.x.Buf.DType, V: -a.xOff}
	var fill []Stmt
	for kh := int64(0); kh < 3; kh++ {
		for kw := int64(0); kw < 3; kw++ {
			cp := loopK("ic", 3, Serial, func(ic Expr) Stmt {
				return flatStore(stage, Add(C(kh*12+kw*3), ic), SubstituteExpr(a.x, bind(kh, kw, ic)))
			})
			pad := loopK("ic", 3, Serial, func(ic Expr) Stmt { return flatStore(stage, Add(C(kh*12+kw*3), ic), zp) })
			fill = append(fill, &IfThenElse{Cond: inside(kh, kw), Then: cp, Else: pad})
		}
	}
	fill = append(fill, &Evaluate{X: Call(IntrDSPCol33C3, I32, ptr(col, C(int64(at))), ptr(stage, C(0)), C(12), C(a.xOff))})
	staged := &Allocate{Buf: stage, Body: Block(fill...)}
	return &IfThenElse{Cond: And(inside(0, 0), inside(2, 2)), Then: direct, Else: staged}
}
