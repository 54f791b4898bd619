package tir

import "github.com/mcugen/mcugen/graph"

func init() { register(graph.ConvTranspose2D, computeConvTranspose) }

// computeConvTranspose gathers what the transposed convolution scatters:
// output (oh, ow) takes tap (kh, kw) from input ih = (oh + pt − kh·dh) / sh
// when that division is exact and ih is inside the image (and so for w):
// Y[n,oh,ow,oc] = act(B[oc] + Σ X[n,ih,iw,g·Cg+ic]·W[oc,kh,kw,ic]),
// requantized for int8 with the convolution's epilogue.
func computeConvTranspose(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.ConvTransposeAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.ConvTransposeAttrs")
	}
	cs, err := k.convSetup(a.Group, a.Act, graph.RequantFixedPoint)
	if err != nil {
		return nil, err
	}
	x, w, bias, y, yt := cs.x, cs.w, cs.bias, cs.y, cs.yt
	N, H, W, Cout, KH, KW, Cg, OH, OW := cs.N, cs.H, cs.W, cs.Cout, cs.KH, cs.KW, cs.Cg, cs.OH, cs.OW
	group, coPerG, intMode, ep, inOff, wOff, accT := cs.group, cs.coPerG, cs.intMode, cs.ep, cs.inOff, cs.wOff, cs.accT
	sh, sw := int64(pos1(a.Stride[0])), int64(pos1(a.Stride[1]))
	dh, dw := int64(pos1(a.Dilation[0])), int64(pos1(a.Dilation[1]))
	k.f.Op = "conv_transpose2d"
	return Loops([]string{"n", "oh", "ow", "oc"}, []int{N, OH, OW, Cout}, func(o []Expr) Stmt {
		n, oh, ow, oc := o[0], o[1], o[2], o[3]
		return Scalar("acc", accT, func(acc *Buffer) Stmt {
			var init Expr = Imm(accT, 0)
			if bias != nil {
				init = ld(bias, oc)
			}
			red := Loops([]string{"kh", "kw", "ic"}, []int{KH, KW, Cg}, func(r []Expr) Stmt {
				kh, kw, ic := r[0], r[1], r[2]
				th := Sub(Add(oh, C(int64(a.Pad.Top))), Mul(kh, C(dh)))
				tw := Sub(Add(ow, C(int64(a.Pad.Left))), Mul(kw, C(dw)))
				ih, iw := Div(th, C(sh)), Div(tw, C(sw))
				ci := ic
				if group > 1 {
					ci = Add(Mul(Div(oc, C(int64(coPerG))), C(int64(Cg))), ic)
				}
				xv, wv := ld(x, n, ih, iw, ci), ld(w, oc, kh, kw, ic)
				if intMode {
					if inOff != 0 {
						xv = Add(xv, C(inOff))
					}
					if o := wOff(oc); o != nil {
						wv = Add(wv, o)
					}
				}
				conds := []Expr{GE(th, C(0)), GE(tw, C(0))}
				if sh > 1 {
					conds = append(conds, EQ(Mod(th, C(sh)), C(0)))
				}
				if sw > 1 {
					conds = append(conds, EQ(Mod(tw, C(sw)), C(0)))
				}
				conds = append(conds, LT(ih, C(int64(H))), LT(iw, C(int64(W))))
				return If(AllOf(conds...), Put(acc, Add(At(acc), Mul(xv, wv))))
			})
			var res Expr
			if intMode {
				res = ep.apply(At(acc), oc, yt.DType)
			} else {
				res = floatAct(a.Act, At(acc))
			}
			return Block(Put(acc, init), red, Put(y, res, n, oh, ow, oc))
		})
	}), nil
}
