package tir

import "fmt"

// KSumPool(acc *i32, x *i8, xkh, xkw, kh, kw, c):
// acc[ch] += Σ_{a<kh, b<kw} x[a·xkh + b·xkw + ch] for ch < c.
const KSumPool = "sumpool_s8"

func init() {
	// Max pools whose windows reach into the padding: each run of outputs
	// the fallback partitions out through the SIMD helper (poolPieces).
	for _, p := range append([]string{"dsp"}, SIMDPrefixes...) {
		DeclareKnob(p+".simd_pieces", 0, 1)
	}
	// The dsp target has a sum pool too (SXTAB16 into int16 lanes).
	for _, p := range append([]string{"dsp"}, SIMDPrefixes...) {
		extIntrinsics[p+"_"+KSumPool] = func(a []val) val {
			acc, x, xkh, xkw, kh, kw, c := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i, a[6].i
			for ch := int64(0); ch < c; ch++ {
				s := acc.p.I[acc.i+ch]
				for p := int64(0); p < kh; p++ {
					for q := int64(0); q < kw; q++ {
						s += x.p.I[x.i+p*xkh+q*xkw+ch]
					}
				}
				acc.p.I[acc.i+ch] = s
			}
			return val{}
		}
	}
}

// KMaxPool(y *i8, x *i8, xkh, xkw, kh, kw, c, lo, hi), kh·kw >= 1,
// -128 <= lo <= hi <= 127:
// y[ch] = min(max(max_{a<kh, b<kw} x[a·xkh + b·xkw + ch], lo), hi) for ch < c.
const KMaxPool = "maxpool_s8"

func init() {
	for _, p := range append([]string{"dsp"}, SIMDPrefixes...) {
		extIntrinsics[p+"_"+KMaxPool] = maxPoolIntrinsic
	}
}

// maxPoolIntrinsic is KMaxPool's definition, the same for every target.
func maxPoolIntrinsic(a []val) val {
	y, x, xkh, xkw, kh, kw, c, lo, hi := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i, a[6].i, a[7].i, a[8].i
	if kh < 1 || kw < 1 || lo < -128 || hi > 127 || lo > hi {
		panic(fmt.Sprintf("%s: window %dx%d, clamp [%d, %d]", KMaxPool, kh, kw, lo, hi))
	}
	for ch := int64(0); ch < c; ch++ {
		best := x.p.I[x.i+ch]
		for p := int64(0); p < kh; p++ {
			for q := int64(0); q < kw; q++ {
				best = max(best, x.p.I[x.i+p*xkh+q*xkw+ch])
			}
		}
		y.p.I[y.i+ch] = min(max(best, lo), hi)
	}
	return val{}
}

// simdMaxPool schedules an int8 max pool whose windows need no padding
// checks as simdAvgPool does a sum: the taps × channels nest tensorized into
// <prefix>_maxpool_s8 (dsp: four channels a step in the bytes of a word,
// SSUB8 and SEL; mve and neon: sixteen in a vector), with the clamp and the
// store where the channel loop is just those, else into an int8 array the
// clamp and store then read. Anything else takes the fallback.
func simdMaxPool(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return simdPoolOr(prefix, true, fallback)
}

// simdAvgPool schedules an int8 average pool whose windows need no padding
// checks: an accumulator per channel, the window taps outside the channel
// loop, and the taps × channels nest tensorized into <prefix>_sumpool_s8;
// the rounding division stays scalar. Anything else takes the fallback.
func simdAvgPool(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return simdPoolOr(prefix, false, fallback)
}

// simdPoolOr is simdPoolKind with the fallback where it does not apply
// (knob simd says which ran).
func simdPoolOr(prefix string, isMax bool, fallback ScheduleFunc) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		g, err := simdPoolKind(f, prefix, isMax)
		if err != nil {
			if f.Knobs == nil {
				f.Knobs = map[string]int{}
			}
			f.Knobs["simd"] = 0
			// Max pools only: a padded average pool's pieces each end in
			// the rounding division, and took up to 1.8 times the scalar
			// loops' instructions (a review: 7×7×20, 2×2 at stride 3).
			h, err := fallback(f)
			if err != nil || !isMax || knob(f, "simd_pieces", 1) == 0 {
				return h, err
			}
			// The fallback's own code where no piece takes the helper
			// (a float pool: as it was, not simplified again).
			if p, n := poolPieces(h, prefix, isMax); n > 0 {
				p.Knobs["simd"] = 1
				return p, nil
			}
			return h, nil
		}
		g.Knobs["simd"] = 1
		return g, nil
	}
}

// simdPoolKind schedules a window sum of int8 values, or (isMax) a window
// maximum of int8 values starting from -128.
func simdPoolKind(f *PrimFunc, prefix string, isMax bool) (*PrimFunc, error) {
	f = Flatten(stripUnitLoops(PruneConditions(Simplify(f))))
	if f.Knobs == nil {
		f.Knobs = map[string]int{}
	}
	l := findLoop(f.Body, "c")
	if l == nil {
		// A MEAN's kept axis has its own name: the loop whose body holds
		// the scalar accumulator.
		l = accLoop(f.Body)
	}
	if l == nil {
		return nil, fmt.Errorf("no channel loop")
	}
	s, err := poolChannels(l, prefix, isMax)
	if err != nil {
		return nil, err
	}
	f.Body = replaceStmt(f.Body, l, func(Stmt) Stmt { return s })
	return f, nil
}

// poolPieces tensorizes, as simdPoolKind does the whole nest, every
// channel loop of f (a pool the fallback schedule has partitioned into
// runs of outputs whose windows are decided: no padding checks left in
// them) that takes the form, and reports how many did. A padded window
// (PyTorch's 3×3 stride-2 max pool with padding 1 after a ResNet stem)
// took the scalar loops throughout: 5.2 times the instructions of the
// same pool without padding on the Cortex-M4, 24 times on the M55 (a
// review).
func poolPieces(f *PrimFunc, prefix string, isMax bool) (*PrimFunc, int) {
	f = Flatten(stripUnitLoops(Simplify(f)))
	var loops []*For
	VisitStmts(f.Body, func(s Stmt) {
		if l, ok := s.(*For); ok && l.Var.Name == "c" {
			loops = append(loops, l)
		}
	})
	g, n := *f, 0
	for _, l := range loops {
		if s, err := poolChannels(l, prefix, isMax); err == nil {
			g.Body = replaceStmt(g.Body, l, func(Stmt) Stmt { return s })
			n++
		}
	}
	return &g, n
}

// poolChannels is the tensorized form of a pool's channel loop l: a window
// sum of int8 values, or (isMax) a window maximum starting from -128, over
// at most two window loops (from any constant start) without conditions.
func poolChannels(l *For, prefix string, isMax bool) (Stmt, error) {
	m, ok := IsConst(l.Extent)
	if !ok {
		return nil, fmt.Errorf("channel extent")
	}
	al, ok := l.Body.(*Allocate)
	if !ok || len(al.Buf.Shape) != 0 || al.Buf.DType != I32 {
		return nil, fmt.Errorf("no int32 accumulator")
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 3 {
		return nil, fmt.Errorf("unexpected body")
	}
	init, ok := seq.Stmts[0].(*Store)
	if !ok {
		return nil, fmt.Errorf("unexpected body")
	}
	if v, isC := IsConst(init.Value); !isC || !isMax && v != 0 || isMax && v != -128 {
		return nil, fmt.Errorf("accumulator does not start at 0 (a sum) or -128 (a maximum)")
	}
	acc := al.Buf
	var loops []*For
	var upd *Store
	VisitStmts(seq.Stmts[1], func(s Stmt) {
		switch s := s.(type) {
		case *For:
			loops = append(loops, s)
		case *Store:
			upd = s
		}
	})
	if upd == nil || len(loops) > 2 || hasCond(seq.Stmts[1]) {
		return nil, fmt.Errorf("reduction is not a plain window sum")
	}
	sum, ok := upd.Value.(*Binary)
	if !ok || !isMax && sum.Op != OpAdd || isMax && sum.Op != OpMax {
		return nil, fmt.Errorf("not a sum or a maximum")
	}
	if a, ok := sum.A.(*Load); !ok || a.Buf != acc {
		return nil, fmt.Errorf("not a sum")
	}
	x, off, ok := castLoad(sum.B)
	if !ok || off != 0 || !x.Flat {
		return nil, fmt.Errorf("not an int8 sum")
	}
	idx := x.Indices[0]
	var st, ext [2]int64
	ext = [2]int64{1, 1}
	for i, lp := range loops {
		slot := i + 2 - len(loops)
		var ok1 bool
		idx, st[slot], ok1 = affineIn(idx, lp.Var)
		n, ok2 := IsConst(lp.Extent)
		lo, ok3 := IsConst(lp.Min)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("window index")
		}
		// A window loop from lo (a run of outputs the padding cuts):
		// the first tap lo strides on.
		idx = SimplifyExpr(Add(idx, C(lo*st[slot])))
		ext[slot] = n
	}
	if lo, ok := IsConst(l.Min); !ok || lo != 0 {
		return nil, fmt.Errorf("channel loop start")
	}
	xb, xc, ok := affineIn(idx, l.Var)
	if !ok || xc != 1 {
		return nil, fmt.Errorf("channels not contiguous")
	}
	if isMax && x.Buf.DType != I8 {
		return nil, fmt.Errorf("not an int8 maximum")
	}
	if isMax && prefix == "neon" && m < 8 {
		// NEON's vectors hold eight or sixteen: fewer channels would all
		// take the helper's scalar tail, slower than the loops.
		return nil, fmt.Errorf("%d channels: under a vector", m)
	}
	call := func(y *Ptr, lo, hi int64) Stmt {
		return &Evaluate{X: Call(prefix+"_"+KMaxPool, I32, y, &Ptr{Buf: x.Buf, Index: xb},
			C(st[0]), C(st[1]), C(ext[0]), C(ext[1]), C(m), C(lo), C(hi))}
	}
	if isMax {
		// The clamp and the store too, where the channel loop's one
		// statement is y[base + c] = int8(clamp(acc)).
		if y, lo, hi, ok := maxPoolStore(seq.Stmts[2], acc, l.Var); ok {
			if lo == hi {
				// Every output the one value (a ReLU at zero point
				// 127): gcc folds the scalar loop to stores, which the
				// helper's call is not (11.6 times the instructions on
				// the M4, a review).
				return nil, fmt.Errorf("a constant output")
			}
			return call(y, lo, hi), nil
		}
	}
	c1, c3 := NewVar("c"), NewVar("c")
	var accv *Buffer
	var pre []Stmt
	if isMax {
		// The window's maximum of each channel, written whole (no start).
		accv = NewBuffer("acc", I8, []int{int(m)}, ScopeLocal)
		pre = append(pre, call(&Ptr{Buf: accv, Index: C(0)}, -128, 127))
	} else {
		accv = NewBuffer("acc", I32, []int{int(m)}, ScopeLocal)
		pre = append(pre, &For{Var: c1, Min: C(0), Extent: C(m), Body: &Store{Buf: accv, Indices: []Expr{c1}, Value: C(0), Flat: true}},
			&Evaluate{X: Call(prefix+"_"+KSumPool, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: x.Buf, Index: xb},
				C(st[0]), C(st[1]), C(ext[0]), C(ext[1]), C(m))})
	}
	out := Substitute(seq.Stmts[2], map[*Var]Expr{l.Var: c3})
	out = RewriteStmt(out, nil, func(e Expr) Expr {
		if ld, ok := e.(*Load); ok && ld.Buf == acc {
			v := Expr(&Load{Buf: accv, Indices: []Expr{c3}, Flat: true})
			if isMax {
				v = CastTo(I32, v)
			}
			return v
		}
		return e
	})
	return &Allocate{Buf: accv, Body: Block(append(pre, &For{Var: c3, Min: C(0), Extent: C(m), Body: out})...)}, nil
}

// maxPoolStore matches a max pool's channel statement y[base + c] =
// int8(min(max(acc, lo), hi)) (either clamp side absent, or in the other
// order) and returns &y[base] and the clamp.
func maxPoolStore(s Stmt, acc *Buffer, c *Var) (*Ptr, int64, int64, bool) {
	st, ok := s.(*Store)
	if !ok || !st.Flat || len(st.Indices) != 1 || st.Buf.DType != I8 {
		return nil, 0, 0, false
	}
	base, k, ok := affineIn(st.Indices[0], c)
	if !ok || k != 1 {
		return nil, 0, 0, false
	}
	cv, ok := st.Value.(*Cast)
	if !ok || cv.T != I8 {
		return nil, 0, 0, false
	}
	// One min and one max at most, in either order: with lo <= hi both
	// orders are the clamp.
	lo, hi := int64(-128), int64(127)
	var seenMin, seenMax bool
	e := cv.X
	for {
		b, ok := e.(*Binary)
		if !ok {
			break
		}
		v, isC := IsConst(b.B)
		switch {
		case isC && b.Op == OpMin && !seenMin:
			hi, seenMin = min(hi, v), true
		case isC && b.Op == OpMax && !seenMax:
			lo, seenMax = max(lo, v), true
		default:
			return nil, 0, 0, false
		}
		e = b.A
	}
	if ld, ok := e.(*Load); !ok || ld.Buf != acc || lo > hi {
		return nil, 0, 0, false
	}
	return &Ptr{Buf: st.Buf, Index: base}, lo, hi, true
}

// accLoop is the first loop whose body allocates a scalar int32 (a
// reduction's accumulator), or nil.
func accLoop(s Stmt) *For {
	var found *For
	VisitStmts(s, func(s Stmt) {
		if l, ok := s.(*For); ok && found == nil {
			if al, ok := l.Body.(*Allocate); ok && len(al.Buf.Shape) == 0 && al.Buf.DType == I32 {
				found = l
			}
		}
	})
	return found
}
