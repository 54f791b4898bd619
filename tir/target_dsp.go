package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// DSP is the schedule set for cores with the Armv7E-M DSP extension
// (Cortex-M4, M7, M33): int8 convolutions and fully connected layers become
// register-blocked SMLAD micro-kernels (DSPMacName) over a partial im2col
// buffer (or straight over the input for 1x1 convolutions and FC),
// depthwise convolutions run four channels at a time (IntrDSPDW4), and the
// requantization stays fused in the epilogue of each block. Ops it does not
// list, and kernels it cannot match (float, uint8, grouped), fall back to
// the generic schedules.
var DSP = &Target{Name: "dsp", Schedules: map[string]ScheduleFunc{
	"conv2d":           scheduleConvDSP,
	"fully_connected":  scheduleFCDSP,
	"depthwise_conv2d": scheduleDepthwiseDSP,
}}

func init() { RegisterTarget(DSP) }

// accNest is a compute definition of the form
//
//	for o0 { for o1 { ... { acc = init; for r0 { for r1 { ... [if cond] acc += xv·wv } }; out = f(acc) } } }
//
// taken apart so a schedule can rebuild it with other loops.
type accNest struct {
	outer []*For // output loops, outermost first
	red   []*For // reduction loops
	acc   *Buffer
	init  Expr
	cond  Expr // nil when every tap is inside
	x, w  *Load
	xOff  int64 // xv = int32(x) + xOff
	store *Store
}

func parseAccNest(f *PrimFunc) (*accNest, error) {
	a := &accNest{}
	s := f.Body
	for {
		l, ok := s.(*For)
		if !ok {
			break
		}
		a.outer = append(a.outer, l)
		s = l.Body
	}
	al, ok := s.(*Allocate)
	if !ok || len(al.Buf.Shape) != 0 || al.Buf.DType != I32 {
		return nil, fmt.Errorf("no int32 accumulator below the output loops")
	}
	a.acc = al.Buf
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 3 {
		return nil, fmt.Errorf("accumulator body is not init; reduce; store")
	}
	in, ok := seq.Stmts[0].(*Store)
	if !ok || in.Buf != a.acc {
		return nil, fmt.Errorf("no accumulator init")
	}
	a.init = in.Value
	if a.store, ok = seq.Stmts[2].(*Store); !ok || a.store.Flat {
		return nil, fmt.Errorf("no output store")
	}
	s = seq.Stmts[1]
	for {
		l, ok := s.(*For)
		if !ok {
			break
		}
		a.red = append(a.red, l)
		s = l.Body
	}
	if c, ok := s.(*IfThenElse); ok && c.Else == nil {
		a.cond, s = c.Cond, c.Then
	}
	upd, ok := s.(*Store)
	if !ok || upd.Buf != a.acc {
		return nil, fmt.Errorf("reduction is not an accumulator update")
	}
	sum, ok := upd.Value.(*Binary)
	if !ok || sum.Op != OpAdd {
		return nil, fmt.Errorf("reduction is not acc + x·w")
	}
	if l, ok := sum.A.(*Load); !ok || l.Buf != a.acc {
		return nil, fmt.Errorf("reduction is not acc + x·w")
	}
	prod, ok := sum.B.(*Binary)
	if !ok || prod.Op != OpMul {
		return nil, fmt.Errorf("reduction is not acc + x·w")
	}
	xe := prod.A
	if b, ok := xe.(*Binary); ok && b.Op == OpAdd {
		c, ok := IsConst(b.B)
		if !ok {
			return nil, fmt.Errorf("input offset is not a constant")
		}
		a.xOff, xe = c, b.A
	}
	load8 := func(e Expr) *Load {
		c, ok := e.(*Cast)
		if !ok || c.T != I32 {
			return nil
		}
		l, ok := c.X.(*Load)
		if !ok || l.Flat || l.Buf.DType != graph.Int8 {
			return nil
		}
		return l
	}
	if a.x, a.w = load8(xe), load8(prod.B); a.x == nil || a.w == nil {
		return nil, fmt.Errorf("operands are not int8 loads (uint8, float or a weight offset)")
	}
	if a.w.Buf.Scope != ScopeConst || a.w.Buf.Data == nil {
		return nil, fmt.Errorf("weights are not constant")
	}
	return a, nil
}

func (a *accNest) extents(ls []*For) ([]int, error) {
	out := make([]int, len(ls))
	for i, l := range ls {
		n, ok := IsConst(l.Extent)
		lo, ok2 := IsConst(l.Min)
		if !ok || !ok2 || lo != 0 {
			return nil, fmt.Errorf("loop %s is not [0, constant)", l.Var.Name)
		}
		out[i] = int(n)
	}
	return out, nil
}

// flatIndex is the element offset of b[idx...].
func flatIndex(b *Buffer, idx []Expr) Expr {
	var off Expr = C(0)
	for i, e := range idx {
		if b.Strides[i] != 0 {
			off = Add(off, Mul(e, C(int64(b.Strides[i]))))
		}
	}
	return SimplifyExpr(off)
}

// constPerChannel evaluates e (constants and constant-buffer loads of v) for
// v = 0..n-1 at compile time.
func constPerChannel(e Expr, v *Var, n int) (vals []int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("accumulator init is not a compile-time constant: %v", r)
		}
	}()
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	vals = make([]int64, n)
	for c := range vals {
		m.vars[v] = val{i: int64(c)}
		vals[c] = m.eval(e).i
	}
	return vals, nil
}

// replaceAcc rewrites loads of the scalar acc as loads of buf[idx].
func replaceAcc(s Stmt, acc, buf *Buffer, idx Expr) Stmt {
	return RewriteStmt(s, nil, func(e Expr) Expr {
		if l, ok := e.(*Load); ok && l.Buf == acc {
			return &Load{Buf: buf, Indices: []Expr{idx}, Flat: true}
		}
		return e
	})
}

func flatStore(b *Buffer, idx, v Expr) Stmt {
	return &Store{Buf: b, Indices: []Expr{idx}, Value: v, Flat: true}
}

func loopK(name string, n int, kind ForKind, body func(i Expr) Stmt) Stmt {
	v := NewVar(name)
	return &For{Var: v, Min: C(0), Extent: C(int64(n)), Kind: kind, Body: body(v)}
}

// gemmBlock is the channel loop of one block of R pixels: for every block
// of C output channels, the accumulators start at init, one micro-kernel
// call adds the dot products, and the epilogue stores each result.
//
//	xPtr(i) is the element index of pixel i's K-vector in xb; pix(i)
//	substitutes the output-loop variables of pixel i into an expression.
type gemmSpec struct {
	R, C, K, Cout int
	xb            *Buffer
	x0            Expr // element index of pixel 0's row in xb
	xs            int  // elements between the pixels' rows
	w             *Buffer
	ocVar         *Var
	init          Expr
	store         *Store
	acc           *Buffer
	pix           func(s Stmt, i int) Stmt // substitutes pixel i's output position
}

func (g *gemmSpec) build(name string) Stmt {
	blocks := []struct{ c, from, count int }{{g.C, 0, g.Cout / g.C}}
	if rem := g.Cout % g.C; rem != 0 {
		blocks = append(blocks, struct{ c, from, count int }{1, g.Cout - rem, rem})
	}
	var out []Stmt
	for bi, bl := range blocks {
		c := bl.c
		accb := NewBuffer(fmt.Sprintf("%s_acc%d", name, bi), I32, []int{g.R * c}, ScopeLocal)
		from := bl.from
		body := loopK("oc_o", bl.count, Serial, func(oo Expr) Stmt {
			oc0 := Add(Mul(oo, C(int64(c))), C(int64(from)))
			var ss []Stmt
			for i := 0; i < g.R; i++ {
				for j := 0; j < c; j++ {
					oc := Add(oc0, C(int64(j)))
					ss = append(ss, flatStore(accb, C(int64(i*c+j)), SubstituteExpr(g.init, map[*Var]Expr{g.ocVar: oc})))
				}
			}
			ss = append(ss, dspMac(g.R, c, accb, C(0), g.xb, g.x0, g.xs, g.w, Mul(oc0, C(int64(g.K))), g.K, g.K))
			for i := 0; i < g.R; i++ {
				for j := 0; j < c; j++ {
					oc := Add(oc0, C(int64(j)))
					st := Substitute(g.store, map[*Var]Expr{g.ocVar: oc})
					st = replaceAcc(st, g.acc, accb, C(int64(i*c+j)))
					ss = append(ss, g.pix(st, i))
				}
			}
			return Block(ss...)
		})
		out = append(out, &Allocate{Buf: accb, Body: body})
	}
	return Block(out...)
}

// scheduleConvDSP: a convolution as a GEMM of output pixels × output
// channels with K = KH·KW·Cin. Knobs: block_px (pixels per block along a
// row, 1 or 2), block_oc (channels per block, 1, 2 or 4), and im2col (1:
// always copy the R pixels' windows into a local int8 buffer, padding with
// the input zero point so the input offset folds into the bias; 0: read 1x1
// convolutions without padding straight from the input).
func scheduleConvDSP(f *PrimFunc) (*PrimFunc, error) {
	bpx, boc, forceCol := knob(f, "block_px", 2), knob(f, "block_oc", 2), knob(f, "im2col", 0)
	a, err := parseAccNest(f)
	if err != nil || len(a.outer) != 4 || len(a.red) != 3 {
		return scheduleConvGeneric(f)
	}
	oe, err := a.extents(a.outer)
	if err != nil {
		return scheduleConvGeneric(f)
	}
	re, err := a.extents(a.red)
	if err != nil {
		return scheduleConvGeneric(f)
	}
	nV, ohV, owV, ocV := a.outer[0].Var, a.outer[1].Var, a.outer[2].Var, a.outer[3].Var
	khV, kwV, icV := a.red[0].Var, a.red[1].Var, a.red[2].Var
	N, OH, OW, Cout := oe[0], oe[1], oe[2], oe[3]
	KH, KW, Cg := re[0], re[1], re[2]
	K := KH * KW * Cg
	w := a.w.Buf
	if !isBlock(bpx, boc) || !rowMajor(w) || len(w.Shape) != 4 || w.Shape[0] != Cout || w.Len() != Cout*K ||
		usesVar(&Load{Buf: a.x.Buf, Indices: a.x.Indices}, ocV) || (a.cond != nil && usesVar(a.cond, icV)) {
		return scheduleConvGeneric(f)
	}
	// The weight load must be w[oc, kh, kw, ic].
	for i, v := range []*Var{ocV, khV, kwV, icV} {
		if a.w.Indices[i] != Expr(v) {
			return scheduleConvGeneric(f)
		}
	}
	init := a.init
	direct := forceCol == 0 && KH == 1 && KW == 1 && a.xOff == 0 && condAlwaysTrue(a.cond, a.outer[1:3], OH, OW)
	if !direct && a.xOff != 0 {
		// Padding is filled with the input zero point, so every tap
		// contributes (x + xOff)·w and xOff·Σw folds into the bias.
		base, err := constPerChannel(init, ocV, Cout)
		if err != nil {
			return scheduleConvGeneric(f)
		}
		for c := range base {
			var sum int64
			for _, v := range w.Data.I[c*K : (c+1)*K] {
				sum += v
			}
			base[c] += a.xOff * sum
		}
		init = At(constBuf(f.Name+"_bias_dsp", I32, []int{Cout}, base), ocV)
	}
	xFlat := flatIndex(a.x.Buf, a.x.Indices)
	mk := func(R int, owAt func(i int) Expr) Stmt {
		pix := func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{owV: owAt(i)}) }
		g := &gemmSpec{R: R, C: boc, K: K, Cout: Cout, w: w, ocVar: ocV, init: init, store: a.store, acc: a.acc, pix: pix}
		if direct {
			at := func(i int) Expr {
				return SimplifyExpr(SubstituteExpr(xFlat, map[*Var]Expr{owV: owAt(i), khV: C(0), kwV: C(0), icV: C(0)}))
			}
			g.xb, g.x0 = a.x.Buf, at(0)
			if R > 1 {
				d := SimplifyExpr(Sub(at(1), at(0)))
				xs, ok := IsConst(d)
				if !ok {
					return nil
				}
				g.xs = int(xs)
			}
			return g.build(f.Name)
		}
		col := NewBuffer(f.Name+"_col", graph.Int8, []int{R * K}, ScopeLocal)
		var fill []Stmt
		for i := 0; i < R; i++ {
			fill = append(fill, loopK("kh", KH, Serial, func(kh Expr) Stmt {
				return loopK("kw", KW, Serial, func(kw Expr) Stmt {
					m := map[*Var]Expr{owV: owAt(i), khV: kh, kwV: kw}
					dst := func(ic Expr) Expr {
						return Add(Add(Mul(kh, C(int64(KW*Cg))), Mul(kw, C(int64(Cg)))), Add(ic, C(int64(i*K))))
					}
					cp := loopK("ic", Cg, Serial, func(ic Expr) Stmt {
						m2 := map[*Var]Expr{icV: ic}
						for k, v := range m {
							m2[k] = v
						}
						return flatStore(col, dst(ic), SubstituteExpr(a.x, m2))
					})
					if a.cond == nil {
						return cp
					}
					pad := loopK("ic", Cg, Serial, func(ic Expr) Stmt {
						return flatStore(col, dst(ic), &IntImm{T: graph.Int8, V: -a.xOff})
					})
					return &IfThenElse{Cond: SubstituteExpr(a.cond, m), Then: cp, Else: pad}
				})
			}))
		}
		g.xb, g.x0, g.xs = col, C(0), K
		return &Allocate{Buf: col, Body: Block(Block(fill...), g.build(f.Name))}
	}
	var rowBody []Stmt
	if full := OW / bpx; full > 0 {
		v := NewVar("ow_o")
		s := mk(bpx, func(i int) Expr { return Add(Mul(v, C(int64(bpx))), C(int64(i))) })
		if s == nil {
			return scheduleConvGeneric(f)
		}
		rowBody = append(rowBody, &For{Var: v, Min: C(0), Extent: C(int64(full)), Body: s})
	}
	if rem := OW % bpx; rem != 0 {
		for i := OW - rem; i < OW; i++ {
			s := mk(1, func(int) Expr { return C(int64(i)) })
			if s == nil {
				return scheduleConvGeneric(f)
			}
			rowBody = append(rowBody, s)
		}
	}
	g := *f
	g.Body = &For{Var: nV, Min: C(0), Extent: C(int64(N)), Body: &For{Var: ohV, Min: C(0), Extent: C(int64(OH)), Body: Block(rowBody...)}}
	return &g, nil
}

func isBlock(r, c int) bool {
	for _, b := range DSPMacBlocks {
		if b[0] == r && b[1] == c {
			return true
		}
	}
	return false
}

func rowMajor(b *Buffer) bool {
	s := graph.Strides(b.Shape)
	for i := range s {
		if b.Strides[i] != s[i] {
			return false
		}
	}
	return true
}

// condAlwaysTrue reports whether cond (affine in the output loops, with
// the reduction at its first tap) holds at the four corners of the output,
// hence everywhere.
func condAlwaysTrue(cond Expr, loops []*For, OH, OW int) bool {
	if cond == nil {
		return true
	}
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	ok := true
	func() {
		defer func() {
			if recover() != nil {
				ok = false
			}
		}()
		for _, h := range []int{0, OH - 1} {
			for _, w := range []int{0, OW - 1} {
				e := SubstituteExpr(cond, map[*Var]Expr{loops[0].Var: C(int64(h)), loops[1].Var: C(int64(w))})
				VisitExprs(&Evaluate{X: e}, func(x Expr) {
					if v, isVar := x.(*Var); isVar {
						m.vars[v] = val{}
					}
				})
				if m.eval(e).i == 0 {
					ok = false
				}
			}
		}
	}()
	return ok
}

// scheduleFCDSP: fully connected as a GEMM of input rows × output rows,
// read straight from the input and the weights. Knobs block_rows (1 or 2)
// and block_oc (1, 2 or 4): with one input row, each input word is widened
// once and reused for block_oc output rows.
func scheduleFCDSP(f *PrimFunc) (*PrimFunc, error) {
	a, err := parseAccNest(f)
	if err != nil || len(a.outer) != 2 || len(a.red) != 1 || a.cond != nil || a.xOff != 0 {
		return scheduleFCGeneric(f)
	}
	oe, err := a.extents(a.outer)
	if err != nil {
		return scheduleFCGeneric(f)
	}
	rows, Nout := oe[0], oe[1]
	K := int(mustConst(a.red[0].Extent))
	rV, jV, kV := a.outer[0].Var, a.outer[1].Var, a.red[0].Var
	br := knob(f, "block_rows", 2)
	bc := knob(f, "block_oc", 4)
	if rows < br {
		br = 1
	}
	w := a.w.Buf
	if !isBlock(br, bc) || !rowMajor(w) || !rowMajor(a.x.Buf) || a.w.Indices[0] != Expr(jV) || a.w.Indices[1] != Expr(kV) ||
		a.x.Indices[0] != Expr(rV) || a.x.Indices[1] != Expr(kV) {
		return scheduleFCGeneric(f)
	}
	mk := func(R int, rowAt func(i int) Expr) Stmt {
		g := &gemmSpec{R: R, C: bc, K: K, Cout: Nout, w: w, ocVar: jV, init: a.init, store: a.store, acc: a.acc,
			xb: a.x.Buf, x0: Mul(rowAt(0), C(int64(K))), xs: K,
			pix: func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{rV: rowAt(i)}) }}
		return g.build(f.Name)
	}
	var body []Stmt
	if full := rows / br; full > 0 {
		v := NewVar("r_o")
		body = append(body, &For{Var: v, Min: C(0), Extent: C(int64(full)),
			Body: mk(br, func(i int) Expr { return Add(Mul(v, C(int64(br))), C(int64(i))) })})
	}
	for i := rows - rows%br; i < rows; i++ {
		body = append(body, mk(1, func(int) Expr { return C(int64(i)) }))
	}
	g := *f
	g.Body = Block(body...)
	return &g, nil
}

func mustConst(e Expr) int64 {
	v, _ := IsConst(e)
	return v
}
