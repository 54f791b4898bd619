package tir

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// DSP is the schedule set for cores with the Armv7E-M DSP extension
// (Cortex-M4, M7, M33): int8 convolutions and fully connected layers become
// register-blocked SMLAD micro-kernels (DSPMacName) over activations
// widened once into int16 pairs (a partial im2col for convolutions) and
// weights packed as int16 pairs at compile time (or, with knob weights = 8,
// kept int8 and widened by SXTB16 in the micro-kernel); depthwise convolutions
// run four channels at a time (3×3 windows through one shared helper,
// IntrDSPDW3x3; others IntrDSPDW4); the requantization stays fused in the
// epilogue of each block (IntrDSPRequant where the shifts allow, its
// per-channel parameters packed by IntrDSPRequantP). Ops it does not
// list, and kernels it cannot match (float, uint8, grouped), fall back to
// the generic schedules.
var DSP = &Target{Name: "dsp", Schedules: map[string]ScheduleFunc{
	"conv2d":           scheduleConvDSP,
	"fully_connected":  scheduleFCDSP,
	"depthwise_conv2d": scheduleDepthwiseDSP,
	"add":              scheduleElemDSP,
	"sub":              scheduleElemDSP,
	"mul":              scheduleElemDSP,
	"avg_pool2d":       simdAvgPool("dsp", scheduleHoist),
	"max_pool2d":       simdMaxPool("dsp", scheduleHoist),
	"batch_matmul":     scheduleBMMDSP,
	"mean":             scheduleMeanDSP,
},
	// No core overrides today. (Sessions 4 to 6 turned conv_rows off on the
	// Cortex-M33, where the row-widened convolution then measured slower;
	// with the segmented helper it is faster there too: IC 11,461,245 →
	// 10,531,502, VWW 5,448,091 → 5,381,411 on mps2-an505.)
	CoreKnobs: map[string]map[string]map[string]int{},
}

func init() {
	RegisterTarget(DSP)
	// The values each dsp knob may take, for the autotuner.
	DeclareKnob("dsp.block_px", 1, 2, 3)                // conv, depthwise: output pixels per block (3: conv, two channels)
	DeclareKnob("dsp.depthwise_conv2d.block_px", 1, 2)  // depthwise has no three-pixel block
	DeclareKnob("dsp.block_oc", 1, 2, 4)                // conv, FC: output channels per micro-kernel
	DeclareKnob("dsp.block_rows", 1, 2)                 // FC: input rows per micro-kernel
	DeclareKnob("dsp.unroll_k", 1, 2, 4, 8, 16, 24, 32) // conv, FC: groups of four k per iteration (the largest helper up to it that divides K)
	DeclareKnob("dsp.partition", 0, 1, 2, 3)            // conv, depthwise: border/interior split
	DeclareKnob("dsp.pad_k", 4, 8, 16)                  // conv: staged im2col row padding
	DeclareKnob("dsp.unroll_taps", 0, 1)                // depthwise: unroll the window
	DeclareKnob("dsp.unroll_q", 0, 4, 8)                // depthwise: unroll quad loops this short
	DeclareKnob("dsp.lut", 0, 1)                        // element-wise: per-input tables
	DeclareKnob("dsp.col33", 0, 1)                      // conv 3×3, 3 channels: one 14-word gather a window (tir/dsp_col33.go)
	DeclareKnob("dsp.add_lut", 0, 1)                    // ADD/SUB: one flattened loop, tables, SMMLA (tir/dsp_addlut.go)
	DeclareKnob("dsp.dw3x3", 0, 1)                      // depthwise 3x3: one shared helper per pixel
	DeclareKnob("dsp.gemm_fuse", 0, 1)                  // conv, FC: ReLU outputs through one DSPGemmName helper per channel loop
	DeclareKnob("dsp.requant_shift", 0, 1)              // conv, FC: those helpers with one shift per layer (DSPGemmSName)
	DeclareKnob("dsp.conv_rows", 0, 1)                  // conv KxK, Cin % 4 == 0: widen input rows once, no im2col (tir/dsp_convrows.go)
	// conv, FC: weights in flash as int16 pairs (16) or int8 widened in
	// registers (8, tir/dsp_w8.go). 8 saves flash at a cost in
	// instructions: the pipeline's fit pass chooses it where the board's
	// flash needs it, the tuner never does (one value: not searched).
	DeclareKnob("dsp.weights", 16)
}

// xAbs bounds |x + xOff| for int8 activations x (0 for other types): the
// values a schedule's widened copies of x hold, padding included (0).
func (a *accNest) xAbs() int64 {
	if a.x == nil || a.x.Buf.DType != graph.Int8 {
		return 0
	}
	return 128 + abs64(a.xOff)
}

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
	wOff  int64 // wv = int32(w) + wOff (parseAccNestAny only)
	// wOffE is a weight offset that is not one constant (a per-channel
	// table: −zero point of each output channel's weights); nil if none.
	wOffE Expr
	// wWide: the weights were folded with their offset (parseAccNestFold)
	// and some fall outside int8. Only schedules that pack the weights
	// as int16 take them.
	wWide bool
	store *Store
}

// parseAccNest takes apart the nest of a kernel with constant int8 weights
// and no weight offset (convolutions, fully connected layers).
func parseAccNest(f *PrimFunc) (*accNest, error) {
	return parseAccNestW(f, false)
}

// parseAccNestFold is parseAccNest for a schedule that packs the weights
// as int16 words: a weight offset (−zero point, one for the tensor or one
// per output channel; TFLite's legacy uint8 models and ONNX Runtime's
// uint8 weights have them) is added to the constant weights here, so the
// nest it returns has none, and its weights are a constant buffer of the
// offset values (graph.Int16; wWide where some are outside int8).
func parseAccNestFold(f *PrimFunc) (*accNest, error) {
	return parseAccNestW(f, true)
}

func parseAccNestW(f *PrimFunc, fold bool) (*accNest, error) {
	a, err := parseAccNestAny(f)
	if err != nil {
		return nil, err
	}
	if a.w.Buf.Scope != ScopeConst || a.w.Buf.Data == nil {
		return nil, fmt.Errorf("weights are not constant")
	}
	if a.wOff != 0 || a.wOffE != nil {
		if !fold {
			return nil, fmt.Errorf("operands are not int8 loads (uint8, float or a weight offset)")
		}
		if err := a.foldWeightOffset(f.Name); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// foldWeightOffset replaces the weights w and the offset o(indices) by one
// constant buffer of w + o: the offset may read the weights' own loop
// variables only (a per-channel table indexed by the output channel).
func (a *accNest) foldWeightOffset(name string) error {
	w := a.w.Buf
	if !rowMajor(w) || len(a.w.Indices) != len(w.Shape) || len(w.Data.I) != w.Len() {
		return fmt.Errorf("weights with an offset are not a row-major constant")
	}
	vars := make([]*Var, len(a.w.Indices))
	for i, e := range a.w.Indices {
		v, ok := e.(*Var)
		if !ok {
			return fmt.Errorf("weights with an offset are not indexed by loop variables")
		}
		vars[i] = v
	}
	off := a.wOffE
	if off == nil {
		off = C(a.wOff)
	}
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	vals := make([]int64, len(w.Data.I))
	idx := make([]int, len(w.Shape))
	var bad error
	func() {
		defer func() {
			if r := recover(); r != nil {
				bad = fmt.Errorf("weight offset: %v", r)
			}
		}()
		for i := range vals {
			for d, v := range vars {
				m.vars[v] = val{i: int64(idx[d])}
			}
			vals[i] = w.Data.I[i] + m.eval(off).i
			if vals[i] < math.MinInt16 || vals[i] > math.MaxInt16 {
				panic("the weights with their offset exceed int16")
			}
			if vals[i] < -128 || vals[i] > 127 {
				a.wWide = true
			}
			for d := len(idx) - 1; d >= 0; d-- {
				if idx[d]++; idx[d] < w.Shape[d] {
					break
				}
				idx[d] = 0
			}
		}
	}()
	if bad != nil {
		return bad
	}
	a.w = &Load{Buf: constBuf(name+"_weights_zp", graph.Int16, w.Shape, vals), Indices: a.w.Indices}
	a.wOff, a.wOffE = 0, nil
	return nil
}

// DSPFoldsWeightZP reports whether the dsp schedules fold the weight zero
// point of node n (int8 weights) into its int16 weights: a fully connected
// layer, a convolution, or a depthwise one of depth multiplier 1 over a
// multiple of four channels (scheduleDepthwiseDSP's channel quads). The
// others run the generic C, which subtracts it in its inner loop (a review
// measured +19% on a six-channel depthwise layer).
func DSPFoldsWeightZP(g *graph.Graph, n *graph.Node) bool {
	x, w := g.In(n, 0), g.In(n, 1)
	if w == nil || w.DType != graph.Int8 {
		return false // uint8 weights that did not shift: the generic C
	}
	switch n.Op {
	case graph.FullyConnected:
		return true
	case graph.Conv2D:
		at, _ := n.Attrs.(*graph.Conv2DAttrs)
		if at == nil || at.Group <= 1 {
			return true
		}
		return x != nil && len(x.Shape) == 4 && len(w.Shape) == 4 && w.Shape[3] == 1 && w.Shape[0] == x.Shape[3] && x.Shape[3]%4 == 0
	}
	return false
}

// parseAccNestAny is parseAccNest for any two int8 operands, each with a
// constant offset (a product of two activations: batch_matmul).
func parseAccNestAny(f *PrimFunc) (*accNest, error) {
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
	xe, we := prod.A, prod.B
	if b, ok := xe.(*Binary); ok && b.Op == OpAdd {
		c, ok := IsConst(b.B)
		if !ok {
			return nil, fmt.Errorf("input offset is not a constant")
		}
		a.xOff, xe = c, b.A
	}
	if b, ok := we.(*Binary); ok && b.Op == OpAdd {
		if c, ok := IsConst(b.B); ok {
			a.wOff, we = c, b.A
		} else if l, ok := b.B.(*Load); ok && l.Buf.Scope == ScopeConst && l.Buf.Data != nil {
			a.wOffE, we = b.B, b.A
		}
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
	if a.x, a.w = load8(xe), load8(we); a.x == nil || a.w == nil {
		return nil, fmt.Errorf("operands are not int8 loads (uint8, float or a weight offset)")
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
// convNest is the accNest of a 2-D convolution with its loops named:
// output n, oh, ow, oc and reduction kh, kw, ic, with their extents.
type convNest struct {
	*accNest
	n, oh, ow, oc, kh, kw, ic *Var
	N, OH, OW, C, KH, KW, Cg  int // C: output channels; Cg: input channels per group
}

// parseConvNest takes a convolution's compute definition apart (false
// when it is not of that form).
func parseConvNest(f *PrimFunc) (*convNest, bool) {
	return parseConvNestW(f, false)
}

// parseConvNestFold is parseConvNest with the weight offset folded into
// the weights (parseAccNestFold): for schedules that pack int16 weights.
func parseConvNestFold(f *PrimFunc) (*convNest, bool) {
	return parseConvNestW(f, true)
}

func parseConvNestW(f *PrimFunc, fold bool) (*convNest, bool) {
	a, err := parseAccNestW(f, fold)
	if err != nil || len(a.outer) != 4 || len(a.red) != 3 {
		return nil, false
	}
	oe, err := a.extents(a.outer)
	if err != nil {
		return nil, false
	}
	re, err := a.extents(a.red)
	if err != nil {
		return nil, false
	}
	return &convNest{accNest: a,
		n: a.outer[0].Var, oh: a.outer[1].Var, ow: a.outer[2].Var, oc: a.outer[3].Var,
		kh: a.red[0].Var, kw: a.red[1].Var, ic: a.red[2].Var,
		N: oe[0], OH: oe[1], OW: oe[2], C: oe[3], KH: re[0], KW: re[1], Cg: re[2]}, true
}

// strides evaluates the affine index e with every loop variable at 0 and
// returns that offset and how much e grows when each of vs goes to 1.
func (c *convNest) strides(e Expr, vs ...*Var) (base int64, step []int64, ok bool) {
	zero := map[*Var]Expr{}
	for _, v := range []*Var{c.n, c.oh, c.ow, c.oc, c.kh, c.kw, c.ic} {
		zero[v] = C(0)
	}
	eval := func(v *Var) (int64, bool) {
		m := merge(zero, nil)
		if v != nil {
			m[v] = C(1)
		}
		return IsConst(SimplifyExpr(SubstituteExpr(e, m)))
	}
	if base, ok = eval(nil); !ok {
		return 0, nil, false
	}
	for _, v := range vs {
		x, ok := eval(v)
		if !ok {
			return 0, nil, false
		}
		step = append(step, x-base)
	}
	return base, step, true
}

// padding reads the top and left padding from the input index's offset at
// the origin, −(padT·W + padL)·ch for an NHWC row of W pixels of ch
// channels; at most 2 each, and none without a padding condition.
func (c *convNest) padding(base int64, W, ch int) (padT, padL int, ok bool) {
	return c.paddingUpTo(base, W, ch, 2)
}

// paddingUpTo is padding with a top and left padding up to maxPad (2 or
// more): past 2, a left padding is told from a top one only on rows wider
// than maxPad.
func (c *convNest) paddingUpTo(base int64, W, ch, maxPad int) (padT, padL int, ok bool) {
	if base > 0 || -base%int64(ch) != 0 {
		return 0, 0, false
	}
	q := int(-base / int64(ch))
	// q = padT·W + padL splits only where padL < W: rows of one pixel
	// with padding, and of two where q could hold a left padding of 2, are
	// left to other schedules.
	if q != 0 && (W == 1 || W == 2 && q%2 == 0) {
		return 0, 0, false
	}
	if q != 0 && maxPad > 2 && W <= maxPad {
		return 0, 0, false
	}
	padT, padL = q/W, q%W
	if padT > maxPad || padL > maxPad || (c.cond == nil && q != 0) {
		return 0, 0, false
	}
	// q alone cannot tell a left padding of W or more from a row of top
	// padding (a review: a 5×5 window over rows of 4 padded 4 on the left
	// read as one row on top; a 3×3 one over rows of 3 padded 3 the same):
	// the padding condition must agree. At the first output, the tap
	// (padT, padL) reads the input, and the taps before it on its row and
	// column read padding.
	if q != 0 {
		in := func(kh, kw int) (bool, bool) {
			if kh < 0 || kh >= c.KH || kw < 0 || kw >= c.KW {
				return false, false
			}
			m := map[*Var]Expr{c.n: C(0), c.oh: C(0), c.ow: C(0), c.oc: C(0), c.ic: C(0), c.kh: C(int64(kh)), c.kw: C(int64(kw))}
			v, ok := IsConst(SimplifyExpr(SubstituteExpr(c.cond, m)))
			return v != 0, ok
		}
		if v, ok := in(padT, padL); !ok || !v {
			return 0, 0, false
		}
		if padL > 0 {
			if v, ok := in(padT, padL-1); !ok || v {
				return 0, 0, false
			}
		}
		if padT > 0 {
			if v, ok := in(padT-1, padL); !ok || v {
				return 0, 0, false
			}
		}
	}
	return padT, padL, true
}

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

// gemmSpec is the channel loop of one block of R activation rows (pixels
// or FC rows) already widened into pair words: for every block of C output
// channels the accumulators start at init, one micro-kernel call adds the
// dot products, and the epilogue requantizes and stores each result.
type gemmSpec struct {
	R, C, U, K4, Cout int
	xb                *Buffer // pair words, row i at i·K4/2
	w                 *Buffer // DSPPackWeights layout
	ocVar             *Var
	init              Expr
	store             *Store
	acc               *Buffer
	pix               func(s Stmt, i int) Stmt // substitutes row i's output position
	fuse              bool                     // one DSPGemmName call per run of blocks where it applies
	w8                bool                     // w is int8 (DSPPackWeights8, knob weights = 8)
	w4                bool                     // w is packed int4 (packBlocks4, knob weights = 4; K4 a multiple of 8; unfused)
	rowSum            *Buffer                  // w4: row i's Σ x at i (IntrDSPSumPairs); its accumulators start 8·Σ x lower
	shift             bool                     // fused ReLU outputs in DSPGemmSName's shared-shift form where it applies
	consts            constCache               // the fused forms' tables and scaled weights, shared by a kernel's specs
	xAbs              int64                    // bound on |xb's values| (0: unknown, no shared-shift form)
	// segs, when set, splits each block's K into consecutive segments of
	// n pair words, one micro-kernel call each over row i at x + i·xs
	// (the accumulators persist across them, so no fused helper): the
	// segment's weights follow the previous segment's within each channel
	// block, as DSPPackWeights lays out K in groups of four. The calls are
	// unrolled: one loop with a computed row measured slower on IC.
	segs []gemmSeg
	// dead marks output channels whose weights are all zero (nil: none):
	// the blocks cover the live ones (channelBlocks), w holds only theirs
	// (packBlocks), and each pixel's dead channels are copied from
	// deadVals (tir/dsp_dead.go).
	dead     []bool
	deadVals *Buffer
	plan     []gemmBlock
	// smallK asks for DSPPwSName where it applies (one pixel, K of 4 or
	// 8, the shared-shift form, no dead channels): knob small_k.
	smallK bool
}

// gemmSeg is one segment of a segmented gemmSpec: its activations start at
// pair word x of xb (row i at x + i·xs), n pair words long.
type gemmSeg struct {
	x     Expr
	xs, n int
}

// gemmBlock is a run of count channel blocks of c channels from channel
// from; at is the packed index of channel from (channels before it that
// have weights in the packed buffer).
type gemmBlock struct{ c, from, count, at int }

// blocks is the spec's channel plan (channelBlocks).
func (g *gemmSpec) blocks() []gemmBlock {
	if g.plan == nil {
		g.plan = channelBlocks(g.Cout, g.C, g.dead)
	}
	return g.plan
}

func (g *gemmSpec) build(name string) Stmt {
	blocks := g.blocks()
	var dead []Stmt
	if g.dead != nil {
		for i := 0; i < g.R; i++ {
			dead = append(dead, g.deadStores(i)...)
		}
	}
	if g.fuse && !g.w4 && (g.segs == nil || g.shift && g.segsFusable()) {
		if s, ok := g.gemmFused(blocks); ok {
			return Block(append([]Stmt{s}, dead...)...)
		}
	}
	kw := g.K4 / 2
	var out []Stmt
	for bi, bl := range blocks {
		c, from := bl.c, bl.from
		accb := NewBuffer(fmt.Sprintf("%s_acc%d", name, bi), I32, []int{g.R * c}, ScopeLocal)
		body := loopK("oc_o", bl.count, Serial, func(oo Expr) Stmt {
			oc0 := Add(Mul(oo, C(int64(c))), C(int64(from)))
			wc0 := Add(Mul(oo, C(int64(c))), C(int64(bl.at))) // its packed index
			var ss []Stmt
			for i := 0; i < g.R; i++ {
				for j := 0; j < c; j++ {
					oc := Add(oc0, C(int64(j)))
					init := SubstituteExpr(g.init, map[*Var]Expr{g.ocVar: oc})
					if g.w4 {
						// The weights are stored plus 8 (tir/dsp_w4.go).
						init = Sub(init, Mul(C(8), &Load{Buf: g.rowSum, Indices: []Expr{C(int64(i))}, Flat: true}))
					}
					ss = append(ss, flatStore(accb, C(int64(i*c+j)), init))
				}
			}
			if g.segs == nil {
				ss = append(ss, &Evaluate{X: Call(g.macName(g.R, c, g.U), I32, ptr(accb, C(0)), ptr(g.xb, C(0)), C(int64(kw)),
					ptr(g.w, Mul(wc0, C(int64(g.wElems())))), C(int64(kw)))})
			}
			// A segment of n words takes n (int16) or 2n (int8) weight
			// elements per channel.
			per, wo := 1, 0
			if g.w8 {
				per = 2
			}
			if g.w4 {
				per = 0 // FC only: never segmented
			}
			for _, sg := range g.segs {
				ss = append(ss, &Evaluate{X: Call(g.macName(g.R, c, g.U), I32, ptr(accb, C(0)), ptr(g.xb, sg.x), C(int64(sg.xs)),
					ptr(g.w, Add(Mul(wc0, C(int64(g.wElems()))), C(int64(c*wo)))), C(int64(sg.n)))})
				wo += per * sg.n
			}
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
	return Block(append(out, dead...)...)
}

// padForUnroll is k4 rounded up (by at most an eighth, in fours) to the
// first length whose micro-kernel unrolls four groups or more (unrollFor),
// where k4 itself allows fewer than four and the unroll wanted is four or
// more: a K whose quarter is a prime takes one group per iteration (a
// review's pointwise layers with K = 116, 124, 148, 172, 188, 236 and 244
// at 1.07 to 1.12 MACs an instruction, their neighbours at 1.27 to 1.34).
// The padding is zero weights and zero activations.
func padForUnroll(want, k4 int) int {
	if want < 4 || unrollFor(want, k4) >= 4 {
		return k4
	}
	for k := k4 + 4; k <= k4+k4/8; k += 4 {
		if unrollFor(want, k) >= 4 {
			return k
		}
	}
	return k4
}

// streamOff reports whether f's knobs set stream 0, which the pipeline sets
// where the build keeps a frame pointer (boards.KeepsFramePointer): the
// one-row-by-four-channel blocks the defaults give wide pointwise and
// multi-row fully connected layers (their six-register weight stream) left
// gcc too few registers ("impossible constraints") at -O1 and -O3 with
// -fdata-sections, and at -O2 with r9 reserved too (session 58 review);
// the blocks before them build. The
// knob is read, not defaulted: absent, it is not recorded in f.Knobs (nor
// in the tuning records and reports, which list the knobs a kernel took).
func streamOff(f *PrimFunc) bool {
	v, ok := f.Knobs["stream"]
	return ok && v == 0
}

// DSPStreamGroups is the fewest groups of four k a helper iteration from
// which emitc streams the 1x4 block's weights through six registers
// (emitc/dsp_ldm6.go; under it the LDMs saved cost less than gcc's spills
// around the stream).
const DSPStreamGroups = 12

// unrollFor is the largest micro-kernel unroll up to want (groups of four
// k per iteration) that divides the K4/2 words.
func unrollFor(want, k4 int) int {
	u := 1
	for _, c := range DSPMacUnrolls {
		if c <= want && (k4/2)%(2*c) == 0 {
			u = c
		}
	}
	return u
}

// convWeights is the constant weight buffer a conv2d compute reads (nil
// when there is none).
func convWeights(f *PrimFunc) *Buffer {
	var w *Buffer
	VisitExprs(f.Body, func(e Expr) {
		if l, ok := e.(*Load); ok && w == nil && l.Buf.Scope == ScopeConst && l.Buf.DType == graph.Int8 && len(l.Buf.Shape) == 4 {
			w = l.Buf
		}
	})
	return w
}

// scheduleConvDSP: a convolution as a GEMM of output pixels × output
// channels with K = KH·KW·Cin. For each block of block_px pixels along a
// row, the windows are widened (with the input offset added, padding
// taps zero) into a local buffer of pair words, a partial im2col; then
// every block of block_oc channels is one micro-kernel call over the
// compile-time packed int16 weights, with the requantization fused into
// its epilogue. Knobs: block_px (1 or 2), block_oc (1, 2 or 4), unroll_k
// (groups of four k per micro-kernel iteration: the largest of
// DSPMacUnrolls up to it that divides K; default 24), partition (bit
// 0: pixel blocks, bit 1: rows; the interior fills the im2col buffer
// without padding checks), weights (16: int16 pair words in flash, the
// default; 8: int8 in flash, widened in registers, tir/dsp_w8.go),
// conv_rows (KxK with Cin % 4 == 0: widen input rows once instead of the
// im2col, tir/dsp_convrows.go).
// floatKernel reports a kernel with a float32 output: the DSP extension's
// integer SIMD does not apply, and the generic target's register blocks
// do (blocks of rows or channels sharing each loaded input; each output
// still sums its terms in order, so the results do not change).
func floatKernel(f *PrimFunc) bool {
	return len(f.Params) > 0 && f.Params[len(f.Params)-1].DType == F32
}

func scheduleConvDSP(f *PrimFunc) (*PrimFunc, error) {
	if floatKernel(f) {
		return scheduleConvBlocked(f)
	}
	// Two pixels by two channels everywhere. (Session 4 made K <= 8 one
	// pixel by four channels, when the two pixels' epilogues spilled; with
	// the LDM blocks and the shared-shift epilogue the tuner measures 2x2
	// faster again on VWW's 48×48 8→16 layer: 479,734 → 450,982.)
	defPx, defOC := 2, 2
	// Up to 24 groups of four k per micro-kernel iteration, the whole K
	// where a helper fits it (KWS's 64-channel pointwise layers, its
	// 10×4 first layer with u10, IC's 3×3 row segments with u12 and u24):
	// no K loop and no bound register, so the helper's table and output
	// pointers stay in registers. Session 7 measured on mps2-an386 KWS
	// 2,647,882 → 2,569,353 at 16 and 2,543,182 with u10, IC 10,530,973 →
	// 10,191,455 with u12 and u24; 32 takes VWW 0.3% lower for 8 KB more
	// flash, so it is left to the tuner. (Fully connected layers default
	// to 32: scheduleFCDSP.)
	_, ocSet := f.Knobs["block_oc"]
	_, uSet := f.Knobs["unroll_k"]
	_, pxSet := f.Knobs["block_px"]
	boc, unroll := knob(f, "block_oc", defOC), knob(f, "unroll_k", 24)
	fuse := knob(f, "gemm_fuse", 1) != 0
	shift := knob(f, "requant_shift", 1) != 0
	wbits := knob(f, "weights", 16)
	if wbits == 4 {
		// Packed int4 weights are a fully connected form only.
		return nil, fmt.Errorf("tir: %s: knob weights = 4 (want 16 or 8: packed int4 weights are for fully connected layers)", f.Name)
	}
	c, ok := parseConvNestFold(f)
	// Weights folded with their zero point beyond int8 pack as int16 only.
	if !ok || c.wWide && wbits != 16 {
		return scheduleConvBlocked(f)
	}
	a := c.accNest
	nV, ohV, owV, ocV, khV, kwV, icV := c.n, c.oh, c.ow, c.oc, c.kh, c.kw, c.ic
	N, OH, OW, Cout, KH, KW, Cg := c.N, c.OH, c.OW, c.C, c.KH, c.KW, c.Cg
	// A one-channel input (a grayscale image, a spectrogram) under a
	// square window: every output channel is one window over the one
	// input plane, a depthwise layer with a multiplier of Cout, which the
	// planar form runs over the plane's pair words replicated to Cout
	// planes (knob c1_planar, default 1). The im2col form staged nine
	// bytes a pixel for 3×3 windows, padded to 16: a review's grayscale
	// first layer at 0.36 MACs an instruction against 0.71 for RGB. The
	// default where it measured faster, 3×3 windows at stride 1 (a 32×32
	// map to 4 to 36 channels on mps2-an386: 0.55 to 0.86 times the
	// im2col form's instructions); at stride 2 and with 5×5 windows the
	// planar form's cost an output is the im2col form's (0.8 to 1.17
	// times), and the tuner tries it.
	if xs := a.x.Buf.Shape; Cg == 1 && len(xs) == 4 && xs[3] == 1 && Cout%4 == 0 && KH == KW && (KH == 3 || KH == 5 || KH == 7) {
		def := 0
		if _, st, ok := c.strides(flatIndex(a.x.Buf, a.x.Indices), ohV, owV); ok && KH == 3 && st[0] == int64(xs[2]) && st[1] == 1 {
			def = 1
		}
		if knob(f, "c1_planar", def) != 0 {
			if g, ok := c.dwPlanarAny(f, fastRequant(a.store)); ok {
				return g, nil
			}
		}
	}
	K := KH * KW * Cg
	K4 := (K + 3) / 4 * 4
	// A pointwise layer over 128 or 256 and more input channels (int16
	// weights): one pixel by four channels, 32 groups of four k a helper
	// iteration, where the 1x4 block streams its weights through six
	// registers (emitc/dsp_ldm6.go: 1.55 MACs an instruction against the
	// 3x2 block's 1.5), unless the knobs say otherwise. Measured on
	// mps2-an386 against the 3x2 and 2x2 defaults: 6×6 576→96 −13.4%,
	// 3×3 960→160 −13.7%, 12×12 384→64 −6.5%, 12×12 256→64 −7.7%, 6×6
	// 320→128 −5.2%, 128 channels −1.5% to −1.9%; K of 144 to 192 lost
	// (+0.3% to +6.3%), and 64 or fewer lost 1.5% to 2.2%. Session 57
	// (MobileNetV2's projection layers; tune found the form first).
	// (The stream needs twelve groups a helper iteration: a K whose
	// groups 32 does not divide into twelve or more, 272 say, keeps its
	// blocks.)
	if !streamOff(f) && KH == 1 && KW == 1 && wbits == 16 && Cg%4 == 0 && (K4 == 128 || K4 >= 256) && unrollFor(32, padForUnroll(32, K4)) >= DSPStreamGroups {
		if !ocSet {
			boc, f.Knobs["block_oc"] = 4, 4
		}
		if !uSet {
			unroll, f.Knobs["unroll_k"] = 32, 32
		}
		if !pxSet {
			defPx = 1
		}
	}
	if Cg%4 != 0 {
		// The staged rows are padded anyway: knob pad_k rounds K up so the
		// micro-kernel can unroll (zero weights, zero activations).
		if p := knob(f, "pad_k", 8); p > 4 && p%4 == 0 {
			K4 = (K + p - 1) / p * p
		}
	} else {
		K4 = padForUnroll(unroll, K4)
	}
	// Three pixels by two channels (DSPMacBlocks' 3x2, emitc's
	// writeMacLDM3) where its LDM form applies: 24 MACs in 16
	// instructions against 2x2's 16 in 11, and a block's pointer work
	// shared by six outputs instead of four. It holds fourteen registers
	// at its peak, so how it fares depends on what else gcc keeps live in
	// the layer: the row form (conv_rows, channels a multiple of four)
	// gains everywhere measured; the
	// im2col and pointwise forms from K4 = 48 (VWW's K = 32 layers lose
	// 4-8% to spills of the weight pointer, its K = 60, 64 and 108 ones
	// gain 6-8%), and only where the rows' LDRD offsets fit. The tuner
	// tries 3 elsewhere (but in three-channel layers: below). Measured on
	// mps2-an386: KWS 2,570,991 → 2,501,371, VWW 4,596,895 → 4,546,977,
	// IC 10,167,174 → 9,874,648.
	if wbits == 16 && boc == 2 {
		if stride, _, padL, ok := c.rowsEligible(); ok && Cg%4 == 0 && knob(f, "conv_rows", 1) != 0 && c.rowsFit(f, stride, padL) {
			// Where the rows' LDRD offsets fit (xs = stride·Cg/2 words):
			// beyond, the 3x2 block takes its C form, slower than the 2x2
			// asm (a review: 256 channels at stride 1, 12,061,107 against
			// 8,815,586 instructions).
			// A gathered column (rows_gather, a 1-D layer's default) is
			// the rows of K = KH·KW·Cg int16 each (xs = K/2 words): a
			// review's 1×10 32→32 layer took the C form at 0.94 MACs an
			// instruction, 1.29 in pairs.
			if KH == 1 && knob(f, "rows_gather", 1) != 0 {
				if u := unrollFor(unroll, K); 4*K+8*(u-1) <= 1020 {
					defPx = 3
				}
			} else if u := unrollFor(unroll, KW*Cg); 4*stride*Cg+8*(u-1) <= 1020 {
				defPx = 3
			}
		} else if u := unrollFor(unroll, K4); K4 >= 48 && Cg%4 == 0 && 4*K4+8*(u-1) <= 1020 {
			defPx = 3
		}
	}
	// Dead channels between live ones split a row-form layer's channel
	// blocks into helper calls of their own, each inlined, and at -O2 gcc
	// then found no registers for the 2- and 3-pixel blocks' LDM asm
	// ("'asm' operand has impossible constraints": a review's 16→8 layer
	// with channels 2, 5 and 6 dead). One-pixel blocks build there, and
	// measured fastest (31,223 instructions against the im2col form's
	// 37,150).
	if _, _, _, ok := c.rowsEligible(); ok && defPx > 1 && a.w.Buf.Data != nil && knob(f, "skip_dead", 1) != 0 &&
		deadSplitsLive(deadChannels(a.w.Buf.Data.I, Cout, K)) {
		defPx = 1
	}
	bpx := knob(f, "block_px", defPx)
	if bpx == 3 && Cg == 3 {
		// The three-channel row form (dsp_widen3_s8) with three-pixel
		// blocks leaves gcc too few registers where the build keeps a
		// frame pointer ("impossible constraints" at -O2
		// -fno-omit-frame-pointer: TestDSPAsmCompilesEverywhere): pairs.
		bpx = 2
	}
	// Row and column partition pays where the im2col fill stages every
	// element (a channel count that is not a multiple of 4: the interior
	// copies run without padding checks); elsewhere it only adds code.
	part := 0
	if Cg%4 != 0 {
		part = 3
	}
	part = knob(f, "partition", part)
	w := a.w.Buf
	if !isBlock(bpx, boc) || !rowMajor(w) || len(w.Shape) != 4 || w.Shape[0] != Cout || w.Len() != Cout*K ||
		usesVar(a.x, ocV) || (a.cond != nil && usesVar(a.cond, icV)) {
		return scheduleConvBlocked(f)
	}
	for i, v := range []*Var{ocV, khV, kwV, icV} {
		if a.w.Indices[i] != Expr(v) {
			return scheduleConvBlocked(f)
		}
	}
	// Winograd's transformed weights are int16 by nature: int8 weights
	// (a flash choice) win over it.
	if padT, padL, ok := c.winoEligible(); ok && knob(f, "winograd", 0) != 0 && wbits != 8 {
		if g, ok := c.winograd(f, padT, padL, unroll); ok {
			return g, nil
		}
	}
	// Channels with all-zero weights store a constant (tir/dsp_dead.go).
	var dd deadInfo
	if knob(f, "skip_dead", 1) != 0 {
		dd = newDeadInfo(f.Name, w.Data.I, Cout, K, packRequant(fastRequant(a.store)), a.acc, a.init, ocV)
	}
	// conv_rows is on wherever the form applies. (Until session 7 it was
	// off at stride 2 above 32 output channels, where the ring keeps only
	// KH − 2 of its rows and KH micro-kernel calls per block cost per
	// channel; with the segmented helper, accumulators in registers across
	// the rows, IC's 32→64 stride-2 layer measured 901,235 → 860,178
	// instructions with it on mps2-an386.)
	// With int8 weights (a flash budget's layers) the row form has no
	// segmented helper with its accumulators in registers (a MAC call, then
	// the requantization, per block): the im2col form's fused GEMM is
	// faster there (IC's 16×16 32→32 layer 3,638,402 → 2,490,147
	// instructions on mps2-an386; int16 weights' row form: 1,659,135). Not
	// for three channels (an RGB first layer): there the im2col form's code
	// is 2.6 KB larger, and VWW's smallest build no longer fit 108 KB (its
	// first layer 1,300,150 → 949,075 instructions is the tuner's to take).
	defRows := 1
	if wbits == 8 && Cg%4 == 0 {
		defRows = 0
	}
	// A 3×3 RGB layer gathers each window into 14 pair words
	// (IntrDSPCol33C3, knob col33) for the im2col GEMM, where the rows
	// form reads 18 per pixel (tir/dsp_col33.go).
	rs33, use33 := c.col33Eligible()
	if use33 && wbits == 16 && a.w.Buf.Data != nil && len(a.w.Buf.Data.I) == Cout*27 {
		if use33 = knob(f, "col33", 1) != 0; use33 {
			defRows = 0
		}
	} else {
		use33 = false
	}
	// The ring of KH widened rows is on the kernel's stack: past the
	// target's (PrimFunc.StackBytes) the layer takes the im2col form
	// below, whose column holds a block's windows only. (It went to the
	// next target, the generic C, at 2.8 times the instructions: a
	// review's 3×3 32→32 layer 80 pixels wide, 23,227,065 → 9,564,116;
	// and 1-D layers of 128 channels over 64 frames.)
	if stride, padT, padL, ok := c.rowsEligible(); ok && knob(f, "conv_rows", defRows) != 0 && c.rowsFit(f, stride, padL) {
		wd, cp := w.Data.I, c.rowChannels()
		if cp != Cg {
			wd = padChannels(wd, Cg, cp)
		}
		kp := KH * KW * cp
		wr, err := dspWeights(f, wd, Cout, kp, kp, boc, wbits, dd.dead)
		if err != nil {
			return nil, err
		}
		// rows_gather: copy each block's KH window segments into one column
		// (one fused channel loop over it instead of the segmented helper).
		// It paid on the RGB first layers while three segments meant KH
		// micro-kernel calls per channel block (VWW's conv0 −13%); since
		// the segmented helper keeps its accumulators in registers
		// (dsp_gemm3_s8ps), it costs there too (VWW's conv0 693,843 →
		// 775,454, IC's 541,229 → 599,692 on mps2-an386), so it is off
		// and left to the tuner. A 1-D convolution (KH = 1) has one
		// segment, which the gather copies once: there it pays (a Conv1d
		// 3→8, k5: 18,531 → 12,452 instructions), and is the default.
		defGather := 0
		if KH == 1 {
			defGather = 1
		}
		gather := knob(f, "rows_gather", defGather) != 0
		return c.convRows(f, stride, padT, padL, wr, packRequant(fastRequant(a.store)), bpx, boc, unroll, wbits == 8, gather, fuse, shift, dd), nil
	}
	wd, kper := w.Data.I, K
	if use33 {
		wd, kper, K4 = col33Weights(wd, Cout), 28, 28
	}
	wp, err := dspWeights(f, wd, Cout, kper, K4, boc, wbits, dd.dead)
	if err != nil {
		return nil, err
	}
	xFlat := flatIndex(a.x.Buf, a.x.Indices)
	outStore := a.store
	xs := a.x.Buf.Shape
	pointwise := KH == 1 && KW == 1 && c.pixelIndexed(xFlat) && len(xs) == 4 && xs[1] == OH && xs[2] == OW && xs[3] == Cg
	// small_k (default 1): a pointwise layer with K = 4 or 8 runs one pixel
	// at a time through DSPPwSName, every channel's weights, bias and
	// requantization words from one table (VWW's 48×48 8→16 layer:
	// 450,978 → 357,569 instructions on mps2-an386, VWW 4,662,007 →
	// 4,568,598).
	// It is offered only where the helper will take the layer (the shared
	// shift must hold for every channel): elsewhere the pixel blocks stay.
	smallK := false
	if pointwise && Cg%4 == 0 && (K4 == 4 || K4 == 8) && wbits == 16 && shift && fuse && dd.dead == nil {
		probe := &gemmSpec{R: 1, C: boc, U: unrollFor(unroll, K4), K4: K4, Cout: Cout, w: wp, ocVar: ocV, init: a.init,
			store: packRequant(fastRequant(a.store)), acc: a.acc, fuse: fuse, shift: shift, xAbs: a.xAbs()}
		if probe.pwApplies() {
			if smallK = knob(f, "small_k", 1) != 0; smallK {
				bpx = 1
			}
		}
	}
	if pointwise && Cg%4 == 0 && OW%bpx != 0 && OH > 1 {
		// A pointwise convolution whose rows do not split into whole pixel
		// blocks runs over the OH·OW pixels as one row (its input and output
		// are contiguous runs of pixels, every tap inside), so only the last
		// block is short (KWS's 25×5 maps: 62 pairs and one single instead
		// of 50 pairs and 25 singles).
		so := flatIndex(a.store.Buf, a.store.Indices)
		if base, step, ok := c.strides(so, ohV, owV); ok && base == 0 && step[0] == int64(OW)*step[1] {
			an := *a
			an.cond, a = nil, &an
			zoh := map[*Var]Expr{ohV: C(0)}
			outStore = &Store{Buf: a.store.Buf, Indices: []Expr{SimplifyExpr(SubstituteExpr(so, zoh))},
				Value: SubstituteExpr(a.store.Value, zoh), Flat: true}
			xFlat = SimplifyExpr(SubstituteExpr(xFlat, zoh))
			OW, OH = OH*OW, 1
		}
	}
	store := packRequant(fastRequant(outStore))
	u := unrollFor(unroll, K4)
	consts := constCache{}
	mk := func(R int, owAt func(i int) Expr) Stmt {
		col := NewBuffer(f.Name+"_col", I32, []int{R * K4 / 2}, ScopeLocal)
		var fill []Stmt
		merged := pointwise && Cg%4 == 0 && K4 == Cg && R*Cg >= 128
		if merged {
			// The block's pixels are adjacent in the input: one widening
			// of R·Cg values (the column is their concatenation), where
			// that is long enough for its loop to cost less than the calls
			// (VWW's 16-channel pairs: two straight widenings of 16 values
			// 341,516 instructions, one loop over 32 345,309). Every
			// tap of a pointwise window is inside (its input has the
			// output's height and width and each pixel reads its own), so
			// a bounds condition, if the nest has one, holds.
			m := map[*Var]Expr{owV: owAt(0), khV: C(0), kwV: C(0), icV: C(0)}
			fill = append(fill, dspWiden(col, C(0), a.x.Buf, SimplifyExpr(SubstituteExpr(xFlat, m)), R*Cg, a.xOff))
		}
		for i := 0; i < R && !merged; i++ {
			if use33 {
				m := map[*Var]Expr{owV: owAt(i), khV: C(0), kwV: C(0), icV: C(0)}
				fill = append(fill, c.col33Fill(col, i*K4/2, SimplifyExpr(SubstituteExpr(xFlat, m)), rs33, map[*Var]Expr{owV: owAt(i)}))
				continue
			}
			if Cg%4 == 0 {
				// Words past K (padForUnroll) are zeros.
				for k := K; k < K4; k += 2 {
					fill = append(fill, flatStore(col, C(int64((i*K4+k)/2)), C(0)))
				}
				fill = append(fill, loopK("kh", KH, Serial, func(kh Expr) Stmt {
					return loopK("kw", KW, Serial, func(kw Expr) Stmt {
						m := map[*Var]Expr{owV: owAt(i), khV: kh, kwV: kw, icV: C(0)}
						dst := Add(Mul(Add(Mul(kh, C(int64(KW))), kw), C(int64(Cg/2))), C(int64(i*K4/2)))
						cp := dspWiden(col, dst, a.x.Buf, SimplifyExpr(SubstituteExpr(xFlat, m)), Cg, a.xOff)
						if a.cond == nil {
							return cp
						}
						zero := loopK("t", Cg/2, Serial, func(t Expr) Stmt { return flatStore(col, Add(dst, t), C(0)) })
						return &IfThenElse{Cond: SubstituteExpr(a.cond, m), Then: cp, Else: zero}
					})
				}))
				continue
			}
			if rowK := KW * Cg; rowK%4 == 0 && a.x.Buf.DType == graph.Int8 {
				if _, st, ok := c.strides(xFlat, c.kw, c.ic); ok && st[0] == int64(Cg) && st[1] == 1 {
					fill = append(fill, c.widenKernelRows(f.Name, col, i*K4/2, K, K4, rowK, a, xFlat, map[*Var]Expr{owV: owAt(i)}))
					continue
				}
			}
			// Channel counts that are not a multiple of 4 go through an
			// int8 staging row padded with the input zero point (which
			// widens to 0).
			stage := NewBuffer(f.Name+"_row", a.x.Buf.DType, []int{K4}, ScopeLocal)
			zp := &IntImm{T: a.x.Buf.DType, V: -a.xOff}
			st := loopK("kh", KH, Serial, func(kh Expr) Stmt {
				return loopK("kw", KW, Serial, func(kw Expr) Stmt {
					m := map[*Var]Expr{owV: owAt(i), khV: kh, kwV: kw}
					dst := func(ic Expr) Expr { return Add(Mul(Add(Mul(kh, C(int64(KW))), kw), C(int64(Cg))), ic) }
					cp := loopK("ic", Cg, Serial, func(ic Expr) Stmt {
						m2 := map[*Var]Expr{icV: ic}
						for k, v := range m {
							m2[k] = v
						}
						return flatStore(stage, dst(ic), SubstituteExpr(a.x, m2))
					})
					if a.cond == nil {
						return cp
					}
					pad := loopK("ic", Cg, Serial, func(ic Expr) Stmt { return flatStore(stage, dst(ic), zp) })
					return &IfThenElse{Cond: SubstituteExpr(a.cond, m), Then: cp, Else: pad}
				})
			})
			var tail []Stmt
			for k := K; k < K4; k++ {
				tail = append(tail, flatStore(stage, C(int64(k)), zp))
			}
			fill = append(fill, &Allocate{Buf: stage, Body: Block(st, Block(tail...),
				dspWiden(col, C(int64(i*K4/2)), stage, C(0), K4, a.xOff))})
		}
		g := &gemmSpec{R: R, C: boc, U: u, K4: K4, Cout: Cout, xb: col, w: wp, ocVar: ocV, init: a.init, store: store, acc: a.acc, fuse: fuse, w8: wbits == 8,
			shift: shift, xAbs: a.xAbs(), consts: consts,
			dead: dd.dead, deadVals: dd.vals, smallK: smallK,
			pix: func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{owV: owAt(i)}) }}
		return &Allocate{Buf: col, Body: Block(Block(fill...), g.build(f.Name))}
	}
	rowBody := pixelBlocks(OW, bpx, mk)
	g := *f
	g.Body = &For{Var: nV, Min: C(0), Extent: C(int64(N)), Body: &For{Var: ohV, Min: C(0), Extent: C(int64(OH)), Body: Block(rowBody...)}}
	// A 1x1 stride-1 unpadded convolution may write its output over its
	// input: each block of pixels is widened into col before any of its
	// outputs is stored. With Cout <= Cin output pixel p covers only input
	// pixels <= p, so pixels go in increasing order; with Cout > Cin it
	// covers only input pixels >= p, so where the plan asks for it (and
	// only there) pixels go in decreasing order.
	if pointwise {
		switch {
		case Cout <= Cg:
			g.InPlaceSafe = true
		case f.WantInPlace:
			var rev []Stmt
			for i := OW - 1; i >= OW-OW%bpx; i-- {
				rev = append(rev, mk(1, func(int) Expr { return C(int64(i)) }))
			}
			if full := OW / bpx; full > 0 {
				v := NewVar("ow_r")
				rev = append(rev, &For{Var: v, Min: C(0), Extent: C(int64(full)),
					Body: mk(bpx, func(i int) Expr { return Add(Mul(Sub(C(int64(full-1)), v), C(int64(bpx))), C(int64(i))) })})
			}
			nR, ohR := NewVar("n_r"), NewVar("oh_r")
			body := Substitute(Block(rev...), map[*Var]Expr{nV: Sub(C(int64(N-1)), nR), ohV: Sub(C(int64(OH-1)), ohR)})
			g.Body = &For{Var: nR, Min: C(0), Extent: C(int64(N)), Body: &For{Var: ohR, Min: C(0), Extent: C(int64(OH)), Body: body}}
			g.InPlaceSafe = true
		}
	}
	g.DeadChannels = dd.count()
	h := &g
	if part&1 != 0 && a.cond != nil {
		h = PartitionLoop(h, "ow_o")
	}
	if part&2 != 0 && a.cond != nil {
		h = PartitionLoop(h, ohV.Name)
	}
	return h, nil
}

// pixelBlocks is one output row of OW pixels as a loop over whole blocks of
// bpx pixels (mk(bpx, ...), variable ow_o) and single-pixel blocks for the
// rest; mk builds a block of R pixels whose i-th is at owAt(i).
func pixelBlocks(OW, bpx int, mk func(R int, owAt func(i int) Expr) Stmt) []Stmt {
	var out []Stmt
	if full := OW / bpx; full > 0 {
		v := NewVar("ow_o")
		out = append(out, &For{Var: v, Min: C(0), Extent: C(int64(full)),
			Body: mk(bpx, func(i int) Expr { return Add(Mul(v, C(int64(bpx))), C(int64(i))) })})
	}
	i := OW - OW%bpx
	// After blocks of three, the rest in pairs first.
	for ; bpx > 2 && OW-i >= 2; i += 2 {
		at := i
		out = append(out, mk(2, func(k int) Expr { return C(int64(at + k)) }))
	}
	for ; i < OW; i++ {
		at := i
		out = append(out, mk(1, func(int) Expr { return C(int64(at)) }))
	}
	return out
}

// pixelIndexed reports whether the input index x is exactly
// ((n·OH + oh)·OW + ow)·Cg + ic: a 1x1 window at the output pixel itself.
func (c *convNest) pixelIndexed(x Expr) bool {
	base, step, ok := c.strides(x, c.n, c.oh, c.ow, c.ic, c.oc)
	want := []int64{int64(c.OH * c.OW * c.Cg), int64(c.OW * c.Cg), int64(c.Cg), 1, 0}
	return ok && base == 0 && slices.Equal(step, want)
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

// scheduleFCDSP: fully connected as a GEMM of input rows × output rows.
// Each input row is widened into pair words once and reused for every
// block of block_oc output rows; weights are packed as int16 pairs at
// compile time (or kept int8 with knob weights = 8). Knobs block_rows (1
// or 2), block_oc (1, 2 or 4), unroll_k (default 32: the whole K of a
// 128-input layer in one iteration; AD 207,882 → 198,215 instructions on
// mps2-an386, where 16 measured higher than 8), weights
// (16, 8, or 4: packed int4 where every weight is in [−8, 7], tir/dsp_w4.go,
// in the unfused form; int8 otherwise).
func scheduleFCDSP(f *PrimFunc) (*PrimFunc, error) {
	if floatKernel(f) {
		return scheduleFCBlocked(f)
	}
	a, err := parseAccNestFold(f)
	if err != nil || len(a.outer) != 2 || len(a.red) != 1 || a.cond != nil {
		return scheduleFCGeneric(f)
	}
	oe, err := a.extents(a.outer)
	if err != nil {
		return scheduleFCGeneric(f)
	}
	rows, Nout := oe[0], oe[1]
	K := int(mustConst(a.red[0].Extent))
	K4 := (K + 3) / 4 * 4
	rV, jV, kV := a.outer[0].Var, a.outer[1].Var, a.red[0].Var
	// Blocks of four channels for one input row (every FC of the MLPerf
	// models); with rows to pair, 2x2 (but where K >= 64: below): the
	// 2x4 block's eight accumulators
	// spill (a keyword transformer's 49-row FCs on mps2-an386: 64→64
	// 277,104 → 172,718 instructions, 64→128 484,287 → 325,596, 128→64
	// 531,738 → 318,216).
	ocDef, brDef := 4, 2
	if rows >= 2 {
		ocDef = 2
	}
	wbits := knob(f, "weights", 16)
	if wbits == 4 {
		// Packed int4 where every weight is in [−8, 7], the bias is a
		// constant and the kernel's partial sums stay in int32 (int4Fits);
		// int8 weights otherwise (the knob says which).
		k8 := (K + 7) / 8 * 8
		initAbs, ok := constAbs(a.init)
		if d := a.w.Buf.Data; d != nil && ok && a.init.Type() == I32 && Int4Range(d.I) && int4Fits(k8, a.xAbs(), initAbs) {
			K4 = k8
			// One row by four channels: the int4 kernel's one-row asm
			// (emitc/dsp_w4.go). A keyword transformer's 49-row 64→128→64
			// FCs on mps2-an386: 1,538,831 instructions in 2x2 blocks (the
			// C form), 1,155,280 in 1x4.
			brDef, ocDef = DSPW4Block[0], DSPW4Block[1]
		} else {
			wbits, f.Knobs["weights"] = 8, 8
		}
	}
	if a.wWide && wbits != 16 {
		// Weights folded with their zero point beyond int8: int16 words only.
		return scheduleFCGeneric(f)
	}
	// Rows to pair, int16 weights and K of 64 or more: one row by four
	// channels too, the block that streams its weights through six
	// registers from twelve groups of four k (emitc/dsp_ldm6.go). Measured
	// on mps2-an386 against the 2x2 blocks: 49 rows 64→128 −2.4%, 128→64
	// −4.3%, 16 rows 256→64 −6.3%, 8 rows 512→128 −13.7%, 2 rows 640→128
	// −13.6%, 3 rows 96→30 −4.1%; K of 48 was mixed (→64 −2.8%, →10
	// +1.8%) and 32 lost (+2.6%). Session 57.
	if !streamOff(f) && rows >= 2 && wbits == 16 && K4 >= 64 && unrollFor(32, padForUnroll(32, K4)) >= DSPStreamGroups {
		brDef, ocDef = 1, 4
	}
	br, bc, unroll := knob(f, "block_rows", brDef), knob(f, "block_oc", ocDef), knob(f, "unroll_k", 32)
	if wbits != 4 && K == K4 {
		K4 = padForUnroll(unroll, K4)
	}
	fuse := knob(f, "gemm_fuse", 1) != 0
	shift := knob(f, "requant_shift", 1) != 0
	if rows < br {
		br = 1
	}
	w := a.w.Buf
	if !isBlock(br, bc) || !rowMajor(w) || !rowMajor(a.x.Buf) || a.w.Indices[0] != Expr(jV) || a.w.Indices[1] != Expr(kV) ||
		a.x.Indices[0] != Expr(rV) || a.x.Indices[1] != Expr(kV) || w.Len() != Nout*K {
		return scheduleFCGeneric(f)
	}
	store := packRequant(fastRequant(a.store))
	var dd deadInfo
	if knob(f, "skip_dead", 1) != 0 {
		dd = newDeadInfo(f.Name, w.Data.I, Nout, K, store, a.acc, a.init, jV)
	}
	wp, err := dspWeights(f, w.Data.I, Nout, K, K4, bc, wbits, dd.dead)
	if err != nil {
		return nil, err
	}
	u := unrollFor(unroll, K4)
	if wbits == 4 {
		u = unrollFor4(unroll, K4)
	}
	consts := constCache{}
	mk := func(R int, rowAt func(i int) Expr) Stmt {
		xw := NewBuffer(f.Name+"_xw", I32, []int{R * K4 / 2}, ScopeLocal)
		var fill []Stmt
		for i := 0; i < R; i++ {
			if K%4 == 0 {
				// Words past K (padForUnroll, int4's eights) are zeros.
				fill = append(fill, dspWiden(xw, C(int64(i*K4/2)), a.x.Buf, Mul(rowAt(i), C(int64(K))), K, a.xOff))
				for k := K; k < K4; k += 2 {
					fill = append(fill, flatStore(xw, C(int64((i*K4+k)/2)), C(0)))
				}
				continue
			}
			stage := NewBuffer(f.Name+"_row", a.x.Buf.DType, []int{K4}, ScopeLocal)
			cp := loopK("k", K, Serial, func(k Expr) Stmt {
				return flatStore(stage, k, SubstituteExpr(a.x, map[*Var]Expr{rV: rowAt(i), kV: k}))
			})
			var tail []Stmt
			for k := K; k < K4; k++ {
				tail = append(tail, flatStore(stage, C(int64(k)), &IntImm{T: a.x.Buf.DType, V: -a.xOff}))
			}
			fill = append(fill, &Allocate{Buf: stage, Body: Block(cp, Block(tail...), dspWiden(xw, C(int64(i*K4/2)), stage, C(0), K4, a.xOff))})
		}
		g := &gemmSpec{R: R, C: bc, U: u, K4: K4, Cout: Nout, w: wp, ocVar: jV, init: a.init, store: store, acc: a.acc, xb: xw, fuse: fuse, w8: wbits == 8, w4: wbits == 4,
			shift: shift, xAbs: a.xAbs(), consts: consts,
			pix: func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{rV: rowAt(i)}) }, dead: dd.dead, deadVals: dd.vals}
		if g.w4 {
			// Each row's Σ x, once for every channel block.
			g.rowSum = NewBuffer(f.Name+"_xsum", I32, []int{R}, ScopeLocal)
			for i := 0; i < R; i++ {
				fill = append(fill, flatStore(g.rowSum, C(int64(i)), Call(IntrDSPSumPairs, I32, ptr(xw, C(int64(i*K4/2))), C(int64(K4/2)))))
			}
			return &Allocate{Buf: xw, Body: &Allocate{Buf: g.rowSum, Body: Block(Block(fill...), g.build(f.Name))}}
		}
		return &Allocate{Buf: xw, Body: Block(Block(fill...), g.build(f.Name))}
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
	g.DeadChannels = dd.count()
	return &g, nil
}

// fastRequant rewrites the int8 output stage
// int8(min(max(requant(acc, m, s) + zp, lo), hi)) as dsp_requant_s8 when
// every shift is a right shift (s in [−31, −1]) and every multiplier is
// non-negative; per-channel shift tables become tables of k0 and e − 1 at
// compile time. Other stores are returned unchanged.
func fastRequant(st *Store) *Store { return fastRequantAs(st, IntrDSPRequant, nil) }

// requantTabKey names the k0 and e1 tables fastRequantAs made from one
// shift table for one folded zero point.
type requantTabKey struct {
	Shift *Buffer
	ZK    int64
}

// fastRequantAs is fastRequant calling intrinsic name (IntrDSPRequant or
// its portable twin IntrRequantFast); tabs, when not nil, keeps the k0 and
// e1 tables made for each shift table so that the stores of one kernel
// share them.
func fastRequantAs(st *Store, name string, tabs map[requantTabKey][2]*Buffer) *Store {
	cast, ok := st.Value.(*Cast)
	if !ok || cast.T != graph.Int8 {
		return st
	}
	mn, ok := cast.X.(*Binary)
	if !ok || mn.Op != OpMin {
		return st
	}
	mx, ok := mn.A.(*Binary)
	if !ok || mx.Op != OpMax {
		return st
	}
	// The zero point is added, or subtracted once simplified.
	add, ok := mx.A.(*Binary)
	if !ok || add.Op != OpAdd && add.Op != OpSub {
		return st
	}
	rq, ok := add.A.(*Intrinsic)
	if !ok || rq.Name != IntrRequant {
		return st
	}
	zp, ok1 := IsConst(add.B)
	if add.Op == OpSub {
		zp = -zp
	}
	lo, ok2 := IsConst(mx.B)
	hi, ok3 := IsConst(mn.B)
	if !ok1 || !ok2 || !ok3 || lo < -128 || hi > 127 || lo > hi {
		return st
	}
	// The zero point folds into k0 when every shift is at most 22.
	fold := func(e int64) bool { return e <= 22 }
	var k0, e1 Expr
	zr := zp
	switch s := rq.Args[2].(type) {
	case *IntImm:
		if s.V > -1 || s.V < -31 {
			return st
		}
		zk := int64(0)
		if fold(-s.V) {
			zk, zr = zp, 0
		}
		k0, e1 = &IntImm{T: I64, V: dspRequantK0(-s.V, zk)}, C(-s.V-1)
	case *Load:
		if s.Buf.Scope != ScopeConst || s.Buf.Data == nil {
			return st
		}
		all := true
		for _, v := range s.Buf.Data.I {
			if v > -1 || v < -31 {
				return st
			}
			all = all && fold(-v)
		}
		zk := int64(0)
		if all {
			zk, zr = zp, 0
		}
		key := requantTabKey{s.Buf, zk}
		t, ok := tabs[key]
		if !ok {
			ks := make([]int64, len(s.Buf.Data.I))
			es := make([]int64, len(ks))
			for i, v := range s.Buf.Data.I {
				ks[i], es[i] = dspRequantK0(-v, zk), -v-1
			}
			t = [2]*Buffer{constBuf(s.Buf.Name+"_k0", I64, s.Buf.Shape, ks), constBuf(s.Buf.Name+"_e1", I32, s.Buf.Shape, es)}
			if tabs != nil {
				tabs[key] = t
			}
		}
		k0 = &Load{Buf: t[0], Indices: s.Indices, Flat: s.Flat}
		e1 = &Load{Buf: t[1], Indices: s.Indices, Flat: s.Flat}
	default:
		return st
	}
	switch m := rq.Args[1].(type) {
	case *IntImm:
		if m.V < 0 {
			return st
		}
	case *Load:
		if m.Buf.Scope != ScopeConst || m.Buf.Data == nil || slices.Min(m.Buf.Data.I) < 0 {
			return st
		}
	default:
		return st
	}
	v := Call(name, I32, rq.Args[0], rq.Args[1], k0, e1, C(zr), C(lo), C(hi))
	return &Store{Buf: st.Buf, Indices: st.Indices, Value: CastTo(graph.Int8, v), Flat: st.Flat}
}

func mustConst(e Expr) int64 {
	v, _ := IsConst(e)
	return v
}
