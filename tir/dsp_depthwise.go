package tir

// scheduleDepthwiseDSP: a depthwise convolution four channels at a time.
// A 3×3 window whose epilogue is IntrDSPRequant becomes calls of the shared
// helper IntrDSPDW3x3 (one per row segment with one padding mask; knob
// dw3x3, default 1); otherwise, and with dw3x3 = 0:
// The weights are re-laid out at compile time as [tap][channel quad] pair
// words (w0, w2), (w1, w3), as dsp_dw4_s8 reads them; for each output pixel and
// channel quad the taps are unrolled, each one a dsp_dw4_s8 call guarded by
// its padding check, and the four results are requantized in the epilogue.
// Knob block_px (1 or 2, default 1) runs that many adjacent output pixels
// per quad, sharing weight words and epilogue tables; unroll_taps (default
// 1) unrolls the kernel window; unroll_q (default 4) unrolls the quad loop
// when it has at most that many iterations; knob partition
// (bit 0: columns, bit 1: rows; default: columns where the quad loop is not unrolled) splits the output into border and
// interior so the interior runs without padding checks.
func scheduleDepthwiseDSP(f *PrimFunc) (*PrimFunc, error) {
	if floatKernel(f) {
		return scheduleConvBlocked(f)
	}
	unroll, part, bpx := knob(f, "unroll_taps", 1), knob(f, "partition", -1), knob(f, "block_px", 1)
	unrollQ := knob(f, "unroll_q", 4)
	c, ok := parseConvNestFold(f)
	if !ok {
		return scheduleConvBlocked(f)
	}
	a := c.accNest
	nV, ohV, owV, ocV, khV, kwV, icV := c.n, c.oh, c.ow, c.oc, c.kh, c.kw, c.ic
	N, OH, OW, Cn, KH, KW, Cg := c.N, c.OH, c.OW, c.C, c.KH, c.KW, c.Cg
	w := a.w.Buf
	if Cn%4 != 0 && Cg == 1 {
		// Channels not a multiple of four: the planar forms over planes
		// laid out a byte at a time (the generic C before: 0.12 MACs an
		// instruction, a review's 3×3 layers over 6 and 20... channels).
		if g, ok := c.dwPlanarAny(f, fastRequant(a.store)); ok && (knob(f, "dw_planar", 1) != 0 || f.WantInPlace && g.InPlaceSafe) {
			return g, nil
		}
	}
	if bpx < 1 || bpx > 2 || Cg != 1 || Cn%4 != 0 || !rowMajor(w) || w.Len() != Cn*KH*KW || (a.cond != nil && usesVar(a.cond, ocV)) {
		return scheduleConvBlocked(f)
	}
	// Output channel c reads input channel c: a depth multiplier of one.
	// (Bit-exactness fuzzing: with a multiplier of 2, dsp_dw4_s8 read input
	// channels 0-3 for outputs 0-3 where they read 0, 0, 1, 1, and past
	// the input's end; every M4, M7 and M33 board was wrong.)
	if xs := a.x.Buf.Shape; len(xs) != 4 || xs[3] != Cn {
		// A depth multiplier: the planar forms lay each input channel's
		// planes out once for each of its output channels (generic C
		// before: 0.12 MACs an instruction, a review's 3×3 layer with a
		// multiplier of 2).
		if g, ok := c.dwPlanarAny(f, fastRequant(a.store)); ok && knob(f, "dw_planar", 1) != 0 {
			return g, nil
		}
		return scheduleConvBlocked(f)
	}
	for i, v := range []*Var{ocV, khV, kwV, icV} {
		if a.w.Indices[i] != Expr(v) {
			return scheduleConvBlocked(f)
		}
	}
	if part < 0 {
		// Columns split into border and interior where the quad loop stays
		// a loop (each copy is small) and the image has at least 64 pixels;
		// elsewhere the code would grow for little gain (flash).
		part = 0
		if Cn/4 > unrollQ && OH*OW >= 64 {
			part = 1
		}
		f.Knobs["partition"] = part
	}
	taps := KH * KW
	wq := make([]int64, taps*Cn/2)
	for t := 0; t < taps; t++ {
		for q := 0; q < Cn; q += 4 {
			at := func(c int) int64 { return w.Data.I[(q+c)*taps+t] }
			wq[(t*Cn+q)/2] = pack16(at(0), at(2))
			wq[(t*Cn+q)/2+1] = pack16(at(1), at(3))
		}
	}
	wb := constBuf(f.Name+"_weights_s16", I32, []int{taps * Cn / 2}, wq)
	store := fastRequant(a.store)
	if KH == 3 && KW == 3 {
		// The planar form also runs in place, which the plan may ask for.
		if g, ok := c.dwPlanar(f, store); ok &&
			(knob(f, "dw_planar", 1) != 0 || f.WantInPlace && g.InPlaceSafe) {
			return g, nil
		}
	}
	if KH == KW && (KH == 5 || KH == 7) || KH == 1 && KW > 1 {
		if g, ok := c.dwPlanarK(f, store, KH, KW); ok &&
			(knob(f, "dw_planar", 1) != 0 || f.WantInPlace && g.InPlaceSafe) {
			return g, nil
		}
	}
	if KH == 3 && KW == 3 && knob(f, "dw3x3", 1) != 0 {
		if g, ok := c.dw3x3(f, store); ok {
			return g, nil
		}
	}
	store = packRequant(store)
	kind := Serial
	if unroll != 0 {
		kind = Unrolled
	}
	xFlat := flatIndex(a.x.Buf, a.x.Indices)
	// mk is the channel-quad loop for R pixels at columns owAt(0..R-1):
	// the pixels share each tap's weight words and the epilogue tables.
	mk := func(R int, owAt func(i int) Expr) Stmt {
		accb := NewBuffer(f.Name+"_acc", I32, []int{4 * R}, ScopeLocal)
		qKind := Serial
		if Cn/4 <= unrollQ {
			qKind = Unrolled
		}
		body := loopK("q", Cn/4, qKind, func(q Expr) Stmt {
			oc0 := Mul(q, C(4))
			var ss []Stmt
			for i := 0; i < R; i++ {
				for j := 0; j < 4; j++ {
					ss = append(ss, flatStore(accb, C(int64(4*i+j)), SubstituteExpr(a.init, map[*Var]Expr{ocV: Add(oc0, C(int64(j)))})))
				}
			}
			ss = append(ss, loopK("kh", KH, kind, func(kh Expr) Stmt {
				return loopK("kw", KW, kind, func(kw Expr) Stmt {
					var taps []Stmt
					for i := 0; i < R; i++ {
						m := map[*Var]Expr{khV: kh, kwV: kw, ocV: oc0, icV: C(0), owV: owAt(i)}
						xi := SimplifyExpr(SubstituteExpr(xFlat, m))
						wi := Add(Mul(Add(Mul(kh, C(int64(KW))), kw), C(int64(Cn/2))), Mul(q, C(2)))
						call := &Evaluate{X: Call(IntrDSPDW4, I32, &Ptr{Buf: accb, Index: C(int64(4 * i))}, &Ptr{Buf: a.x.Buf, Index: xi},
							&Ptr{Buf: wb, Index: wi}, C(a.xOff))}
						if a.cond == nil {
							taps = append(taps, call)
						} else {
							taps = append(taps, If(SubstituteExpr(a.cond, m), call))
						}
					}
					return Block(taps...)
				})
			}))
			for i := 0; i < R; i++ {
				for j := 0; j < 4; j++ {
					st := Substitute(store, map[*Var]Expr{ocV: Add(oc0, C(int64(j))), owV: owAt(i)})
					ss = append(ss, replaceAcc(st, a.acc, accb, C(int64(4*i+j))))
				}
			}
			return Block(ss...)
		})
		return &Allocate{Buf: accb, Body: body}
	}
	var row []Stmt
	if full := OW / bpx; full > 0 {
		v := NewVar("ow_o")
		row = append(row, &For{Var: v, Min: C(0), Extent: C(int64(full)),
			Body: mk(bpx, func(i int) Expr { return Add(Mul(v, C(int64(bpx))), C(int64(i))) })})
	}
	for i := OW - OW%bpx; i < OW; i++ {
		row = append(row, mk(1, func(int) Expr { return C(int64(i)) }))
	}
	g := *f
	g.Body = &For{Var: nV, Min: C(0), Extent: C(int64(N)), Body: &For{Var: ohV, Min: C(0), Extent: C(int64(OH)), Body: Block(row...)}}
	h := &g
	if part&1 != 0 {
		h = PartitionLoop(h, "ow_o")
	}
	if part&2 != 0 {
		h = PartitionLoop(h, ohV.Name)
	}
	return h, nil
}
