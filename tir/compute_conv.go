package tir

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	register(graph.Conv2D, computeConv2D)
	register(graph.FullyConnected, computeFC)
}

// requantEpilogue is the integer output stage shared by conv, FC and matmul:
// clamp(requant(acc, m[c], shift[c]) + zp_out) stored as the output type.
// With RequantFloat (ONNX QLinear) the accumulator is scaled in float32 and
// rounded half to even; with a raw int32 output (no quantization) it is
// stored as is.
type requantEpilogue struct {
	mult, shift *Buffer // per channel, or nil with m0/s0 immediate
	m0, s0      int64
	// smmulr (narrow64): a 64-bit accumulator that provably fits int32
	// requantizes as IntrSMMULR with these multipliers (per channel, or nil
	// with sm0 immediate).
	smmulr     bool
	sm         *Buffer
	sm0        int64
	fscale     *Buffer // RequantFloat: per-channel float scale, or nil with f0
	f0         float32
	float, raw bool
	zp, lo, hi int64
}

func (k *kctx) requantFor(in, w, out *graph.Tensor, act graph.Activation, channels int, mode graph.RequantMode) (*requantEpilogue, error) {
	if out.DType == graph.Int32 && out.Quant == nil {
		return &requantEpilogue{raw: true}, nil
	}
	sIn, _, err := quantParams(in)
	if err != nil {
		return nil, err
	}
	sOut, zOut, err := quantParams(out)
	if err != nil {
		return nil, err
	}
	lo, hi, err := actRange(act, out)
	if err != nil {
		return nil, err
	}
	ep := &requantEpilogue{zp: int64(zOut), lo: lo, hi: hi, float: mode == graph.RequantFloat}
	scale := func(c int) float32 {
		if w == nil || w.Quant == nil || len(w.Quant.Scale) == 0 {
			return 1
		}
		s, _ := w.Quant.At(min(c, len(w.Quant.Scale)-1))
		return s
	}
	base := k.n.Name
	if ep.float {
		fs := make([]float32, channels)
		same := true
		for c := range fs {
			fs[c] = sIn * scale(c) / sOut
			same = same && fs[c] == fs[0]
		}
		if same {
			ep.f0 = fs[0]
		} else {
			ep.fscale = constF32(base+"_scale", []int{channels}, fs)
		}
		return ep, nil
	}
	ms := make([]int64, channels)
	ss := make([]int64, channels)
	same := true
	// A fully connected layer with weights of one scale, and a batch
	// matmul, multiply the scales in float32 first, as TFLite's kernels do
	// (qmath.ProductMultiplier); the graph interpreter does the same.
	product := (k.n.Op == graph.FullyConnected || k.n.Op == graph.BatchMatMul) && (w == nil || w.Quant == nil || len(w.Quant.Scale) <= 1)
	for c := 0; c < channels; c++ {
		m, s := QuantizeMultiplier(float64(sIn) * float64(scale(c)) / float64(sOut))
		if product {
			pm, ps := qmath.ProductMultiplier(sIn, scale(c), sOut)
			m, s = pm, int32(ps)
		}
		ms[c], ss[c] = int64(m), int64(s)
	}
	// A channel whose scale is zero (an all-zero filter) requantizes to the
	// zero point whatever its shift; TFLite gives it shift 0, which would
	// keep the whole layer off the right-shift-only fast paths. It takes
	// the first live channel's shift instead.
	if live := slices.IndexFunc(ms, func(m int64) bool { return m != 0 }); live >= 0 {
		for c := range ms {
			if ms[c] == 0 {
				ss[c] = ss[live]
			}
		}
	}
	for c := range ms {
		same = same && ms[c] == ms[0] && ss[c] == ss[0]
	}
	if same {
		ep.m0, ep.s0 = ms[0], ss[0]
		return ep, nil
	}
	ep.mult = constBuf(base+"_multiplier", I32, []int{channels}, ms)
	ep.shift = constBuf(base+"_shift", I32, []int{channels}, ss)
	return ep, nil
}

// check64 refuses a 16x8 layer's 64-bit requantization with a shift of 8
// or more (interp's requantizer.check64).
func (ep *requantEpilogue) check64() error {
	if ep.raw || ep.float {
		return nil
	}
	shifts := []int64{ep.s0}
	if ep.shift != nil {
		shifts = ep.shift.Data.I
	}
	for _, s := range shifts {
		if err := interp.CheckShift64(s); err != nil {
			return err
		}
	}
	return nil
}

func (ep *requantEpilogue) apply(acc Expr, c Expr, outT DType) Expr {
	if ep.raw {
		return CastTo(outT, acc)
	}
	var v Expr
	if ep.float {
		var s Expr = F(ep.f0)
		if ep.fscale != nil {
			s = At(ep.fscale, c)
		}
		v = Add(Call(IntrRoundEven, I32, Mul(CastTo(F32, acc), s)), C(ep.zp))
	} else {
		var m, s Expr = C(ep.m0), C(ep.s0)
		if ep.mult != nil {
			m, s = At(ep.mult, c), At(ep.shift, c)
		}
		switch {
		case acc.Type() == I64 && ep.smmulr:
			var mp Expr = C(ep.sm0)
			if ep.sm != nil {
				mp = At(ep.sm, c)
			}
			v = Add(Call(IntrSMMULR, I32, acc, mp), C(ep.zp))
		case acc.Type() == I64:
			v = Add(Requant64(acc, m, s), C(ep.zp))
		default:
			v = Add(Requant(acc, m, s), C(ep.zp))
		}
	}
	return CastTo(outT, Clamp(v, C(ep.lo), C(ep.hi)))
}

// narrow64 lets a 16x8 layer's 64-bit requantization run on 32 bits where
// that is exact: every output channel's sum, its weights' magnitudes (runs
// of run values, one per channel, in w) times 2^15 plus its bias's, fits
// int32, and every channel's shift gives t = 15 − shift in [16, 32]. Then
// TFLite's (acc·m16 + 2^(t−1)) >> t is IntrSMMULR(acc, m16·2^(32−t)) (dw16.go
// has the identity). Otherwise the epilogue keeps IntrRequant64.
func (ep *requantEpilogue) narrow64(name string, w []int64, run int, bias *Buffer) {
	if ep == nil || ep.raw || ep.float || run <= 0 || len(w)%run != 0 {
		return
	}
	n := len(w) / run
	if bias != nil && (bias.Data == nil || len(bias.Data.I) != n) {
		return
	}
	mps := make([]int64, n)
	same := true
	for c := 0; c < n; c++ {
		var sum int64
		for _, v := range w[c*run : (c+1)*run] {
			sum += max(v, -v)
		}
		if bias != nil {
			sum = sum*32768 + max(bias.Data.I[c], -bias.Data.I[c])
		} else {
			sum *= 32768
		}
		if sum > math.MaxInt32 {
			return
		}
		m, sh := ep.m0, ep.s0
		if ep.mult != nil {
			if len(ep.mult.Data.I) != n {
				return
			}
			m, sh = ep.mult.Data.I[c], ep.shift.Data.I[c]
		}
		m16 := qmath.Reduced16(int32(m))
		t := 15 - sh
		if t < 16 || t > 32 {
			return
		}
		mps[c] = m16 << (32 - t)
		if mps[c] > math.MaxInt32 || mps[c] < math.MinInt32 {
			return
		}
		same = same && mps[c] == mps[0]
	}
	ep.smmulr = true
	if same {
		ep.sm0 = mps[0]
	} else {
		ep.sm = constBuf(name+"_smmulr", I32, []int{n}, mps)
	}
}

// weightOffset returns −zero point of the weights for output channel c (0
// for TFLite's symmetric weights), as a constant or a per-channel table.
func (k *kctx) weightOffset(w *graph.Tensor, channels int) func(c Expr) Expr {
	if w.Quant == nil || len(w.Quant.ZeroPoint) == 0 {
		return func(Expr) Expr { return nil }
	}
	zs := make([]int64, channels)
	same := true
	for c := range zs {
		_, z := w.Quant.At(min(c, max(len(w.Quant.ZeroPoint), len(w.Quant.Scale))-1))
		zs[c] = -int64(z)
		same = same && zs[c] == zs[0]
	}
	if same {
		if zs[0] == 0 {
			return func(Expr) Expr { return nil }
		}
		return func(Expr) Expr { return C(zs[0]) }
	}
	buf := constBuf(k.n.Name+"_weight_offset", I32, []int{channels}, zs)
	return func(c Expr) Expr { return At(buf, c) }
}

// convSetup is what a convolution's compute definition takes from its node:
// the operands, the dimensions and, for int8, the requantization epilogue,
// the input offset (−zero point) and the per-channel weight offsets.
type convSetup struct {
	xt, wt, yt                             *graph.Tensor
	x, w, bias, y                          *Buffer
	N, H, W, Cin, Cout, KH, KW, Cg, OH, OW int
	group, coPerG                          int
	intMode                                bool
	ep                                     *requantEpilogue
	inOff                                  int64
	wOff                                   func(Expr) Expr
	accT                                   DType
}

func (k *kctx) convSetup(groups int, act graph.Activation, mode graph.RequantMode) (*convSetup, error) {
	xt, wt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if xt == nil || wt == nil {
		return nil, k.errorf("needs an input and weights")
	}
	if !wt.IsConst() {
		// (ONNX allows weights fed at run time; the backend's
		// test_conv_with_* models do it.)
		name, prod := wt.Name, k.g.Producers()
		for p := prod[name]; p != nil && (p.Op == graph.Transpose || p.Op == graph.Reshape) && len(p.Inputs) > 0; p = prod[name] {
			name = p.Inputs[0] // the model's name, before the layout change
		}
		return nil, k.errorf("not supported: its weights %q are computed at run time (a graph input or another node's output); mcugen compiles constant weights only", name)
	}
	if len(xt.Shape) != 4 || len(wt.Shape) != 4 {
		return nil, k.errorf("input %v and weights %v must be 4-D", xt.Shape, wt.Shape)
	}
	c := &convSetup{xt: xt, wt: wt, x: k.in(0), w: k.in(1), bias: k.in(2), wOff: func(Expr) Expr { return nil }, accT: F32}
	if c.bias != nil && c.bias.Scope != ScopeConst {
		return nil, k.errorf("bias must be constant")
	}
	c.y, c.yt = k.output()
	c.N, c.H, c.W, c.Cin = xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	c.Cout, c.KH, c.KW, c.Cg = wt.Shape[0], wt.Shape[1], wt.Shape[2], wt.Shape[3]
	c.OH, c.OW = c.yt.Shape[1], c.yt.Shape[2]
	c.group = pos1(groups)
	if c.Cg*c.group != c.Cin || c.Cout%c.group != 0 {
		return nil, k.errorf("weights %v do not match %d input channels in %d groups", wt.Shape, c.Cin, c.group)
	}
	c.coPerG = c.Cout / c.group
	c.intMode = isInt(xt)
	if c.intMode {
		var err error
		if c.ep, err = k.requantFor(xt, wt, c.yt, act, c.Cout, mode); err != nil {
			return nil, k.errorf("%v", err)
		}
		_, zIn, err := quantParams(xt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		c.inOff = -int64(zIn)
		c.wOff = k.weightOffset(wt, c.Cout)
		c.accT = I32
		if interp.Wide16x8(k.g, k.n) {
			c.accT = I64
			if err := c.ep.check64(); err != nil {
				return nil, k.errorf("%v", err)
			}
			if c.inOff == 0 && c.wOff(C(0)) == nil && wt.Data != nil && xt.DType == graph.Int16 {
				c.ep.narrow64(k.n.Name, wt.Data.I, c.KH*c.KW*c.Cg, c.bias)
			}
		}
	}
	return c, nil
}

// init is an output channel's starting accumulator: the folded bias (with
// the input offset in it) when there is one, else the bias, else zero.
func (c *convSetup) init(k *kctx, oc Expr) Expr {
	switch {
	case k.folded != nil:
		return At(k.folded, oc)
	case c.bias != nil && c.accT == I64:
		return CastTo(I64, At(c.bias, oc))
	case c.bias != nil:
		return ld(c.bias, oc)
	}
	return Imm(c.accT, 0)
}

// product is one tap: input (n, ih, iw, channel ic of oc's group) times
// weight (oc, kh, kw, ic), each with its int8 offset.
func (c *convSetup) product(n, ih, iw, oc, kh, kw, ic Expr) Expr {
	ci := ic
	if c.group > 1 {
		ci = Add(Mul(Div(oc, C(int64(c.coPerG))), C(int64(c.Cg))), ic)
	}
	xv, wv := ld(c.x, n, ih, iw, ci), ld(c.w, oc, kh, kw, ic)
	if c.intMode {
		if c.inOff != 0 {
			xv = Add(xv, C(c.inOff))
		}
		if o := c.wOff(oc); o != nil {
			wv = Add(wv, o)
		}
	}
	if c.accT == I64 {
		// int16 x int8 fits 32 bits; the sum is 64-bit (a 16x8 layer).
		return CastTo(I64, Mul(xv, wv))
	}
	return Mul(xv, wv)
}

// result is an output channel's value from its accumulator: requantized
// for int8, the fused activation for float.
func (c *convSetup) result(acc, oc Expr, act graph.Activation) Expr {
	if c.intMode {
		return c.ep.apply(acc, oc, c.yt.DType)
	}
	return floatAct(act, acc)
}

// computeConv2D: Y[n,oh,ow,oc] = act(B[oc] + Σ_{kh,kw,ic} X[n, ih, iw, g·Cg+ic]·W[oc,kh,kw,ic])
// with ih = oh·sh − pt + kh·dh (out-of-image taps skipped), requantized for int8.
func computeConv2D(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.Conv2DAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.Conv2DAttrs")
	}
	cs, err := k.convSetup(a.Group, a.Act, a.Requant)
	if err != nil {
		return nil, err
	}
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	H, W, KH, KW, OH, OW := cs.H, cs.W, cs.KH, cs.KW, cs.OH, cs.OW
	// Without padding every tap is inside the image, so Σ(x+o)·w =
	// Σx·w + o·Σw: the input offset folds into the bias at compile time.
	noPad := a.Pad.Top == 0 && a.Pad.Left == 0 && (OH-1)*sh+(KH-1)*dh < H && (OW-1)*sw+(KW-1)*dw < W
	if cs.intMode && noPad && cs.inOff != 0 {
		folded, err := k.foldedBias(cs.bias, cs.wt, cs.Cout, cs.inOff)
		if err != nil {
			return nil, err
		}
		cs.inOff, k.folded = 0, folded
	}
	// A 16x8 convolution gathers each pixel's window of the group's
	// channels into a local int16 patch (zeros where it leaves the image:
	// the input's zero point is 0) and takes each output channel's sum as
	// one dot_s16s8 call over it (SMLALD pairs on a DSP core).
	// A 16x8 depthwise convolution whose sums fit 32 bits runs a row at a
	// time through IntrDW16Row (dw16.go).
	if rows, ok := k.dw16Rows(cs, a); ok {
		return rows, nil
	}
	patch := cs.KH * cs.KW * cs.Cg
	if cs.intMode && cs.xt.DType == graph.Int16 && cs.wt.DType == graph.Int8 && patch >= minDotS16S8 && cs.inOff == 0 && cs.wOff(C(0)) == nil {
		w16 := k.s16s8Weights(k.n.Name+"_w16", cs.wt.Data.I, cs.wt.Shape, patch)
		quad := fitsDot32(cs.wt.Data.I, patch, 32768)
		col := NewBuffer(k.n.Name+"_patch", graph.Int16, []int{patch}, ScopeLocal)
		k.f.Op = "conv2d"
		if cs.group == cs.Cin && cs.Cg == 1 && cs.group > 1 {
			k.f.Op = "depthwise_conv2d"
		}
		// A 1x1 convolution whose every tap is inside the input reads the
		// pixel's channels where they are: no patch.
		direct := KH == 1 && KW == 1 && noPad
		return Loops([]string{"n", "oh", "ow", "g"}, []int{cs.N, OH, OW, cs.group}, func(o []Expr) Stmt {
			n, oh, ow, g := o[0], o[1], o[2], o[3]
			ocOf := func(j Expr) Expr { return Add(Mul(g, C(int64(cs.coPerG))), j) }
			outs := func(x *Ptr) Stmt {
				return k.s16s8Outs(k.n.Name, cs.coPerG, quad, x, w16, func(j Expr) Expr { return Mul(ocOf(j), C(int64(patch))) },
					int64(patch), C(int64(patch)), ocOf, func(oc, dot Expr) Stmt {
						return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
							// (the int32 path: no overflow, CheckAccumulation)
							return Block(Put(acc, Add(cs.init(k, oc), CastTo(cs.accT, dot))), Put(cs.y, cs.result(At(acc), oc, a.Act), n, oh, ow, oc))
						})
					})
			}
			if direct {
				ih, iw := Mul(oh, C(int64(sh))), Mul(ow, C(int64(sw)))
				at := Add(Mul(Add(Mul(Add(Mul(n, C(int64(H))), ih), C(int64(W))), iw), C(int64(cs.Cin))), Mul(g, C(int64(cs.Cg))))
				return outs(&Ptr{Buf: cs.x, Index: at})
			}
			fill := Loops([]string{"kh", "kw", "ic"}, []int{KH, KW, cs.Cg}, func(r []Expr) Stmt {
				kh, kw, ic := r[0], r[1], r[2]
				ih := Add(Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top))), Mul(kh, C(int64(dh))))
				iw := Add(Sub(Mul(ow, C(int64(sw))), C(int64(a.Pad.Left))), Mul(kw, C(int64(dw))))
				at := Add(Mul(Add(Mul(kh, C(int64(KW))), kw), C(int64(cs.Cg))), ic)
				inside := AllOf(GE(ih, C(0)), LT(ih, C(int64(H))), GE(iw, C(0)), LT(iw, C(int64(W))))
				ci := Add(Mul(g, C(int64(cs.Cg))), ic)
				return &IfThenElse{Cond: inside, Then: Put(col, At(cs.x, n, ih, iw, ci), at), Else: Put(col, Imm(graph.Int16, 0), at)}
			})
			return &Allocate{Buf: col, Body: Block(fill, outs(&Ptr{Buf: col, Index: C(0)}))}
		}), nil
	}
	body := Loops([]string{"n", "oh", "ow", "oc"}, []int{cs.N, OH, OW, cs.Cout}, func(o []Expr) Stmt {
		n, oh, ow, oc := o[0], o[1], o[2], o[3]
		return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
			red := Loops([]string{"kh", "kw", "ic"}, []int{KH, KW, cs.Cg}, func(r []Expr) Stmt {
				kh, kw, ic := r[0], r[1], r[2]
				ih := Add(Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top))), Mul(kh, C(int64(dh))))
				iw := Add(Sub(Mul(ow, C(int64(sw))), C(int64(a.Pad.Left))), Mul(kw, C(int64(dw))))
				upd := Put(acc, Add(At(acc), cs.product(n, ih, iw, oc, kh, kw, ic)))
				return If(AllOf(GE(ih, C(0)), LT(ih, C(int64(H))), GE(iw, C(0)), LT(iw, C(int64(W)))), upd)
			})
			return Block(Put(acc, cs.init(k, oc)), red, Put(cs.y, cs.result(At(acc), oc, a.Act), n, oh, ow, oc))
		})
	})
	k.f.Op = "conv2d"
	if cs.group == cs.Cin && cs.Cg == 1 && cs.group > 1 {
		k.f.Op = "depthwise_conv2d"
	}
	return body, nil
}

// computeFC: Y[r, j] = act(B[j] + Σ_k X[r, k]·W[j, k]), requantized for int8.
func computeFC(k *kctx) (Stmt, error) {
	a, _ := k.n.Attrs.(*graph.FullyConnectedAttrs)
	if a == nil {
		a = &graph.FullyConnectedAttrs{}
	}
	xt, wt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if xt == nil || wt == nil || !wt.IsConst() || len(wt.Shape) != 2 {
		return nil, k.errorf("needs an input and constant 2-D weights")
	}
	N, K := wt.Shape[0], wt.Shape[1]
	if K == 0 || xt.NumElements()%K != 0 {
		return nil, k.errorf("input %v does not split into rows of %d", xt.Shape, K)
	}
	rows := xt.NumElements() / K
	// View the input and output as [rows, K] and [rows, N].
	x := k.in(0)
	if x.Scope == ScopeConst {
		return nil, k.errorf("constant input is not supported")
	}
	viewAs(x, []int{rows, K})
	w, bias := k.in(1), k.in(2)
	y, yt := k.output()
	viewAs(y, []int{rows, N})
	intMode := isInt(xt)
	var ep *requantEpilogue
	var inOff int64
	wOff := func(Expr) Expr { return nil }
	accT := F32
	if intMode {
		var err error
		if ep, err = k.requantFor(xt, wt, yt, a.Act, N, a.Requant); err != nil {
			return nil, k.errorf("%v", err)
		}
		_, zIn, err := quantParams(xt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		inOff = -int64(zIn)
		wOff = k.weightOffset(wt, N)
		accT = I32
		if interp.Wide16x8(k.g, k.n) {
			accT = I64
			if err := ep.check64(); err != nil {
				return nil, k.errorf("%v", err)
			}
			if inOff == 0 && wOff(C(0)) == nil && wt.Data != nil && xt.DType == graph.Int16 {
				ep.narrow64(k.n.Name, wt.Data.I, K, bias)
			}
		}
		if inOff != 0 {
			if k.folded, err = k.foldedBias(bias, wt, N, inOff); err != nil {
				return nil, err
			}
			inOff = 0
		}
	}
	if !intMode {
		if band := bandedFC(k, wt, x, bias, y, rows, N, K, a.Act); band != nil {
			return band, nil
		}
	}
	// A 16x8 layer's rows are inner products of int16 inputs and int8
	// weights: one dot_s16s8 call each (SMLALD pairs on a DSP core).
	var w16 *Buffer
	if intMode && xt.DType == graph.Int16 && wt.DType == graph.Int8 && K >= minDotS16S8 && inOff == 0 && wOff(C(0)) == nil {
		w16 = k.s16s8Weights(k.n.Name+"_w16", wt.Data.I, []int{N, K}, K)
	}
	// init is output j's starting accumulator: the folded bias, the bias
	// (64-bit where the sum is), or zero.
	init := func(j Expr) Expr {
		switch {
		case k.folded != nil:
			return At(k.folded, j)
		case bias != nil && accT == I64:
			return CastTo(I64, At(bias, j))
		case bias != nil:
			return ld(bias, j)
		}
		return Imm(accT, 0)
	}
	if w16 != nil {
		// Four output channels a call where the weights keep the sums
		// inside int32 (fitsDot32), sharing the row's loads.
		quad := fitsDot32(wt.Data.I, K, 32768)
		k.f.Op = "fully_connected"
		return Loop("r", rows, func(r Expr) Stmt {
			return k.s16s8Outs(k.n.Name, N, quad, &Ptr{Buf: x, Index: Mul(r, C(int64(K)))}, w16, func(j Expr) Expr { return Mul(j, C(int64(K))) },
				int64(K), C(int64(K)), func(j Expr) Expr { return j }, func(j, dot Expr) Stmt {
					return Scalar("acc", accT, func(acc *Buffer) Stmt {
						// (the int32 path: no overflow, CheckAccumulation)
						return Block(Put(acc, Add(init(j), CastTo(accT, dot))), Put(y, ep.apply(At(acc), j, yt.DType), r, j))
					})
				})
		}), nil
	}
	body := Loops([]string{"r", "j"}, []int{rows, N}, func(o []Expr) Stmt {
		r, j := o[0], o[1]
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			red := Loop("k", K, func(kk Expr) Stmt {
				return fcTerm(acc, x, w, r, kk, j, intMode, inOff, wOff, accT)
			})
			var res Expr
			if intMode {
				res = ep.apply(At(acc), j, yt.DType)
			} else {
				res = floatAct(a.Act, At(acc))
			}
			return Block(Put(acc, init(j)), red, Put(y, res, r, j))
		})
	})
	k.f.Op = "fully_connected"
	return body, nil
}

// fcTerm adds one product x[r, k]·w[j, k] to acc, each with its int8
// offset in integer mode, widened to a 64-bit accumulator's type.
func fcTerm(acc, x, w *Buffer, r, kk, j Expr, intMode bool, inOff int64, wOff func(Expr) Expr, accT DType) Stmt {
	xv, wv := ld(x, r, kk), ld(w, j, kk)
	if intMode {
		if inOff != 0 {
			xv = Add(xv, C(inOff))
		}
		if o := wOff(j); o != nil {
			wv = Add(wv, o)
		}
	}
	if accT == I64 {
		return Put(acc, Add(At(acc), CastTo(I64, Mul(xv, wv))))
	}
	return Put(acc, Add(At(acc), Mul(xv, wv)))
}

// bandedFC lowers a float FC whose constant weights graph.WeightRuns
// finds banded as a sum over each output's run only: the runs' weights
// packed end to end, with a table of (first k, offset, length) per output.
// It returns nil (the dense loop) for other weights. Each output still
// adds its terms in k order; the zeros it skips add nothing (but for an
// infinite or NaN input times zero, which the dense sum turns into NaN).
func bandedFC(k *kctx, wt *graph.Tensor, x, bias, y *Buffer, rows, N, K int, act graph.Activation) Stmt {
	runs := graph.WeightRuns(wt)
	if runs == nil || len(runs) != N {
		return nil
	}
	var packed []float32
	table := make([]int64, 0, 3*N)
	for j, r := range runs {
		table = append(table, int64(r[0]), int64(len(packed)), int64(r[1]))
		for _, v := range wt.Data.F[j*K+r[0] : j*K+r[0]+r[1]] {
			packed = append(packed, float32(v))
		}
	}
	if len(packed) == 0 {
		packed = []float32{0} // no zero-length constant
	}
	wp := constF32(k.n.Name+"_band", []int{len(packed)}, packed)
	tab := constBuf(k.n.Name+"_runs", I32, []int{N, 3}, table)
	k.f.Op = "fully_connected_band"
	return Loops([]string{"r", "j"}, []int{rows, N}, func(o []Expr) Stmt {
		r, j := o[0], o[1]
		return Scalar("acc", F32, func(acc *Buffer) Stmt {
			var init Expr = F(0)
			if bias != nil {
				init = ld(bias, j)
			}
			return Let("lo", At(tab, j, C(0)), func(lo Expr) Stmt {
				return Let("off", At(tab, j, C(1)), func(off Expr) Stmt {
					t := NewVar("t")
					sum := &For{Var: t, Min: C(0), Extent: At(tab, j, C(2)),
						Body: Put(acc, Add(At(acc), Mul(ld(x, r, Add(lo, t)), At(wp, Add(off, t)))))}
					return Block(Put(acc, init), sum, Put(y, floatAct(act, At(acc)), r, j))
				})
			})
		})
	})
}

// viewAs reshapes a row-major buffer in place (same storage, new shape).
func viewAs(b *Buffer, shape []int) {
	b.Shape = append([]int{}, shape...)
	b.Strides = graph.Strides(shape)
}

func init() { register(graph.BatchMatMul, computeBatchMatMul) }

// matView addresses tensor shape s as [batch..., rows, cols] for the output's
// batch shape: broadcast batch dimensions get stride 0, adj swaps the last two.
func matView(b *Buffer, batch []int, adj bool) *Buffer {
	s := b.Shape
	r := len(s)
	st := graph.Strides(s)
	v := b
	if b.Scope == ScopeConst {
		c := *b
		v = &c
	}
	rows, cols := s[r-2], s[r-1]
	rs, cs := st[r-2], st[r-1]
	if adj {
		rows, cols, rs, cs = cols, rows, cs, rs
	}
	v.Shape = append(append([]int{}, batch...), rows, cols)
	v.Strides = make([]int, len(batch)+2)
	off := len(batch) - (r - 2)
	for i := range batch {
		if j := i - off; j >= 0 && s[j] != 1 {
			v.Strides[i] = st[j]
		}
	}
	v.Strides[len(batch)], v.Strides[len(batch)+1] = rs, cs
	return v
}

// computeBatchMatMul: Y[b, i, j] = Σ_k A[b, i, k]·B[b, k, j] with numpy
// broadcasting of the batch dimensions; int8 requantized per column of B.
func computeBatchMatMul(k *kctx) (Stmt, error) {
	a, _ := k.n.Attrs.(*graph.BatchMatMulAttrs)
	if a == nil {
		a = &graph.BatchMatMulAttrs{}
	}
	at, bt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if at == nil || bt == nil || len(at.Shape) < 2 || len(bt.Shape) < 2 {
		return nil, k.errorf("needs two inputs of rank >= 2")
	}
	y, yt := k.output()
	if len(yt.Shape) < 2 {
		return nil, k.errorf("output %v has rank < 2", yt.Shape)
	}
	batch := yt.Shape[:len(yt.Shape)-2]
	ab, bb := k.in(0), k.in(1)
	if ab == bb && ab.Scope == ScopeParam {
		// One tensor read two ways (x·xᵀ): matView reshapes a parameter
		// in place, so the second read gets a parameter of its own for
		// the same tensor (the second view overwrote the first: review
		// finding).
		bb = k.secondParam(bt)
	}
	A := matView(ab, batch, a.AdjX)
	Bm := matView(bb, batch, a.AdjY)
	M, K := A.Shape[len(batch)], A.Shape[len(batch)+1]
	K2, N := Bm.Shape[len(batch)], Bm.Shape[len(batch)+1]
	if K != K2 || yt.Shape[len(batch)] != M || yt.Shape[len(batch)+1] != N {
		return nil, k.errorf("shapes %v x %v -> %v do not agree", at.Shape, bt.Shape, yt.Shape)
	}
	k.f.Op = "batch_matmul"
	intMode := isInt(at)
	accT := F32
	var ep *requantEpilogue
	var aOff int64
	bOff := func(Expr) Expr { return nil }
	perCol := false
	if intMode {
		accT = I32
		colAxis := len(bt.Shape) - 1
		if a.AdjY {
			colAxis--
		}
		perCol = bt.Quant.PerAxis() && bt.Quant.Axis == colAxis
		channels := 1
		if perCol {
			channels = N
			bOff = k.weightOffset(bt, N)
		} else if bt.Quant != nil {
			_, z := bt.Quant.At(0)
			if z != 0 {
				bOff = func(Expr) Expr { return C(-int64(z)) }
			}
		}
		var err error
		if ep, err = k.requantFor(at, bt, yt, graph.ActNone, channels, a.Requant); err != nil {
			return nil, k.errorf("%v", err)
		}
		if interp.Wide16x8(k.g, k.n) {
			// TFLite Micro's int16 BATCH_MATMUL: a 64-bit accumulator.
			accT = I64
			if err := ep.check64(); err != nil {
				return nil, k.errorf("%v", err)
			}
		}
		_, za, err := quantParams(at)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		aOff = -int64(za)
	}
	names := []string{}
	for i := range batch {
		names = append(names, fmt.Sprintf("b%d", i))
	}
	names = append(names, "i", "j")
	dims := append(append([]int{}, batch...), M, N)
	return Loops(names, dims, func(o []Expr) Stmt {
		bi := o[:len(batch)]
		i, j := o[len(batch)], o[len(batch)+1]
		idx := func(p, q Expr) []Expr { return append(append([]Expr{}, bi...), p, q) }
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			red := Loop("k", K, func(kk Expr) Stmt {
				av, bv := ld(A, idx(i, kk)...), ld(Bm, idx(kk, j)...)
				if intMode {
					av = Add(av, C(aOff))
					if o := bOff(j); o != nil {
						bv = Add(bv, o)
					}
				}
				if accT == I64 {
					// int16 · int16 fits int32; the sum is 64-bit.
					return Put(acc, Add(At(acc), CastTo(I64, Mul(av, bv))))
				}
				return Put(acc, Add(At(acc), Mul(av, bv)))
			})
			res := At(acc)
			if intMode {
				c := Expr(C(0))
				if perCol {
					c = j
				}
				res = ep.apply(res, c, yt.DType)
			}
			return Block(Put(acc, Imm(accT, 0)), red, Put(y, res, idx(i, j)...))
		})
	}), nil
}

// foldedBias is bias[c] + inOff·Σ_k (w[c, k] − zw[c]) for every output
// channel c of weights w (channels first), computed at compile time.
func (k *kctx) foldedBias(bias *Buffer, wt *graph.Tensor, channels int, inOff int64) (*Buffer, error) {
	per := wt.NumElements() / channels
	vals := make([]int64, channels)
	for c := 0; c < channels; c++ {
		var zw int64
		if wt.Quant != nil && len(wt.Quant.ZeroPoint) > 0 {
			_, z := wt.Quant.At(min(c, max(len(wt.Quant.ZeroPoint), len(wt.Quant.Scale))-1))
			zw = int64(z)
		}
		var sum int64
		for _, v := range wt.Data.I[c*per : (c+1)*per] {
			sum += v - zw
		}
		v := inOff * sum
		if bias != nil {
			v += bias.Data.I[c]
		}
		if v > math.MaxInt32 || v < math.MinInt32 {
			return nil, k.errorf("folded bias of channel %d overflows int32", c)
		}
		vals[c] = v
	}
	return constBuf(k.n.Name+"_bias", I32, []int{channels}, vals), nil
}
