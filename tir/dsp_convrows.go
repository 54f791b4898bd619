package tir

import "slices"

// Row-widened convolutions (dsp knob conv_rows): a KH×KW convolution whose
// input channel count Cg is a multiple of 4 reads, with NHWC, the KW·Cg
// values of kernel row kh for output pixel ow as one contiguous run of the
// input row; widened into pair words that run is KW·Cg/2 contiguous words
// of the widened row, starting at word (ow·stride)·Cg/2 of the row padded
// with padL zero pixels. So instead of an im2col of every pixel block
// (each input value widened up to KH·KW times), the KH input rows an output
// row reads are widened into a ring of KH padded rows (each input row once
// per layer at stride 1: the ring keeps the rows the next output row shares
// with this one), and the micro-kernel reads its activations straight from
// them: per block of channels, KH calls of n = KW·Cg/2 words each, one per
// kernel row, accumulating into the same accumulators. The weights are
// DSPPackWeights' layout unchanged: K = KH·KW·Cg in groups of four, so
// within a channel block kernel row kh's weights follow kernel row kh−1's.

// rowChannels is how many channels a widened row holds per pixel: Cg, or
// 4 for an RGB input (Cg = 3, widened with a zero fourth channel by
// IntrDSPWiden3; the weights get a zero fourth channel too, so the window
// costs 4/3 of the MACs but no im2col copies every value up to KH·KW
// times, byte by byte).
func (c *convNest) rowChannels() int {
	if c.Cg == 3 {
		return 4
	}
	return c.Cg
}

// padChannels pads weights whose innermost dimension is cg input channels
// to cp with zeros.
func padChannels(w []int64, cg, cp int) []int64 {
	out := make([]int64, 0, len(w)/cg*cp)
	for i := 0; i < len(w); i += cg {
		out = append(out, w[i:i+cg]...)
		out = append(out, make([]int64, cp-cg)...)
	}
	return out
}

// rowsEligible reports whether the convolution can take the row-widened
// schedule: one image, not 1×1, Cg % 4 == 0 or Cg == 3, stride 1 or 2 in
// both directions, dilation 1, input read as NHWC rows with the padding
// only at the borders.
func (c *convNest) rowsEligible() (stride, padT, padL int, ok bool) {
	a, Cg := c.accNest, c.Cg
	if c.N != 1 || c.KH*c.KW == 1 || (Cg%4 != 0 && Cg != 3) || c.OH < 1 || c.OW < 1 {
		return 0, 0, 0, false
	}
	xs := a.x.Buf.Shape
	if len(xs) != 4 || xs[0] != 1 || xs[3] != Cg || !rowMajor(a.x.Buf) {
		return 0, 0, 0, false
	}
	W := xs[2]
	base, step, ok := c.strides(flatIndex(a.x.Buf, a.x.Indices), c.oh, c.kh, c.ow, c.kw, c.ic)
	if !ok {
		return 0, 0, 0, false
	}
	for s := 1; s <= 2; s++ {
		if slices.Equal(step, []int64{int64(s * W * Cg), int64(W * Cg), int64(s * Cg), int64(Cg), 1}) {
			padT, padL, ok := c.padding(base, W, Cg)
			return s, padT, padL, ok && s <= c.KH
		}
	}
	return 0, 0, 0, false
}

// rowsFit reports whether convRows' ring of KH widened rows (its largest
// local array; a gathered column adds at most a block's K words) fits the
// stack f's target leaves a kernel (PrimFunc.StackBytes; any, when unknown).
func (c *convNest) rowsFit(f *PrimFunc, stride, padL int) bool {
	lim := f.StackBytes
	if lim <= 0 {
		return true
	}
	W := c.accNest.x.Buf.Shape[2]
	Wp := max(padL+W, (c.OW-1)*stride+c.KW)
	cp := c.rowChannels()
	ring := 4 * c.KH * Wp * (cp / 2)
	col := 4 * 3 * c.KH * c.KW * cp / 2
	return ring+col <= lim
}

// convRows builds the row-widened schedule with the packed weights wp (K =
// KH·KW·Cp per channel with Cp = rowChannels(), DSPPackWeights or
// DSPPackWeights8 layout; rowWeights pads them for Cg = 3), bpx
// pixels by boc channels per micro-kernel call. It never claims
// InPlaceSafe: it reads later input rows after writing earlier output rows.
func (c *convNest) convRows(f *PrimFunc, stride, padT, padL int, wp *Buffer, store *Store, bpx, boc, unroll int, w8, gather, fuse, shift bool, dd deadInfo) *PrimFunc {
	a, OH, OW, KH, KW, Cg, Cout := c.accNest, c.OH, c.OW, c.KH, c.KW, c.rowChannels(), c.C
	ohV, owV, nV := c.oh, c.ow, c.n
	W := a.x.Buf.Shape[2]
	n := Cg / 2 // pair words per input pixel
	Wp := max(padL+W, (OW-1)*stride+KW)
	rw := Wp * n // pair words per widened row
	K := KH * KW * Cg
	rows := NewBuffer(f.Name+"_rows", I32, []int{KH * rw}, ScopeLocal)
	// Input row oh·stride − padT + kh lives in ring slot (oh·stride + kh) mod
	// KH. The first output row widens all KH rows; every later one only the
	// stride rows it does not share with the previous one.
	slot := func(kh Expr) Expr {
		if KH == 1 {
			return C(0)
		}
		return Mod(Add(Mul(ohV, C(int64(stride))), kh), C(int64(KH)))
	}
	fill := loopK("kh", KH, Serial, func(kh Expr) Stmt {
		ih := Add(Sub(Mul(ohV, C(int64(stride))), C(int64(padT))), kh)
		w := c.widenRow(rows, Mul(slot(kh), C(int64(rw))), ih, Wp, padL)
		if OH == 1 || stride >= KH {
			return w
		}
		return If(bin(OpOr, EQ(ohV, C(0)), GE(kh, C(int64(KH-stride)))), w)
	})
	u := unrollFor(unroll, KW*Cg)
	consts := constCache{}
	mk := func(R int, owAt func(i int) Expr) Stmt {
		var segs []gemmSeg
		for kh := 0; kh < KH; kh++ {
			x := Add(Mul(slot(C(int64(kh))), C(int64(rw))), Mul(owAt(0), C(int64(stride*n))))
			segs = append(segs, gemmSeg{x: SimplifyExpr(x), xs: stride * n, n: KW * n})
		}
		pix := func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{owV: owAt(i)}) }
		// A lone pixel of a three-channel layer is gathered too: its
		// segmented helper, with the three segment pointers live across
		// its asm, did not build with a frame pointer (-O2
		// -fno-omit-frame-pointer: "impossible constraints",
		// TestDSPAsmCompilesEverywhere).
		if gather || R == 1 && c.Cg == 3 {
			// Copy the R windows' KH segments into one column of K/2 words
			// per pixel: one fused channel loop instead of KH calls per block.
			col := NewBuffer(f.Name+"_col", I32, []int{R * K / 2}, ScopeLocal)
			var cp []Stmt
			for i := 0; i < R; i++ {
				for kh, sg := range segs {
					from, to := SimplifyExpr(Add(sg.x, C(int64(i*sg.xs)))), i*K/2+kh*sg.n
					cp = append(cp, loopK("q", sg.n, Serial, func(q Expr) Stmt {
						return flatStore(col, Add(C(int64(to)), q), &Load{Buf: rows, Indices: []Expr{Add(from, q)}, Flat: true})
					}))
				}
			}
			g := &gemmSpec{R: R, C: boc, U: unrollFor(unroll, K), K4: K, Cout: Cout, xb: col, w: wp, ocVar: c.oc, init: a.init,
				store: store, acc: a.acc, w8: w8, fuse: fuse, shift: shift, xAbs: a.xAbs(), consts: consts, pix: pix, dead: dd.dead, deadVals: dd.vals}
			return &Allocate{Buf: col, Body: Block(append(cp, g.build(f.Name))...)}
		}
		g := &gemmSpec{R: R, C: boc, U: u, K4: K, Cout: Cout, xb: rows, w: wp, ocVar: c.oc, init: a.init, store: store, acc: a.acc, w8: w8,
			fuse: fuse, shift: shift, xAbs: a.xAbs(), consts: consts, segs: segs, pix: pix, dead: dd.dead, deadVals: dd.vals}
		return g.build(f.Name)
	}
	rowBody := append([]Stmt{fill}, pixelBlocks(OW, bpx, mk)...)
	g := *f
	g.Body = &Allocate{Buf: rows, Body: &For{Var: nV, Min: C(0), Extent: C(1),
		Body: &For{Var: ohV, Min: C(0), Extent: C(int64(OH)), Body: Block(rowBody...)}}}
	g.InPlaceSafe = false
	g.DeadChannels = dd.count()
	return &g
}
