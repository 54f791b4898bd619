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
	sh, sw := int64(pos1(a.Stride[0])), int64(pos1(a.Stride[1]))
	dh, dw := int64(pos1(a.Dilation[0])), int64(pos1(a.Dilation[1]))
	k.f.Op = "conv_transpose2d"
	if st := convTransposePhased(k, cs, a); st != nil {
		return st, nil
	}
	return Loops([]string{"n", "oh", "ow", "oc"}, []int{cs.N, cs.OH, cs.OW, cs.Cout}, func(o []Expr) Stmt {
		n, oh, ow, oc := o[0], o[1], o[2], o[3]
		return Scalar("acc", cs.accT, func(acc *Buffer) Stmt {
			red := Loops([]string{"kh", "kw", "ic"}, []int{cs.KH, cs.KW, cs.Cg}, func(r []Expr) Stmt {
				kh, kw, ic := r[0], r[1], r[2]
				th := Sub(Add(oh, C(int64(a.Pad.Top))), Mul(kh, C(dh)))
				tw := Sub(Add(ow, C(int64(a.Pad.Left))), Mul(kw, C(dw)))
				ih, iw := Div(th, C(sh)), Div(tw, C(sw))
				conds := []Expr{GE(th, C(0)), GE(tw, C(0))}
				if sh > 1 {
					conds = append(conds, EQ(Mod(th, C(sh)), C(0)))
				}
				if sw > 1 {
					conds = append(conds, EQ(Mod(tw, C(sw)), C(0)))
				}
				conds = append(conds, LT(ih, C(int64(cs.H))), LT(iw, C(int64(cs.W))))
				return If(AllOf(conds...), Put(acc, Add(At(acc), cs.product(n, ih, iw, oc, kh, kw, ic))))
			})
			return Block(Put(acc, cs.init(k, oc)), red, Put(cs.y, cs.result(At(acc), oc, a.Act), n, oh, ow, oc))
		})
	}), nil
}
