package tir

import (
	"fmt"
	"strings"
)

// The M55's 3×3 depthwise schedule with the pixels in the lanes (knob
// dw_lanes: 0 off, 1 where it wins (the default, below), 2 wherever it
// applies). The channel-interleaved helper (KDwConvRQ) spends
// six instructions per eight multiplications: two widening loads, VMULLB
// and VMULLT, two adds. Here each channel's input lines are laid out once
// as planes of bytes (one row of the channel after another), so four
// adjacent outputs of one channel take one widening load and one VMLA by
// the tap's weight per tap: two instructions per four multiplications,
// and the requantization runs on four outputs of one channel with its
// multiplier and shift in registers.
//
// The vector axis is the image's rows (lanes along a row) or, where that
// leaves fewer idle lanes (KWS's 25×5 maps), its columns: the lines are
// then the input columns and the weights are transposed. The planes of the
// last three input lines stay in a ring on the stack, each line laid out
// once (Cn·3·rs bytes). At stride 2 a plane row holds the line's even
// columns and then its odd ones, so every tap is still one contiguous load.
// Input values are raw: the padding holds the input zero point and the
// bias takes −zp·Σw, so a padded tap adds nothing.

// KDwPlanes lays one input line out as channel planes:
//
//	dwplanes_s8(dst *i8, x *i8, n, xs, c, cs, rs, nq, padl, ph, zp)
//	for ch < c and q < nq, with i = q − padl:
//	  dst[ch·cs + col(q)] = x[i·xs + ch] for 0 <= i < n, else zp,
//	  col(q) = q (ph = 0) or (q mod 2)·(rs/2) + q/2 (ph = 1).
const KDwPlanes = "dwplanes_s8"

// KDwLanes is one output line of the 3×3 depthwise convolution:
//
//	dwl3_s8(y *i8, q *i8, s0, s1, s2, cs, rs, p *i32, c, ow, ys, stride, left, zp, lo, hi)
//	for ch < c and j < ow (P = p[12ch:], r_k = q + ch·cs + s_k):
//	  acc = P[9] + Σ_{k<3} Σ_{t<3} r_k[col(j·stride + t)]·P[3k + t]
//	  y[j·ys + ch] = clamp(MultiplyByQuantizedMultiplier(acc, P[10], P[11]) + zp, lo, hi)
//
// with col as in KDwPlanes (ph = 1 at stride 2, whose planes are rs wide);
// left = 1 when some shift is positive (it changes only the C).
const KDwLanes = "dwl3_s8"

func init() {
	DeclareKnob("mve.dw_lanes", 0, 1, 2) // 3x3 depthwise: pixels in the lanes over channel planes (1: lines of 8 or more outputs; in place always)
	DeclareAlgorithm("mve.dw_lanes")
	extIntrinsics["mve_"+KDwPlanes] = func(a []val) val {
		dst, x := a[0], a[1]
		n, xs, c, cs, rs, nq, padl, ph, zp := a[2].i, a[3].i, a[4].i, a[5].i, a[6].i, a[7].i, a[8].i, a[9].i, a[10].i
		for ch := int64(0); ch < c; ch++ {
			for q := int64(0); q < nq; q++ {
				v := zp
				if i := q - padl; i >= 0 && i < n {
					v = x.p.I[x.i+i*xs+ch]
				}
				dst.p.I[dst.i+ch*cs+planeCol(q, rs, ph)] = v
			}
		}
		return val{}
	}
	extIntrinsics["mve_"+KDwLanes] = mveDWLanesInterp(3)
	extIntrinsics[IntrMVEDWLanes5] = mveDWLanesInterp(5)
	extIntrinsics[IntrMVEDWLanes7] = mveDWLanesInterp(7)
}

// IntrMVEDWLanes5 and IntrMVEDWLanes7 are KDwLanes for a 5×5 and a 7×7
// window, with seven row offsets (those past the window's rows 0):
//
//	mve_dwl5_s8(y *i8, q *i8, s0, …, s6, cs, rs, p *i32, c, ow, ys, stride, left, zp, lo, hi)
//	acc = P[k²] + Σ_{r<k} Σ_{t<k} r_r[col(j·stride + t)]·P[k·r + t]   (P = p[(k² + 3)ch:])
//	y[j·ys + ch] = clamp(MultiplyByQuantizedMultiplier(acc, P[k² + 1], P[k² + 2]) + zp, lo, hi)
const (
	IntrMVEDWLanes5 = "mve_dwl5_s8"
	IntrMVEDWLanes7 = "mve_dwl7_s8"
)

// mveDWLanesWins says whether the lanes schedule takes a k×k layer at
// stride s whose output lines are ov long by default (knob dw_lanes 1): 3×3
// windows on lines of 8 or more; 5×5 and 7×7 ones on lines of whole
// vectors, 7×7 ones at stride 1 only up to 12. Measured on mps3-an547
// against the channel-interleaved helper (32 channels, ReLU6, session 54):
// on whole vectors 0.79 to 0.94 times its instructions; with a tail
// vector 0.91 to 1.23 times (gcc keeps the tail's predicate and the
// clamp's in registers the taps need); 7×7 at stride 1 from 16 outputs
// 0.97 to 1.11 (seven ring rows past VLDRB's offsets).
func mveDWLanesWins(k, s, ov int) bool {
	switch {
	case k == 3:
		return ov >= 8
	case ov%4 != 0:
		return false
	case k == 7 && s == 1:
		return ov <= 12
	}
	return true
}

// mveDWLanesInterp is the reference semantics of KDwLanes (k = 3) and
// IntrMVEDWLanes5/7.
func mveDWLanesInterp(K int64) func(a []val) val {
	nr := int64(3)
	if K > 3 {
		nr = dwPlanarKMax
	}
	words := K*K + 3
	return func(a []val) val {
		y, q, p := a[0], a[1], a[4+nr]
		s := make([]int64, K)
		for k := range s {
			s[k] = a[2+k].i
		}
		b := 2 + nr
		cs, rs, c, ow, ys, stride := a[b].i, a[b+1].i, a[b+3].i, a[b+4].i, a[b+5].i, a[b+6].i
		zp, lo, hi := a[b+8].i, a[b+9].i, a[b+10].i
		if stride != 1 && stride != 2 {
			panic(fmt.Sprintf("mve_%s: stride %d", KDwLanes, stride))
		}
		for ch := int64(0); ch < c; ch++ {
			P := func(k int64) int64 { return p.p.I[p.i+words*ch+k] }
			for j := int64(0); j < ow; j++ {
				acc := P(K * K)
				for k := int64(0); k < K; k++ {
					for t := int64(0); t < K; t++ {
						acc += q.p.I[q.i+ch*cs+s[k]+planeCol(j*stride+t, rs, stride-1)] * P(K*k+t)
					}
				}
				if acc != int64(int32(acc)) {
					panic("int32 overflow in mve_" + KDwLanes)
				}
				v := int64(RequantQ(int32(acc), int32(P(K*K+1)), int32(P(K*K+2)))) + zp
				y.p.I[y.i+j*ys+ch] = wrap(y.p.DType, min(max(v, lo), hi))
			}
		}
		return val{}
	}
}

// planeCol is the plane column of padded line column q (KDwPlanes).
func planeCol(q, rs, ph int64) int64 {
	if ph == 0 {
		return q
	}
	return q%2*(rs/2) + q/2
}

// splitClamp takes apart int8(clamp(e, lo, hi)) (min and max by constants
// in any nesting): the clamped value and the bounds, the int8 range's where
// there is none.
func splitClamp(v Expr) (e Expr, lo, hi int64, ok bool) {
	cs, ok := v.(*Cast)
	if !ok || cs.T != I8 {
		return nil, 0, 0, false
	}
	e, lo, hi = cs.X, -128, 127
	for {
		b, ok := e.(*Binary)
		if !ok || (b.Op != OpMin && b.Op != OpMax) {
			return e, lo, hi, true
		}
		k, ok := IsConst(b.B)
		if !ok {
			return nil, 0, 0, false
		}
		if b.Op == OpMin {
			hi = min(hi, k)
		} else {
			lo = max(lo, k)
		}
		e = b.A
	}
}

// splitRequant takes apart an output value int8(clamp(requant(acc, mult,
// shift) + zp, lo, hi)) of the accumulator acc.
func splitRequant(v Expr, acc *Buffer) (rq *Intrinsic, zp, lo, hi int64, ok bool) {
	e, lo, hi, ok := splitClamp(v)
	if !ok {
		return nil, 0, 0, 0, false
	}
	e, zp = addConst(e)
	rq, ok = e.(*Intrinsic)
	if !ok || rq.Name != IntrRequant || len(rq.Args) != 3 {
		return nil, 0, 0, 0, false
	}
	if l, ok := rq.Args[0].(*Load); !ok || l.Buf != acc {
		return nil, 0, 0, 0, false
	}
	return rq, zp, lo, hi, true
}

// mveDWLanes builds the lanes-as-pixels schedule of a 3×3 depthwise
// convolution (one image, NHWC, channels a multiple of 4, strides 1 or 2,
// padding at most 2), or reports false.
func mveDWLanes(f *PrimFunc) (*PrimFunc, bool) {
	c, ok := parseConvNest(f)
	if !ok || c.N != 1 || c.KH != c.KW || c.KH != 3 && c.KH != 5 && c.KH != 7 || c.Cg != 1 || c.C%4 != 0 {
		return nil, false
	}
	K := c.KH
	a, Cn, OH, OW := c.accNest, c.C, c.OH, c.OW
	for i, v := range []*Var{c.oc, c.kh, c.kw, c.ic} {
		if len(a.w.Indices) != 4 || a.w.Indices[i] != Expr(v) {
			return nil, false
		}
	}
	if !rowMajor(a.w.Buf) || a.w.Buf.Len() != K*K*Cn || (a.cond != nil && usesVar(a.cond, c.oc)) {
		return nil, false
	}
	xs := a.x.Buf.Shape
	if len(xs) != 4 || xs[0] != 1 || xs[3] != Cn || !rowMajor(a.x.Buf) || -a.xOff < -128 || -a.xOff > 127 {
		return nil, false
	}
	H, W := xs[1], xs[2]
	// 5×5 and 7×7 windows over maps smaller than the window: the channel-
	// interleaved helper, which skips the padded taps (as the dsp planar
	// form: dwPlanarK), unless the plan runs the layer in place.
	if K > 3 && (H < K || W < K) && !f.WantInPlace {
		return nil, false
	}
	sh, sw, padT, padL, ok := c.dwGeometryUpTo(a.store, W, min(K-1, 3))
	if !ok {
		return nil, false
	}
	rq, zp, lo, hi, ok := splitRequant(a.store.Value, a.acc)
	if !ok {
		return nil, false
	}
	bias, err1 := constPerChannel(a.init, c.oc, Cn)
	mult, err2 := constPerChannel(rq.Args[1], c.oc, Cn)
	shift, err3 := constPerChannel(rq.Args[2], c.oc, Cn)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, false
	}
	// The vector axis: rows, or columns where that leaves fewer idle lanes.
	// (Rows where the plan runs the layer in place and the columns could
	// not: see InPlaceSafe below.)
	cols := (OH+3)/4*OW < (OW+3)/4*OH && !(f.WantInPlace && (OH != H || OW != W))
	// Lines (the ring axis) and the vector axis: counts, strides, padding,
	// and the byte strides of a line and of a pixel along it.
	NL, NV, OL, OV, sL, sV, padLn, padV := H, W, OH, OW, sh, sw, padT, padL
	xLine, xPix, yLine, yPix := int64(W*Cn), int64(Cn), int64(OW*Cn), int64(Cn)
	if cols {
		NL, NV, OL, OV, sL, sV, padLn, padV = W, H, OW, OH, sw, sh, padL, padT
		xLine, xPix, yLine, yPix = int64(Cn), int64(W*Cn), int64(Cn), int64(OW*Cn)
	}
	// Knob dw_lanes: 1 (the default) where it measured faster, on lines of
	// at least eight outputs (MLPerf Tiny on the M55: 3 to 27% fewer
	// instructions on KWS's 25-long columns and VWW's 48-, 24- and 12-wide
	// rows at strides 1 and 2; 2 to 43% more on 6- and 3-wide maps, where
	// the layout pass and each channel's set-up are spread over few
	// outputs); 2 wherever it applies.
	// (5×5 and 7×7 windows: mveDWLanesWins.)
	if knob(f, "dw_lanes", 1) == 1 && !mveDWLanesWins(K, int(sV), OV) && !f.WantInPlace {
		return nil, false
	}
	ov4 := int64((OV + 3) / 4 * 4)
	h2 := int64(K - 1) // the window's columns past its first
	rs, ph := max(ov4+h2, int64(padV+NV)), int64(0)
	if sV == 2 {
		hs := max(ov4+h2/2, int64(padV+NV+1)/2)
		rs, ph = 2*hs, 1
	}
	cs := int64(K) * rs
	if 7*cs >= 1<<16 {
		return nil, false
	}
	// The ring is the kernel's one local array (Cn·K·rs bytes). A 5×5 or
	// 7×7 layer whose ring is past the target's stack runs in equal slices
	// of its channels (a multiple of four each), every slice the whole map
	// over a ring of its own channels, as the dsp planar form does: else
	// it took the generic C (a review's 5×5 layer 24×24×144 on
	// mps3-an547: 9,000,819 instructions, 0.23 MACs an instruction).
	csl := Cn // channels a slice
	if lim := int64(f.StackBytes); lim > 0 && int64(Cn)*cs > lim {
		csl = 0
		for n := 2; n <= Cn/4; n++ {
			if Cn%n == 0 && (Cn/n)%4 == 0 && int64(Cn/n)*cs <= lim {
				csl = Cn / n
				break
			}
		}
		if csl == 0 {
			return nil, false
		}
	}
	g := a.w.Buf.Data.I // [c][K][K]
	left := int64(0)
	words := K*K + 3
	stream := make([]int64, 0, words*Cn)
	for ch := range Cn {
		var sum int64
		for k := range K {
			for t := range K {
				v := g[(ch*K+k)*K+t] // k along the rows, t along a row
				if cols {
					v = g[(ch*K+t)*K+k]
				}
				stream = append(stream, v)
				sum += v
			}
		}
		b := bias[ch] + a.xOff*sum
		if b != int64(int32(b)) || mult[ch] != int64(int32(mult[ch])) {
			return nil, false
		}
		if shift[ch] > 0 {
			left = 1
		}
		stream = append(stream, b, mult[ch], shift[ch])
	}
	// A left shift (an output scale under the input's times the weights'):
	// the 5×5 and 7×7 kernels' requantization spills (1.13 and 1.25 times
	// the helper's instructions, review, session 54).
	if K > 3 && left == 1 && knob(f, "dw_lanes", 1) == 1 && !f.WantInPlace {
		return nil, false
	}
	kernel := "mve_" + KDwLanes
	if K > 3 {
		kernel = fmt.Sprintf("mve_dwl%d_s8", K)
	}
	pk := constBuf(f.Name+"_"+strings.TrimPrefix(strings.TrimSuffix(kernel, "_s8"), "mve_"), I32, []int{len(stream)}, stream)
	ring := NewBuffer(f.Name+"_planes", I8, []int{int(int64(csl) * cs)}, ScopeLocal)
	// Input line il lives in ring slot il mod K (ringLinesN).
	slotAt := func(m int64) int64 { return (m%int64(K) + int64(K)) % int64(K) * rs }
	// The slice of channels c0..c0+csl−1 over the whole map.
	slice := func(c0 Expr) []Stmt {
		layout := func(il Expr, slot int64) Stmt {
			call := &Evaluate{X: Call("mve_"+KDwPlanes, I32, ptr(ring, C(slot)), ptr(a.x.Buf, SimplifyExpr(Add(Mul(il, C(xLine)), c0))),
				C(int64(NV)), C(xPix), C(int64(csl)), C(cs), C(rs), C(rs), C(int64(padV)), C(ph), C(-a.xOff))}
			zp := loopK("z", csl, Serial, func(ch Expr) Stmt {
				return &Evaluate{X: Call("mve_"+KFill8, I32, ptr(ring, Add(Mul(ch, C(cs)), C(slot))), C(-a.xOff), C(rs))}
			})
			return &IfThenElse{Cond: And(GE(il, C(0)), LT(il, C(int64(NL)))), Then: call, Else: zp}
		}
		return ringLinesN(K, OL, int(sL), padLn, "ol", func(il Expr, m int64) Stmt { return layout(il, slotAt(m)) },
			func(o Expr, base int64) Stmt {
				args := []Expr{ptr(a.store.Buf, SimplifyExpr(Add(Mul(o, C(yLine)), c0))), ptr(ring, C(0))}
				n := 3 // KDwLanes's row offsets; IntrMVEDWLanes5/7's seven
				if K > 3 {
					n = dwPlanarKMax
				}
				for k := range n {
					if k < K {
						args = append(args, C(slotAt(base+int64(k))))
					} else {
						args = append(args, C(0))
					}
				}
				args = append(args, C(cs), C(rs), ptr(pk, SimplifyExpr(Mul(c0, C(int64(words))))), C(int64(csl)), C(int64(OV)), C(yPix), C(sV),
					C(left), C(zp), C(lo), C(hi))
				return &Evaluate{X: Call(kernel, I32, args...)}
			})
	}
	body := slice(C(0))
	if csl < Cn {
		sv := NewVar("cs")
		body = []Stmt{&For{Var: sv, Min: C(0), Extent: C(int64(Cn / csl)), Body: Block(slice(Mul(sv, C(int64(csl))))...)}}
	}
	h := *f
	h.Body = &Allocate{Buf: ring, Body: Block(body...)}
	// In place (output over input at one offset), as dsp_dwplanar.go argues
	// for rows: output line o covers input bytes of lines <= o when the
	// output is no larger, and a line is laid out before any output
	// overwrites it. Along the columns an output column covers the input
	// column at the same place only when the two maps are the same size.
	// In slices too: an output element lands on an input element of its
	// own channel.
	if cols {
		h.InPlaceSafe = OH == H && OW == W
	} else {
		h.InPlaceSafe = OH <= H && OW <= W
	}
	return &h, true
}
