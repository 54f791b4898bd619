package tir

import (
	"fmt"
	"math"
	"slices"
)

// The planar depthwise schedule for square kernels of 5 and 7 taps a side
// (MobileNetV3, EfficientNet-Lite and MCUNet blocks), the 3×3 planar
// form's idea with a ring of K input rows: the rows are laid out once as
// channel planes of int16 pair words (IntrDSPPlanes, as the 3×3 form), and
// each kernel row of h = (K−1)/2 pair words A_m = (g_2m, g_2m+1) and h words
// B_m = (g_2m+1, g_2m+2) gives two adjacent outputs of a channel at stride 1
// (plane words P_m = (x_2m, x_2m+1)) in K + 1 instructions for 2K
// multiplications:
//
//	y0 += Σ_{m<h} SMLAD(P_m, A_m) + SMLABT(P_h, B_{h−1})
//	y1 += SMLATB(P_0, A_0) + Σ_{m<h} SMLAD(P_{m+1}, B_m)
//
// and one output at stride 2 in h + 1. The channel-quad schedule these
// layers took before runs one SMLAD a tap pair of four channels and
// re-widens every input value for each tap: 0.34 MACs an instruction on
// the Cortex-M4 against 0.55 for the planar 3×3 layers (a review's 5×5
// layers, session 54). The knob is the 3×3 form's dw_planar (0: the
// channel-quad schedule).

// IntrDSPDWPlanar5 and IntrDSPDWPlanar7 are one output row of a planar
// k×k depthwise convolution (k = 5 or 7, the name's):
//
//	dsp_dwp5_s8(out *int8, q *int32, s0, …, s6, p *int32, k, nc, ow, stride, zr, lo, hi, os, mode)
//	for output j < ow and channel ch < nc (P = p[(k(k−1) + 6)·ch:]):
//	  acc = P[k(k−1)] + Σ_{r<k} Σ_{t<k} plane(q + s_r, ch, j·stride + t) · g(r, t)
//	  out[j·os + ch] = dsp_requant_s8(acc, P[k(k−1)+3], P[k(k−1)+1] as uint32 + P[k(k−1)+2]·2^32, P[k(k−1)+4], zr, lo, hi)
//
// where s_r (r < k; the rest are 0) are the window's input rows as word
// offsets of q, plane(r, ch, i) is half i%2 (0: low) of word r[(i/2)·nc + ch],
// and kernel row r's k−1 words at P[(k−1)·r:] are A_0..A_{h−1} then
// B_0..B_{h−1}: g(r, t) is the low half of A_{t/2} for even t < k−1, its
// high half for odd t, and the high half of B_{h−1} for t = k−1 (the low
// half of B_m is g(r, 2m+1) again). Mode dwpkK0ReLU (1) says every
// channel's zero point is at or below lo, so the C leaves out the sign
// correction (as IntrDSPRequantPR; the result is the same). Modes
// dwpkShift (2) and dwpkShiftReLU (3) are the layer scaled to one shift,
// zr's argument: the weights scaled by 2^j, and the channel's last six
// words the scaled bias, the multiplier m, A, D and two pad words:
//
//	out[j·os + ch] = clamp((⌊acc·m / 2^32⌋ + A − [mode 2 and acc < 0]·D) >> zr, lo, hi)
//
// (DSPGemmSNName's derivation). Two outputs of a channel at stride 1
// read the plane words j/2..j/2+h, one at stride 2 the words j..j+h.
//
// A 1×k window (k odd, 3 to 15: a 1-D depthwise layer along W) is the same
// with one kernel row: IntrDSPDWPlanarName(1, k), dsp_dwp1xk_s8.
const (
	IntrDSPDWPlanar5 = "dsp_dwp5_s8"
	IntrDSPDWPlanar7 = "dsp_dwp7_s8"
)

// IntrDSPDWPlanarName is the planar row kernel of a kh×kw window: 5×5 and
// 7×7, or 1×kw for odd kw from 3 to 15.
func IntrDSPDWPlanarName(kh, kw int) string {
	switch {
	case kh == 5 && kw == 5:
		return IntrDSPDWPlanar5
	case kh == 7 && kw == 7:
		return IntrDSPDWPlanar7
	}
	return fmt.Sprintf("dsp_dwp1x%d_s8", kw)
}

// dwPlanar1xK are the 1×k windows the planar form takes.
var dwPlanar1xK = []int{3, 5, 7, 9, 11, 13, 15}

// IntrDSPPlanesRep is IntrDSPPlanes for a layer whose output channel ch
// reads input channel ch/m (a depth multiplier m, or a one-channel
// convolution with m = c): each input channel's pair word written to m
// adjacent channel planes:
//
//	dsp_planes_rep_s8(dst *int32, x *int8, w, c, wp2, padl, xo, xs, m)
//	for word k < wp2 and channel ch < c, with a = 2k − padl:
//	  dst[k·c + ch] = pair(v(a, ch/m), v(a + 1, ch/m)),
//	  v(i, ci) = x[i·xs + ci] + xo for 0 <= i < w, else 0
//
// (xs is the input's c/m channels.)
const IntrDSPPlanesRep = "dsp_planes_rep_s8"

// The requantization modes of the k×k row kernels (their last argument).
const (
	dwpkK0        int64 = 0 // packed k0, multiplier and e1, with TFLite's sign correction
	dwpkK0ReLU    int64 = 1 // the same without it: every zero point at or below lo
	dwpkShift     int64 = 2 // one shift t for the layer (DSPGemmSNName's table), with the correction
	dwpkShiftReLU int64 = 3 // one shift, without it (DSPGemmSName's)
)

// dwPlanarKWords is the k×k row kernels' table words per channel for a
// kh×kw window: kw−1 weight words a kernel row, then the bias, k0 (low,
// high), the multiplier, e1 and a pad word.
func dwPlanarKWords(kh, kw int) int { return kh*(kw-1) + 6 }

// dwPlanarKMax is the largest kernel side of the form (the C's row
// offsets s0..s6).
const dwPlanarKMax = 7

func init() {
	DeclareKnob("dsp.c1_planar", 0, 1) // one-channel square convolutions: the planar depthwise form over replicated planes
	DeclareAlgorithm("dsp.c1_planar")
	extIntrinsics[IntrDSPPlanesRep] = func(a []val) val {
		dst, x, w, c, wp2, padl, xo, xs, m := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i, a[6].i, a[7].i, a[8].i
		if m < 1 || c%m != 0 || xs < c/m {
			panic(fmt.Sprintf("%s: %d channels, multiplier %d, pixel stride %d", IntrDSPPlanesRep, c, m, xs))
		}
		layPlanes(dst, x, w, c, wp2, padl, xo, xs, m)
		return val{}
	}
	extIntrinsics[IntrDSPDWPlanar5] = dwPlanarKInterp(IntrDSPDWPlanar5, 5, 5)
	extIntrinsics[IntrDSPDWPlanar7] = dwPlanarKInterp(IntrDSPDWPlanar7, 7, 7)
	for _, kw := range dwPlanar1xK {
		name := IntrDSPDWPlanarName(1, kw)
		extIntrinsics[name] = dwPlanarKInterp(name, 1, int64(kw))
	}
}

// dwPlanarKInterp is the reference semantics of a kh×kw planar row kernel
// (IntrDSPDWPlanarName; its argument k is kw).
func dwPlanarKInterp(name string, kh, kw int64) func(a []val) val {
	return func(a []val) val {
		out, q := a[0], a[1]
		var so [dwPlanarKMax]int64
		for i := range so {
			so[i] = a[2+i].i
		}
		p := a[2+dwPlanarKMax]
		b := 3 + dwPlanarKMax
		k, nc, ow, stride, zr, lo, hi, os, mode := a[b].i, a[b+1].i, a[b+2].i, a[b+3].i, a[b+4], a[b+5], a[b+6], a[b+7].i, a[b+8].i
		if k != kw || stride != 1 && stride != 2 || os < nc || mode < dwpkK0 || mode > dwpkShiftReLU {
			panic(fmt.Sprintf("%s: %d taps, stride %d, output stride %d for %d channels, mode %d", name, k, stride, os, nc, mode))
		}
		h, words := (k-1)/2, int64(dwPlanarKWords(int(kh), int(kw)))
		half := func(word int64, hi bool) int64 {
			if hi {
				return int64(int16(word >> 16))
			}
			return int64(int16(word))
		}
		rq := extIntrinsics[IntrDSPRequant]
		for ch := int64(0); ch < nc; ch++ {
			P := func(i int64) int64 { return p.p.I[p.i+words*ch+i] }
			g := make([]int64, kh*k)
			for r := int64(0); r < kh; r++ {
				w := func(i int64) int64 { return P((k-1)*r + i) }
				for m := int64(0); m < h; m++ {
					g[r*k+2*m], g[r*k+2*m+1] = half(w(m), false), half(w(m), true)
					if half(w(h+m), false) != g[r*k+2*m+1] {
						panic(fmt.Sprintf("%s: channel %d row %d: inconsistent weight words", name, ch, r))
					}
					if m > 0 && half(w(h+m-1), true) != g[r*k+2*m] {
						panic(fmt.Sprintf("%s: channel %d row %d: inconsistent weight words", name, ch, r))
					}
				}
				g[r*k+k-1] = half(w(2*h-1), true)
			}
			t := (k - 1) * kh
			if mode == dwpkK0ReLU && !reluForm(int64(uint32(P(t+1)))+P(t+2)<<32, P(t+4), zr.i, lo.i) {
				panic(fmt.Sprintf("%s: channel %d: the ReLU requantization for a zero point above %d", name, ch, lo.i))
			}
			for j := int64(0); j < ow; j++ {
				acc := P(t)
				for r := int64(0); r < kh; r++ {
					base := q.i + so[r]
					for c := int64(0); c < k; c++ {
						i := j*stride + c
						acc += half(q.p.I[base+(i/2)*nc+ch], i%2 == 1) * g[r*k+c]
					}
				}
				if acc > math.MaxInt32 || acc < math.MinInt32 {
					panic("int32 overflow in " + name)
				}
				if mode >= dwpkShift {
					A := P(t + 2)
					if mode == dwpkShift && acc < 0 {
						A -= P(t + 3)
					}
					out.p.I[out.i+j*os+ch] = smmlaRequant(name, acc, P(t+1), A, zr.i, lo.i, hi.i)
					continue
				}
				k0 := int64(uint32(P(t+1))) + P(t+2)<<32
				out.p.I[out.i+j*os+ch] = rq([]val{{i: acc}, {i: P(t + 3)}, {i: k0}, {i: P(t + 4)}, zr, lo, hi}).i
			}
		}
		return val{}
	}
}

// dwPlanarRingBytesK is the stack of a planar ring of k input rows of c
// channel planes of wp2 int32 words.
func dwPlanarRingBytesK(k, c, wp2 int) int { return k * c * wp2 * 4 }

// dwPlanarK builds the planar schedule of a KH×KW depthwise convolution,
// 5×5, 7×7 or 1×KW (KW odd, 3 to 15) (one image, NHWC, strides 1 or 2,
// top and left padding under the window), or reports false. The layer's
// channels run in slices where the ring of all of them exceeds the stack,
// as the 3×3 form's do.
func (c *convNest) dwPlanarK(f *PrimFunc, store *Store, KH, KW int) (*PrimFunc, bool) {
	a, Cn, OH, OW := c.accNest, c.C, c.OH, c.OW
	xs := a.x.Buf.Shape
	square := KH == KW && (KH == 5 || KH == 7)
	if !square && !(KH == 1 && slices.Contains(dwPlanar1xK, KW)) || c.KH != KH || c.KW != KW || c.N != 1 || len(xs) != 4 || xs[0] != 1 ||
		xs[3] < 1 || Cn%xs[3] != 0 || !rowMajor(a.x.Buf) || a.xOff < -255 || a.xOff > 255 {
		return nil, false
	}
	H, W := xs[1], xs[2]
	Ci := xs[3] // Cn, or Cn/M: a depth multiplier M (replicated planes)
	M := Cn / Ci
	// Replicated planes (a byte at a time) also where the channels are
	// not a multiple of four, which dsp_planes_s8 reads a word at a time.
	rep := M > 1 || Cn%4 != 0
	// Maps smaller than the window: the ring lays out and multiplies all
	// K rows, most of them padding, where the channel-quad schedule skips
	// the padded taps (a review: 1.2 to 2.8 times its instructions over
	// one to four rows, 1.05 over rows of 4 at stride 2). Unless the plan
	// runs the layer in place, which only this form does.
	if (H < KH || W < KW) && !f.WantInPlace {
		return nil, false
	}
	tabs, zr, lo, hi, ok := a.dwEpilogue(store, c.oc, Cn)
	if !ok {
		return nil, false
	}
	sh, sw, padT, padL, ok := c.dwGeometryIn(store, W, Ci, max(KH, KW)-1)
	if !ok {
		return nil, false
	}
	// 1×3 windows at stride 2 over fewer than 16 channels: 2 to 12% over
	// the channel-quad schedule (a review's 8-channel layers); from 32
	// channels 0.6 to 0.84 times.
	if KH == 1 && KW == 3 && sw == 2 && Cn < 16 && !f.WantInPlace {
		return nil, false
	}
	for _, v := range a.w.Buf.Data.I {
		if v < -255 || v > 255 {
			return nil, false
		}
	}
	h := (KW - 1) / 2
	// Words per channel plane: every input column, and the last output's
	// window (the pair's at stride 1).
	wp2 := max((padL+W+1)/2, (OW-1)/2+h+1)
	if sw == 2 {
		wp2 = max((padL+W+1)/2, OW+h)
	}
	cs := Cn
	if lim := f.StackBytes; lim > 0 && dwPlanarRingBytesK(KH, Cn, wp2) > lim {
		if rep {
			return nil, false // replicated planes: the whole ring or nothing
		}
		cs = 0
		for n := 2; n <= Cn/4; n++ {
			if Cn%n == 0 && (Cn/n)%4 == 0 && dwPlanarRingBytesK(KH, Cn/n, wp2) <= lim {
				cs = Cn / n
				break
			}
		}
		if cs == 0 {
			return nil, false
		}
	}
	g := a.w.Buf.Data.I // [c][KH][KW]
	words := dwPlanarKWords(KH, KW)
	// The requantization without TFLite's sign correction where every
	// channel's zero point is at or below lo (IntrDSPRequantPR).
	relu := true
	for ch := range Cn {
		if !reluForm(tabs[2][ch], tabs[3][ch], zr, lo) {
			relu = false
		}
	}
	// The layer scaled to one shift where every channel takes it (knob
	// requant_shift, default on; the 3×3 form's): one SMMLA an output
	// where the packed requantization takes two LDRDs and one or two
	// SMLALs. 0.88 to 0.98 times the instructions on the Cortex-M4 (1×5,
	// 1×9, 5×5 and 7×7 layers, ReLU or not, strides 1 and 2), except a
	// 5×5 or 7×7 window at stride 2 without the ReLU, whose pair loop
	// then spills the sign correction's operands: 1.056 times (24 and 12
	// channels, 15 and 17 wide). Those keep the packed form by default.
	mode := dwpkK0
	if relu {
		mode = dwpkK0ReLU
	}
	js := make([]int64, Cn)
	var ds dwShift
	shiftDefault := 1
	if !relu && KH > 1 && sw == 2 {
		shiftDefault = 0
	}
	if knob(f, "requant_shift", shiftDefault) != 0 {
		var ok bool
		if ds, ok = dwSharedShift(tabs, g, KH*KW, a.xAbs(), zr, !relu); ok {
			mode, js, zr = dwpkShift, ds.j, ds.t
			if relu {
				mode = dwpkShiftReLU
			}
			lo, hi = max(lo, -128), min(hi, 127)
		}
	}
	stream := make([]int64, 0, words*Cn)
	for ch := range Cn {
		j := js[ch]
		for r := range KH {
			t := g[(ch*KH+r)*KW : (ch*KH+r+1)*KW]
			for m := range h {
				stream = append(stream, pack16(t[2*m]<<j, t[2*m+1]<<j))
			}
			for m := range h {
				stream = append(stream, pack16(t[2*m+1]<<j, t[2*m+2]<<j))
			}
		}
		if mode >= dwpkShift {
			stream = append(stream, ds.words[ch][0], ds.words[ch][1], ds.words[ch][2], ds.words[ch][3], 0, 0)
			continue
		}
		k0 := tabs[2][ch]
		stream = append(stream, tabs[0][ch], int64(int32(uint32(k0))), k0>>32, tabs[1][ch], tabs[3][ch], 0)
	}
	pk := constBuf(f.Name+"_dwpk", I32, []int{len(stream)}, stream)
	planes := NewBuffer(f.Name+"_planes", I32, []int{dwPlanarRingBytesK(KH, cs, wp2) / 4}, ScopeLocal)
	ring := planarRing{planes: planes, rows: KH, cs: cs, wp2: wp2, H: H, W: W, Ci: Ci, M: M, padT: padT, padL: padL, sh: int(sh), rep: rep}
	body := c.planarRingBody(ring, func(oh, c0 Expr, slotAt func(int64) Expr, base int64) Stmt {
		args := []Expr{ptr(store.Buf, SimplifyExpr(Add(Mul(oh, C(int64(OW*Cn))), c0))), ptr(planes, C(0))}
		for r := range dwPlanarKMax {
			if r < KH {
				args = append(args, slotAt(base+int64(r)))
			} else {
				args = append(args, C(0))
			}
		}
		args = append(args, ptr(pk, SimplifyExpr(Mul(c0, C(int64(words))))), C(int64(KW)), C(int64(cs)), C(int64(OW)), C(sw),
			C(zr), C(lo), C(hi), C(int64(Cn)), C(mode))
		return &Evaluate{X: Call(IntrDSPDWPlanarName(KH, KW), I32, args...)}
	})
	out := *f
	out.Body = &Allocate{Buf: planes, Body: Block(body...)}
	// In place: as the 3×3 form's argument (dwPlanar), with KH rows:
	// before output row oh is stored every input row up to oh·sh − padT +
	// KH − 1 is in the ring, and a row laid out later is above oh since
	// padT <= KH − 1.
	out.InPlaceSafe = M == 1 && OH <= H && OW <= W
	return &out, true
}

// planarRing is the ring of a planar depthwise schedule: rows input rows of
// cs channel planes of wp2 words (a slice of the layer's channels where cs
// is under them), laid out from an H×W×Ci input with padding padT, padL
// at row stride sh; rep lays the planes out a byte at a time, M planes an
// input channel (IntrDSPPlanesRep).
type planarRing struct {
	planes                                 *Buffer
	rows, cs, wp2, H, W, Ci, M, padT, padL int
	sh                                     int
	rep                                    bool
}

// planarRingBody is the body of a planar depthwise schedule over ring r:
// every slice of cs channels over the whole image, its input rows laid out
// in the ring (input row ih in slot ih mod rows, ringLinesN), and kernel's
// call for each output row oh of the slice at channel c0, whose window's
// rows are in the slots slotAt(base), slotAt(base+1), ... (word offsets
// of r.planes).
func (c *convNest) planarRingBody(r planarRing, kernel func(oh, c0 Expr, slotAt func(int64) Expr, base int64) Stmt) []Stmt {
	a, Cn, n := c.accNest, c.C, int64(r.rows)
	slotAt := func(m int64) Expr { return C(((m%n + n) % n) * int64(r.cs*r.wp2)) }
	slice := func(c0 Expr) []Stmt {
		layout := func(ih Expr, at Expr) Stmt {
			call := &Evaluate{X: Call(IntrDSPPlanes, I32, ptr(r.planes, at), ptr(a.x.Buf, SimplifyExpr(Add(Mul(ih, C(int64(r.W*Cn))), c0))),
				C(int64(r.W)), C(int64(r.cs)), C(int64(r.wp2)), C(int64(r.padL)), C(a.xOff), C(int64(Cn)))}
			if r.rep {
				call = &Evaluate{X: Call(IntrDSPPlanesRep, I32, ptr(r.planes, at), ptr(a.x.Buf, SimplifyExpr(Mul(ih, C(int64(r.W*r.Ci))))),
					C(int64(r.W)), C(int64(Cn)), C(int64(r.wp2)), C(int64(r.padL)), C(a.xOff), C(int64(r.Ci)), C(int64(r.M)))}
			}
			zeros := loopK("z", r.cs*r.wp2, Serial, func(z Expr) Stmt { return flatStore(r.planes, Add(at, z), C(0)) })
			return &IfThenElse{Cond: And(GE(ih, C(0)), LT(ih, C(int64(r.H)))), Then: call, Else: zeros}
		}
		return ringLinesN(r.rows, c.OH, r.sh, r.padT, "oh_o", func(ih Expr, m int64) Stmt { return layout(ih, slotAt(m)) },
			func(oh Expr, base int64) Stmt { return kernel(oh, c0, slotAt, base) })
	}
	if r.cs == Cn {
		return slice(C(0))
	}
	sv := NewVar("cs")
	return []Stmt{&For{Var: sv, Min: C(0), Extent: C(int64(Cn / r.cs)), Body: Block(slice(Mul(sv, C(int64(r.cs))))...)}}
}

// ringLinesN is ringLines over a ring of n lines (n ≥ the stride): input
// line il in the slot of il mod n, the output lines in groups of n.
func ringLinesN(n, outLines, s, pad int, loop string, layout func(il Expr, m int64) Stmt, kernel func(o Expr, base int64) Stmt) []Stmt {
	var pro []Stmt
	for r := 0; r < n; r++ {
		pro = append(pro, layout(C(int64(r-pad)), int64(r-pad)))
	}
	line := func(o Expr, r int64) Stmt {
		top := Sub(Mul(o, C(int64(s))), C(int64(pad)))
		base := r*int64(s) - int64(pad)
		var fresh []Stmt
		for k := max(0, n-s); k < n; k++ {
			fresh = append(fresh, layout(SimplifyExpr(Add(top, C(int64(k)))), base+int64(k)))
		}
		call := kernel(o, base)
		if v, ok := IsConst(o); ok && v == 0 {
			return call
		}
		return Block(If(GT(o, C(0)), Block(fresh...)), call)
	}
	o := NewVar(loop)
	var group []Stmt
	for r := int64(0); r < int64(n); r++ {
		group = append(group, line(Add(Mul(o, C(int64(n))), C(r)), r))
	}
	body := []Stmt{Block(pro...)}
	if outLines/n > 0 {
		body = append(body, &For{Var: o, Min: C(0), Extent: C(int64(outLines / n)), Body: Block(group...)})
	}
	for l := outLines / n * n; l < outLines; l++ {
		body = append(body, line(C(int64(l)), int64(l%n)))
	}
	return body
}

// dwPlanarAny is the planar form of a depthwise-shaped nest (every output
// channel one input channel's window) with a 3×3, 5×5, 7×7 or 1×k window,
// or false.
func (c *convNest) dwPlanarAny(f *PrimFunc, store *Store) (*PrimFunc, bool) {
	switch {
	case c.KH == 1 && c.KW > 1:
		return c.dwPlanarK(f, store, 1, c.KW)
	case c.KH != c.KW:
		return nil, false
	case c.KH == 3:
		return c.dwPlanar(f, store)
	case c.KH == 5 || c.KH == 7:
		return c.dwPlanarK(f, store, c.KH, c.KW)
	}
	return nil, false
}
