package tir

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// DSPGemmName is a whole channel loop of R rows (output pixels or FC input
// rows) in one helper, for outputs in the ReLU requantization form
// (IntrDSPRequantPR) with the bias folded into k0 at compile time: nb
// blocks of C output channels, each one DSPMacName block started at zero,
// then requantized and stored. With p's k0 = k0 + bias·m, the SMLAL sum
// x·m + k0' equals (x + bias)·m + k0, so the results are those of the
// bias-initialised accumulator; the helper keeps no bias, no accumulator
// array, shares each channel's multiplier and shift between its rows and
// walks the weights, the parameters and the outputs with pointers:
//
//	dsp_gemm_s8pr_RxC_uU(y *int8, ys, x *int32, xs, w *int32, n, p *int32, nb, zr, lo, hi), n % (2U) == 0:
//	for b < nb, i < R, j < C, o = b·C + j:
//	  s = Σ_{g < n/2} Σ_{h<2} dot2(x[i·xs + 2g + h], w[b·C·n + 2C·g + 2j + h])
//	  y[i·ys + o] = dsp_requant_s8pr(s, &p[4o], zr, lo, hi)
//
// Every output is written after all the rows' x were read (x is a staged
// copy), so y may alias the kernel's input.
func DSPGemmName(r, c, u int) string { return fmt.Sprintf("dsp_gemm_s8pr_%dx%d_u%d", r, c, u) }

// gemmIntrinsic is the semantics of a fused channel loop (DSPGemmName,
// DSPGemmW8Name) whose weights hold unit elements per pair word (1: int16
// pair words, 2: int8 bytes) and are read with pair.
func gemmIntrinsic(name string, r, c int64, u int, unit int64, pair weightPair) func([]val) val {
	return func(a []val) val {
		y, ys, x, xs, w, n, p, nb := a[0], a[1].i, a[2], a[3].i, a[4], a[5].i, a[6], a[7].i
		zr, lo, hi := a[8].i, a[9].i, a[10].i
		if n <= 0 || n%int64(2*u) != 0 || nb < 0 || (r > 1 && ys == 0) {
			panic(fmt.Sprintf("%s: n = %d, nb = %d, ys = %d", name, n, nb, ys))
		}
		for bl := int64(0); bl < nb; bl++ {
			wb := val{p: w.p, i: w.i + bl*c*unit*n}
			for i := int64(0); i < r; i++ {
				for j := int64(0); j < c; j++ {
					s := dotBlock(x, xs, i, wb, c, j, n, pair)
					if s > math.MaxInt32 || s < math.MinInt32 {
						panic("int32 overflow in " + name)
					}
					o := bl*c + j
					P := func(k int64) int64 { return p.p.I[p.i+4*o+k] }
					y.p.I[y.i+i*ys+o] = reluRequant(name, s, P(2), int64(uint32(P(0)))+P(1)<<32, P(3), zr, lo, hi).i
				}
			}
		}
		return val{}
	}
}

func init() {
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			name := DSPGemmName(b[0], b[1], u)
			extIntrinsics[name] = gemmIntrinsic(name, int64(b[0]), int64(b[1]), u, 1, pairWords)
		}
	}
}

// foldBiasRequant returns the four-word table tab (IntrDSPRequantP's layout,
// from channel 0) with bias[c]·m[c] added to every k0, or nil when a sum
// could leave int64: |k0'| + bound[c]·m[c] must fit, where bound[c] bounds
// |Σ x·w| of channel c.
func foldBiasRequant(tab, bias, bound []int64) []int64 {
	if len(tab) != 4*len(bias) || len(bound) != len(bias) {
		return nil
	}
	lim := new(big.Int).SetInt64(math.MaxInt64)
	out := make([]int64, len(tab))
	for c := range bias {
		m := tab[4*c+2]
		k0 := int64(uint32(tab[4*c])) + tab[4*c+1]<<32
		k := new(big.Int).Mul(big.NewInt(bias[c]), big.NewInt(m))
		k.Add(k, big.NewInt(k0))
		worst := new(big.Int).Abs(k)
		worst.Add(worst, new(big.Int).Mul(big.NewInt(bound[c]), big.NewInt(m)))
		if m < 0 || bound[c] < 0 || worst.Cmp(lim) > 0 {
			return nil
		}
		k1 := k.Int64()
		out[4*c], out[4*c+1], out[4*c+2], out[4*c+3] = int64(int32(uint32(k1))), k1>>32, m, tab[4*c+3]
	}
	return out
}

// gemmFused builds the channel loop as DSPGemmName calls (the main blocks,
// then single channels) when the store is in the packed ReLU form, the
// accumulator starts at a compile-time bias, the bias folds into k0 without
// overflow and the outputs of a row are contiguous channels; ok is false
// otherwise.
func (g *gemmSpec) gemmFused(blocks []gemmBlock) (Stmt, bool) {
	pbuf, rqArgs, signed, bias, ok := g.fusedForm()
	if !ok {
		return nil, false
	}
	// |Σ x·w| <= Σ|w|·32768 for any int16 activations.
	bound := make([]int64, g.Cout)
	for oc := range bound {
		if g.dead != nil && g.dead[oc] {
			continue
		}
		for _, v := range g.chanWeights(oc) {
			bound[oc] += abs64(v) * 32768
		}
	}
	// The shared-shift form where the spec asks for it and every channel
	// takes it, else the bias folded into k0.
	name, w, args := g.gemmName, g.w, rqArgs
	var ptab *Buffer
	per := int64(4) // table words per channel
	sp, shifted := g.sharedShiftPlan(pbuf, rqArgs, signed, bias)
	if (g.segs != nil || signed) && !shifted {
		return nil, false // the segmented and signed helpers have the shared-shift form only
	}
	name3 := DSPGemm3SName
	if shifted {
		lo, _ := IsConst(rqArgs[1])
		hi, _ := IsConst(rqArgs[2])
		name, per = DSPGemmSName, 3
		if signed {
			name, name3, per = DSPGemmSNName, DSPGemm3SNName, 4
		}
		// The same layout, scaled (g.w is no longer read).
		w = g.consts.get(g.w, "scaled", func() *Buffer { return constBuf(g.w.Name, g.w.DType, g.w.Shape, sp.w) })
		ptab = g.consts.get(pbuf, "shift", func() *Buffer { return constBuf(pbuf.Name+"s", I32, []int{len(sp.tab)}, sp.tab) })
		args = []Expr{C(sp.t), C(max(lo, -128)), C(min(hi, 127))}
	} else {
		tab := foldBiasRequant(pbuf.Data.I, bias, bound)
		if tab == nil {
			return nil, false
		}
		ptab = g.consts.get(pbuf, "fold", func() *Buffer { return constBuf(pbuf.Name+"b", I32, []int{len(tab)}, tab) })
	}
	// Output element offsets: row i, channel oc.
	st := &Store{Buf: g.store.Buf, Indices: g.store.Indices, Value: C(0), Flat: g.store.Flat}
	off := func(i int, oc int) (Expr, bool) {
		s := Substitute(st, map[*Var]Expr{g.ocVar: C(int64(oc))})
		s = g.pix(s, i)
		ss, ok := s.(*Store)
		if !ok {
			return nil, false
		}
		if ss.Flat {
			return SimplifyExpr(ss.Indices[0]), true
		}
		return flatIndex(ss.Buf, ss.Indices), true
	}
	o00, ok := off(0, 0)
	if !ok {
		return nil, false
	}
	if o01, ok := off(0, 1); g.Cout > 1 && (!ok || !diffIs(o01, o00, 1)) {
		return nil, false
	}
	var ys int64
	if g.R > 1 {
		o10, ok := off(1, 0)
		if !ok {
			return nil, false
		}
		if ys, ok = constDiff(o10, o00); !ok || ys == 0 {
			return nil, false
		}
		for i := 2; i < g.R; i++ {
			oi, ok := off(i, 0)
			if !ok || !diffIs(oi, o00, int64(i)*ys) {
				return nil, false
			}
		}
	}
	if shifted {
		if s, ok := g.pwCall(sp, int(per), signed, o00, args); ok {
			return s, true
		}
	}
	kw := g.K4 / 2
	var out []Stmt
	for _, bl := range blocks {
		y := ptr(g.store.Buf, SimplifyExpr(Add(o00, C(int64(bl.from)))))
		wp := ptr(w, C(int64(bl.at*g.wElems())))
		tail := []Expr{ptr(ptab, C(per*int64(bl.from))), C(int64(bl.count)), args[0], args[1], args[2]}
		if g.segs != nil {
			// Three segments of n words, row i of segment k at xk + i·xs.
			sg := g.segs
			call := append([]Expr{y, C(ys), ptr(g.xb, sg[0].x), ptr(g.xb, sg[1].x), ptr(g.xb, sg[2].x), C(int64(sg[0].xs)), wp, C(int64(sg[0].n))}, tail...)
			out = append(out, &Evaluate{X: Call(name3(g.R, bl.c, g.U), I32, call...)})
			continue
		}
		call := append([]Expr{y, C(ys), ptr(g.xb, C(0)), C(int64(kw)), wp, C(int64(kw))}, tail...)
		out = append(out, &Evaluate{X: Call(name(g.R, bl.c, g.U), I32, call...)})
	}
	return Block(out...), true
}

// requantTable returns the four-word table per channel (k0 low, k0 high,
// m, e1: packRequant's layout from channel 0) of an output stage in one of
// the dsp requantization forms, its constant zr, lo and hi, and whether it
// is a form with the sign correction (no fused ReLU). A per-tensor form
// (parameters as immediates) gets its table made here, the same words for
// every channel; ok is false for anything else.
func (g *gemmSpec) requantTable(rq *Intrinsic) (tab *Buffer, args []Expr, signed, ok bool) {
	switch rq.Name {
	case IntrDSPRequantPR, IntrDSPRequantP:
		if len(rq.Args) != 5 {
			return nil, nil, false, false
		}
		pp, ok := rq.Args[1].(*Ptr)
		if !ok || pp.Buf.Scope != ScopeConst || pp.Buf.Data == nil || pp.Buf.Data.DType != I32 || len(pp.Buf.Data.I) != 4*g.Cout {
			return nil, nil, false, false
		}
		// The table starts at channel 0 and steps four words a channel.
		at := func(e Expr, oc int64) (int64, bool) {
			return IsConst(SimplifyExpr(SubstituteExpr(e, map[*Var]Expr{g.ocVar: C(oc)})))
		}
		if p0, ok := at(pp.Index, 0); !ok || p0 != 0 {
			return nil, nil, false, false
		}
		if p1, ok := at(pp.Index, 1); !ok || p1 != 4 {
			return nil, nil, false, false
		}
		tab, args, signed = pp.Buf, rq.Args[2:5], rq.Name == IntrDSPRequantP
	case IntrDSPRequantR, IntrDSPRequant:
		if len(rq.Args) != 7 {
			return nil, nil, false, false
		}
		var v [3]int64 // m, k0, e1
		for i := range v {
			if v[i], ok = IsConst(rq.Args[1+i]); !ok {
				return nil, nil, false, false
			}
		}
		tab = g.consts.get(g.w, "rq4", func() *Buffer {
			words := make([]int64, 0, 4*g.Cout)
			for range g.Cout {
				words = append(words, int64(int32(uint32(v[1]))), v[1]>>32, v[0], v[2])
			}
			return constBuf(strings.SplitN(g.w.Name, "_weights", 2)[0]+"_requant4", I32, []int{len(words)}, words)
		})
		args, signed = rq.Args[4:7], rq.Name == IntrDSPRequant
	default:
		return nil, nil, false, false
	}
	for _, e := range args {
		if _, ok := IsConst(e); !ok {
			return nil, nil, false, false
		}
	}
	return tab, args, signed, true
}

// segsFusable reports whether g's segments can go through DSPGemm3SName:
// three of them, of one length and row stride, int16 weights.
func (g *gemmSpec) segsFusable() bool {
	sg := g.segs
	return len(sg) == 3 && !g.w8 && sg[1].n == sg[0].n && sg[2].n == sg[0].n && sg[1].xs == sg[0].xs && sg[2].xs == sg[0].xs &&
		3*sg[0].n == g.K4/2 && sg[0].n%(2*g.U) == 0
}

// diffIs reports whether the affine index expressions a and b differ by
// want wherever their variables are: a − b is evaluated with every
// variable at 0, with each alone at 1 and with all at 3.
func diffIs(a, b Expr, want int64) bool {
	d, ok := constDiff(a, b)
	return ok && d == want
}

func constDiff(a, b Expr) (int64, bool) {
	e := Sub(a, b)
	var vs []*Var
	VisitExprs(&Evaluate{X: e}, func(x Expr) {
		if v, ok := x.(*Var); ok && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	})
	at := func(one *Var, all int64) (int64, bool) {
		m := map[*Var]Expr{}
		for _, v := range vs {
			m[v] = C(all)
			if v == one {
				m[v] = C(1)
			}
		}
		return IsConst(SimplifyExpr(SubstituteExpr(e, m)))
	}
	d, ok := at(nil, 0)
	if !ok {
		return 0, false
	}
	for _, v := range vs {
		if x, ok := at(v, 0); !ok || x != d {
			return 0, false
		}
	}
	if x, ok := at(nil, 3); !ok || x != d {
		return 0, false
	}
	return d, true
}

// wordOf is the index in DSPPackWeights' layout of channel oc's word k
// (k < K4/2).
func (g *gemmSpec) wordOf(oc, k int) int {
	base, bc, j, _ := blockOf(g.blocks(), oc)
	grp, h := k/2, k%2
	return base*g.K4/2 + 2*bc*grp + 2*j + h
}

// constCache holds the constant buffers one kernel's gemmSpecs derive from
// the same source (its pixel blocks and its one-pixel tail: the same
// scaled weights, the same tables), so the C has one copy of each. A nil
// cache derives afresh.
type constCache map[constKey]*Buffer

type constKey struct {
	src  *Buffer
	kind string
}

func (c constCache) get(src *Buffer, kind string, make func() *Buffer) *Buffer {
	if c == nil {
		return make()
	}
	k := constKey{src, kind}
	if b, ok := c[k]; ok {
		return b
	}
	b := make()
	c[k] = b
	return b
}

// fusedForm is what the fused helpers need of the spec: the store in a
// packed requantization form reading the accumulator, its table and
// constant arguments, whether it has the sign correction (only the
// shared-shift helpers have that), and the compile-time bias per channel.
func (g *gemmSpec) fusedForm() (pbuf *Buffer, rqArgs []Expr, signed bool, bias []int64, ok bool) {
	cast, ok := g.store.Value.(*Cast)
	if !ok || cast.T != graph.Int8 || g.store.Buf.DType != graph.Int8 {
		return nil, nil, false, nil, false
	}
	rq, ok := cast.X.(*Intrinsic)
	if !ok || len(rq.Args) == 0 {
		return nil, nil, false, nil, false
	}
	if l, ok := rq.Args[0].(*Load); !ok || l.Buf != g.acc {
		return nil, nil, false, nil, false
	}
	pbuf, rqArgs, signed, ok = g.requantTable(rq)
	if !ok || signed && !g.shift {
		return nil, nil, false, nil, false
	}
	bias, err := constPerChannel(g.init, g.ocVar, g.Cout)
	if err != nil {
		return nil, nil, false, nil, false
	}
	return pbuf, rqArgs, signed, bias, true
}

// sharedShiftPlan is planShift where the spec asks for the shared shift.
func (g *gemmSpec) sharedShiftPlan(pbuf *Buffer, rqArgs []Expr, signed bool, bias []int64) (shiftPlan, bool) {
	if !g.shift {
		return shiftPlan{}, false
	}
	zr, _ := IsConst(rqArgs[0])
	return g.planShift(pbuf.Data.I, bias, zr, signed)
}

// pwApplies reports whether the spec (built with R = 1) would take
// DSPPwSName: the fused form in the shared shift with every channel, and
// pwCall's own conditions. The schedule asks before it gives up its pixel
// blocks for it.
func (g *gemmSpec) pwApplies() bool {
	n := g.K4 / 2
	if !g.fuse || g.R != 1 || g.segs != nil || g.dead != nil || g.w8 || (n != 2 && n != 4) {
		return false
	}
	pbuf, rqArgs, signed, bias, ok := g.fusedForm()
	if !ok {
		return false
	}
	_, shifted := g.sharedShiftPlan(pbuf, rqArgs, signed, bias)
	return shifted
}
