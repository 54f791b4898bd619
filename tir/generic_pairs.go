package tir

import (
	"fmt"
	"maps"
	"math"
)

// Channel pairs in one 64-bit accumulator, for cores with a 32×32→64
// multiply-accumulate and no SIMD (SMLAL on a Cortex-M3).
//
// The weights of channels c and c+1 are packed at compile time into one
// word per reduction step, W[k] = w[c][k] + w[c+1][k]·2^23, and one
// accumulator a = Σ x[k]·W[k] = S0 + S1·2^23 carries both channels' sums:
// one SMLAL does two multiply-accumulates. Where |S0| < 2^22, the low 23
// bits of a, sign-extended, are S0 exactly, and (a − S0) / 2^23 is S1. The
// bound holds when 128·Σ|w[c][k]| < 2^22 for every channel (the int8 input
// is at most 128 in magnitude; its zero point is folded into the bias),
// which the schedule checks on the weights at compile time.

// IntrGenPairs is a convolution (over a pixel's input or padded window) or
// a fully connected layer over r (1 or 2) pixels with packed channel pairs:
//
//	gen_pairs_s8(y *int8, ys, x *int8, xs, r, w *int32, n, np, p *int32, zr, lo, hi), n % 4 == 0:
//	for j < np, i < r: a = Σ_{k<n} x[i·xs + k]·w[j·n + k] (int64)
//	  s0 = a mod 2^23 sign-extended, s1 = (a − s0) / 2^23
//	  for h < 2, c = 2j + h:
//	    y[i·ys + c] = requant_fast_s8(s_h + p[5c], p[5c+1], k0, p[5c+4], zr, lo, hi)
//	    with k0 = p[5c+2] as uint32 + p[5c+3]·2^32
//
// y must not overlap x: the outputs of a pair are stored before the next
// pair reads x again.
const IntrGenPairs = "gen_pairs_s8"

// pairsBound is the limit on |S0| that keeps the unpacking exact.
const pairsBound = 1 << 22

// IntrGenQuad is the ARMv6-M (Cortex-M0/M0+/M23) form of IntrGenPairs: four
// channels a step, their weights widened to int32 at compile time and
// interleaved, so one LDM brings the four weights of a step and each
// multiply is a MULS whose product one ADD puts in an accumulator kept in a
// high register (the C helper's asm):
//
//	gen_quad_s8(y *int8, ys, x *int8, xs, r, w *int32, n, nq, p *int32, zr, lo, hi), n % 4 == 0:
//	for i < r, j < nq, h < 4, c = 4j + h:
//	  a = p[5c] + Σ_{k<n} x[i·xs + k]·w[(j·n + k)·4 + h] (int32)
//	  y[i·ys + c] = requant_fast_s8(a, p[5c+1], k0, p[5c+4], zr, lo, hi)
//	  with k0 = p[5c+2] as uint32 + p[5c+3]·2^32
//
// y must not overlap x (as for IntrGenPairs). The schedule checks at compile
// time that 128·Σ|w| + |bias| of every channel fits an int32.
const IntrGenQuad = "gen_quad_s8"

func init() {
	extIntrinsics[IntrGenPairs] = func(a []val) val {
		y, ys, x, xs, r, w, n, np, p := a[0], a[1].i, a[2], a[3].i, a[4].i, a[5], a[6].i, a[7].i, a[8]
		zr, lo, hi := a[9].i, a[10].i, a[11].i
		if r < 1 || r > 2 || n <= 0 || n%4 != 0 || np < 0 {
			panic(fmt.Sprintf("%s: r %d, n %d, np %d", IntrGenPairs, r, n, np))
		}
		for j := int64(0); j < np; j++ {
			for i := int64(0); i < r; i++ {
				// The packed sum as the C forms it, and each channel's own
				// sum from the unpacked weights: the unpacking must give
				// them exactly (the schedule's bound promises it).
				var acc, t0, t1 int64
				for k := int64(0); k < n; k++ {
					xv, wv := x.p.I[x.i+i*xs+k], w.p.I[w.i+j*n+k]
					w0 := int64(int32(uint32(wv)<<9) >> 9)
					acc += xv * wv
					t0 += xv * w0
					t1 += xv * ((wv - w0) >> 23)
				}
				s0 := int64(int32(uint32(acc)<<9) >> 9)
				s1 := (acc - s0) >> 23
				if s0 != t0 || s1 != t1 {
					panic(fmt.Sprintf("%s: channel pair %d: packed sums %d, %d; true sums %d, %d", IntrGenPairs, j, s0, s1, t0, t1))
				}
				for h, s := range []int64{s0, s1} {
					c := 2*j + int64(h)
					P := func(k int64) int64 { return p.p.I[p.i+5*c+k] }
					b := s + P(0)
					if b < math.MinInt32 || b > math.MaxInt32 {
						panic(fmt.Sprintf("%s: channel %d: bias + sum leaves int32", IntrGenPairs, c))
					}
					k0 := int64(uint32(P(2))) + P(3)<<32
					// Stored per pair as the C does (y must not overlap x).
					y.p.I[y.i+i*ys+c] = extIntrinsics[IntrRequantFast]([]val{{i: b}, {i: P(1)}, {i: k0}, {i: P(4)}, {i: zr}, {i: lo}, {i: hi}}).i
				}
			}
		}
		return val{}
	}
}

func init() {
	extIntrinsics[IntrGenQuad] = func(a []val) val {
		y, ys, x, xs, r, w, n, nq, p := a[0], a[1].i, a[2], a[3].i, a[4].i, a[5], a[6].i, a[7].i, a[8]
		zr, lo, hi := a[9].i, a[10].i, a[11].i
		if r < 1 || n <= 0 || n%4 != 0 || nq < 0 {
			panic(fmt.Sprintf("%s: r %d, n %d, nq %d", IntrGenQuad, r, n, nq))
		}
		for i := int64(0); i < r; i++ {
			for j := int64(0); j < nq; j++ {
				for h := int64(0); h < 4; h++ {
					c := 4*j + h
					P := func(k int64) int64 { return p.p.I[p.i+5*c+k] }
					acc := P(0)
					for k := int64(0); k < n; k++ {
						acc += x.p.I[x.i+i*xs+k] * w.p.I[w.i+(j*n+k)*4+h]
					}
					if acc < math.MinInt32 || acc > math.MaxInt32 {
						panic(fmt.Sprintf("%s: channel %d: bias + sum leaves int32", IntrGenQuad, c))
					}
					k0 := int64(uint32(P(2))) + P(3)<<32
					y.p.I[y.i+i*ys+c] = extIntrinsics[IntrRequantFast]([]val{{i: acc}, {i: P(1)}, {i: k0}, {i: P(4)}, {i: zr}, {i: lo}, {i: hi}}).i
				}
			}
		}
		return val{}
	}
}

// schedulePairs is the channel-pair form of an int8 pointwise (1×1,
// stride 1, unpadded) convolution or fully connected layer: pixels (or
// rows) two at a time, each call running every channel pair. ok is false
// where it does not apply (odd Cout, weights too large for the bound,
// requantization outside requant_fast_s8's form), and the caller schedules
// f as before.
func schedulePairs(f *PrimFunc) (*PrimFunc, bool) { return schedulePointwisePacked(f, false) }

// scheduleQuad is schedulePairs' form for ARMv6-M (IntrGenQuad): four
// channels a step, any reduction that is a multiple of four. ok is false
// where it does not apply (Cout not a multiple of four, a sum that could
// leave int32).
func scheduleQuad(f *PrimFunc) (*PrimFunc, bool) { return schedulePointwisePacked(f, true) }

func schedulePointwisePacked(f *PrimFunc, quad bool) (*PrimFunc, bool) {
	if f.Op != "conv2d" && f.Op != "fully_connected" {
		return nil, false
	}
	// A layer with dead channels at its end keeps the blocked schedule,
	// which stores them as constants (SplitDeadTail).
	if SplitDeadTail(f) != f {
		return nil, false
	}
	p, err := findParts(f)
	if err != nil || p.dw {
		return nil, false
	}
	xs, ys, ws := p.x.Shape, p.y.Shape, p.w.Shape
	var pix, K, Cout int
	switch f.Op {
	case "conv2d":
		if len(xs) != 4 || len(ys) != 4 || len(ws) != 4 || xs[0] != 1 || ys[0] != 1 ||
			xs[1] != ys[1] || xs[2] != ys[2] || ws[1] != 1 || ws[2] != 1 || ws[3] != xs[3] || ws[0] != ys[3] {
			return nil, false
		}
		pix, K, Cout = ys[1]*ys[2], xs[3], ys[3]
	default:
		if len(xs) != 2 || len(ys) != 2 || len(ws) != 2 || xs[0] != ys[0] || ws[1] != xs[1] || ws[0] != ys[1] {
			return nil, false
		}
		pix, K, Cout = ys[0], xs[1], ys[1]
	}
	// The reduction a multiple of four (the C takes four steps at a time)
	// and at least knob pairs_min_k (default 32): shorter ones measured 5
	// to 9% slower two pixels at a time on a Cortex-M3 (VWW's 8- and
	// 16-channel inputs) and take the window form instead, one pixel per
	// call, which is faster there. So do layers with dead channels.
	if quad {
		// Any reduction of four or more steps: the quads' gain is in every
		// step (one LDM and four MULS, ADD pairs).
		if Cout%4 != 0 || K%4 != 0 || len(p.w.Data.I) != Cout*K {
			return nil, false
		}
	} else if Cout%2 != 0 || K%4 != 0 || len(p.w.Data.I) != Cout*K || K < knob(f, "pairs_min_k", 32) {
		return nil, false
	}
	if !pairsLayout(f, p, K, Cout, false) {
		return nil, false
	}
	wb, pb, args, ok := pairsTables(f, p, K, K, Cout, quad)
	if !ok {
		return nil, false
	}
	intr, groups := IntrGenPairs, Cout/2
	if quad {
		intr, groups = IntrGenQuad, Cout/4
	}
	// call runs r pixels from pixel px.
	call := func(px Expr, r int) Stmt {
		return &Evaluate{X: Call(intr, I32, append([]Expr{ptr(p.y, Mul(px, C(int64(Cout)))), C(int64(Cout)), ptr(p.x, Mul(px, C(int64(K)))), C(int64(K)),
			C(int64(r)), ptr(wb, C(0)), C(int64(K)), C(int64(groups)), ptr(pb, C(0))}, args...)...)}
	}
	v := NewVar("px")
	body := []Stmt{}
	if pix >= 2 {
		body = append(body, &For{Var: v, Min: C(0), Extent: C(int64(pix / 2)), Body: call(Mul(v, C(2)), 2)})
	}
	if pix%2 == 1 {
		body = append(body, call(C(int64(pix-1)), 1))
	}
	g := *f
	g.Body = Block(body...)
	if quad {
		g.Knobs = quadKnobs(f.Knobs)
	}
	return &g, true
}

// quadKnobs records on a quad kernel that its weights are int32 (knob
// weights = 32), which the fit pass reads (pipeline.leanCandidates): it can
// give the kernel back int8 weights (weights = 8: the blocked form).
func quadKnobs(k map[string]int) map[string]int {
	out := maps.Clone(k)
	if out == nil {
		out = map[string]int{}
	}
	out["weights"] = 32
	return out
}

// pairsTables checks the bound on the weights of p (Cout channels of K) and
// returns the packed weights (Kp >= K words per pair, zero past K), the five-word table per channel (bias,
// multiplier, k0 low and high, e1) and the constant zr, lo and hi of the
// requantization; ok is false where the layer is not in that form. With
// quad, the weights are IntrGenQuad's (four channels' int32 weights per
// step, Kp steps per quad) and the bound is the int32 accumulator's.
func pairsTables(f *PrimFunc, p *simdParts, K, Kp, Cout int, quad bool) (wb, pb *Buffer, args []Expr, ok bool) {
	// The compute definitions fold the input zero point into the bias; an
	// offset left in the reduction is not this schedule's form.
	bias, err := constPerChannel(p.init.Value, p.chan_.Var, Cout)
	if err != nil || p.xo != 0 {
		return nil, nil, nil, false
	}
	w := p.w.Data.I
	for c := range Cout {
		var abs int64
		for k := range K {
			abs += abs64(w[c*K+k])
		}
		if quad {
			if 128*abs+abs64(bias[c]) > math.MaxInt32 {
				return nil, nil, nil, false
			}
		} else if 128*abs >= pairsBound {
			return nil, nil, nil, false
		}
	}
	st := fastRequantAs(p.out, IntrRequantFast, nil)
	cast, ok := st.Value.(*Cast)
	if !ok {
		return nil, nil, nil, false
	}
	rq, ok := cast.X.(*Intrinsic)
	if !ok || rq.Name != IntrRequantFast {
		return nil, nil, nil, false
	}
	zr, ok1 := IsConst(rq.Args[4])
	lo, ok2 := IsConst(rq.Args[5])
	hi, ok3 := IsConst(rq.Args[6])
	if !ok1 || !ok2 || !ok3 {
		return nil, nil, nil, false
	}
	tab := make([]int64, 0, 5*Cout)
	var vals [3][]int64
	for i := range vals {
		if vals[i], err = constPerChannel(rq.Args[1+i], p.chan_.Var, Cout); err != nil {
			return nil, nil, nil, false
		}
	}
	for c := range Cout {
		m, k0, e1 := vals[0][c], vals[1][c], vals[2][c]
		tab = append(tab, bias[c], m, int64(int32(uint32(k0))), k0>>32, e1)
	}
	if quad {
		packed := make([]int64, 0, Cout*Kp)
		for j := range Cout / 4 {
			for k := range Kp {
				for h := range 4 {
					if k < K {
						packed = append(packed, w[(4*j+h)*K+k])
					} else {
						packed = append(packed, 0)
					}
				}
			}
		}
		wb = constBuf(p.w.Name+"_weights_q32", I32, []int{len(packed)}, packed)
		pb = constBuf(f.Name+"_quad_rq", I32, []int{len(tab)}, tab)
		return wb, pb, []Expr{C(zr), C(lo), C(hi)}, true
	}
	packed := make([]int64, 0, Cout*Kp/2)
	for j := range Cout / 2 {
		for k := range K {
			packed = append(packed, w[2*j*K+k]+w[(2*j+1)*K+k]<<23)
		}
		for k := K; k < Kp; k++ {
			packed = append(packed, 0)
		}
	}
	wb = constBuf(p.w.Name+"_pairs", I32, []int{len(packed)}, packed)
	pb = constBuf(f.Name+"_pairs_rq", I32, []int{len(tab)}, tab)
	return wb, pb, []Expr{C(zr), C(lo), C(hi)}, true
}

// pairsLayout checks that the kernel reads w[c·K + k] and x[q·K + k] and
// writes y[q·Cout + c] for output channel c (the channel loop's variable),
// pixel q and reduction step k: every index affine in every loop variable,
// with strides such that the channel loop moves w by K and y by 1; a
// reduction loop moves x and w alike; a pixel loop moves x by q·K and y by q·Cout for
// the same q, and w not at all (window: a pixel's window is one local
// buffer, so a pixel loop moves neither x nor w).
func pairsLayout(f *PrimFunc, p *simdParts, K, Cout int, window bool) bool {
	var mac *Store
	VisitStmts(p.red, func(s Stmt) {
		if st, ok := s.(*Store); ok && mac == nil {
			mac = st
		}
	})
	if mac == nil {
		return false
	}
	x, _, w, ok := matchMAC(mac, p.acc)
	if !ok {
		return false
	}
	red := map[*Var]bool{}
	VisitStmts(p.red, func(s Stmt) {
		if l, ok := s.(*For); ok {
			red[l.Var] = true
		}
	})
	// Loops of one iteration never step (a 1×1 window's kh and kw). Every
	// loop starts at 0, so the all-zero point is each index's base.
	var all, steps []*Var
	zeroStart := true
	VisitStmts(f.Body, func(s Stmt) {
		if l, ok := s.(*For); ok {
			all = append(all, l.Var)
			if m, ok := IsConst(l.Min); !ok || m != 0 {
				zeroStart = false
			}
			if n, ok := IsConst(l.Extent); !ok || n > 1 {
				steps = append(steps, l.Var)
			}
		}
	})
	if !zeroStart {
		return false
	}
	// strides proves an index affine in every loop variable (affineIn) and
	// returns its base and its stride in each.
	strides := func(buf *Buffer, idx []Expr, flat bool) (int64, map[*Var]int64, bool) {
		e := Expr(nil)
		if flat {
			e = idx[0]
		} else {
			e = flatIndex(buf, idx)
		}
		st := map[*Var]int64{}
		sub := map[*Var]Expr{}
		for _, v := range all {
			_, k, ok := affineIn(e, v)
			if !ok {
				return 0, nil, false
			}
			st[v], sub[v] = k, C(0)
		}
		base, ok := IsConst(SimplifyExpr(SubstituteExpr(e, sub)))
		return base, st, ok
	}
	x0, xs, ok1 := strides(x.Buf, x.Indices, x.Flat)
	w0, ws, ok2 := strides(w.Buf, w.Indices, w.Flat)
	y0, ys, ok3 := strides(p.out.Buf, p.out.Indices, p.out.Flat)
	if !ok1 || !ok2 || !ok3 || x0 != 0 || w0 != 0 || y0 != 0 {
		return false
	}
	for _, v := range steps {
		dx, dw, dy := xs[v], ws[v], ys[v]
		var ok bool
		switch {
		case v == p.chan_.Var:
			ok = dx == 0 && dw == int64(K) && dy == 1
		case red[v]:
			ok = dx == dw && dy == 0
		case window:
			ok = dx == 0 && dw == 0
		default:
			ok = dw == 0 && dy%int64(Cout) == 0 && dx == dy/int64(Cout)*int64(K)
		}
		if !ok {
			return false
		}
	}
	return true
}

// schedulePairsWindow is the channel-pair form of an int8 convolution with
// a window (any KH×KW, stride and padding; dead channels at the end kept
// out): each output pixel's window
// is copied into a local buffer (rows with gen_copy_s8, padding with
// gen_fill_s8, as the SIMD schedules do), then one gen_pairs_s8 call runs
// every channel pair over it (r = 1). ok is false where it does not apply.
func schedulePairsWindow(f *PrimFunc) (*PrimFunc, bool) { return scheduleWindowPacked(f, false) }

// scheduleQuadWindow is schedulePairsWindow's form for ARMv6-M
// (IntrGenQuad): Cout a multiple of four once dead channels are split off.
func scheduleQuadWindow(f *PrimFunc) (*PrimFunc, bool) { return scheduleWindowPacked(f, true) }

func scheduleWindowPacked(f *PrimFunc, quad bool) (*PrimFunc, bool) {
	if f.Op != "conv2d" {
		return nil, false
	}
	// Dead channels at the end store constants (SplitDeadTail), keeping an
	// even number in the channel loop: a dead channel computed in a pair
	// gives its constant anyway (its weights are zero).
	group := 2
	if quad {
		group = 4
	}
	if knob(f, "skip_dead", 1) != 0 {
		f = SplitDeadTailMultiple(f, group)
	}
	f = PruneConditions(Simplify(f))
	p, err := findParts(f)
	if err != nil || p.dw {
		return nil, false
	}
	ws := p.w.Shape
	n, ok := IsConst(p.chan_.Extent)
	if len(ws) != 4 || len(p.y.Shape) != 4 || len(p.x.Shape) != 4 || ws[3] != p.x.Shape[3] || !ok {
		return nil, false
	}
	Cout, K := int(n), ws[1]*ws[2]*ws[3]
	// The window is padded with zeros to Kp, a multiple of four (zero
	// weights there too). Knob pairs_min_window (default 8): the shortest
	// window that takes pairs (VWW's 8-channel pointwise layer on a
	// Cortex-M3: 1,264,241 → 1,127,251 instructions in pairs).
	Kp := (K + 3) / 4 * 4
	if Cout%group != 0 || len(p.w.Data.I) != ws[0]*K || (!quad && K < knob(f, "pairs_min_window", 8)) {
		return nil, false
	}
	pad := -p.xo
	VisitExprs(p.red, func(e Expr) {
		if sel, ok := e.(*Select); ok {
			pad, _ = IsConst(sel.B)
		}
	})
	g, err := CacheWindowPad(f, p.x, "ow", pad)
	if err != nil {
		return nil, false
	}
	g, win, err := rowFill(g, "ow", p.x, pad, "gen", 16)
	if err != nil {
		return nil, false
	}
	g.Body = dropWindowConds(g.Body, p.acc, win, p.xo, pad)
	if p, err = findParts(g); err != nil || hasCond(p.red) || p.x != win {
		return nil, false
	}
	if p.xo != 0 {
		if p, err = foldOffset(g, p); err != nil {
			return nil, false
		}
	}
	g = Flatten(stripUnitLoops(g))
	if p, err = findParts(g); err != nil || p.xo != 0 {
		return nil, false
	}
	if !pairsLayout(g, p, K, Cout, true) {
		return nil, false
	}
	wb, pb, args, ok := pairsTables(g, p, K, Kp, Cout, quad)
	if !ok {
		return nil, false
	}
	intr, groups := IntrGenPairs, Cout/2
	if quad {
		intr, groups = IntrGenQuad, Cout/4
	}
	// The output at channel 0 of the pixel the loops are at.
	yi := Expr(nil)
	if p.out.Flat {
		yi = p.out.Indices[0]
	} else {
		yi = flatIndex(p.y, p.out.Indices)
	}
	yi = SimplifyExpr(SubstituteExpr(yi, map[*Var]Expr{p.chan_.Var: C(0)}))
	var call Stmt = &Evaluate{X: Call(intr, I32, append([]Expr{ptr(p.y, yi), C(int64(Cout)), ptr(win, C(0)), C(0),
		C(1), ptr(wb, C(0)), C(int64(Kp)), C(int64(groups)), ptr(pb, C(0))}, args...)...)}
	if Kp > K {
		// The flattened window takes Kp bytes; its tail is zeroed for each
		// pixel (the window is the pixel loop's local).
		win.Shape = []int{Kp}
		call = Block(&Evaluate{X: Call("gen_"+KFill8, I32, ptr(win, C(int64(K))), C(0), C(int64(Kp-K)))}, call)
	}
	g.Body = replaceStmt(g.Body, p.chan_, func(Stmt) Stmt { return call })
	if quad {
		g.Knobs = quadKnobs(g.Knobs)
	}
	return g, true
}
