package tir

// Register blocking for the generic (plain C) schedules.
//
// A reduction kernel computes, for every output element, an accumulator
// (init; acc += x·w over the reduction loops; store f(acc)). JamLoop unrolls
// an output loop by a factor and jams the copies into one reduction: the
// block keeps factor accumulators in locals and every reduction step
// updates all of them, so an input value or weight loaded once serves the
// whole block (a C compiler shares the identical loads). Applied to the
// output-channel loop and then to the output-pixel loop it gives the
// 2 channels × 2 pixels micro-kernels of hand-written int8 libraries,
// written as a schedule over the compute definition.

// JamLoop unroll-and-jams every loop named name by factor: for each loop
// whose body is (after loops independent of it) a nest of scalar
// accumulators with body "inits; reduction; output stores", the copies for
// name = b·factor+j (j < factor) share one reduction nest in which each
// update is repeated per copy. Iterations that do not fill a block run in
// a tail loop with the original body. Loops that do not match are left
// alone, so the result always computes what f computes.
func JamLoop(f *PrimFunc, name string, factor int) *PrimFunc {
	if factor <= 1 {
		return f
	}
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != name {
			return s
		}
		if r, ok := jamLoop(l, factor); ok {
			return r
		}
		return s
	}, nil)
	return &g
}

// stmtUsesVar reports whether any expression in s reads v.
func stmtUsesVar(s Stmt, v *Var) bool {
	found := false
	VisitExprs(s, func(e Expr) {
		if e == v {
			found = true
		}
	})
	return found
}

// readsAny reports whether s (or e) loads one of bufs.
func readsAny(s Stmt, bufs map[*Buffer]bool) bool {
	found := false
	VisitExprs(s, func(e Expr) {
		if l, ok := e.(*Load); ok && bufs[l.Buf] {
			found = true
		}
	})
	return found
}

// hasLoopOrAlloc reports whether s contains a loop or an allocation.
func hasLoopOrAlloc(s Stmt) bool {
	found := false
	VisitStmts(s, func(s Stmt) {
		switch s.(type) {
		case *For, *Allocate:
			found = true
		}
	})
	return found
}

// renameBufs makes s read, write and point into the buffers of m in place
// of its keys.
func renameBufs(s Stmt, m map[*Buffer]*Buffer) Stmt {
	return RewriteStmt(s, func(s Stmt) Stmt {
		if st, ok := s.(*Store); ok {
			if nb, ok := m[st.Buf]; ok {
				c := *st
				c.Buf = nb
				return &c
			}
		}
		return s
	}, func(e Expr) Expr {
		if l, ok := e.(*Load); ok {
			if nb, ok := m[l.Buf]; ok {
				c := *l
				c.Buf = nb
				return &c
			}
		}
		if p, ok := e.(*Ptr); ok {
			if nb, ok := m[p.Buf]; ok {
				return &Ptr{Buf: nb, Index: p.Index}
			}
		}
		return e
	})
}

func jamLoop(l *For, factor int) (Stmt, bool) {
	n, ok1 := IsConst(l.Extent)
	lo, ok2 := IsConst(l.Min)
	F := int64(factor)
	if !ok1 || !ok2 || n < F {
		return nil, false
	}
	// Loops between l and the accumulators must not depend on l.
	s := l.Body
	var inner []*For
	for {
		fl, ok := s.(*For)
		if !ok {
			break
		}
		if usesVar(fl.Min, l.Var) || usesVar(fl.Extent, l.Var) {
			return nil, false
		}
		inner = append(inner, fl)
		s = fl.Body
	}
	var accs []*Buffer
	isAcc := map[*Buffer]bool{}
	for {
		al, ok := s.(*Allocate)
		if !ok {
			break
		}
		if len(al.Buf.Shape) != 0 {
			return nil, false
		}
		accs = append(accs, al.Buf)
		isAcc[al.Buf] = true
		s = al.Body
	}
	seq, ok := s.(*Seq)
	if len(accs) == 0 || !ok {
		return nil, false
	}
	// inits* reduction* outputs*
	var inits, red, outs []Stmt
	outBufs := map[*Buffer]bool{}
	for _, st := range seq.Stmts {
		store, isStore := st.(*Store)
		switch {
		case isStore && isAcc[store.Buf] && !readsAny(st, isAcc) && len(red) == 0 && len(outs) == 0:
			inits = append(inits, st)
		case isStore && !isAcc[store.Buf]:
			outs = append(outs, st)
			outBufs[store.Buf] = true
		case len(outs) == 0:
			red = append(red, st)
		default:
			return nil, false
		}
	}
	if len(outs) == 0 {
		return nil, false
	}
	// The copies are independent only if no one reads what the outputs
	// write and the reduction writes nothing but accumulators.
	for _, st := range seq.Stmts {
		if readsAny(st, outBufs) {
			return nil, false
		}
	}
	bad := false
	for _, st := range red {
		VisitStmts(st, func(s Stmt) {
			switch x := s.(type) {
			case *Store:
				if !isAcc[x.Buf] {
					bad = true
				}
			case *Allocate:
				bad = true
			case *For:
				if usesVar(x.Min, l.Var) || usesVar(x.Extent, l.Var) {
					bad = true
				}
			}
		})
	}
	if bad {
		return nil, false
	}

	bv := &Var{Name: l.Var.Name + "_b", T: l.Var.T}
	subs := make([]map[*Var]Expr, factor)
	renames := make([]map[*Buffer]*Buffer, factor)
	var newAccs []*Buffer
	for j := range subs {
		subs[j] = map[*Var]Expr{l.Var: Add(Mul(bv, C(F)), C(lo+int64(j)))}
		renames[j] = map[*Buffer]*Buffer{}
		for _, a := range accs {
			nb := NewBuffer(a.Name, a.DType, nil, a.Scope)
			renames[j][a] = nb
			newAccs = append(newAccs, nb)
		}
	}
	copies := func(st Stmt) []Stmt {
		out := make([]Stmt, factor)
		for j := range out {
			out[j] = renameBufs(Substitute(st, subs[j]), renames[j])
		}
		return out
	}
	var jam func(st Stmt) (Stmt, bool)
	jam = func(st Stmt) (Stmt, bool) {
		switch x := st.(type) {
		case *For:
			b, ok := jam(x.Body)
			return &For{Var: x.Var, Min: x.Min, Extent: x.Extent, Kind: x.Kind, Body: b}, ok
		case *Seq:
			out := make([]Stmt, len(x.Stmts))
			for i, c := range x.Stmts {
				var ok bool
				if out[i], ok = jam(c); !ok {
					return nil, false
				}
			}
			return &Seq{Stmts: out}, true
		case *IfThenElse:
			if !usesVar(x.Cond, l.Var) && !readsAny(&Evaluate{X: x.Cond}, isAcc) {
				t, ok := jam(x.Then)
				if !ok {
					return nil, false
				}
				var e Stmt
				if x.Else != nil {
					if e, ok = jam(x.Else); !ok {
						return nil, false
					}
				}
				return &IfThenElse{Cond: x.Cond, Then: t, Else: e}, true
			}
		}
		if hasLoopOrAlloc(st) {
			return nil, false
		}
		return Block(copies(st)...), true
	}
	var body []Stmt
	for _, st := range inits {
		body = append(body, copies(st)...)
	}
	for _, st := range red {
		r, ok := jam(st)
		if !ok {
			return nil, false
		}
		body = append(body, r)
	}
	for _, st := range outs {
		body = append(body, copies(st)...)
	}
	var blk = Block(body...)
	for i := len(newAccs) - 1; i >= 0; i-- {
		blk = &Allocate{Buf: newAccs[i], Body: blk}
	}
	for i := len(inner) - 1; i >= 0; i-- {
		blk = &For{Var: inner[i].Var, Min: inner[i].Min, Extent: inner[i].Extent, Kind: inner[i].Kind, Body: blk}
	}
	main := &For{Var: bv, Min: C(0), Extent: C(n / F), Kind: Serial, Body: blk}
	if n%F == 0 {
		return main, true
	}
	tail := &For{Var: l.Var, Min: C(lo + n/F*F), Extent: C(n % F), Kind: l.Kind, Body: l.Body}
	return Block(main, tail), true
}

// scheduleConvBlocked is the generic target's convolution schedule:
// scheduleConvGeneric, then register blocks. Every run of at least two
// output columns (the interior PartitionLoop leaves) gets blocks of
// block_oc output channels × block_px output pixels (knobs; defaults 4 × 2
// for convolutions, where each loaded input serves 4 channels and each
// weight 2 pixels, and 1 × 2 for depthwise ones, whose channels share no
// input); the border columns split off alone get blocks of
// block_oc_border channels (default 2), which keeps the code small. 1 = no
// block. The SIMD targets build on scheduleConvGeneric without the blocks.
func scheduleConvBlocked(f *PrimFunc) (*PrimFunc, error) {
	// Knob pairs (default 0; 1 on the Cortex-M3): channel pairs in one
	// SMLAL accumulator (generic_pairs.go): pointwise layers two pixels at
	// a time, other convolutions over a padded window per pixel.
	if knob(f, "pairs", 0) != 0 {
		if g, ok := schedulePairs(f); ok {
			return g, nil
		}
		if g, ok := schedulePairsWindow(f); ok {
			return g, nil
		}
	}
	// Knob quad (default 0; 1 on ARMv6-M): four channels a step with int32
	// weights (generic_pairs.go, IntrGenQuad), unless the fit pass gave
	// the kernel int8 weights (weights = 8).
	if knob(f, "quad", 0) != 0 && f.Knobs["weights"] != 8 {
		if g, ok := scheduleQuad(f); ok {
			return g, nil
		}
		if g, ok := scheduleQuadWindow(f); ok {
			return g, nil
		}
	}
	// Knob skip_dead (default 1): a dead channel tail stores constants
	// (SplitDeadTail).
	if knob(f, "skip_dead", 1) != 0 {
		f = SplitDeadTail(f)
	}
	f, err := scheduleConvGeneric(f)
	if err != nil {
		return nil, err
	}
	dw := f.Op == "depthwise_conv2d"
	// Knob fold_pad_taps (default 1, 0 for depthwise convolutions, whose
	// few padded taps cost less than the tables): FoldConstTaps.
	if knob(f, "fold_pad_taps", int(b2i(!dw))) != 0 {
		if f, err = FoldConstTaps(f, "oc"); err != nil {
			return nil, err
		}
	}
	defOC := 4
	if dw {
		defOC = 1
	}
	boc, bpx := knob(f, "block_oc", defOC), knob(f, "block_px", 2)
	border := knob(f, "block_oc_border", min(boc, 2))
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != "ow" {
			return s
		}
		if n, ok := IsConst(l.Extent); !ok || n < 2 {
			return s
		}
		// JamLoop renames the channel blocks oc_b, so the border pass
		// below leaves them alone.
		one := JamLoop(&PrimFunc{Body: l}, "oc", boc).Body
		if ow, ok := one.(*For); ok && bpx > 1 {
			if r, ok := jamLoop(ow, bpx); ok {
				return r
			}
		}
		return one
	}, nil)
	return genericRequant(JamLoop(&g, "oc", border)), nil
}

// genericRequant turns the int8 output stages of f into IntrRequantFast
// (fastRequant's form in portable C) under knob fast_requant (default 1):
// on a Cortex-M3 one SMLAL, a sign correction and a shift instead of
// TFLite's two roundings with their branches.
func genericRequant(f *PrimFunc) *PrimFunc {
	if knob(f, "fast_requant", 1) == 0 {
		return f
	}
	tabs := map[requantTabKey][2]*Buffer{}
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		if st, ok := s.(*Store); ok {
			return fastRequantAs(st, IntrRequantFast, tabs)
		}
		return s
	}, nil)
	return &g
}

// scheduleFCBlocked is the generic target's fully connected
// schedule: blocks of block_oc output rows (knob, default 8; 1 = none) that
// share each loaded input, over a reduction unrolled unroll_k deep (default
// 16 here, when it divides K; see scheduleFCGeneric).
func scheduleFCBlocked(f *PrimFunc) (*PrimFunc, error) {
	knob(f, "unroll_k", 16)
	if knob(f, "pairs", 0) != 0 {
		if g, ok := schedulePairs(f); ok {
			return g, nil
		}
	}
	if knob(f, "quad", 0) != 0 && f.Knobs["weights"] != 8 {
		if g, ok := scheduleQuad(f); ok {
			return g, nil
		}
	}
	if knob(f, "skip_dead", 1) != 0 {
		f = SplitDeadTail(f)
	}
	f, err := scheduleFCGeneric(f)
	if err != nil {
		return nil, err
	}
	return genericRequant(JamLoop(f, "j", knob(f, "block_oc", 8))), nil
}

func init() {
	DeclareKnob("generic.block_oc", 1, 2, 4, 8)     // conv: channels per block (interior); FC: rows per block
	DeclareKnob("generic.block_px", 1, 2, 3)        // conv: output pixels per block (interior columns)
	DeclareKnob("generic.block_oc_border", 1, 2, 4) // conv: channels per block in border columns
	DeclareKnob("generic.fold_pad_taps", 0, 1)      // conv: padded taps folded into per-channel tables
	DeclareKnob("generic.quad", 0, 1)               // conv, FC: four channels a step, int32 weights (ARMv6-M)
}
