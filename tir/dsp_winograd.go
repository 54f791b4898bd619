package tir

import (
	"fmt"
	"math"
	"slices"
)

// Winograd F(2×2, 3×3) for int8 3×3 stride-1 convolutions on the dsp
// target (knob winograd, default 0): each 2×2 block of outputs comes from a
// 4×4 input tile with 16 multiplications per input and output channel pair
// instead of 36, exactly.
//
// The transforms are integer ones. With Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0;
// 0 1 0 -1], G' = 2G = [2 0 0; 1 1 1; 1 -1 1; 0 0 2] and Aᵀ = [1 1 1 0;
// 0 1 -1 -1], the tile's output is Y = Aᵀ[(G'gG'ᵀ) ⊙ (BᵀdB)]A / 4, and
// since F(2×2, 3×3) is exact in exact arithmetic, Aᵀ[…]A is exactly four
// times the convolution sum: the division is an exact shift and the
// accumulator (bias + sum) is the one TFLite computes, so the int8 output is
// bit-exact. Ranges: d = x + input offset is within ±255, so BᵀdB (two
// terms per row and column) is within ±1020 and G'gG'ᵀ within ±3·3·128 =
// ±1152: both fit the int16 halves SMLAD multiplies. One product is at most
// 1,175,040; a transformed sum over Cin ≤ 128 channels times the nine terms
// of the output transform stays below 2^31, so no intermediate wraps.
//
// Cost: the weights grow from 9 to 16 int16 per channel pair (flash: 1.8×
// the direct schedule's int16 weights) and the kernel keeps four widened
// input rows, two transformed tiles and 64 accumulators on the stack (RAM),
// which is why it is a knob the tuner turns on where it pays and not the
// default.

// IntrDSPWinoIn is the input transform of one 4×4 tile of pair words:
//
//	dsp_wino_in_s16(v *int32, d *int32, rs, cs, n, vs)
//	for k < n, with d_rc = d[r·rs + c·cs + k] (int16 lanes):
//	  v[(4r + c)·vs + k] = (Bᵀ d B)_rc, lane by lane (SADD16/SSUB16)
//
// (vs ≥ n: the tiles of a block interleave, position by position, so the
// GEMM reads a block's tiles at a small constant offset from each other.)
const IntrDSPWinoIn = "dsp_wino_in_s16"

// DSPWinoMacName is the Winograd GEMM of R transformed tiles (R = 1 or 2)
// and two output channels over all 16 tile positions, with U groups of
// four k per loop iteration:
//
//	dsp_wino_mac_s16_Rx2_uU(m *int32, x *int32, ps, xs, w *int32, ws, n):
//	for ξ < 16, i < R, j < 2:
//	  m[4ξ + 2i + j] = Σ_{g < n/2} Σ_{h<2} dot2(x[ξ·ps + i·xs + 2g + h], w[ξ·ws + 4g + 2j + h])
//
// the DSPMacName block started at zero for each position in turn: one call
// where a call per position spent more on zeroing, loading and storing its
// accumulators than on a K = 16 product.
func DSPWinoMacName(r, u int) string { return fmt.Sprintf("dsp_wino_mac_s16_%dx2_u%d", r, u) }

// winoMaxCin bounds the input channels so no transformed sum can wrap.
const winoMaxCin = 128

func init() {
	DeclareKnob("dsp.winograd", 0, 1) // conv 3x3 stride 1: Winograd F(2x2, 3x3)
	DeclareAlgorithm("dsp.winograd")
	extIntrinsics[IntrDSPWinoIn] = func(a []val) val {
		v, d, rs, cs, n, vs := a[0], a[1], a[2].i, a[3].i, a[4].i, a[5].i
		if vs < n {
			panic(fmt.Sprintf("%s: position stride %d below %d words", IntrDSPWinoIn, vs, n))
		}
		for k := int64(0); k < n; k++ {
			for lane := uint(0); lane < 32; lane += 16 {
				var dd, t, o [4][4]int64
				for r := int64(0); r < 4; r++ {
					for c := int64(0); c < 4; c++ {
						dd[r][c] = int64(int16(d.p.I[d.i+r*rs+c*cs+k] >> lane))
					}
				}
				for c := 0; c < 4; c++ {
					t[0][c], t[1][c], t[2][c], t[3][c] = dd[0][c]-dd[2][c], dd[1][c]+dd[2][c], dd[2][c]-dd[1][c], dd[1][c]-dd[3][c]
				}
				for r := 0; r < 4; r++ {
					o[r][0], o[r][1], o[r][2], o[r][3] = t[r][0]-t[r][2], t[r][1]+t[r][2], t[r][2]-t[r][1], t[r][1]-t[r][3]
				}
				for r := int64(0); r < 4; r++ {
					for c := int64(0); c < 4; c++ {
						if o[r][c] != int64(int16(o[r][c])) {
							panic(fmt.Sprintf("%s: %d does not fit int16", IntrDSPWinoIn, o[r][c]))
						}
						at := &v.p.I[v.i+(4*r+c)*vs+k]
						if lane == 0 {
							*at = o[r][c] & 0xffff
						} else {
							*at = int64(int32(uint32(*at) | uint32(uint16(o[r][c]))<<16))
						}
					}
				}
			}
		}
		return val{}
	}
	for r := 1; r <= 2; r++ {
		for _, u := range DSPMacUnrolls {
			name := DSPWinoMacName(r, u)
			extIntrinsics[name] = func(a []val) val {
				m, x, ps, xs, w, ws, n := a[0], a[1], a[2].i, a[3].i, a[4], a[5].i, a[6].i
				if n%int64(2*u) != 0 || n < 0 {
					panic(fmt.Sprintf("%s: n = %d", name, n))
				}
				for xi := int64(0); xi < 16; xi++ {
					xp, wp := val{p: x.p, i: x.i + xi*ps}, val{p: w.p, i: w.i + xi*ws}
					for i := int64(0); i < int64(r); i++ {
						for j := int64(0); j < 2; j++ {
							s := dotBlock(xp, xs, i, wp, 2, j, n, pairWords)
							if s > math.MaxInt32 || s < math.MinInt32 {
								panic("int32 overflow in " + name)
							}
							m.p.I[m.i+4*xi+2*i+j] = s
						}
					}
				}
				return val{}
			}
		}
	}
}

// winoWeights transforms OHWI 3×3 weights g (cout × 9 × cin) into
// U'ξ = G' g G'ᵀ for the 16 tile positions ξ = 4r + c, each a cout × cin
// matrix packed for the 2-channel micro-kernels (DSPPackWeights), one after
// the other: position ξ starts at word ξ·cout·cin/2.
func winoWeights(g []int64, cout, cin int) []int64 {
	gp := [4][3]int64{{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}}
	out := make([]int64, 0, 16*cout*cin/2)
	u := make([]int64, cout*cin)
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			for oc := 0; oc < cout; oc++ {
				for ic := 0; ic < cin; ic++ {
					var s int64
					for a := 0; a < 3; a++ {
						for b := 0; b < 3; b++ {
							s += gp[r][a] * g[((oc*3+a)*3+b)*cin+ic] * gp[c][b]
						}
					}
					u[oc*cin+ic] = s
				}
			}
			out = append(out, DSPPackWeights(u, cout, cin, cin, 2)...)
		}
	}
	return out
}

// winoEligible reports whether the convolution can take the Winograd
// schedule: 3×3, stride and dilation 1, one image, input channels a
// multiple of 4 up to winoMaxCin, an even number of output channels, and an
// input read as NHWC rows with the padding only at the borders.
func (c *convNest) winoEligible() (padT, padL int, ok bool) {
	a, Cg := c.accNest, c.Cg
	if c.N != 1 || c.KH != 3 || c.KW != 3 || Cg%4 != 0 || Cg > winoMaxCin || c.C%2 != 0 || a.xOff < -255 || a.xOff > 255 {
		return 0, 0, false
	}
	xs := a.x.Buf.Shape
	if len(xs) != 4 || xs[0] != 1 || xs[3] != Cg || !rowMajor(a.x.Buf) {
		return 0, 0, false
	}
	for _, v := range a.w.Buf.Data.I {
		if v < -128 || v > 127 {
			return 0, 0, false
		}
	}
	W := xs[2]
	base, step, ok := c.strides(flatIndex(a.x.Buf, a.x.Indices), c.oh, c.kh, c.ow, c.kw, c.ic)
	if !ok || !slices.Equal(step, []int64{int64(W * Cg), int64(W * Cg), int64(Cg), int64(Cg), 1}) {
		return 0, 0, false
	}
	return c.padding(base, W, Cg)
}

// winograd builds the schedule. Per pair of output rows (a tile row): the
// four input rows it reads are widened into pair words once, padding
// columns and rows as zeros; per pair of tiles along the row both are
// transformed (IntrDSPWinoIn, position by position the two tiles' words
// side by side); per pair of output channels one DSPWinoMacName call
// multiplies, at each of the 16 positions, the two tiles' Cin values by
// the two channels' transformed weights; then the output transform, the
// exact division by four, the bias and the requantization. A last odd
// tile runs the same with one tile.
func (c *convNest) winograd(f *PrimFunc, padT, padL, unroll int) (*PrimFunc, bool) {
	a, OH, OW, Cg, Cout := c.accNest, c.OH, c.OW, c.Cg, c.C
	ohV, owV, ocV, nV := c.oh, c.ow, c.oc, c.n
	W := a.x.Buf.Shape[2]
	n := Cg / 2 // pair words per input pixel
	TH, TW := (OH+1)/2, (OW+1)/2
	Wp := 2*TW + 2
	if padL+W > Wp || OH < 1 || OW < 1 {
		return nil, false
	}
	rows := NewBuffer(f.Name+"_rows", I32, []int{4 * Wp * n}, ScopeLocal)
	tiles := NewBuffer(f.Name+"_tiles", I32, []int{2 * 16 * n}, ScopeLocal)
	mb := NewBuffer(f.Name+"_m", I32, []int{16 * 4}, ScopeLocal)
	tb := NewBuffer(f.Name+"_t", I32, []int{8}, ScopeLocal)
	accb := NewBuffer(f.Name+"_acc", I32, []int{1}, ScopeLocal)
	wp := constBuf(f.Name+"_weights_wino", I32, []int{16 * Cout * Cg / 2}, winoWeights(a.w.Buf.Data.I, Cout, Cg))
	store := packRequant(fastRequant(a.store))
	u := unrollFor(unroll, Cg)
	th := NewVar("th")
	// The four input rows of tile row th.
	fill := loopK("r", 4, Serial, func(r Expr) Stmt {
		return c.widenRow(rows, Mul(r, C(int64(Wp*n))), Add(Sub(Mul(th, C(2)), C(int64(padT))), r), Wp, padL)
	})
	// R tiles starting at tile column tw0 (R = 1 or 2).
	block := func(R int, tw0 Expr) Stmt {
		var ss []Stmt
		for i := 0; i < R; i++ {
			col := Mul(Add(tw0, C(int64(i))), C(2))
			ss = append(ss, &Evaluate{X: Call(IntrDSPWinoIn, I32, ptr(tiles, C(int64(i*n))), ptr(rows, Mul(col, C(int64(n)))),
				C(int64(Wp*n)), C(int64(n)), C(int64(n)), C(int64(2*n)))})
		}
		ocb := NewVar("oc_o")
		var body []Stmt
		body = append(body, &Evaluate{X: Call(DSPWinoMacName(R, u), I32, ptr(mb, C(0)), ptr(tiles, C(0)), C(int64(2*n)), C(int64(n)),
			ptr(wp, Mul(ocb, C(int64(Cg)))), C(int64(Cout*n)), C(int64(n)))})
		for i := 0; i < R; i++ {
			for j := 0; j < 2; j++ {
				m := func(r, c int) Expr { return At(mb, C(int64((4*r+c)*4+2*i+j))) }
				// T = Aᵀ M: two rows of four.
				for c := 0; c < 4; c++ {
					body = append(body,
						flatStore(tb, C(int64(c)), Add(Add(m(0, c), m(1, c)), m(2, c))),
						flatStore(tb, C(int64(4+c)), Sub(Sub(m(1, c), m(2, c)), m(3, c))))
				}
				t := func(r, c int) Expr { return At(tb, C(int64(4*r+c))) }
				oc := Add(Mul(ocb, C(2)), C(int64(j)))
				for dy := 0; dy < 2; dy++ {
					for dx := 0; dx < 2; dx++ {
						var y Expr
						if dx == 0 {
							y = Add(Add(t(dy, 0), t(dy, 1)), t(dy, 2))
						} else {
							y = Sub(Sub(t(dy, 1), t(dy, 2)), t(dy, 3))
						}
						oh := Add(Mul(th, C(2)), C(int64(dy)))
						ow := Add(Mul(Add(tw0, C(int64(i))), C(2)), C(int64(dx)))
						acc := Add(SubstituteExpr(a.init, map[*Var]Expr{ocV: oc}), Shr(y, C(2)))
						st := Substitute(store, map[*Var]Expr{ocV: oc, ohV: oh, owV: ow, nV: C(0)})
						var out Stmt = Block(flatStore(accb, C(0), acc), replaceAcc(st, a.acc, accb, C(0)))
						var conds []Expr
						if OH%2 != 0 && dy == 1 {
							conds = append(conds, LT(oh, C(int64(OH))))
						}
						if OW%2 != 0 && dx == 1 {
							conds = append(conds, LT(ow, C(int64(OW))))
						}
						if len(conds) > 0 {
							out = If(AllOf(conds...), out)
						}
						body = append(body, out)
					}
				}
			}
		}
		return Block(Block(ss...), &For{Var: ocb, Min: C(0), Extent: C(int64(Cout / 2)), Body: Block(body...)})
	}
	var row []Stmt
	row = append(row, fill)
	if TW/2 > 0 {
		tp := NewVar("tw_o")
		row = append(row, &For{Var: tp, Min: C(0), Extent: C(int64(TW / 2)), Body: block(2, Mul(tp, C(2)))})
	}
	if TW%2 != 0 {
		row = append(row, block(1, C(int64(TW-1))))
	}
	body := Stmt(&For{Var: th, Min: C(0), Extent: C(int64(TH)), Body: Block(row...)})
	for _, b := range []*Buffer{accb, tb, mb, tiles, rows} {
		body = &Allocate{Buf: b, Body: body}
	}
	g := *f
	g.Body = body
	return &g, true
}

// widenRow widens NHWC input row ih (Cg channels plus the input offset,
// Cg % 4 == 0 or Cg == 3, rowChannels) into the pair words rows[rowAt :
// rowAt + Wp·Cp/2] as one padded row of Wp pixels of Cp channels: padL zero
// pixels, the W input pixels, zero pixels to the end; a row outside the
// image is all zeros.
func (c *convNest) widenRow(rows *Buffer, rowAt, ih Expr, Wp, padL int) Stmt {
	a, Cg := c.accNest, c.Cg
	H, W := a.x.Buf.Shape[1], a.x.Buf.Shape[2]
	n := c.rowChannels() / 2
	zeros := func(at Expr, count int) Stmt {
		return loopK("z", count, Serial, func(z Expr) Stmt { return flatStore(rows, Add(at, z), C(0)) })
	}
	var in []Stmt
	if padL > 0 {
		in = append(in, zeros(rowAt, padL*n))
	}
	if Cg == 3 {
		in = append(in, dspWiden3(rows, Add(rowAt, C(int64(padL*n))), a.x.Buf, Mul(ih, C(int64(W*Cg))), W, a.xOff))
	} else {
		in = append(in, dspWiden(rows, Add(rowAt, C(int64(padL*n))), a.x.Buf, Mul(ih, C(int64(W*Cg))), W*Cg, a.xOff))
	}
	if rest := Wp - padL - W; rest > 0 {
		in = append(in, zeros(Add(rowAt, C(int64((padL+W)*n))), rest*n))
	}
	return &IfThenElse{Cond: And(GE(ih, C(0)), LT(ih, C(int64(H)))), Then: Block(in...), Else: zeros(rowAt, Wp*n)}
}
