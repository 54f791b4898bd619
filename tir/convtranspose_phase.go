package tir

import "github.com/mcugen/mcugen/graph"

// The phase form of a transposed convolution. Output row oh takes tap kh
// from input row ih = (oh + pt − kh·dh) / sh when the division is exact,
// so which taps an output row takes depends only on its phase
// r = (oh + pt) mod sh: those with kh·dh ≡ r (mod sh), each from input row
// q − (kh·dh − r)/sh, where q = (oh + pt) div sh. The same holds for the
// columns. At compile time each phase gets its list of taps (padded to the
// longest phase's) and its own copy of the weights in that order; at run
// time an output pixel gathers its phase's taps of the input into a local
// patch (zeros outside the image or past the phase's list) and takes each
// output channel as one inner product over it, as a 16x8 convolution does.
// The gather per tap (a division and a modulo each, and most taps skipped
// when the stride is above 1) is gone from the inner loop.

// ctPhases are one dimension's phases: for phase r, tap j is kernel index
// taps[r][j] and reads input index q − dq[r·m+j]; slots past the phase's
// list hold ctSkip, which puts the read outside the input.
type ctPhases struct {
	s, m int
	taps [][]int
	dq   []int64
	// blk is each phase's block of weights, −1 for a phase without taps
	// (a stride above the kernel, or sharing a factor with the
	// dilation), and nb the number of blocks: only phases with taps store
	// weights.
	blk []int64
	nb  int
}

// maxCTStride bounds the strides the phase form takes (its tables have a
// stride's entries); a larger one keeps the per-tap gather.
const maxCTStride = 64

// ctSkip is the dq of an empty slot: far enough to leave any input.
const ctSkip = 1 << 24

func ctPhasesOf(k, s, d int) ctPhases {
	p := ctPhases{s: s, taps: make([][]int, s)}
	for r := 0; r < s; r++ {
		for kk := 0; kk < k; kk++ {
			if (kk*d-r)%s == 0 {
				p.taps[r] = append(p.taps[r], kk)
			}
		}
		p.m = max(p.m, len(p.taps[r]))
	}
	p.blk = make([]int64, s)
	for r := range p.taps {
		p.blk[r] = -1
		if len(p.taps[r]) > 0 {
			p.blk[r] = int64(p.nb)
			p.nb++
		}
	}
	p.dq = make([]int64, s*p.m)
	for r := range p.taps {
		for j := 0; j < p.m; j++ {
			p.dq[r*p.m+j] = ctSkip
			if j < len(p.taps[r]) {
				p.dq[r*p.m+j] = int64((p.taps[r][j]*d - r) / s)
			}
		}
	}
	return p
}

// convTransposePhased is the phase form of computeConvTranspose, or nil
// where it does not apply (negative padding, per-channel weight offsets,
// weights other than int8 in integer mode, a stride above maxCTStride).
func convTransposePhased(k *kctx, cs *convSetup, a *graph.ConvTransposeAttrs) Stmt {
	if a.Pad.Top < 0 || a.Pad.Left < 0 {
		return nil
	}
	if cs.intMode && (cs.wt.DType != graph.Int8 || cs.wOff(C(0)) != nil || cs.wt.Data == nil) {
		return nil
	}
	if !cs.intMode && (cs.wt.DType != F32 || cs.wt.Data == nil) {
		return nil
	}
	if pos1(a.Stride[0]) > maxCTStride || pos1(a.Stride[1]) > maxCTStride {
		return nil
	}
	ph := ctPhasesOf(cs.KH, pos1(a.Stride[0]), pos1(a.Dilation[0]))
	pw := ctPhasesOf(cs.KW, pos1(a.Stride[1]), pos1(a.Dilation[1]))
	L := ph.m * pw.m * cs.Cg
	if L == 0 || ph.nb == 0 || pw.nb == 0 {
		return nil
	}
	// The weights, by block of the phases with taps: [nb_h·nb_w][Cout]
	// [m_h·m_w·Cg], zeros in the slots past a phase's list.
	nw := ph.nb * pw.nb * cs.Cout * L
	at := func(rh, rw, oc, jh, jw int) (src, dst int, ok bool) {
		bh, bw := int(ph.blk[rh]), int(pw.blk[rw])
		if bh < 0 || bw < 0 {
			return 0, 0, false
		}
		dst = (((bh*pw.nb+bw)*cs.Cout+oc)*ph.m*pw.m + jh*pw.m + jw) * cs.Cg
		if jh >= len(ph.taps[rh]) || jw >= len(pw.taps[rw]) {
			return 0, dst, false
		}
		src = ((oc*cs.KH+ph.taps[rh][jh])*cs.KW + pw.taps[rw][jw]) * cs.Cg
		return src, dst, true
	}
	// eachTap calls f with every stored tap's source and destination runs.
	eachTap := func(f func(src, dst int)) {
		for rh := 0; rh < ph.s; rh++ {
			for rw := 0; rw < pw.s; rw++ {
				for oc := 0; oc < cs.Cout; oc++ {
					for jh := 0; jh < ph.m; jh++ {
						for jw := 0; jw < pw.m; jw++ {
							if src, dst, ok := at(rh, rw, oc, jh, jw); ok {
								f(src, dst)
							}
						}
					}
				}
			}
		}
	}
	var wbuf *Buffer
	var quad bool
	if cs.intMode {
		w := make([]int64, nw)
		eachTap(func(src, dst int) { copy(w[dst:dst+cs.Cg], cs.wt.Data.I[src:src+cs.Cg]) })
		run := L // the layout's run: one tap's channels when the patch is compacted
		if cs.Cg%4 == 0 {
			run = cs.Cg
		}
		wbuf = k.s16s8Weights(k.n.Name+"_wphase", w, []int{nw}, run)
		xmax := int64(32768) // the patch holds x + inOff
		if cs.xt.DType != graph.Int16 {
			lo, hi := cs.xt.DType.Range()
			xmax = max(-(lo + cs.inOff), hi+cs.inOff, 0)
		}
		quad = fitsDot32(w, L, xmax)
	} else {
		w := make([]float32, nw)
		eachTap(func(src, dst int) { copy(w[dst:dst+cs.Cg], cs.wt.Data.F[src:src+cs.Cg]) })
		wbuf = constF32(k.n.Name+"_wphase", []int{nw}, w)
	}
	// Rows: output row oh takes its phase's taps jh in [lo, lo+cnt), those
	// whose input row is inside the image (contiguous: the input row falls
	// as jh rises). In integer mode with whole groups of four a tap (Cg a
	// multiple of 4) the patch holds only those rows and the inner product
	// runs over them alone; otherwise it holds all m_h rows, zeros outside.
	compact := cs.intMode && cs.Cg%4 == 0
	var rowTab *Buffer // [OH][lo, cnt], compact only
	if compact {
		rows := make([]int64, 2*cs.OH)
		for oh := 0; oh < cs.OH; oh++ {
			t := oh + a.Pad.Top
			r, q := t%ph.s, t/ph.s
			lo, cnt := -1, 0
			for j := range ph.taps[r] {
				if ih := int64(q) - ph.dq[r*ph.m+j]; ih >= 0 && ih < int64(cs.H) {
					if lo < 0 {
						lo = j
					}
					cnt++
				}
			}
			rows[2*oh], rows[2*oh+1] = int64(max(lo, 0)), int64(cnt)
		}
		rowTab = constBuf(k.n.Name+"_rows", I32, []int{len(rows)}, rows)
	}
	dqh := constBuf(k.n.Name+"_dq_h", I32, []int{len(ph.dq)}, ph.dq)
	dqw := constBuf(k.n.Name+"_dq_w", I32, []int{len(pw.dq)}, pw.dq)
	patchT := graph.Int16
	if !cs.intMode {
		patchT = F32
	}
	col := NewBuffer(k.n.Name+"_patch", patchT, []int{L}, ScopeLocal)
	rowL := int64(pw.m * cs.Cg) // one tap row of the patch
	// blockOf is a phase's block of weights (the phase itself when every
	// phase has taps).
	blockOf := func(p ctPhases, r Expr, name string) Expr {
		if p.nb == p.s {
			return r
		}
		return At(constBuf(k.n.Name+"_blk_"+name, I32, []int{p.s}, p.blk), r)
	}
	// The patch is declared once a call and zeroed first: the compacted
	// form writes only a pixel's rows inside the image and reads no more,
	// but gcc -O3 cannot see that and warned of unset values.
	var zero Expr = Imm(graph.Int16, 0)
	if !cs.intMode {
		zero = F(0)
	}
	clear := Loop("i", L, func(i Expr) Stmt { return Put(col, zero, i) })
	return &Allocate{Buf: col, Body: Block(clear, Loops([]string{"n", "oh", "ow", "g"}, []int{cs.N, cs.OH, cs.OW, cs.group}, func(o []Expr) Stmt {
		n, oh, ow, g := o[0], o[1], o[2], o[3]
		qh, rh := qr(oh, a.Pad.Top, ph.s)
		qw, rw := qr(ow, a.Pad.Left, pw.s)
		type let struct {
			name string
			v    func(v map[string]Expr) Expr
		}
		lets := []let{{"qh", func(map[string]Expr) Expr { return qh }}, {"rh", func(map[string]Expr) Expr { return rh }},
			{"qw", func(map[string]Expr) Expr { return qw }}, {"rw", func(map[string]Expr) Expr { return rw }},
			{"bh", func(v map[string]Expr) Expr { return blockOf(ph, v["rh"], "h") }},
			{"bw", func(v map[string]Expr) Expr { return blockOf(pw, v["rw"], "w") }}}
		if compact {
			lets = append(lets, let{"lo", func(map[string]Expr) Expr { return At(rowTab, Mul(oh, C(2))) }},
				let{"cnt", func(map[string]Expr) Expr { return At(rowTab, Add(Mul(oh, C(2)), C(1))) }})
		}
		vals := map[string]Expr{"lo": C(0), "cnt": C(int64(ph.m))}
		var bind func(i int) Stmt
		bind = func(i int) Stmt {
			if i < len(lets) {
				return Let(lets[i].name, lets[i].v(vals), func(x Expr) Stmt { vals[lets[i].name] = x; return bind(i + 1) })
			}
			qh, rh, qw, rw, lo, cnt := vals["qh"], vals["rh"], vals["qw"], vals["rw"], vals["lo"], vals["cnt"]
			fill := Loops([]string{"jh", "jw"}, []int{ph.m, pw.m}, func(j []Expr) Stmt {
				jh, jw := j[0], j[1]
				rel := jh
				if compact {
					rel = Sub(jh, lo)
				}
				ih := Sub(qh, At(dqh, Add(Mul(rh, C(int64(ph.m))), jh)))
				iw := Sub(qw, At(dqw, Add(Mul(rw, C(int64(pw.m))), jw)))
				tap := Let("ih", ih, func(ih Expr) Stmt {
					return Let("iw", iw, func(iw Expr) Stmt {
						base := Add(Mul(rel, C(rowL)), Mul(jw, C(int64(cs.Cg))))
						inside := AllOf(GE(ih, C(0)), LT(ih, C(int64(cs.H))), GE(iw, C(0)), LT(iw, C(int64(cs.W))))
						copyIn := Loop("ic", cs.Cg, func(ic Expr) Stmt {
							ci := Add(Mul(g, C(int64(cs.Cg))), ic)
							var v Expr = At(cs.x, n, ih, iw, ci)
							if cs.intMode {
								v = ld(cs.x, n, ih, iw, ci)
								if cs.inOff != 0 {
									v = Add(v, C(cs.inOff))
								}
								v = CastTo(graph.Int16, v)
							}
							return Put(col, v, Add(base, ic))
						})
						zeroOut := Loop("ic", cs.Cg, func(ic Expr) Stmt { return Put(col, zero, Add(base, ic)) })
						return &IfThenElse{Cond: inside, Then: copyIn, Else: zeroOut}
					})
				})
				if !compact {
					return tap // every slot written (gcc sees the whole patch set)
				}
				return If(AllOf(GE(rel, C(0)), LT(rel, cnt)), tap)
			})
			block := Add(Mul(vals["bh"], C(int64(pw.nb))), vals["bw"])
			ocOf := func(j Expr) Expr { return Add(Mul(g, C(int64(cs.coPerG))), j) }
			// wAt is channel j's weights: its phase's block, from row lo.
			wAt := func(j Expr) Expr {
				return Add(Mul(Add(Mul(block, C(int64(cs.Cout))), ocOf(j)), C(int64(L))), Mul(lo, C(rowL)))
			}
			store := func(oc, red Expr, acc *Buffer) Stmt {
				return Block(Put(acc, Add(cs.init(k, oc), red)), Put(cs.y, cs.result(At(acc), oc, a.Act), n, oh, ow, oc))
			}
			var outs Stmt
			if cs.intMode {
				n := C(int64(L)) // a constant where it is (gcc bounds the reads by it)
				if compact {
					n = Min(Mul(cnt, C(rowL)), C(int64(L))) // (cnt ≤ m_h: the Min tells gcc)
				}
				outs = k.s16s8Outs(k.n.Name, cs.coPerG, quad, &Ptr{Buf: col, Index: C(0)}, wbuf, wAt, int64(L), n, ocOf, func(oc, dot Expr) Stmt {
					return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
						return store(oc, CastTo(cs.accT, dot), acc) // (the int32 path: no overflow, CheckAccumulation)
					})
				})
			} else {
				outs = Loop("j", cs.coPerG, func(jj Expr) Stmt {
					return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
						red := Loop("i", L, func(i Expr) Stmt {
							return Put(acc, Add(At(acc), Mul(At(col, i), At(wbuf, Add(wAt(jj), i)))))
						})
						return Block(Put(acc, cs.init(k, ocOf(jj))), red, Put(cs.y, cs.result(At(acc), ocOf(jj), a.Act), n, oh, ow, ocOf(jj)))
					})
				})
			}
			main := Block(fill, outs)
			if ph.nb == ph.s && pw.nb == pw.s {
				return main
			}
			// A phase without taps: the bias alone.
			biasOnly := Loop("j", cs.coPerG, func(jj Expr) Stmt {
				return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
					return Block(Put(acc, cs.init(k, ocOf(jj))), Put(cs.y, cs.result(At(acc), ocOf(jj), a.Act), n, oh, ow, ocOf(jj)))
				})
			})
			return &IfThenElse{Cond: AllOf(GE(vals["bh"], C(0)), GE(vals["bw"], C(0))), Then: main, Else: biasOnly}
		}
		return bind(0)
	}))}
}

// qr splits o + pad into its quotient and phase by the stride.
func qr(o Expr, pad, s int) (q, r Expr) {
	t := Add(o, C(int64(pad)))
	if s == 1 {
		return t, C(0)
	}
	return Div(t, C(int64(s))), Mod(t, C(int64(s)))
}
