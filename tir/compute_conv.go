package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	register(graph.Conv2D, computeConv2D)
	register(graph.FullyConnected, computeFC)
}

// requantEpilogue is the int8 output stage shared by conv and FC:
// clamp(requant(acc, m[c], shift[c]) + zp_out) stored as the output type.
type requantEpilogue struct {
	mult, shift *Buffer // per channel, or nil with m0/s0 immediate
	m0, s0      int64
	zp, lo, hi  int64
}

func (k *kctx) requantFor(in, w, out *graph.Tensor, act graph.Activation, channels int) (*requantEpilogue, error) {
	sIn, _, err := quantParams(in)
	if err != nil {
		return nil, err
	}
	sOut, zOut, err := quantParams(out)
	if err != nil {
		return nil, err
	}
	if w.Quant == nil || len(w.Quant.Scale) == 0 {
		return nil, fmt.Errorf("weights %q have no quantization parameters", w.Name)
	}
	lo, hi, err := actRange(act, out)
	if err != nil {
		return nil, err
	}
	ep := &requantEpilogue{zp: int64(zOut), lo: lo, hi: hi}
	ms := make([]int64, channels)
	ss := make([]int64, channels)
	same := true
	for c := 0; c < channels; c++ {
		sw, _ := w.Quant.At(c)
		m, s := QuantizeMultiplier(float64(sIn) * float64(sw) / float64(sOut))
		ms[c], ss[c] = int64(m), int64(s)
		same = same && ms[c] == ms[0] && ss[c] == ss[0]
	}
	if same {
		ep.m0, ep.s0 = ms[0], ss[0]
		return ep, nil
	}
	base := k.n.Name
	ep.mult = constBuf(base+"_multiplier", I32, []int{channels}, ms)
	ep.shift = constBuf(base+"_shift", I32, []int{channels}, ss)
	return ep, nil
}

func (ep *requantEpilogue) apply(acc Expr, c Expr, outT DType) Expr {
	var m, s Expr = C(ep.m0), C(ep.s0)
	if ep.mult != nil {
		m, s = At(ep.mult, c), At(ep.shift, c)
	}
	v := Add(Requant(acc, m, s), C(ep.zp))
	return CastTo(outT, Clamp(v, C(ep.lo), C(ep.hi)))
}

// weightZP returns the weights' zero point (0 for TFLite's symmetric weights).
func weightZP(w *graph.Tensor) (int64, error) {
	if w.Quant == nil {
		return 0, nil
	}
	if len(w.Quant.ZeroPoint) > 1 {
		for _, z := range w.Quant.ZeroPoint {
			if z != w.Quant.ZeroPoint[0] {
				return 0, fmt.Errorf("per-channel weight zero points are not supported")
			}
		}
	}
	_, z := w.Quant.At(0)
	return int64(z), nil
}

// computeConv2D: Y[n,oh,ow,oc] = act(B[oc] + Σ_{kh,kw,ic} X[n, ih, iw, g·Cg+ic]·W[oc,kh,kw,ic])
// with ih = oh·sh − pt + kh·dh (out-of-image taps skipped), requantized for int8.
func computeConv2D(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.Conv2DAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.Conv2DAttrs")
	}
	xt, wt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if xt == nil || wt == nil || !wt.IsConst() {
		return nil, k.errorf("needs an input and constant weights")
	}
	if len(xt.Shape) != 4 || len(wt.Shape) != 4 {
		return nil, k.errorf("input %v and weights %v must be 4-D", xt.Shape, wt.Shape)
	}
	x, w, bias := k.in(0), k.in(1), k.in(2)
	if bias != nil && bias.Scope != ScopeConst {
		return nil, k.errorf("bias must be constant")
	}
	y, yt := k.output()
	N, H, W, Cin := xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	Cout, KH, KW, Cg := wt.Shape[0], wt.Shape[1], wt.Shape[2], wt.Shape[3]
	OH, OW := yt.Shape[1], yt.Shape[2]
	group := pos1(a.Group)
	if Cg*group != Cin || Cout%group != 0 {
		return nil, k.errorf("weights %v do not match %d input channels in %d groups", wt.Shape, Cin, group)
	}
	coPerG := Cout / group
	sh, sw := pos1(a.Stride[0]), pos1(a.Stride[1])
	dh, dw := pos1(a.Dilation[0]), pos1(a.Dilation[1])
	intMode := isInt(xt)
	var ep *requantEpilogue
	var inOff, wOff int64
	accT := F32
	if intMode {
		if a.Requant != graph.RequantFixedPoint {
			return nil, k.errorf("float requantization (ONNX QLinear) is not supported yet")
		}
		var err error
		if ep, err = k.requantFor(xt, wt, yt, a.Act, Cout); err != nil {
			return nil, k.errorf("%v", err)
		}
		_, zIn, err := quantParams(xt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		inOff = -int64(zIn)
		wz, err := weightZP(wt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		wOff = -wz
		accT = I32
	}
	k.f.Knobs = map[string]int{}
	body := Loops([]string{"n", "oh", "ow", "oc"}, []int{N, OH, OW, Cout}, func(o []Expr) Stmt {
		n, oh, ow, oc := o[0], o[1], o[2], o[3]
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			var init Expr = Imm(accT, 0)
			if bias != nil {
				init = ld(bias, oc)
			}
			red := Loops([]string{"kh", "kw", "ic"}, []int{KH, KW, Cg}, func(r []Expr) Stmt {
				kh, kw, ic := r[0], r[1], r[2]
				ih := Add(Sub(Mul(oh, C(int64(sh))), C(int64(a.Pad.Top))), Mul(kh, C(int64(dh))))
				iw := Add(Sub(Mul(ow, C(int64(sw))), C(int64(a.Pad.Left))), Mul(kw, C(int64(dw))))
				ci := ic
				if group > 1 {
					ci = Add(Mul(Div(oc, C(int64(coPerG))), C(int64(Cg))), ic)
				}
				xv, wv := ld(x, n, ih, iw, ci), ld(w, oc, kh, kw, ic)
				if intMode {
					xv = Add(xv, C(inOff))
					wv = Add(wv, C(wOff))
				}
				upd := Put(acc, Add(At(acc), Mul(xv, wv)))
				return If(AllOf(GE(ih, C(0)), LT(ih, C(int64(H))), GE(iw, C(0)), LT(iw, C(int64(W)))), upd)
			})
			var res Expr
			if intMode {
				res = ep.apply(At(acc), oc, yt.DType)
			} else {
				res = floatAct(a.Act, At(acc))
			}
			return Block(Put(acc, init), red, Put(y, res, n, oh, ow, oc))
		})
	})
	k.f.Op = "conv2d"
	if group == Cin && Cg == 1 && group > 1 {
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
	var inOff, wOff int64
	accT := F32
	if intMode {
		if a.Requant != graph.RequantFixedPoint {
			return nil, k.errorf("float requantization (ONNX QLinear) is not supported yet")
		}
		var err error
		if ep, err = k.requantFor(xt, wt, yt, a.Act, N); err != nil {
			return nil, k.errorf("%v", err)
		}
		_, zIn, err := quantParams(xt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		inOff = -int64(zIn)
		wz, err := weightZP(wt)
		if err != nil {
			return nil, k.errorf("%v", err)
		}
		wOff = -wz
		accT = I32
	}
	body := Loops([]string{"r", "j"}, []int{rows, N}, func(o []Expr) Stmt {
		r, j := o[0], o[1]
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			var init Expr = Imm(accT, 0)
			if bias != nil {
				init = ld(bias, j)
			}
			red := Loop("k", K, func(kk Expr) Stmt {
				xv, wv := ld(x, r, kk), ld(w, j, kk)
				if intMode {
					xv = Add(xv, C(inOff))
					wv = Add(wv, C(wOff))
				}
				return Put(acc, Add(At(acc), Mul(xv, wv)))
			})
			var res Expr
			if intMode {
				res = ep.apply(At(acc), j, yt.DType)
			} else {
				res = floatAct(a.Act, At(acc))
			}
			return Block(Put(acc, init), red, Put(y, res, r, j))
		})
	})
	k.f.Op = "fully_connected"
	return body, nil
}

// viewAs reshapes a row-major buffer in place (same storage, new shape).
func viewAs(b *Buffer, shape []int) {
	b.Shape = append([]int{}, shape...)
	b.Strides = graph.Strides(shape)
}
