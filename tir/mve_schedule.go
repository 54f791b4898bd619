package tir

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// The int8 conv / depthwise / fully-connected schedule shared by the "mve"
// and "neon" targets (the micro-kernels differ only in how emitc prints
// them). Starting from the compute definition it:
//
//  1. caches a zero-point-padded input window (knob window: 1 = the input
//     rows one output row reads, 2 = one output pixel's KH×KW×Cin window,
//     0 = pick: 2 when KW·Cin < 16 and not depthwise), filled by row copies,
//     and drops the padding guards (a padded tap adds (zp − zp)·w = 0);
//  2. folds the input offset into the bias: Σ(x − zp)·w = Σx·w − zp·Σw;
//  3. stores depthwise weights as [KH, KW, C] so channels are contiguous;
//  4. fuses reduction loops that are contiguous in input and weights (kw·Cin,
//     or the whole window);
//  5. gives the output pixel (or FC row) an accumulator per output channel,
//     with the channel loop moved inside the taps (conv: one GEMV per tap
//     row; depthwise: channels innermost);
//  6. tensorizes: the tap-row × channel nest into <p>_gemv_s8 (4 output
//     channels share each input vector), the depthwise nest into
//     <p>_dwconv_s8, the epilogue into the vector requantization
//     <p>_requant_s8, bias loads into <p>_copy_s32.
//
// Kernels it cannot handle (float, asymmetric weights, grouped convs,
// float requantization) fall back to the generic schedule.
func simdSchedule(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		if knob(f, "skip_dead", 1) != 0 {
			// On the M55 the live channels stay a multiple of four, for
			// the blocked GEMV (VWW 2,142,679 → 2,071,164); NEON measured
			// no better.
			k := 1
			if prefix == "mve" {
				k = 4
			}
			f = SplitDeadTailMultiple(f, k)
		}
		// One-dimensional depthwise windows (1×k, k×1: keyword spotting's
		// streaming layers) run the dsp target's planar forms, where
		// those take them: Helium's lanes and channel blocks took 1.6 to
		// 2.6 times their instructions (the streaming wake word model's
		// four such layers on mps3-an547, 270,710 → 122,961).
		// Only the planar forms: a k×1 window over several columns took
		// the dsp channel-quad schedule at 1.05 times Helium's
		// instructions (that model's first layer before the graph laid
		// it out as a row).
		if prefix == "mve" && f.Op == "depthwise_conv2d" && knob(f, "dw_dsp_1d", 1) != 0 && !f.WantInPlace {
			if c, ok := parseConvNest(f); ok && (c.KH == 1) != (c.KW == 1) {
				if g := dspFold(f); g != nil && callsPrefix(g.Body, "dsp_dwp") {
					return g, nil
				}
			}
		}
		if prefix == "mve" && f.Op == "depthwise_conv2d" && (knob(f, "dw_lanes", 1) != 0 || f.WantInPlace) {
			// The lanes schedule also runs in place, which the plan may ask
			// for (the channel-interleaved one cannot: its row windows are
			// copied when each output row starts).
			if g, ok := mveDWLanes(f); ok {
				g.Knobs["simd"] = 1
				return g, nil
			}
		}
		// NEON depthwise layers of fewer than eight channels (a vector's
		// half) took 1.6 to 3.5 times the generic loops' instructions on
		// aarch64-linux (4 and 6 channels, 12×12, strides 1 and 2): the
		// generic loops, unless the tuner says otherwise (knob simd).
		if prefix == "neon" && f.Op == "depthwise_conv2d" {
			if c, ok := parseConvNest(f); ok && c.C < 8 && knob(f, "simd", 0) == 0 {
				return fallback(f)
			}
		}
		g, err := simdKernel(f, prefix)
		if err == nil && prefix == "mve" {
			pointwiseInPlace(f, g)
		}
		if err != nil {
			if f.Knobs == nil {
				f.Knobs = map[string]int{}
			}
			f.Knobs["simd"] = 0
			// Depthwise layers Helium's kernels do not take (depth
			// multipliers, channels not a multiple of four) run the dsp
			// target's planar forms where those take them: the M55 has
			// the DSP extension (a 3×3 layer with a multiplier of 2:
			// 184,411 instructions in the generic loops).
			// So do the fully connected layers Helium's schedule declines
			// for another reason: an LSTM gate's int8 → int16 layer
			// (micro_speech_lstm on mps3-an547: 22.6 M instructions in the
			// generic loops, 6.0 M through the dsp kernels; session 58
			// review), a single output (640 → 1: 2,456 → 1,627). Not
			// convolutions: a one-channel 3×3 layer over 8×8 pixels took
			// 2,762 in the generic loops and 6,105 through the dsp ones.
			if prefix == "mve" && (hasWeightOffset(f) || f.Op == "depthwise_conv2d" || f.Op == "fully_connected") {
				if g := dspFold(f); g != nil {
					return g, nil
				}
			}
			return fallback(f)
		}
		g.Knobs["simd"] = 1
		return g, nil
	}
}

// dspFold runs f, an int8 kernel whose weights have a zero point other than
// 0 (TFLite's legacy uint8 models, ONNX Runtime's uint8 weights), through
// the dsp schedule for its op: the Cortex-M55 has the DSP extension, and the
// dsp schedules fold the zero point into their int16 weight words, where
// the generic C subtracts it in the inner loop (session 52, a 64 → 64
// pointwise layer over 25×5 pixels on mps3-an547: 1,653,231 instructions
// → 489,525; pipeline.TestWeightZeroPointOnM55_52). It returns nil where
// the dsp schedule declines the layer (a grouped convolution, a depthwise
// layer over channels not a multiple of four or with a multiplier, int8
// weights that cannot hold w − z): its own fallback is the plain generic C,
// slower than the mve target's blocked one (review: 1.2x to 2.7x), and
// the result is told by whether it calls a dsp helper. The function it
// returns takes its knobs from the dsp declarations (KnobTarget), less the
// mve schedule's markers, which it does not read.
func dspFold(f *PrimFunc) *PrimFunc {
	sched := DSP.Schedules[f.Op]
	if sched == nil {
		return nil
	}
	try := *f
	try.Knobs = maps.Clone(f.Knobs)
	delete(try.Knobs, "simd")
	delete(try.Knobs, "dw_lanes")
	g, err := sched(&try)
	if err != nil || g == nil || !callsDSP(g.Body) {
		return nil
	}
	g.KnobTarget = DSP.Name
	return g
}

// callsDSP reports whether s calls one of the dsp target's helpers.
func callsDSP(s Stmt) bool { return callsPrefix(s, "dsp_") }

// callsPrefix reports whether s calls a helper whose name starts with p.
func callsPrefix(s Stmt, p string) bool {
	found := false
	VisitExprs(s, func(e Expr) {
		if c, ok := e.(*Intrinsic); ok && strings.HasPrefix(c.Name, p) {
			found = true
		}
	})
	return found
}

// hasWeightOffset reports whether an int8 kernel's weights carry an offset (a
// zero point other than 0) in its reduction.
func hasWeightOffset(f *PrimFunc) bool {
	if floatKernel(f) {
		return false
	}
	a, err := parseAccNestAny(f)
	return err == nil && (a.wOff != 0 || a.wOffE != nil)
}

// simdParts are the pieces of a conv/FC compute definition.
type simdParts struct {
	chan_   *For    // the output-channel loop (oc / j)
	acc     *Buffer // its scalar accumulator
	init    *Store  // acc = bias
	red     Stmt    // the reduction nest
	out     *Store  // y = epilogue(acc)
	x, w, y *Buffer // input, weights, output
	xo      int64   // input offset added to x in the reduction
	dw      bool    // depthwise
	blocked bool    // knob weight_blocked
	fuseDW  bool    // knob dw_fused
	// biasInGemv is knob bias_in_gemv.
	biasInGemv int
}

func findParts(f *PrimFunc) (p *simdParts, err error) {
	name := map[string]string{"conv2d": "oc", "depthwise_conv2d": "oc", "fully_connected": "j"}[f.Op]
	if name == "" {
		return nil, fmt.Errorf("op %s", f.Op)
	}
	l := findLoop(f.Body, name)
	if l == nil {
		return nil, fmt.Errorf("no %s loop", name)
	}
	al, ok := l.Body.(*Allocate)
	if !ok || len(al.Buf.Shape) != 0 || al.Buf.DType != I32 {
		return nil, fmt.Errorf("no int32 accumulator")
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 3 {
		return nil, fmt.Errorf("unexpected kernel body")
	}
	p = &simdParts{chan_: l, acc: al.Buf, red: seq.Stmts[1], dw: f.Op == "depthwise_conv2d"}
	p.init, ok = seq.Stmts[0].(*Store)
	if !ok {
		return nil, fmt.Errorf("no accumulator init")
	}
	p.out, ok = seq.Stmts[2].(*Store)
	if !ok || (p.out.Buf.DType != I8) {
		return nil, fmt.Errorf("output is not int8")
	}
	p.y = p.out.Buf
	// Every reduction update is acc = acc + (int32(x[...]) + xo) * int32(w[...]).
	var bad error
	first := true
	VisitStmts(p.red, func(s Stmt) {
		st, ok := s.(*Store)
		if !ok {
			return
		}
		x, xo, w, ok := matchMAC(st, p.acc)
		if !ok {
			bad = fmt.Errorf("reduction is not an int8 MAC")
			return
		}
		if first {
			p.x, p.xo, p.w = x.Buf, xo, w.Buf
			first = false
		} else if x.Buf != p.x || w.Buf != p.w || xo != p.xo {
			bad = fmt.Errorf("mixed reduction operands")
		}
	})
	if bad != nil {
		return nil, bad
	}
	if first || p.x.DType != I8 || p.w.DType != I8 || p.w.Scope != ScopeConst {
		return nil, fmt.Errorf("not an int8 x int8 reduction")
	}
	return p, nil
}

// matchMAC matches acc = acc + (int32(X) [+ xo]) * int32(W).
func matchMAC(st *Store, acc *Buffer) (*Load, int64, *Load, bool) {
	if st.Buf != acc {
		return nil, 0, nil, false
	}
	sum, ok := st.Value.(*Binary)
	if !ok || sum.Op != OpAdd {
		return nil, 0, nil, false
	}
	if l, ok := sum.A.(*Load); !ok || l.Buf != acc {
		return nil, 0, nil, false
	}
	prod, ok := sum.B.(*Binary)
	if !ok || prod.Op != OpMul {
		return nil, 0, nil, false
	}
	xe := prod.A
	if sel, ok := xe.(*Select); ok {
		// A padded tap reads the zero point: select(inside, int32(x), zp).
		if _, ok := IsConst(sel.B); !ok {
			return nil, 0, nil, false
		}
		xe = sel.A
	}
	x, xo, ok1 := castLoad(xe)
	w, wo, ok2 := castLoad(prod.B)
	if !ok1 || !ok2 || wo != 0 {
		return nil, 0, nil, false
	}
	return x, xo, w, true
}

func castLoad(e Expr) (*Load, int64, bool) {
	var off int64
	if b, ok := e.(*Binary); ok && (b.Op == OpAdd || b.Op == OpSub) {
		c, ok := IsConst(b.B)
		if !ok {
			return nil, 0, false
		}
		if b.Op == OpSub {
			c = -c
		}
		off, e = c, b.A
	}
	c, ok := e.(*Cast)
	if !ok || c.T != I32 {
		return nil, 0, false
	}
	l, ok := c.X.(*Load)
	if !ok || (l.Buf.DType != I8) {
		return nil, 0, false
	}
	return l, off, true
}

func simdKernel(f *PrimFunc, prefix string) (*PrimFunc, error) {
	// A convolution without padding tries the pixel window first
	// (simdKernelW's validWindow) and takes the form without one where the
	// window cannot be built (one output column: no ow loop), is not the
	// taps alone (a dilated window spans unused pixels) or takes more
	// scratch than the stack allows (the lowering would then give the layer
	// to the generic target): session 58 review, up to 15 times the
	// instructions of the form without.
	try := *f
	try.Knobs = maps.Clone(f.Knobs)
	g, used, err := simdKernelW(&try, prefix, true)
	if !used || (err == nil && (f.StackBytes <= 0 || g.ScratchBytes() <= f.StackBytes)) {
		return g, err
	}
	g, _, err = simdKernelW(f, prefix, false)
	return g, err
}

// simdKernelW is simdKernel, with the pixel window for a convolution without
// padding where validWindow allows it; used says whether it was taken.
func simdKernelW(f *PrimFunc, prefix string, validWindow bool) (_ *PrimFunc, used bool, err error) {
	f = PruneConditions(Simplify(f))
	p, err := findParts(f)
	if err != nil {
		return nil, used, err
	}
	kn := func(name string, def int) int { return knob(f, name, def) }
	hasIf := false
	pad := -p.xo
	VisitStmts(p.red, func(s Stmt) {
		if _, ok := s.(*IfThenElse); ok {
			hasIf = true
		}
	})
	VisitExprs(p.red, func(e Expr) {
		if sel, ok := e.(*Select); ok {
			hasIf = true
			pad, _ = IsConst(sel.B)
		}
	})
	var win *Buffer
	cin := p.x.Shape[len(p.x.Shape)-1]
	kw, kh := 1, 1
	if l := findLoop(p.red, "kw"); l != nil {
		n, _ := IsConst(l.Extent)
		kw = int(n)
	}
	if l := findLoop(p.red, "kh"); l != nil {
		n, _ := IsConst(l.Extent)
		kh = int(n)
	}
	// A convolution without padding takes the pixel window too where its
	// kernel rows are short (KW*Cin below pixel_window_below): the reduction
	// then runs over one contiguous K = KH*KW*Cin, where over the input it
	// ran kernel row by kernel row, vectors a fraction full. On mps3-an547,
	// valid 3×3 layers: 28×28 1 → 8 170,039 → 60,631 instructions, 10×10
	// 64 → 64 588,354 → 337,104; KWS_op's 10×4 over one channel 211,931
	// → 38,891 (session 58 review: tune found window 2 on every such layer).
	validShort := validWindow && !hasIf && f.Op == "conv2d" && !p.dw && kh*kw > 1 && kw*cin < knob(f, "pixel_window_below", 1024) && kn("window", 0) == 0
	if f.Op != "fully_connected" && (hasIf || kn("window", 0) != 0 || validShort) {
		at := "oh"
		mode := kn("window", 0)
		if mode == 0 {
			mode = 1
			if !p.dw && kw*cin < knob(f, "pixel_window_below", 1024) {
				mode = 2
			}
			f.Knobs["window"] = mode
		}
		if mode == 2 {
			at = "ow"
		}
		g, err := CacheWindowPad(f, p.x, at, pad)
		if err != nil {
			return nil, validShort, err
		}
		if g, win, err = rowFill(g, at, p.x, pad, prefix, kn("row_copy_below", 16)); err != nil {
			return nil, validShort, err
		}
		if validShort && win.Len() != kh*kw*cin {
			return nil, true, fmt.Errorf("the window is not the taps alone")
		}
		used = validShort
		f = g
		f.Body = dropWindowConds(f.Body, p.acc, win, p.xo, pad)
		if p, err = findParts(f); err != nil {
			return nil, used, err
		}
	}
	if hasCond(p.red) {
		return nil, used, fmt.Errorf("reduction keeps conditions")
	}
	// Fold the input offset into the bias.
	if p.xo != 0 {
		if p, err = foldOffset(f, p); err != nil {
			return nil, used, err
		}
	}
	if p.dw {
		transposeDW(f, p)
	}
	f = stripUnitLoops(f)
	f = Flatten(f)
	if p, err = findParts(f); err != nil {
		return nil, used, err
	}
	if !p.dw {
		p.red = fuseContiguous(p.red)
	}
	p.blocked = kn("weight_blocked", 1) != 0
	p.biasInGemv = kn("bias_in_gemv", 64)
	if p.dw {
		p.fuseDW = kn("dw_fused", 1) != 0
	}
	body, err := blockChannels(p, prefix)
	if err != nil {
		return nil, used, err
	}
	f.Body = replaceStmt(f.Body, p.chan_, func(Stmt) Stmt { return body })
	// Pointwise pixels in groups: three at a time on the M55 (knob
	// pixel_group; its asm GEMV keeps six accumulators), for every n from
	// 16 (VWW 2,608,210 → 2,588,587 instructions on mps3-an547 against n
	// = 64 alone) that shortReductions (small_k, default 16) has not
	// already fused with its requantization; two on NEON, only at n = 64
	// (longer reductions lost to register spills there).
	group, minN, maxN := 2, 64, 64
	// Short reductions (n <= 16) on both: one dot product per output row,
	// four rows requantized in one vector.
	f = shortReductions(f, prefix, kn("small_k", 16), kn("small_k_pairs", 1) != 0)
	if prefix == "mve" {
		group, minN, maxN = kn("pixel_group", 3), 16, 4096
	}
	if group != 2 && group != 3 {
		return nil, used, fmt.Errorf("pixel_group %d: want 2 or 3", group)
	}
	if n := kn("pixel_pairs", minN); !p.dw && f.Op == "conv2d" && n > 0 {
		g := pairPixels(f, prefix, n, kn("pixel_pairs_max", maxN), group)
		if g == f && group == 3 {
			// Not a pointwise layer: windowed pixels, three along a row.
			g = groupWindowPixels(f, prefix, n, kn("pixel_pairs_max", maxN))
		}
		f = g
	}
	f.Knobs["simd"] = 1
	return f, used, nil
}

// dropWindowConds removes the padding conditions around the MACs that read
// the padded window win (which holds pad outside the image): padded taps
// read zp = pad = −xo, so their product (zp + xo)·w is 0, and a select of
// pad outside reads pad anyway.
func dropWindowConds(body Stmt, acc, win *Buffer, xo, pad int64) Stmt {
	return RewriteStmt(body, func(s Stmt) Stmt {
		c, ok := s.(*IfThenElse)
		if !ok || c.Else != nil {
			return s
		}
		st, ok := c.Then.(*Store)
		if !ok {
			return s
		}
		if x, _, _, ok := matchMAC(st, acc); ok && x.Buf == win && xo == -pad {
			return st
		}
		return s
	}, func(e Expr) Expr {
		sel, ok := e.(*Select)
		if !ok {
			return e
		}
		k, ok := IsConst(sel.B)
		if !ok || k != pad {
			return e
		}
		if l, _, ok := castLoad(sel.A); ok && l.Buf == win {
			return sel.A
		}
		return e
	})
}

func hasCond(s Stmt) bool {
	found := false
	VisitStmts(s, func(s Stmt) {
		if _, ok := s.(*IfThenElse); ok {
			found = true
		}
	})
	VisitExprs(s, func(e Expr) {
		if _, ok := e.(*Select); ok {
			found = true
		}
	})
	return found
}

// rowFill replaces CacheWindowPad's element-by-element fill with row copies:
// per window row, a fill of the left padding, one copy of the in-image
// columns, a fill of the right padding (or one fill when the row is outside).
func rowFill(f *PrimFunc, at string, x *Buffer, pad int64, prefix string, rowCopyBelow int) (*PrimFunc, *Buffer, error) {
	if len(x.Shape) != 4 {
		return nil, nil, fmt.Errorf("input is not 4-D")
	}
	var win *Buffer
	g, err := replaceLoop(f, at, func(l *For) (Stmt, error) {
		al, ok := l.Body.(*Allocate)
		if !ok {
			return nil, fmt.Errorf("no window")
		}
		seq, ok := al.Body.(*Seq)
		if !ok || len(seq.Stmts) < 2 {
			return nil, fmt.Errorf("no window fill")
		}
		win = al.Buf
		// The fill's source index in each dimension is start_d + w_d.
		var vars []*Var
		var st *Store
		VisitStmts(seq.Stmts[0], func(s Stmt) {
			switch s := s.(type) {
			case *For:
				vars = append(vars, s.Var)
			case *Store:
				st = s
			}
		})
		sel, ok := st.Value.(*Select)
		if !ok || len(vars) != 4 {
			return nil, fmt.Errorf("unexpected window fill")
		}
		ld, ok := sel.A.(*Load)
		if !ok {
			return nil, fmt.Errorf("unexpected window fill")
		}
		zero := map[*Var]Expr{}
		for _, v := range vars {
			zero[v] = C(0)
		}
		start := make([]Expr, 4)
		for d, e := range ld.Indices {
			mn, ok := e.(*Binary)
			if !ok || mn.Op != OpMin {
				return nil, fmt.Errorf("unexpected window index")
			}
			mx, ok := mn.A.(*Binary)
			if !ok || mx.Op != OpMax {
				return nil, fmt.Errorf("unexpected window index")
			}
			start[d] = SimplifyExpr(SubstituteExpr(mx.A, zero))
		}
		c0, ok3 := IsConst(start[3])
		w0, ok2 := IsConst(start[2])
		if !ok3 || c0 != 0 || win.Shape[3] != x.Shape[3] || win.Shape[0] != 1 {
			return nil, fmt.Errorf("window does not span whole pixels")
		}
		C_, W, H := int64(x.Shape[3]), int64(x.Shape[2]), int64(x.Shape[1])
		cols := int64(win.Shape[2])
		if !ok2 {
			// The window moves with the output column: fill pixel by pixel.
			var px []Stmt
			for r := int64(0); r < int64(win.Shape[1]); r++ {
				var cells []Stmt
				for q := int64(0); q < cols; q++ {
					ih := SimplifyExpr(Add(start[1], C(r)))
					iw := SimplifyExpr(Add(start[2], C(q)))
					dst := &Ptr{Buf: win, Index: C((r*cols + q) * C_)}
					src := SimplifyExpr(Add(Add(Mul(start[0], C(H*W*C_)), Mul(ih, C(W*C_))), Mul(iw, C(C_))))
					cp := &Evaluate{X: Call(prefix+"_"+KCopy8, I32, dst, &Ptr{Buf: x, Index: src}, C(C_))}
					fl := &Evaluate{X: Call(prefix+"_"+KFill8, I32, dst, C(pad), C(C_))}
					cells = append(cells, &IfThenElse{Cond: SimplifyExpr(AllOf(GE(ih, C(0)), LT(ih, C(H)), GE(iw, C(0)), LT(iw, C(W)))), Then: cp, Else: fl})
				}
				if cols*C_ >= int64(rowCopyBelow) {
					px = append(px, cells...)
					continue
				}
				// A short window row wholly inside the image is one copy
				// (knob row_copy_below: longer rows copy pixel by pixel,
				// which gcc unrolls into whole vectors).
				ih := SimplifyExpr(Add(start[1], C(r)))
				iw0 := start[2]
				src := SimplifyExpr(Add(Add(Mul(start[0], C(H*W*C_)), Mul(ih, C(W*C_))), Mul(iw0, C(C_))))
				whole := &Evaluate{X: Call(prefix+"_"+KCopy8, I32, &Ptr{Buf: win, Index: C(r * cols * C_)}, &Ptr{Buf: x, Index: src}, C(cols*C_))}
				inside := SimplifyExpr(AllOf(GE(ih, C(0)), LT(ih, C(H)), GE(iw0, C(0)), LE(Add(iw0, C(cols)), C(W))))
				px = append(px, &IfThenElse{Cond: inside, Then: whole, Else: Block(cells...)})
			}
			stmts := append([]Stmt{Block(px...)}, seq.Stmts[1:]...)
			return &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: &Allocate{Buf: win, Body: Block(stmts...)}}, nil
		}
		left := min(max(-w0, 0), cols)
		right := max(min(cols, W-w0), left) // first column past the image
		rowLen := cols * C_
		var rows []Stmt
		for r := int64(0); r < int64(win.Shape[1]); r++ {
			ih := SimplifyExpr(Add(start[1], C(r)))
			wbase := r * rowLen
			fillN := func(from, n int64) Stmt {
				if n <= 0 {
					return nil
				}
				return &Evaluate{X: Call(prefix+"_"+KFill8, I32, &Ptr{Buf: win, Index: C(wbase + from)}, C(pad), C(n))}
			}
			src := SimplifyExpr(Add(Add(Mul(start[0], C(H*W*C_)), Mul(ih, C(W*C_))), C((w0+left)*C_)))
			inside := Block(
				fillN(0, left*C_),
				&Evaluate{X: Call(prefix+"_"+KCopy8, I32, &Ptr{Buf: win, Index: C(wbase + left*C_)}, &Ptr{Buf: x, Index: src}, C((right-left)*C_))},
				fillN(right*C_, (cols-right)*C_),
			)
			if right <= left {
				inside = fillN(0, rowLen)
			}
			cond := SimplifyExpr(And(GE(ih, C(0)), LT(ih, C(H))))
			if v, ok := IsConst(cond); ok {
				if v != 0 {
					rows = append(rows, inside)
				} else {
					rows = append(rows, fillN(0, rowLen))
				}
				continue
			}
			rows = append(rows, &IfThenElse{Cond: cond, Then: inside, Else: fillN(0, rowLen)})
		}
		stmts := append([]Stmt{Block(rows...)}, seq.Stmts[1:]...)
		return &For{Var: l.Var, Min: l.Min, Extent: l.Extent, Kind: l.Kind, Body: &Allocate{Buf: win, Body: Block(stmts...)}}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return g, win, nil
}

// foldOffset rewrites acc = b[c]; acc += (x + xo)·w as acc = b'[c]; acc += x·w
// with b'[c] = b[c] + xo·Σ w[c, ...] (every tap of every channel is summed:
// the reduction has no conditions left).
func foldOffset(f *PrimFunc, p *simdParts) (*simdParts, error) {
	n := p.w.Shape[0]
	per := p.w.Len() / n
	if p.dw {
		// Depthwise weights are [1, KH, KW, C] in TFLite order or [C, KH, KW, 1].
		per = p.w.Len() / n
	}
	vals := make([]int64, n)
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	for c := 0; c < n; c++ {
		m.vars[p.chan_.Var] = val{i: int64(c)}
		v, err := evalConst(m, p.init.Value)
		if err != nil {
			return nil, err
		}
		var s int64
		for _, wv := range p.w.Data.I[c*per : (c+1)*per] {
			s += wv
		}
		vals[c] = v + p.xo*s
	}
	nb := constBuf(f.Name+"_bias_folded", I32, []int{n}, vals)
	xo := p.xo
	f.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		if st, ok := s.(*Store); ok && st.Buf == p.acc && !readsBuf(st.Value, p.acc) {
			return &Store{Buf: p.acc, Value: At(nb, p.chan_.Var)}
		}
		return s
	}, func(e Expr) Expr {
		if b, ok := e.(*Binary); ok && (b.Op == OpAdd || b.Op == OpSub) {
			if c, ok := IsConst(b.B); ok && (c == xo && b.Op == OpAdd || c == -xo && b.Op == OpSub) {
				if cs, ok := b.A.(*Cast); ok {
					if l, ok := cs.X.(*Load); ok && l.Buf.DType == I8 && l.Buf != p.w {
						return b.A
					}
				}
			}
		}
		return e
	})
	// The Store was rebuilt; find the parts again.
	q, err := findParts(f)
	if err != nil {
		return nil, err
	}
	if q.xo != 0 {
		return nil, fmt.Errorf("input offset not folded")
	}
	return q, nil
}

func evalConst(m *machine, e Expr) (v int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bias is not constant: %v", r)
		}
	}()
	return m.eval(e).i, nil
}

// transposeDW stores depthwise weights w[c, kh, kw, 0] as w'[kh, kw, c].
func transposeDW(f *PrimFunc, p *simdParts) {
	w := p.w
	if len(w.Shape) != 4 || w.Shape[3] != 1 {
		return
	}
	C_, KH, KW := w.Shape[0], w.Shape[1], w.Shape[2]
	vals := make([]int64, w.Len())
	for c := 0; c < C_; c++ {
		for a := 0; a < KH; a++ {
			for b := 0; b < KW; b++ {
				vals[(a*KW+b)*C_+c] = w.Data.I[(c*KH+a)*KW+b]
			}
		}
	}
	nw := constBuf(f.Name+"_weights_hwc", I8, []int{KH, KW, C_}, vals)
	f.Body = RewriteStmt(f.Body, nil, func(e Expr) Expr {
		if l, ok := e.(*Load); ok && l.Buf == w && !l.Flat {
			return At(nw, l.Indices[1], l.Indices[2], l.Indices[0])
		}
		return e
	})
}

// stripUnitLoops replaces loops of extent 1 by their body.
func stripUnitLoops(f *PrimFunc) *PrimFunc {
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok {
			return s
		}
		if n, ok := IsConst(l.Extent); ok && n == 1 {
			return Substitute(l.Body, map[*Var]Expr{l.Var: l.Min})
		}
		return s
	}, nil)
	g.Body = SimplifyStmt(g.Body)
	return &g
}

// fuseContiguous merges an innermost loop with its parent while every load
// in the body steps through memory contiguously across both
// (coef(outer) = extent(inner)·coef(inner)).
func fuseContiguous(s Stmt) Stmt {
	for {
		changed := false
		s = RewriteStmt(s, func(s Stmt) Stmt {
			outer, ok := s.(*For)
			if !ok {
				return s
			}
			inner, ok := outer.Body.(*For)
			if !ok {
				return s
			}
			if _, ok := inner.Body.(*For); ok {
				return s
			}
			ni, ok1 := IsConst(inner.Extent)
			no, ok2 := IsConst(outer.Extent)
			lo1, ok3 := IsConst(inner.Min)
			lo2, ok4 := IsConst(outer.Min)
			if !ok1 || !ok2 || !ok3 || !ok4 || lo1 != 0 || lo2 != 0 {
				return s
			}
			good := true
			VisitExprs(inner.Body, func(e Expr) {
				l, ok := e.(*Load)
				if !ok || !l.Flat || len(l.Indices) == 0 {
					return
				}
				_, ci, ok1 := affineIn(l.Indices[0], inner.Var)
				_, co, ok2 := affineIn(l.Indices[0], outer.Var)
				if !ok1 || !ok2 || co != ni*ci {
					good = false
				}
			})
			if !good {
				return s
			}
			changed = true
			v := NewVar(outer.Var.Name + "_" + inner.Var.Name)
			body := Substitute(inner.Body, map[*Var]Expr{outer.Var: C(0), inner.Var: v})
			return &For{Var: v, Min: C(0), Extent: C(ni * no), Body: SimplifyStmt(body)}
		}, nil)
		if !changed {
			return s
		}
	}
}

// blockChannels builds the accumulator-per-channel form and tensorizes it.
func blockChannels(p *simdParts, prefix string) (Stmt, error) {
	cl := p.chan_
	m, ok := IsConst(cl.Extent)
	if !ok {
		return nil, fmt.Errorf("channel loop has no constant extent")
	}
	accv := NewBuffer("acc", I32, []int{int(m)}, ScopeLocal)
	retarget := func(s Stmt, c Expr) Stmt {
		return RewriteStmt(s, func(s Stmt) Stmt {
			if st, ok := s.(*Store); ok && st.Buf == p.acc {
				return &Store{Buf: accv, Indices: []Expr{c}, Value: st.Value, Flat: true}
			}
			return s
		}, func(e Expr) Expr {
			if l, ok := e.(*Load); ok && l.Buf == p.acc {
				return &Load{Buf: accv, Indices: []Expr{c}, Flat: true}
			}
			return e
		})
	}
	fresh := func(body Stmt) (*Var, Stmt) {
		v := NewVar(cl.Var.Name)
		return v, Substitute(body, map[*Var]Expr{cl.Var: v})
	}
	// Init: acc[c] = bias[c] -> copy.
	v1, initB := fresh(p.init)
	initS := retarget(initB, v1)
	var init Stmt = &For{Var: v1, Min: C(0), Extent: C(m), Body: initS}
	if st := initS.(*Store); true {
		if l, ok := st.Value.(*Load); ok && l.Buf.DType == I32 && l.Flat {
			if b, s, ok := affineIn(l.Indices[0], v1); ok && s == 1 {
				init = &Evaluate{X: Call(prefix+"_"+KCopy32, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: l.Buf, Index: b}, C(m))}
			}
		}
	}
	// Reduction with the channel loop inside the taps.
	v2, red := fresh(p.red)
	red = retarget(red, v2)
	red, err := moveChannelLoop(red, v2, m, p.dw)
	if err != nil {
		return nil, err
	}
	red = tensorizeReduction(red, v2, accv, prefix, p.dw, p.blocked)
	// A blocked GEMV starts from the bias itself (the copy goes) when its
	// reduction is at most knob bias_in_gemv long (longer ones measured
	// slower on the M55: one more pointer live in the loop).
	if ie, ok := init.(*Evaluate); ok {
		if re, ok := red.(*Evaluate); ok {
			ci, ok1 := ie.X.(*Intrinsic)
			cg, ok2 := re.X.(*Intrinsic)
			if n, ok := IsConst(cg.Args[5]); ok1 && ok2 && ci.Name == prefix+"_"+KCopy32 && cg.Name == prefix+"_"+KGemvB &&
				ok && n <= int64(p.biasInGemv) {
				args := append([]Expr{}, cg.Args...)
				args[1] = ci.Args[1]
				red = &Evaluate{X: Call(cg.Name, I32, args...)}
				init = nil
			}
		}
	}
	// Epilogue.
	v3, outB := fresh(p.out)
	outS := retarget(outB, v3)
	out := tensorizeRequant(outS.(*Store), v3, m, accv, prefix)
	if p.dw && p.fuseDW {
		if s, ok := fuseDepthwise(init, red, out, accv, prefix); ok {
			return s, nil
		}
	}
	return &Allocate{Buf: accv, Body: Block(init, red, out)}, nil
}

// fuseDepthwise turns copy32(acc, bias); dwconv(acc, ...); requant(y, acc, ...)
// into one dwconvrq call that keeps the accumulators in registers (knob
// dw_fused; channels a multiple of 4: the helpers take a last four apart).
func fuseDepthwise(init, red, out Stmt, accv *Buffer, prefix string) (Stmt, bool) {
	call := func(s Stmt, k ...string) *Intrinsic {
		e, ok := s.(*Evaluate)
		if !ok {
			return nil
		}
		c, ok := e.X.(*Intrinsic)
		if !ok {
			return nil
		}
		for _, name := range k {
			if c.Name == prefix+"_"+name {
				return c
			}
		}
		return nil
	}
	ci, cd, cr := call(init, KCopy32), call(red, KDwConv), call(out, KRequant, KRequantR)
	if ci == nil || cd == nil || cr == nil {
		return nil, false
	}
	m, ok := IsConst(cd.Args[7])
	if !ok || m%4 != 0 {
		return nil, false
	}
	args := []Expr{cr.Args[0], cd.Args[1], cd.Args[2], cd.Args[3], cd.Args[4], cd.Args[5], cd.Args[6], cd.Args[7],
		ci.Args[1], cr.Args[2], cr.Args[3], C(requantLeft(prefix, cr)), cr.Args[5], cr.Args[6], cr.Args[7]}
	return &Evaluate{X: Call(prefix+"_"+KDwConvRQ, I32, args...)}, true
}

// moveChannelLoop wraps the channel loop (var c, extent m) around the
// innermost loop of the reduction nest (conv/FC), or around its body
// (depthwise: channels innermost).
func moveChannelLoop(red Stmt, c *Var, m int64, dw bool) (Stmt, error) {
	var inner *For
	VisitStmts(red, func(s Stmt) {
		if l, ok := s.(*For); ok {
			inner = l
		}
	})
	wrap := func(s Stmt) Stmt { return &For{Var: c, Min: C(0), Extent: C(m), Body: s} }
	if inner == nil {
		return wrap(red), nil
	}
	if _, ok := inner.Body.(*Store); !ok {
		return nil, fmt.Errorf("reduction is not a perfect nest")
	}
	if dw {
		return replaceStmt(red, inner, func(Stmt) Stmt {
			return &For{Var: inner.Var, Min: inner.Min, Extent: inner.Extent, Body: wrap(inner.Body)}
		}), nil
	}
	return replaceStmt(red, inner, func(s Stmt) Stmt { return wrap(s) }), nil
}

// tensorizeReduction replaces the channel × tap-row nest with gemv, or the
// depthwise taps × channels nest with dwconv, where the indices allow.
func tensorizeReduction(red Stmt, c *Var, accv *Buffer, prefix string, dw, blocked bool) Stmt {
	if dw {
		return tensorizeDW(red, c, accv, prefix)
	}
	return RewriteStmt(red, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var != c {
			return s
		}
		in, ok := l.Body.(*For)
		var st *Store
		var n int64 = 1
		var iv *Var
		if ok {
			st, _ = in.Body.(*Store)
			n, _ = IsConst(in.Extent)
			iv = in.Var
		} else {
			st, _ = l.Body.(*Store)
		}
		if st == nil {
			return s
		}
		x, _, w, ok := matchMAC(st, accv)
		if !ok {
			return s
		}
		xb, xs, ok1 := affineIn(x.Indices[0], iv)
		wb, ws1, ok2 := affineIn(w.Indices[0], iv)
		if iv == nil {
			xb, xs, ok1 = x.Indices[0], 1, true
			wb, ws1, ok2 = w.Indices[0], 1, true
		}
		if !ok1 || !ok2 || xs != 1 || ws1 != 1 || usesVar(xb, c) {
			return s
		}
		w0, wsC, ok := affineIn(wb, c)
		if !ok {
			return s
		}
		ab, ac, ok := affineIn(st.Indices[0], c)
		if a0, ok2 := IsConst(ab); !ok || !ok2 || a0 != 0 || ac != 1 {
			return s
		}
		m, _ := IsConst(l.Extent)
		if w0c, ok := IsConst(w0); ok && w0c == 0 && m%4 == 0 && blocked && w.Buf.Scope == ScopeConst && w.Buf.Data != nil {
			// Knob weight_blocked: the weights reordered at compile time into
			// the 4-row × 16-column blocks the micro-kernel streams through.
			vals := BlockWeights(w.Buf.Data.I, int(wsC), int(m), int(n))
			wb := constBuf(w.Buf.Name+"_blk4x16", I8, []int{len(vals)}, vals)
			return &Evaluate{X: Call(prefix+"_"+KGemvB, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: x.Buf, Index: xb},
				&Ptr{Buf: wb, Index: C(0)}, C(m), C(n))}
		}
		return &Evaluate{X: Call(prefix+"_"+KGemv, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: x.Buf, Index: xb},
			&Ptr{Buf: w.Buf, Index: w0}, C(wsC), C(m), C(n))}
	}, nil)
}

func tensorizeDW(red Stmt, c *Var, accv *Buffer, prefix string) Stmt {
	// red is For kh { For kw { For c { acc[c] += x·w } } } (unit loops stripped).
	var loops []*For
	var st *Store
	VisitStmts(red, func(s Stmt) {
		switch s := s.(type) {
		case *For:
			loops = append(loops, s)
		case *Store:
			st = s
		}
	})
	if st == nil || len(loops) == 0 || loops[len(loops)-1].Var != c || len(loops) > 3 {
		return red
	}
	x, _, w, ok := matchMAC(st, accv)
	if !ok {
		return red
	}
	taps := loops[:len(loops)-1]
	xIdx, wIdx := x.Indices[0], w.Indices[0]
	var xst, wst, ext [2]int64
	ext = [2]int64{1, 1}
	for i, l := range taps {
		slot := i + 2 - len(taps) // a single tap loop is kw
		var ok1, ok2 bool
		xIdx, xst[slot], ok1 = affineIn(xIdx, l.Var)
		wIdx, wst[slot], ok2 = affineIn(wIdx, l.Var)
		n, ok3 := IsConst(l.Extent)
		if !ok1 || !ok2 || !ok3 {
			return red
		}
		ext[slot] = n
	}
	xb, xc, ok1 := affineIn(xIdx, c)
	wb, wc, ok2 := affineIn(wIdx, c)
	m, _ := IsConst(loops[len(loops)-1].Extent)
	if !ok1 || !ok2 || xc != 1 || wc != 1 || wst[1] != m || wst[0] != ext[1]*m {
		return red
	}
	return &Evaluate{X: Call(prefix+"_"+KDwConv, I32, &Ptr{Buf: accv, Index: C(0)}, &Ptr{Buf: x.Buf, Index: xb}, C(xst[0]), C(xst[1]),
		&Ptr{Buf: w.Buf, Index: wb}, C(ext[0]), C(ext[1]), C(m))}
}

// tensorizeRequant turns for c { y[b + c] = int8(clamp(requant(acc[c], M, S) + zp, lo, hi)) }
// into one requant_s8 call (per-tensor multipliers become tables).
func tensorizeRequant(st *Store, c *Var, m int64, accv *Buffer, prefix string) Stmt {
	loop := &For{Var: c, Min: C(0), Extent: C(m), Body: st}
	rq, zp, lo, hi, ok := splitRequant(st.Value, accv)
	if !ok {
		return loop
	}
	table := func(a Expr, what string) (Expr, bool) {
		if k, ok := IsConst(a); ok {
			vals := make([]int64, m)
			for i := range vals {
				vals[i] = k
			}
			return &Ptr{Buf: constBuf(fmt.Sprintf("%s_%d_%d", what, m, k), I32, []int{int(m)}, vals), Index: C(0)}, true
		}
		l, ok := a.(*Load)
		if !ok || !l.Flat {
			return nil, false
		}
		b, s, ok := affineIn(l.Indices[0], c)
		if !ok || s != 1 {
			return nil, false
		}
		return &Ptr{Buf: l.Buf, Index: b}, true
	}
	mp, ok1 := table(rq.Args[1], "requant_multiplier")
	sp, ok2 := table(rq.Args[2], "requant_shift")
	yb, ys, ok3 := affineIn(st.Indices[0], c)
	if !ok1 || !ok2 || !ok3 || ys != 1 {
		return loop
	}
	kernel := KRequant
	if sb := sp.(*Ptr).Buf; sb.Data != nil {
		kernel = KRequantR
		for _, v := range sb.Data.I {
			if v > 0 {
				kernel = KRequant
			}
		}
	}
	return &Evaluate{X: Call(prefix+"_"+kernel, I32, &Ptr{Buf: st.Buf, Index: yb}, &Ptr{Buf: accv, Index: C(0)}, mp, sp,
		C(m), C(zp), C(lo), C(hi))}
}

func readsBuf(e Expr, b *Buffer) bool {
	found := false
	VisitExprs(&Evaluate{X: e}, func(e Expr) {
		if l, ok := e.(*Load); ok && l.Buf == b {
			found = true
		}
	})
	return found
}

// pointwiseInPlace marks g, the SIMD schedule of f, safe to write its output
// over its input where f is a 1×1 stride-1 unpadded convolution. Every unit
// of g's body (an allocation: one pixel or a group of pixels, with its
// dead-channel stores; or a short-reduction call for one or two pixels)
// reads all its pixels' inputs before it stores an output. With Cout <= Cin output pixel p covers only input pixels <= p, so
// the units run as scheduled, in increasing pixel order; with Cout > Cin it
// covers only input pixels >= p, so where the plan asks for it (and only
// there) the units run in decreasing order (reverseUnits).
func pointwiseInPlace(f, g *PrimFunc) {
	if f.Op != "conv2d" {
		return
	}
	a, err := parseAccNest(PruneConditions(Simplify(f)))
	if err != nil || a.cond != nil {
		return
	}
	xs, ys, ws := a.x.Buf.Shape, a.store.Buf.Shape, a.w.Buf.Shape
	if len(xs) != 4 || len(ys) != 4 || len(ws) != 4 || xs[0] != 1 || ys[0] != 1 || xs[1] != ys[1] || xs[2] != ys[2] ||
		ws[1] != 1 || ws[2] != 1 || ws[3] != xs[3] || ws[0] != ys[3] {
		return
	}
	if ys[3] <= xs[3] {
		g.InPlaceSafe = true
		return
	}
	if f.WantInPlace {
		if body, ok := reverseUnits(g.Body); ok {
			g.Body = body
			g.InPlaceSafe = true
		}
	}
}

// reverseUnits runs the units of a pointwise schedule's body (allocations:
// a pixel or a group of pixels each) in the opposite order: the statements of
// a sequence backwards and every loop from its last iteration, down to the
// units, whose insides keep their order. It reports false for a body of
// another shape.
func reverseUnits(s Stmt) (Stmt, bool) {
	switch s := s.(type) {
	case *Allocate:
		// A unit is one pixel or one group: an allocation around a loop
		// (a window shared by groups) is not.
		loops := false
		VisitStmts(s.Body, func(t Stmt) {
			if _, ok := t.(*For); ok {
				loops = true
			}
		})
		if loops {
			return nil, false
		}
		return s, true
	case *Evaluate:
		// The short-reduction kernels load their pixels' inputs first.
		if c, ok := s.X.(*Intrinsic); ok && (c.Name == "mve_"+KPwRQ || c.Name == "mve_"+KPwRQ2) {
			return s, true
		}
		return nil, false
	case *Seq:
		out := make([]Stmt, len(s.Stmts))
		for i, t := range s.Stmts {
			r, ok := reverseUnits(t)
			if !ok {
				return nil, false
			}
			out[len(s.Stmts)-1-i] = r
		}
		return &Seq{Stmts: out}, true
	case *For:
		lo, ok1 := IsConst(s.Min)
		n, ok2 := IsConst(s.Extent)
		if !ok1 || !ok2 {
			return nil, false
		}
		body, ok := reverseUnits(s.Body)
		if !ok {
			return nil, false
		}
		v := NewVar(s.Var.Name + "_r")
		body = Substitute(body, map[*Var]Expr{s.Var: Sub(C(2*lo+n-1), v)})
		return &For{Var: v, Min: C(lo), Extent: C(n), Kind: s.Kind, Body: body}, true
	}
	return nil, false
}
