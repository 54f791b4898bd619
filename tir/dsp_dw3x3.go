package tir

import (
	"fmt"
	"math"
)

// IntrDSPDW3x3 is one output pixel of a 3×3 depthwise convolution over all
// n channels (n % 4 == 0), epilogue included, as one shared (not inlined)
// C helper, so every 3×3 depthwise layer of a model calls the same code:
//
//	dsp_dw3x3_s8(out *int8, x *int8, xi, rs, cs, p *int32, n, xo, mask, zr, lo, hi, npx, xstep, relu)
//	for each of npx pixels (out advancing by n, xi by xstep):
//	for q < n/4, j < 4, c = 4q + j, P = p[38q:]:
//	  acc = P[18 + j]
//	  for t < 9 with bit t of mask set:
//	    acc += (x[xi + (t/3)·rs + (t%3)·cs + c] + xo) · wt(t, j)
//	  out[c] = dsp_requant_s8(acc, P[24+4j], P[22+4j] as uint32 + P[23+4j]·2^32, P[25+4j], zr, lo, hi)
//
// where wt(t, j) is the low (j < 2) or high (j >= 2) half of P[2t + j%2]:
// each channel quad's stream holds its nine taps' pair words (w0, w2),
// (w1, w3), then the four biases, then per channel the low and high words
// of k0, the multiplier and e1 (two LDRDs), one pointer walking it. Taps whose mask bit is clear (padding)
// add nothing and are not read. A run of pixels with the same mask (an
// interior row segment) is one call. relu = 1 says every channel's zero
// point is at or below lo: the requantization may then leave out its sign
// correction (IntrDSPRequantPR's argument), which the C does for the
// interior at full range.
const IntrDSPDW3x3 = "dsp_dw3x3_s8"

// dspDW3x3Stream is the per-quad stream of IntrDSPDW3x3 for weights
// w[c][t] (n channels, nine taps) and per-channel bias, m, k0, e1.
func dspDW3x3Stream(w []int64, n int, bias, m, k0, e1 []int64) []int64 {
	out := make([]int64, 0, n/4*38)
	for q := 0; q < n; q += 4 {
		for t := 0; t < 9; t++ {
			at := func(c int) int64 { return w[(q+c)*9+t] }
			out = append(out, pack16(at(0), at(2)), pack16(at(1), at(3)))
		}
		out = append(out, bias[q:q+4]...)
		for j := q; j < q+4; j++ {
			out = append(out, int64(int32(uint32(k0[j]))), k0[j]>>32, m[j], e1[j])
		}
	}
	return out
}

func init() {
	extIntrinsics[IntrDSPDW3x3] = func(a []val) val {
		out, x, xi, rs, cs, p, n, xo, mask := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5], a[6].i, a[7].i, a[8].i
		zr, lo, hi, npx, xstep, relu := a[9], a[10], a[11], a[12].i, a[13].i, a[14].i
		if n%4 != 0 || npx < 1 {
			panic(fmt.Sprintf("%s: n = %d, npx = %d", IntrDSPDW3x3, n, npx))
		}
		rq := extIntrinsics[IntrDSPRequant]
		if relu != 0 {
			rq = func(a []val) val {
				return reluRequant(IntrDSPDW3x3, a[0].i, a[1].i, a[2].i, a[3].i, a[4].i, a[5].i, a[6].i)
			}
		}
		for px := int64(0); px < npx; px, xi, out.i = px+1, xi+xstep, out.i+n {
			dw3x3Pixel(out, x, xi, rs, cs, p, n, xo, mask, zr, lo, hi, rq)
		}
		return val{}
	}
}

// dw3x3Pixel is one pixel of IntrDSPDW3x3.
func dw3x3Pixel(out, x val, xi, rs, cs int64, p val, n, xo, mask int64, zr, lo, hi val, rq func([]val) val) {
	for q := int64(0); q < n/4; q++ {
		P := func(k int64) int64 { return p.p.I[p.i+38*q+k] }
		for j := int64(0); j < 4; j++ {
			c := 4*q + j
			acc := P(18 + j)
			for t := int64(0); t < 9; t++ {
				if mask>>t&1 == 0 {
					continue
				}
				word := P(2*t + j%2)
				wt := int64(int16(word))
				if j >= 2 {
					wt = int64(int16(word >> 16))
				}
				acc += int64(int16(x.p.I[x.i+xi+(t/3)*rs+(t%3)*cs+c]+xo)) * wt
				if acc > math.MaxInt32 || acc < math.MinInt32 {
					panic("int32 overflow in " + IntrDSPDW3x3)
				}
			}
			k0 := int64(uint32(P(22+4*j))) + P(23+4*j)<<32
			y := rq([]val{{i: acc}, {i: P(24 + 4*j)}, {i: k0}, {i: P(25 + 4*j)}, zr, lo, hi})
			out.p.I[out.i+c] = y.i
		}
	}
}

// dw3x3 builds the IntrDSPDW3x3 form of a 3×3 depthwise convolution whose
// epilogue fastRequant turned into IntrDSPRequant: one call per output
// pixel with the padding as a tap mask. It reports false when the nest
// does not fit (the caller keeps the per-quad schedule).
func (c *convNest) dw3x3(f *PrimFunc, store *Store) (*PrimFunc, bool) {
	a, Cn := c.accNest, c.C
	nV, ohV, owV, khV, kwV, icV, ocV := c.n, c.oh, c.ow, c.kh, c.kw, c.ic, c.oc
	tabs, zr, lo, hi, ok := a.dwEpilogue(store, ocV, Cn)
	if !ok {
		return nil, false
	}
	relu := int64(1)
	for ch := range Cn {
		if !reluForm(tabs[2][ch], tabs[3][ch], zr, lo) {
			relu = 0
		}
	}
	// Input and output offsets must be affine with unit channel stride.
	xFlat := flatIndex(a.x.Buf, a.x.Indices)
	oFlat := flatIndex(store.Buf, store.Indices)
	_, xst, ok1 := c.strides(xFlat, ocV, khV, kwV, owV)
	_, ost, ok2 := c.strides(oFlat, ocV, owV)
	if !ok1 || !ok2 || xst[0] != 1 || ost[0] != 1 || ost[1] != int64(Cn) {
		return nil, false
	}
	rs, cs, xstep := xst[1], xst[2], xst[3]
	at := func(e Expr, m map[*Var]Expr) Expr { return SimplifyExpr(SubstituteExpr(e, m)) }
	base := map[*Var]Expr{khV: C(0), kwV: C(0), icV: C(0), ocV: C(0)}
	pk := constBuf(f.Name+"_dw3x3", I32, []int{Cn / 4 * 38}, dspDW3x3Stream(a.w.Buf.Data.I, Cn, tabs[0], tabs[1], tabs[2], tabs[3]))
	owLoop := NewVar("ow")
	pix := map[*Var]Expr{owV: owLoop}
	xi := at(xFlat, merge(base, pix))
	oi := at(oFlat, merge(base, pix))
	var mask Expr = C(511)
	if a.cond != nil {
		mask = C(0)
		for t := 0; t < 9; t++ {
			m := merge(base, pix)
			m[khV], m[kwV] = C(int64(t/3)), C(int64(t%3))
			mask = Add(mask, &Select{Cond: at(a.cond, m), A: C(1 << t), B: C(0)})
		}
		mask = SimplifyExpr(mask)
	}
	call := &Evaluate{X: Call(IntrDSPDW3x3, I32, ptr(store.Buf, oi), ptr(a.x.Buf, C(0)), xi, C(rs), C(cs), ptr(pk, C(0)),
		C(int64(Cn)), C(a.xOff), mask, C(zr), C(lo), C(hi), C(1), C(xstep), C(relu))}
	g := *f
	g.Body = &For{Var: nV, Min: C(0), Extent: C(int64(c.N)), Body: &For{Var: ohV, Min: C(0), Extent: C(int64(c.OH)),
		Body: &For{Var: owLoop, Min: C(0), Extent: C(int64(c.OW)), Body: call}}}
	h := &g
	if a.cond != nil {
		// Border and interior: the mask becomes a constant in each piece.
		h = PartitionLoop(PartitionLoop(h, owLoop.Name), ohV.Name)
	}
	// Loops over pixels with one mask become one call each.
	g2 := *h
	g2.Body = RewriteStmt(h.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var != owLoop {
			return s
		}
		ev, ok := l.Body.(*Evaluate)
		if !ok {
			return s
		}
		c, ok := ev.X.(*Intrinsic)
		if !ok || c.Name != IntrDSPDW3x3 || usesVar(c.Args[8], owLoop) {
			return s
		}
		args := make([]Expr, len(c.Args))
		for i, e := range c.Args {
			args[i] = SimplifyExpr(SubstituteExpr(e, map[*Var]Expr{owLoop: l.Min}))
		}
		args[12] = l.Extent
		return &Evaluate{X: Call(IntrDSPDW3x3, I32, args...)}
	}, nil)
	return &g2, true
}

func merge(a, b map[*Var]Expr) map[*Var]Expr {
	m := map[*Var]Expr{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}
