package tir

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/graph/interp"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	register(graph.Reshape, computeCopy)
	register(graph.Transpose, computeTranspose)
	register(graph.Concat, computeConcat)
	register(graph.Pad, computePad)
	register(graph.Slice, computeSlice)
}

// opName is the snake_case kernel name of an op.
func opName(op graph.Op) string {
	s := string(op)
	var sb strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 && !(s[i-1] >= 'A' && s[i-1] <= 'Z') && !(s[i-1] >= '0' && s[i-1] <= '9') {
				sb.WriteByte('_')
			}
			sb.WriteRune(r - 'A' + 'a')
		} else {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// computeCopy: a reshape whose output does not share its input's storage.
func computeCopy(k *kctx) (Stmt, error) {
	x := k.in(0)
	y, yt := k.output()
	n := yt.NumElements()
	viewAs(x, []int{n})
	viewAs(y, []int{n})
	k.f.Op = "reshape"
	// int8: one gen_copy_s8 (loopsCopy); the element loop otherwise.
	return loopsCopy(x, y, []int{n}, func(iv []Expr) []Expr { return iv }), nil
}

func computeTranspose(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.TransposeAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.TransposeAttrs")
	}
	x := k.in(0)
	y, yt := k.output()
	if len(a.Perm) != len(x.Shape) {
		return nil, k.errorf("perm %v for rank %d", a.Perm, len(x.Shape))
	}
	k.f.Op = "transpose"
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		idx := make([]Expr, len(iv))
		for o, p := range a.Perm {
			idx[p] = iv[o]
		}
		return At(x, idx...)
	}), nil
}

// computeConcat: one copy loop per input into its slice of the output.
func computeConcat(k *kctx) (Stmt, error) {
	a, _ := k.n.Attrs.(*graph.ConcatAttrs)
	y, yt := k.output()
	rank := len(yt.Shape)
	axis := 0
	act := graph.ActNone
	if a != nil {
		axis = a.Axis
		act = a.Act
	}
	if act != graph.ActNone && !isInt(yt) {
		return nil, k.errorf("fused activation on a float concat is not supported")
	}
	if axis < 0 {
		axis += rank
	}
	k.f.Op = "concat"
	var stmts []Stmt
	off := 0
	for i := range k.n.Inputs {
		t := k.g.In(k.n, i)
		if t == nil {
			continue
		}
		x := k.in(i)
		o := off
		outIdx := func(iv []Expr) []Expr {
			idx := append([]Expr{}, iv...)
			idx[axis] = Add(iv[axis], C(int64(o)))
			return idx
		}
		// An int input with other quantization than the output (or a fused
		// activation) goes through a table of the reference's mapping;
		// unquantized ints of the output's type (TFLite Micro's audio front
		// end concatenates int32 frames) are copied.
		var table *Buffer
		plain := interp.Plain(k.g, k.n) && t.DType == yt.DType && act == graph.ActNone
		if isInt(t) && !plain {
			s1, z1, err1 := quantParams(t)
			s2, z2, err2 := quantParams(yt)
			if err1 != nil || err2 != nil {
				return nil, k.errorf("int concat needs quantized inputs and output")
			}
			if s1 != s2 || z1 != z2 || act != graph.ActNone {
				one := &graph.Node{Name: k.n.Name, Op: graph.Concat, Attrs: &graph.ConcatAttrs{Axis: 0, Act: act}}
				if table, err1 = k.table(one, t, yt, fmt.Sprintf("_table%d", i)); err1 != nil {
					return nil, err1
				}
			}
		}
		if table == nil {
			stmts = append(stmts, loopsCopy(x, y, t.Shape, outIdx))
		} else {
			lo, _ := t.DType.Range()
			stmts = append(stmts, Loops(loopNames(len(t.Shape)), t.Shape, func(iv []Expr) Stmt {
				return Put(y, At(table, Sub(CastTo(I32, At(x, iv...)), C(lo))), outIdx(iv)...)
			}))
		}
		off += t.Shape[axis]
	}
	return Block(stmts...), nil
}

func loopNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("i%d", i)
	}
	return names
}

func loopsCopy(x, y *Buffer, shape []int, outIdx func(iv []Expr) []Expr) Stmt {
	return copyNest(y, x, shape, outIdx, func(iv []Expr) []Expr { return iv })
}

// copyNest is y[yIdx(iv)] = x[xIdx(iv)] over shape, the indices affine in
// iv. int8 runs contiguous in both x and y (the innermost dimensions whose
// flat strides in both continue the run below them) move with one
// gen_copy_s8 (memcpy) each where a run is minCopyRun bytes or more: a
// channel concatenation copied element by element took 4.4 instructions a
// byte on the M4.
func copyNest(y, x *Buffer, shape []int, yIdx, xIdx func(iv []Expr) []Expr) Stmt {
	rank := len(shape)
	if x.DType == I8 && y.DType == I8 && rank > 0 {
		at := func(v []int64) (int64, int64, bool) {
			iv := make([]Expr, rank)
			for d := range iv {
				iv[d] = C(v[d])
			}
			ys, ok1 := IsConst(SimplifyExpr(flatIndex(y, yIdx(iv))))
			xs, ok2 := IsConst(SimplifyExpr(flatIndex(x, xIdx(iv))))
			return ys, xs, ok1 && ok2
		}
		zero := make([]int64, rank)
		y0, x0, ok := at(zero)
		step := func(d int) (int64, int64, bool) {
			v := make([]int64, rank)
			v[d] = 1
			yd, xd, ok := at(v)
			return yd - y0, xd - x0, ok
		}
		k, run := rank, int64(1)
		for ok && k > 0 {
			yd, xd, ok2 := step(k - 1)
			if !ok2 || yd != run || xd != run {
				break
			}
			k--
			run *= int64(shape[k])
		}
		if ok && k < rank && run >= minCopyRun {
			return Loops(loopNames(k), shape[:k], func(iv []Expr) Stmt {
				full := append(append([]Expr{}, iv...), make([]Expr, rank-k)...)
				for d := k; d < rank; d++ {
					full[d] = C(0)
				}
				dst := SimplifyExpr(flatIndex(y, yIdx(full)))
				src := SimplifyExpr(flatIndex(x, xIdx(full)))
				return &Evaluate{X: Call("gen_"+KCopy8, I32, &Ptr{Buf: y, Index: dst}, &Ptr{Buf: x, Index: src}, C(run))}
			})
		}
	}
	return Loops(loopNames(rank), shape, func(iv []Expr) Stmt {
		return Put(y, At(x, xIdx(iv)...), yIdx(iv)...)
	})
}

// minCopyRun is the shortest contiguous int8 run copyNest moves with a
// gen_copy_s8 call rather than an element loop.
const minCopyRun = 8

func computePad(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.PadAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.PadAttrs")
	}
	xt := k.g.In(k.n, 0)
	x := k.in(0)
	y, yt := k.output()
	rank := len(xt.Shape)
	if len(a.Pads) != 2*rank {
		return nil, k.errorf("pads %v for rank %d", a.Pads, rank)
	}
	mode := a.Mode
	if mode == "" {
		mode = "constant"
	}
	k.f.Op = "pad"
	var fill Expr
	if yt.DType == F32 {
		fill = F(float32(a.Value))
	} else {
		fill = Imm(yt.DType, interp.PadInt(a.Value, yt.DType))
	}
	if mode == "constant" && yt.DType == I8 && xt.DType == I8 && xt.NumElements() > 0 && !slices.ContainsFunc(a.Pads, func(p int) bool { return p < 0 }) {
		// The padding value everywhere (memset), then the input's runs
		// into the interior (copyNest): an element loop with two bounds
		// tests per axis took about 10 instructions a byte on the M4
		// (a 6×5×16 map padded to 9×8×16: 11,584 → 977).
		v, _ := IsConst(fill)
		return Block(
			&Evaluate{X: Call("gen_"+KFill8, I32, &Ptr{Buf: y, Index: C(0)}, C(v), C(int64(yt.NumElements())))},
			copyNest(y, x, xt.Shape, func(iv []Expr) []Expr {
				idx := make([]Expr, rank)
				for d := range idx {
					idx[d] = Add(iv[d], C(int64(a.Pads[d])))
				}
				return idx
			}, func(iv []Expr) []Expr { return iv })), nil
	}
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		idx := make([]Expr, rank)
		var conds []Expr
		for d := 0; d < rank; d++ {
			i := Sub(iv[d], C(int64(a.Pads[d])))
			n := int64(xt.Shape[d])
			switch mode {
			case "edge":
				i = Clamp(i, C(0), C(n-1))
			case "reflect":
				// reflect once on each side (pads smaller than the axis).
				i = Sel(LT(i, C(0)), Sub(C(0), i), Sel(GE(i, C(n)), Sub(C(2*n-2), i), i))
			default:
				conds = append(conds, GE(i, C(0)), LT(i, C(n)))
				i = Clamp(i, C(0), C(n-1))
			}
			idx[d] = i
		}
		if len(conds) == 0 {
			return At(x, idx...)
		}
		return Sel(AllOf(conds...), At(x, idx...), fill)
	}), nil
}

func computeSlice(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SliceAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.SliceAttrs")
	}
	x := k.in(0)
	y, yt := k.output()
	rank := len(yt.Shape)
	if len(a.Begin) != rank || len(a.Stride) != rank {
		return nil, k.errorf("slice attributes for rank %d: %+v", rank, a)
	}
	k.f.Op = "slice"
	return copyNest(y, x, yt.Shape, func(iv []Expr) []Expr { return iv }, func(iv []Expr) []Expr {
		idx := make([]Expr, rank)
		for d := range idx {
			idx[d] = Add(Mul(iv[d], C(int64(pos1(a.Stride[d])))), C(int64(a.Begin[d])))
		}
		return idx
	}), nil
}

func init() { register(graph.Resize, computeResize) }

// resizeTaps finds, for one axis of a resize, the input taps and weights of
// every output position by running the reference kernel on one-hot inputs
// (resize is linear along each axis), so index rounding and coordinate
// transforms are the reference's own: two taps an output (four for
// cubic), an unused one repeating the first with weight 0.
func (k *kctx) resizeTaps(a *graph.ResizeAttrs, axis, in, out int) (idx [][]int64, w [][]float32, err error) {
	taps := 2
	if a.Mode == "cubic" {
		taps = 4
	}
	idx, w = make([][]int64, taps), make([][]float32, taps)
	// The probes cost in × (in + out): quadratic in the axis. A
	// microcontroller's image axes are hundreds long; a fuzzed model's
	// 16-million-long row kept compile busy for hours.
	if int64(in)*int64(in+out) > 1<<28 {
		return idx, w, k.errorf("an axis of %d inputs resized to %d is longer than mcugen lowers (inputs × (inputs + outputs) at most 2^28)", in, out)
	}
	inShape, outShape := []int{1, 1, 1, 1}, []int{1, 1, 1, 1}
	inShape[1+axis], outShape[1+axis] = in, out
	attrs := *a
	attrs.Scale = [2]float32{}
	attrs.Scale[axis] = a.Scale[axis]
	tg := graph.New("resize_taps", "")
	tg.AddTensor(&graph.Tensor{Name: "x", DType: F32, Shape: inShape})
	tg.AddTensor(&graph.Tensor{Name: "y", DType: F32, Shape: outShape})
	tg.AddNode(&graph.Node{Name: k.n.Name, Op: graph.Resize, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &attrs})
	tg.Inputs, tg.Outputs = []string{"x"}, []string{"y"}
	for t := range idx {
		idx[t] = make([]int64, out)
		w[t] = make([]float32, out)
	}
	count := make([]int, out)
	for i := 0; i < in; i++ {
		d := graph.NewData(F32, inShape)
		d.F[i] = 1
		res, err := interp.Run(tg, map[string]*graph.Data{"x": d})
		if err != nil {
			return idx, w, k.errorf("probing the resize: %v", err)
		}
		for o, v := range res["y"].F {
			if v == 0 {
				continue
			}
			if count[o] == taps {
				return idx, w, k.errorf("output %d reads more than %d inputs along axis %d", o, taps, axis)
			}
			idx[count[o]][o], w[count[o]][o] = int64(i), v
			count[o]++
		}
	}
	for o := range count {
		for t := max(count[o], 1); t < taps; t++ {
			idx[t][o] = idx[0][o]
		}
	}
	return idx, w, nil
}

// computeResize: nearest copies input pixels through per-axis index tables;
// bilinear (float) blends the two taps of each axis with tabulated weights.
func computeResize(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.ResizeAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.ResizeAttrs")
	}
	xt := k.g.In(k.n, 0)
	x := k.in(0)
	y, yt := k.output()
	if len(xt.Shape) != 4 || len(yt.Shape) != 4 {
		return nil, k.errorf("input %v and output %v must be NHWC", xt.Shape, yt.Shape)
	}
	N, H, W, Cc := xt.Shape[0], xt.Shape[1], xt.Shape[2], xt.Shape[3]
	OH, OW := yt.Shape[1], yt.Shape[2]
	if isInt(xt) && a.Mode == "cubic" {
		return nil, k.errorf("cubic resize of an integer tensor is not supported (float32 only)")
	}
	if isInt(xt) && a.Mode == "bilinear" {
		return k.intResizeBilinear(a, x, y, N, H, W, Cc, OH, OW)
	}
	ty, wy, err := k.resizeTaps(a, 0, H, OH)
	if err != nil {
		return nil, err
	}
	tx, wx, err := k.resizeTaps(a, 1, W, OW)
	if err != nil {
		return nil, err
	}
	nearest := true
	for _, ws := range [][]float32{wy[0], wx[0]} {
		for _, v := range ws {
			nearest = nearest && v == 1
		}
	}
	k.f.Op = "resize"
	base := k.n.Name
	rows := constBuf(base+"_rows", I32, []int{OH}, ty[0])
	cols := constBuf(base+"_cols", I32, []int{OW}, tx[0])
	if nearest {
		return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
			return Put(y, At(x, o[0], At(rows, o[1]), At(cols, o[2]), o[3]), o...)
		}), nil
	}
	if a.Mode == "cubic" {
		// y = sum_i wy_i sum_j wx_j x[row_i, col_j], the taps tabulated.
		var rs, cs, wys, wxs [4]*Buffer
		for t := range 4 {
			rs[t] = constBuf(fmt.Sprintf("%s_rows%d", base, t), I32, []int{OH}, ty[t])
			cs[t] = constBuf(fmt.Sprintf("%s_cols%d", base, t), I32, []int{OW}, tx[t])
			wys[t] = constF32(fmt.Sprintf("%s_wy%d", base, t), []int{OH}, wy[t])
			wxs[t] = constF32(fmt.Sprintf("%s_wx%d", base, t), []int{OW}, wx[t])
		}
		return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
			n, oh, ow, c := o[0], o[1], o[2], o[3]
			var sum Expr
			for i := range 4 {
				var row Expr
				for j := range 4 {
					term := Mul(At(wxs[j], ow), At(x, n, At(rs[i], oh), At(cs[j], ow), c))
					if row == nil {
						row = term
					} else {
						row = Add(row, term)
					}
				}
				term := Mul(At(wys[i], oh), row)
				if sum == nil {
					sum = term
				} else {
					sum = Add(sum, term)
				}
			}
			return Put(y, sum, o...)
		}), nil
	}
	rows1 := constBuf(base+"_rows1", I32, []int{OH}, ty[1])
	cols1 := constBuf(base+"_cols1", I32, []int{OW}, tx[1])
	wy0, wy1 := constF32(base+"_wy0", []int{OH}, wy[0]), constF32(base+"_wy1", []int{OH}, wy[1])
	wx0, wx1 := constF32(base+"_wx0", []int{OW}, wx[0]), constF32(base+"_wx1", []int{OW}, wx[1])
	return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
		n, oh, ow, c := o[0], o[1], o[2], o[3]
		lerpX := func(r Expr) Expr {
			return Add(Mul(At(x, n, r, At(cols, ow), c), At(wx0, ow)), Mul(At(x, n, r, At(cols1, ow), c), At(wx1, ow)))
		}
		top, bot := lerpX(At(rows, oh)), lerpX(At(rows1, oh))
		return Put(y, Add(Mul(top, At(wy0, oh)), Mul(bot, At(wy1, oh))), o...)
	}), nil
}

// intResizeBilinear is TFLite's integer bilinear resize: per output row and
// column two input indices and two 10-bit weights (graph.IntResizeTaps,
// tabulated), the four products summed in int32 (|sum| < 2^29: each axis's
// weights add to 1024 in magnitude at most 2048) and divided by 2^20
// rounding half away from zero.
func (k *kctx) intResizeBilinear(a *graph.ResizeAttrs, x, y *Buffer, N, H, W, Cc, OH, OW int) (Stmt, error) {
	if a.Scale != [2]float32{} && (a.Scale[0] != float32(OH)/float32(H) || a.Scale[1] != float32(OW)/float32(W)) {
		return nil, k.errorf("integer bilinear resize takes its scale from the sizes, not %v", a.Scale)
	}
	ty, err := graph.IntResizeTaps(a.Coord, H, OH)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	tx, err := graph.IntResizeTaps(a.Coord, W, OW)
	if err != nil {
		return nil, k.errorf("%v", err)
	}
	ints := func(v []int) []int64 {
		out := make([]int64, len(v))
		for i, e := range v {
			out[i] = int64(e)
		}
		return out
	}
	k.f.Op = "resize"
	base := k.n.Name
	r0, r1 := constBuf(base+"_rows", I32, []int{OH}, ints(ty.I0)), constBuf(base+"_rows1", I32, []int{OH}, ints(ty.I1))
	c0, c1 := constBuf(base+"_cols", I32, []int{OW}, ints(tx.I0)), constBuf(base+"_cols1", I32, []int{OW}, ints(tx.I1))
	wy0, wy1 := constBuf(base+"_wy0", I32, []int{OH}, ints(ty.W0)), constBuf(base+"_wy1", I32, []int{OH}, ints(ty.W1))
	wx0, wx1 := constBuf(base+"_wx0", I32, []int{OW}, ints(tx.W0)), constBuf(base+"_wx1", I32, []int{OW}, ints(tx.W1))
	return Loops([]string{"n", "oh", "ow", "c"}, []int{N, OH, OW, Cc}, func(o []Expr) Stmt {
		n, oh, ow, c := o[0], o[1], o[2], o[3]
		px := func(r, col *Buffer) Expr { return CastTo(I32, At(x, n, At(r, oh), At(col, ow), c)) }
		lerpX := func(r *Buffer) Expr {
			return Add(Mul(px(r, c0), At(wx0, ow)), Mul(px(r, c1), At(wx1, ow)))
		}
		acc := Add(Mul(lerpX(r0), At(wy0, oh)), Mul(lerpX(r1), At(wy1, oh)))
		half := Sel(GT(acc, C(0)), C(1<<19), C(-(1 << 19)))
		return Put(y, CastTo(y.DType, Div(Add(acc, half), C(1<<20))), o...)
	}), nil
}
