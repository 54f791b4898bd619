package tir

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// The planar 3×3 depthwise schedule (knob dw_planar, default 1): the input
// rows are re-laid out once into one int16 plane row per channel, so two
// horizontally adjacent taps of one channel share a word and SMLAD does two
// of a window's multiplications at once. With the weights of kernel row r
// as the words (g0, g1) and (g1, g2), two adjacent outputs of one channel
// at stride 1 (plane words P0 = (x0, x1), P1 = (x2, x3)) are
//
//	y0 += SMLAD(P0, (g0, g1)) + SMLABT(P1, (g1, g2))   x0·g0 + x1·g1 + x2·g2
//	y1 += SMLATB(P0, (g0, g1)) + SMLAD(P1, (g1, g2))   x1·g0 + x2·g1 + x3·g2
//
// four instructions for six multiplications where the channel-interleaved
// schedules need six, and at stride 2 one output is SMLAD(P0, (g0, g1)) +
// SMLABT(P1, (g1, g2)). Knob dw_step (default 4) computes four adjacent
// outputs of a channel per load of its weights and requantization words
// instead of two. The planes of the last three input rows stay in a
// ring on the stack (3 · C · ⌈W'/2⌉ words), each row laid out once; a
// layer whose ring exceeds the target's stack (Target.StackBytes) takes
// the next form instead. Costs: that stack, and the layout pass (about
// two instructions per input value), which it repays on every MLPerf Tiny
// layer (session 9); the shared helper stays the algorithm knob's other
// value for the tuner.

// IntrDSPPlanes lays out one input row as channel planes of pair words:
//
//	dsp_planes_s8(dst *int32, x *int8, w, c, wp2, padl, xo, xs)
//	for word k < wp2 and channel ch < c, with a = 2k − padl:
//	  dst[k·c + ch] = pair(v(a, ch), v(a + 1, ch)),
//	  v(i, ch) = x[i·xs + ch] + xo for 0 <= i < w, else 0
//
// (xs, the input's pixel stride, is c but where the layer runs in channel
// slices: dwPlanar.)
const IntrDSPPlanes = "dsp_planes_s8"

// IntrDSPDWPlanar is one output row of a planar 3×3 depthwise convolution:
//
//	dsp_dwp3_s8(out *int8, q *int32, s0, s1, s2, p *int32, nc, ow, stride, step, zr, lo, hi, os)
//	for output j < ow and channel ch < nc (P = p[12ch:]):
//	  acc = P[6] + Σ_{k<3} Σ_{t<3} plane(q + sk, ch, j·stride + t) · g(k, t)
//	  out[j·os + ch] = dsp_requant_s8(acc, P[9], P[7] as uint32 + P[8]·2^32, P[10], zr, lo, hi)
//
// where the window's three input rows are the planes at word offsets s0,
// s1 and s2 of q (ring slots: one base pointer, and offsets that are
// constants in the C, so the channel loop walks one pointer for all three
// rows), plane(r, ch, i) is the int16 half i%2 (0: low) of word r[(i/2)·nc + ch]
// and g(k, t) is the low (t = 0) or high (t = 1) half of P[2k], or the high
// half of P[2k+1] (t = 2); the low half of P[2k+1] is g(k, 1) again.
// Step (2 or 4, knob dw_step) is how many outputs of one channel the C
// computes per load of the channel's twelve words; it does not change the
// result, nor which words are read: four outputs at stride 1 read the
// words j/2..j/2+2 (columns j..j+5, the last output's window), at stride
// 2 words j..j+4 (columns 2j..2j+9), which pairs at j and j+2 read too.
//
// IntrDSPDWPlanarR is the same for an output whose lower clamp lo is at or
// above its zero point (a fused ReLU): P[6] is 0 and the bias is folded
// into k0 (P[7], P[8] hold k0 + bias·m), and the sign correction of
// IntrDSPRequant is left out:
//
//	out = clamp(⌊(acc·m + k0) / 2^(32+e1)⌋ + zr, lo, hi)
//
// For acc + bias >= 0 the correction is zero anyway; for acc + bias < 0 both
// TFLite's result and this one are at most the zero point (m >= 0, e1 >=
// 0: acc·m + k0 − bias·m < 2^30 + 2^(31+e1) + zk·2^(32+e1) <= (1 + zk)·2^(32+e1)),
// which the clamp raises to lo: the same output.
const IntrDSPDWPlanarR = "dsp_dwp3r_s8"

const IntrDSPDWPlanar = "dsp_dwp3_s8"

// IntrDSPDWPlanarS is the ReLU form with the layer's channels scaled to
// one shift t (DSPGemmSName's derivation, tir/dsp_gemm_shift.go): nine
// words per channel, the six weight words scaled by 2^j, the scaled bias,
// the multiplier and A:
//
//	dsp_dwp3s_s8(out *int8, q *int32, s0, s1, s2, p *int32, nc, ow, stride, step, t, lo, hi, os)
//	  acc = P[6] + Σ_{k<3} Σ_{t<3} plane(q + sk, ch, j·stride + t) · g(k, t)   (P = p[9ch:])
//	  out[j·os + ch] = clamp((⌊acc·P[7] / 2^32⌋ + P[8]) >> t, lo, hi)
const IntrDSPDWPlanarS = "dsp_dwp3s_s8"

// DWPlanarSWords is IntrDSPDWPlanarS's table words per channel.
const DWPlanarSWords = 9

// IntrDSPDWPlanarSN is IntrDSPDWPlanarS for an output without a fused
// ReLU, with TFLite's sign correction (DSPGemmSNName's D, the tenth word
// of a channel):
//
//	dsp_dwp3sn_s8(out *int8, q *int32, s0, s1, s2, p *int32, nc, ow, stride, step, t, lo, hi, os)
//	  out[j·os + ch] = clamp((⌊acc·P[7] / 2^32⌋ + P[8] − [acc < 0]·P[9]) >> t, lo, hi)   (P = p[10ch:])
const IntrDSPDWPlanarSN = "dsp_dwp3sn_s8"

// DWPlanarSNWords is IntrDSPDWPlanarSN's table words per channel.
const DWPlanarSNWords = 10

func init() {
	DeclareKnob("dsp.dw_planar", 0, 1) // depthwise 3x3: channel planes, SMLAD over adjacent taps
	DeclareAlgorithm("dsp.dw_planar")
	DeclareKnob("dsp.dw_step", 2, 4) // planar depthwise: outputs per channel per load of its weights and requantization words
	extIntrinsics[IntrDSPPlanes] = func(a []val) val {
		dst, x, w, c, wp2, padl, xo, xs := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i, a[6].i, a[7].i
		if xs < c {
			panic(fmt.Sprintf("%s: pixel stride %d under %d channels", IntrDSPPlanes, xs, c))
		}
		layPlanes(dst, x, w, c, wp2, padl, xo, xs, 1)
		return val{}
	}
	planar := func(relu, shift bool) func(a []val) val {
		name, words := IntrDSPDWPlanar, int64(12)
		if relu {
			name = IntrDSPDWPlanarR
		}
		if shift {
			name, words = IntrDSPDWPlanarS, DWPlanarSWords
			if !relu {
				name, words = IntrDSPDWPlanarSN, DWPlanarSNWords
			}
		}
		return func(a []val) val {
			out, q, p := a[0], a[1], a[5]
			rows := []val{{p: q.p, i: q.i + a[2].i}, {p: q.p, i: q.i + a[3].i}, {p: q.p, i: q.i + a[4].i}}
			nc, ow, stride, step, zr, lo, hi, os := a[6].i, a[7].i, a[8].i, a[9].i, a[10], a[11], a[12], a[13].i
			if stride != 1 && stride != 2 || step != 2 && step != 4 || os < nc {
				panic(fmt.Sprintf("%s: stride %d, step %d, output stride %d for %d channels", name, stride, step, os, nc))
			}
			rq := extIntrinsics[IntrDSPRequant]
			half := func(word int64, hi bool) int64 {
				if hi {
					return int64(int16(word >> 16))
				}
				return int64(int16(word))
			}
			for ch := int64(0); ch < nc; ch++ {
				P := func(k int64) int64 { return p.p.I[p.i+words*ch+k] }
				for k := int64(0); k < 3; k++ {
					if half(P(2*k), true) != half(P(2*k+1), false) {
						panic(fmt.Sprintf("%s: channel %d row %d: inconsistent weight words", name, ch, k))
					}
				}
				for j := int64(0); j < ow; j++ {
					acc := P(6)
					for k := int64(0); k < 3; k++ {
						r := rows[k]
						g := [3]int64{half(P(2*k), false), half(P(2*k), true), half(P(2*k+1), true)}
						for t := int64(0); t < 3; t++ {
							i := j*stride + t
							acc += half(r.p.I[r.i+(i/2)*nc+ch], i%2 == 1) * g[t]
						}
					}
					if acc > math.MaxInt32 || acc < math.MinInt32 {
						panic("int32 overflow in " + name)
					}
					k0 := int64(uint32(P(7))) + P(8)<<32
					var y int64
					switch {
					case shift && !relu && acc < 0:
						y = smmlaRequant(name, acc, P(7), P(8)-P(9), zr.i, lo.i, hi.i)
					case shift:
						y = smmlaRequant(name, acc, P(7), P(8), zr.i, lo.i, hi.i)
					case relu:
						y = reluRequant(name, acc, P(9), k0, P(10), zr.i, lo.i, hi.i).i
					default:
						y = rq([]val{{i: acc}, {i: P(9)}, {i: k0}, {i: P(10)}, zr, lo, hi}).i
					}
					out.p.I[out.i+j*os+ch] = y
				}
			}
			return val{}
		}
	}
	extIntrinsics[IntrDSPDWPlanar] = planar(false, false)
	extIntrinsics[IntrDSPDWPlanarR] = planar(true, false)
	extIntrinsics[IntrDSPDWPlanarS] = planar(true, true)
	extIntrinsics[IntrDSPDWPlanarSN] = planar(false, true)
}

// layPlanes is IntrDSPPlanes and IntrDSPPlanesRep: for word k < wp2 and
// channel ch < c, dst[k·c + ch] = pair(v(2k − padl, ch/m), v(2k − padl + 1,
// ch/m)), v(i, ci) = x[i·xs + ci] + xo for 0 <= i < w, else 0.
func layPlanes(dst, x val, w, c, wp2, padl, xo, xs, m int64) {
	v := func(i, ci int64) int64 {
		if i < 0 || i >= w {
			return 0
		}
		return x.p.I[x.i+i*xs+ci] + xo
	}
	for ch := int64(0); ch < c; ch++ {
		for k := int64(0); k < wp2; k++ {
			a := 2*k - padl
			dst.p.I[dst.i+k*c+ch] = pack16(v(a, ch/m), v(a+1, ch/m))
		}
	}
}

// dwEpilogue reads the per-channel tables of a depthwise nest whose store
// fastRequant turned into IntrDSPRequant: bias, multiplier, k0 and e1 per
// channel, and the constant zr, lo and hi.
func (a *accNest) dwEpilogue(store *Store, ocV *Var, Cn int) (tabs [4][]int64, zr, lo, hi int64, ok bool) {
	cast, ok := store.Value.(*Cast)
	if !ok || cast.T != graph.Int8 {
		return tabs, 0, 0, 0, false
	}
	rq, ok := cast.X.(*Intrinsic)
	if !ok || rq.Name != IntrDSPRequant {
		return tabs, 0, 0, 0, false
	}
	if l, ok := rq.Args[0].(*Load); !ok || l.Buf != a.acc {
		return tabs, 0, 0, 0, false
	}
	for i, e := range []Expr{a.init, rq.Args[1], rq.Args[2], rq.Args[3]} {
		v, err := constPerChannel(e, ocV, Cn)
		if err != nil {
			return tabs, 0, 0, 0, false
		}
		tabs[i] = v
	}
	for c := range Cn {
		if tabs[0][c] > math.MaxInt32 || tabs[0][c] < math.MinInt32 || tabs[1][c] < 0 || tabs[1][c] > math.MaxInt32 {
			return tabs, 0, 0, 0, false
		}
	}
	for i, d := range []*int64{&zr, &lo, &hi} {
		v, ok := IsConst(rq.Args[4+i])
		if !ok {
			return tabs, 0, 0, 0, false
		}
		*d = v
	}
	return tabs, zr, lo, hi, true
}

// dwGeometry reads a depthwise convolution's strides and top and left
// padding over NHWC input rows of W pixels (strides 1 or 2, a window of its
// kernel's size) and an NHWC output written at store with unit channel
// stride.
func (c *convNest) dwGeometry(store *Store, W int) (sh, sw int64, padT, padL int, ok bool) {
	return c.dwGeometryUpTo(store, W, 2)
}

// dwGeometryUpTo is dwGeometry with a top and left padding up to maxPad
// (paddingUpTo).
func (c *convNest) dwGeometryUpTo(store *Store, W, maxPad int) (sh, sw int64, padT, padL int, ok bool) {
	return c.dwGeometryIn(store, W, c.C, maxPad)
}

// dwGeometryIn is dwGeometryUpTo over an input of Ci channels, where output
// channel oc reads input channel oc/M (M = C/Ci: a depth multiplier, or
// every output channel of a one-channel convolution reading its one
// input channel), checked for every oc.
func (c *convNest) dwGeometryIn(store *Store, W, Ci, maxPad int) (sh, sw int64, padT, padL int, ok bool) {
	Cn := c.C
	if Ci < 1 || Cn%Ci != 0 {
		return 0, 0, 0, 0, false
	}
	M := int64(Cn / Ci)
	xf := flatIndex(c.x.Buf, c.x.Indices)
	xb, xst, ok1 := c.strides(xf, c.oh, c.ow, c.kh, c.kw)
	ob, ost, ok2 := c.strides(flatIndex(store.Buf, store.Indices), c.oh, c.ow, c.oc)
	if !ok1 || !ok2 || ob != 0 || !slices.Equal(ost, []int64{int64(c.OW * Cn), int64(Cn), 1}) ||
		!slices.Equal(xst[2:], []int64{int64(W * Ci), int64(Ci)}) {
		return 0, 0, 0, 0, false
	}
	// The input channel of every output channel (the other loop variables
	// at 0): oc/M past the origin.
	zero := map[*Var]Expr{}
	for _, v := range []*Var{c.n, c.oh, c.ow, c.kh, c.kw, c.ic} {
		zero[v] = C(0)
	}
	for oc := range int64(Cn) {
		m := merge(zero, map[*Var]Expr{c.oc: C(oc)})
		if v, ok := IsConst(SimplifyExpr(SubstituteExpr(xf, m))); !ok || v != xb+oc/M {
			return 0, 0, 0, 0, false
		}
	}
	sh, sw = xst[0]/int64(W*Ci), xst[1]/int64(Ci)
	if xst[0] != sh*int64(W*Ci) || xst[1] != sw*int64(Ci) || sh < 1 || sh > 2 || sw < 1 || sw > 2 {
		return 0, 0, 0, 0, false
	}
	padT, padL, ok = c.paddingUpTo(xb, W, Ci, maxPad)
	return sh, sw, padT, padL, ok
}

// dwPlanar builds the planar schedule of a 3×3 depthwise convolution (one
// image, NHWC, strides 1 or 2, padding at most 2), or reports false.
func (c *convNest) dwPlanar(f *PrimFunc, store *Store) (*PrimFunc, bool) {
	a, Cn, OH, OW := c.accNest, c.C, c.OH, c.OW
	xs := a.x.Buf.Shape
	if c.N != 1 || len(xs) != 4 || xs[0] != 1 || xs[3] < 1 || Cn%xs[3] != 0 || !rowMajor(a.x.Buf) || a.xOff < -255 || a.xOff > 255 {
		return nil, false
	}
	H, W := xs[1], xs[2]
	Ci := xs[3] // Cn, or Cn/M: a depth multiplier M (replicated planes)
	M := Cn / Ci
	// Replicated planes (a byte at a time) also where the channels are
	// not a multiple of four, which dsp_planes_s8 reads a word at a time.
	rep := M > 1 || Cn%4 != 0
	tabs, zr, lo, hi, ok := a.dwEpilogue(store, c.oc, Cn)
	if !ok {
		return nil, false
	}
	sh, sw, padT, padL, ok := c.dwGeometryIn(store, W, Ci, 2)
	if !ok {
		return nil, false
	}
	// Channels not a multiple of four at stride 2: the blocked generic
	// loops take 0.89 to 0.94 times the planar form's instructions over
	// byte-wise planes (6 to 18 channels, 13 and 24 wide; at stride 1 they
	// take 1.85 times).
	if rep && M == 1 && sw == 2 && !f.WantInPlace {
		return nil, false
	}
	// int8 weights, or int8 weights less their zero point
	// (parseAccNestFold): int16 halves of the pair words.
	for _, v := range a.w.Buf.Data.I {
		if v < -255 || v > 255 {
			return nil, false
		}
	}
	// Words per channel plane: every input column, and the last window's
	// second word.
	wp2 := max((padL+W+1)/2, (OW-1)/2+2)
	if sw == 2 {
		wp2 = max((padL+W+1)/2, OW+1)
	}
	// The ring is the kernel's one local array: past the target's stack
	// (PrimFunc.StackBytes, when known) the layer takes another form, as
	// the caller's order has it (the shared helper, IntrDSPDW3x3, whose
	// tables are constants, or the channel-quad schedule), and reads none
	// of this form's knobs. (MobileNet v2 at 224×224: 3 · 96 · 57 words,
	// 65,664 B, against the 15,360 B mps2-an386 leaves its kernels.)
	//
	// Past it, the layer runs in equal slices of its channels (a multiple
	// of four each), every slice the whole image over a ring of its own
	// channels: the first slice whose ring fits. (It took the shared
	// helper at 1.6 times the instructions: a review's 64 channels 40
	// wide, and every stride-1 depthwise layer of MobileNetV2 1.0 at
	// 96×96.)
	cs := Cn // channels a slice
	if lim := f.StackBytes; lim > 0 && dwPlanarRingBytes(Cn, wp2) > lim {
		cs = 0
		if rep {
			return nil, false // replicated planes: the whole ring or nothing
		}
		for n := 2; n <= Cn/4; n++ {
			if Cn%n == 0 && (Cn/n)%4 == 0 && dwPlanarRingBytes(Cn/n, wp2) <= lim {
				cs = Cn / n
				break
			}
		}
		// Slices of four channels at stride 2 (68 = 4·17 channels 48
		// wide: seventeen slices) measured 0.65% over the shared helper,
		// which the layer then keeps.
		if cs == 0 || cs < 8 && sw == 2 {
			return nil, false
		}
	}
	// Outputs per channel step: four share one load of the channel's
	// twelve words, which saves 2 to 3.5 of 18 to 21 instructions per output
	// (measured on every MLPerf Tiny depthwise layer, ReLU or not, stride 1
	// or 2, and never a loss: a row narrower than four runs the pair and
	// single loops either way). Two stays for the tuner.
	step := knob(f, "dw_step", 4)
	if step != 2 && step != 4 {
		return nil, false
	}
	// The ReLU form: every channel's zero point zk + zr at or below lo.
	relu := true
	for c := 0; c < Cn; c++ {
		if !reluForm(tabs[2][c], tabs[3][c], zr, lo) {
			relu = false
		}
	}
	g := a.w.Buf.Data.I // [c][3][3]
	stream := make([]int64, 0, 12*Cn)
	kernel, last := IntrDSPDWPlanar, zr
	if relu {
		kernel = IntrDSPDWPlanarR
	}
	// The layer scaled to one shift where every channel takes it (knob
	// requant_shift, default on): IntrDSPDWPlanarS for the ReLU form,
	// IntrDSPDWPlanarSN, with TFLite's sign correction, without it.
	js := make([]int64, Cn) // per-channel scale shifts (0: none)
	var ds dwShift
	shifted := false
	if knob(f, "requant_shift", 1) != 0 {
		if ds, shifted = dwSharedShift(tabs, g, 9, a.xAbs(), zr, !relu); shifted {
			kernel, last, js = IntrDSPDWPlanarS, ds.t, ds.j
			if !relu {
				kernel = IntrDSPDWPlanarSN
			}
			lo, hi = max(lo, -128), min(hi, 127)
		}
	}
	for c := range Cn {
		sh := js[c]
		for k := 0; k < 3; k++ {
			t := g[(c*3+k)*3 : (c*3+k)*3+3]
			stream = append(stream, pack16(t[0]<<sh, t[1]<<sh), pack16(t[1]<<sh, t[2]<<sh))
		}
		bias, k0 := tabs[0][c], tabs[2][c]
		switch {
		case shifted && relu:
			stream = append(stream, ds.words[c][:3]...)
		case shifted:
			stream = append(stream, ds.words[c][:]...)
		case relu:
			k0 += bias * tabs[1][c]
			stream = append(stream, 0, int64(int32(uint32(k0))), k0>>32, tabs[1][c], tabs[3][c], 0)
		default:
			stream = append(stream, bias, int64(int32(uint32(k0))), k0>>32, tabs[1][c], tabs[3][c], 0)
		}
	}
	pk := constBuf(f.Name+"_dwp3", I32, []int{len(stream)}, stream)
	words := int64(len(stream) / Cn)
	planes := NewBuffer(f.Name+"_planes", I32, []int{dwPlanarRingBytes(cs, wp2) / 4}, ScopeLocal)
	// Input row ih lives in ring slot ih mod 3 (ringLines): the kernel's
	// three rows are one base pointer and three constant offsets, which
	// frees two registers in its channel loop.
	ring := planarRing{planes: planes, rows: 3, cs: cs, wp2: wp2, H: H, W: W, Ci: Ci, M: M, padT: padT, padL: padL, sh: int(sh), rep: rep}
	body := c.planarRingBody(ring, func(oh, c0 Expr, slotAt func(int64) Expr, base int64) Stmt {
		return &Evaluate{X: Call(kernel, I32, ptr(store.Buf, SimplifyExpr(Add(Mul(oh, C(int64(OW*Cn))), c0))),
			ptr(planes, C(0)), slotAt(base), slotAt(base+1), slotAt(base+2),
			ptr(pk, SimplifyExpr(Mul(c0, C(words)))), C(int64(cs)), C(int64(OW)), C(sw), C(int64(step)), C(last), C(lo), C(hi), C(int64(Cn)))}
	})
	h := *f
	h.Body = &Allocate{Buf: planes, Body: Block(body...)}
	// In place (output over input at one offset): output rows 0..oh cover
	// input bytes of rows <= oh when OW <= W, and before output row oh is
	// stored every input row up to oh·sh − padT + 2 is in the ring; a row
	// laid out later, from oh·sh − padT + 3 on, is above oh since padT <= 2,
	// so it is still intact.
	// In slices too: an output element lands on an input element of its
	// own channel (both NHWC with Cn channels), so a slice overwrites only
	// input the later slices do not read.
	h.InPlaceSafe = M == 1 && OH <= H && OW <= W
	return &h, true
}

// dwShift is a planar depthwise layer's channels scaled to one shift t
// (sharedShift, DSPGemmSName's derivation): channel c's weights and bias
// by 2^j[c], and its requantization words the scaled bias, the
// multiplier, A and (for an output that needs TFLite's sign correction)
// D, DSPGemmSNName's.
type dwShift struct {
	t     int64
	j     []int64
	words [][4]int64
}

// dwSharedShift scales a depthwise layer to one shift, from its epilogue
// tables (dwEpilogue: bias, multiplier, k0 without the bias, e1), its
// weights g (taps a channel, channel-major), the bound xAbs on |x + xo|
// and the constant zr; signed adds each channel's D (signCorrection). ok
// is false where some channel cannot take it (sharedShift's limits, or
// signCorrection's).
func dwSharedShift(tabs [4][]int64, g []int64, taps int, xAbs, zr int64, signed bool) (dwShift, bool) {
	n := len(tabs[0])
	if len(g) != taps*n {
		return dwShift{}, false
	}
	wmax, wsum, live := make([]int64, n), make([]int64, n), make([]bool, n)
	for c := range n {
		live[c] = true
		for _, v := range g[taps*c : taps*(c+1)] {
			wmax[c], wsum[c] = max(wmax[c], abs64(v)), wsum[c]+abs64(v)
		}
	}
	t, j, A, ok := sharedShift(tabs[2], tabs[1], tabs[3], tabs[0], wmax, wsum, live, xAbs, zr)
	if !ok {
		return dwShift{}, false
	}
	s := dwShift{t: t, j: j, words: make([][4]int64, n)}
	for c := range n {
		s.words[c] = [4]int64{tabs[0][c] << j[c], tabs[1][c], A[c], 0}
		if signed {
			d, ok := signCorrection(tabs[1][c], j[c], A[c])
			if !ok {
				return dwShift{}, false
			}
			s.words[c][3] = d
		}
	}
	return s, true
}

// dwPlanarRingBytes is the stack of the planar schedule's ring: three
// input rows of c channel planes of wp2 int32 words.
func dwPlanarRingBytes(c, wp2 int) int { return 3 * c * wp2 * 4 }

// ringLines is the body of a schedule that keeps the last three input lines
// (rows, or columns) laid out in a ring: input line il in the slot of il mod
// 3. The output lines run in groups of three, so that every slot is a
// constant (il = (3·g + r)·s − pad + k is r·s − pad + k mod 3). A prologue
// lays out the first output line's window; every later output line first
// lays out its s new input lines. layout(il, m) lays out input line il (or
// the padding, outside the input) into the slot of m; kernel(o, base) is
// output line o's call, its window's lines in the slots of base, base + 1
// and base + 2. loop names the group loop's variable.
func ringLines(outLines, s, pad int, loop string, layout func(il Expr, m int64) Stmt, kernel func(o Expr, base int64) Stmt) []Stmt {
	return ringLinesN(3, outLines, s, pad, loop, layout, kernel)
}
