package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
)

// Row staging: convolution kernels without an in-place form of their own,
// run in place.
//
// The memory plan may put a convolution's output over its input (memplan's
// in-place rule: a pointwise convolution, or a depthwise one). The dsp and
// mve targets' int8 schedules stage their input themselves; the generic
// target's kernels, and the dsp and mve float ones (rowStagedTarget), are
// wrapped here instead, whatever their schedule (the blocked one, the
// Cortex-M3's channel pairs, float):
//
//   - the node is lowered for one step: its input is the rows the step reads
//     (a chunk of rows of a pointwise convolution; the KH·dilation window of
//     one output row of a depthwise one, with no vertical padding), its
//     output the step's rows;
//   - the wrapper keeps those input rows in a local array (the stage), and for
//     each step in turn brings the stage up to date and runs the step's
//     kernel from the stage into the output rows.
//
// Pointwise: output chunk j covers input bytes from j·R·W·Cout to
// (j+1)·R·W·Cout, inside input chunks <= j when Cout <= Cin and >= j when
// Cout > Cin; the chunks run forward in the first case and backward in the
// second, so the chunks a step overwrites are consumed, and its own input
// chunk is in the stage.
//
// Depthwise (OH <= H, OW <= W): output rows 0..oh-1 cover bytes below
// oh·OW·C <= oh·W·C, the start of input row oh. The stage holds rows
// oh·s − pad .. oh·s − pad + KH·d − 1; moving to the next output row shifts
// the rows both windows share down (they were staged while intact) and reads
// the new ones from the input, which rowStageOK checks are all at or past
// the rows already overwritten. Rows outside the image are filled with the
// padding value (the input's zero point, or 0.0), so every tap sums what the
// padded convolution sums: the same integers, and for float the same sums
// plus exact zeros.

// maxRowStage caps the stage (bytes of stack) a row-staged kernel may take.
const maxRowStage = 4096

// rowGeometry is what row staging needs of a Conv2D.
type rowGeometry struct {
	pointwise bool
	H, W, C   int // input
	OH, OW    int
	Cout      int
	rows      int // input rows in the stage: 1, or (KH-1)·dilation + 1
	stride    int // vertical stride
	padTop    int
	es        int // element size
}

func rowGeom(g *graph.Graph, n *graph.Node) (rowGeometry, bool) {
	var r rowGeometry
	if n.Op != graph.Conv2D || len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return r, false
	}
	at, ok := n.Attrs.(*graph.Conv2DAttrs)
	x, y, w := g.In(n, 0), g.Out(n, 0), g.In(n, 1)
	if !ok || at == nil || x == nil || y == nil || w == nil || len(x.Shape) != 4 || len(y.Shape) != 4 || len(w.Shape) != 4 ||
		x.Shape[0] != 1 || y.Shape[0] != 1 || x.DType.Size() == 0 || x.DType.Size() != y.DType.Size() {
		return r, false
	}
	if !w.IsConst() {
		// Weights fed at run time are refused by the layer's own lowering,
		// which names the model's tensor (the one-row graph has no
		// producers to trace it through: it named "w_nhwc").
		return r, false
	}
	if x.DType != graph.Int8 && x.DType != graph.UInt8 && x.DType != graph.Float32 {
		return r, false
	}
	r = rowGeometry{H: x.Shape[1], W: x.Shape[2], C: x.Shape[3], OH: y.Shape[1], OW: y.Shape[2], Cout: y.Shape[3],
		stride: max(at.Stride[0], 1), padTop: at.Pad.Top, es: x.DType.Size()}
	switch {
	case at.Group == 1 && w.Shape[1] == 1 && w.Shape[2] == 1 && at.Stride == [2]int{1, 1} && at.Pad == (graph.Padding{}) &&
		r.OH == r.H && r.OW == r.W:
		r.pointwise, r.rows = true, 1
	case at.Group == r.C && r.Cout == r.C && r.OH <= r.H && r.OW <= r.W && r.OH > 0:
		r.rows = (w.Shape[1]-1)*max(at.Dilation[0], 1) + 1
		// Every row read from the input is still intact: the first new
		// row of output row oh starts at or past the bytes output rows
		// 0..oh-1 cover.
		keep := max(r.rows-r.stride, 0)
		for oh := 1; oh < r.OH; oh++ {
			first := oh*r.stride - r.padTop + keep
			if first < r.H && first*r.W < oh*r.OW {
				return r, false
			}
		}
		// The rows of output row 0 (and of any row the stage starts
		// afresh) are read before anything is written.
	default:
		return r, false
	}
	if r.rows*r.W*r.C*r.es > maxRowStage {
		return r, false
	}
	return r, true
}

// rowStageOK reports whether lowering can run n in place by row staging.
func rowStageOK(g *graph.Graph, n *graph.Node) bool {
	_, ok := rowGeom(g, n)
	return ok
}

// rowStaged lowers n (with act fused) as a row-staged in-place kernel, or
// returns nil when it cannot.
func (l *lowerer) rowStaged(n, act *graph.Node, index int) (*PrimFunc, error) {
	geo, ok := rowGeom(l.g, n)
	if !ok {
		return nil, nil
	}
	if !geo.pointwise {
		return l.rowStagedBy(n, act, index, geo)
	}
	// A pointwise layer's chunk is several rows where they divide the
	// height and fit half the largest stage: a one-row kernel on a narrow
	// map spends more on its pixel blocks' tails (KWS's 5-pixel rows on the
	// Cortex-M3: +4% a layer; in 5-row chunks +1%).
	for r := geo.H; r >= 1; r-- {
		if geo.H%r != 0 || r > 1 && r*geo.W*geo.C*geo.es > maxRowStage/2 {
			continue
		}
		g := geo
		g.rows = r
		f, err := l.rowStagedBy(n, act, index, g)
		if err != nil || f != nil || r == 1 {
			return f, err
		}
	}
	return nil, nil
}

// rowStagedBy is rowStaged for one geometry: geo.rows input rows a step,
// which for a pointwise layer are also its output rows.
func (l *lowerer) rowStagedBy(n, act *graph.Node, index int, geo rowGeometry) (*PrimFunc, error) {
	outRows := 1
	if geo.pointwise {
		outRows = geo.rows
	}
	steps := geo.OH / outRows
	// The one-row graph: the same tensors (same names, so the kernel's
	// parameters are the model's), the input and output cut to the rows.
	sg := graph.New(l.g.Name, l.g.Format)
	retensor := func(name string, shape []int) {
		t := l.g.Tensor(name)
		if t == nil {
			return
		}
		c := *t
		if shape != nil {
			c.Shape = shape
		}
		sg.AddTensor(&c)
	}
	for i, in := range n.Inputs {
		if in == "" {
			continue
		}
		if i == 0 {
			retensor(in, []int{1, geo.rows, geo.W, geo.C})
		} else {
			retensor(in, nil)
		}
	}
	retensor(n.Outputs[0], []int{1, outRows, geo.OW, geo.Cout})
	nn := *n
	at := *n.Attrs.(*graph.Conv2DAttrs)
	at.Pad.Top, at.Pad.Bottom = 0, 0
	nn.Attrs = &at
	var sact *graph.Node
	out := n.Outputs[0]
	if act != nil {
		a := *act
		sact = &a
		out = act.Outputs[0]
		retensor(out, []int{1, outRows, geo.OW, geo.Cout})
	}
	sub := &lowerer{g: sg, plan: &memplan.Plan{InPlace: map[string]bool{}}, target: l.target, m: l.m}
	f1, err := sub.kernel(&nn, sact, index)
	if err != nil {
		return nil, err
	}
	var xb, yb *Buffer
	for _, p := range f1.Params {
		switch {
		case p.Writes && p.Tensor == out:
			yb = p
		case !p.Writes && p.Tensor == n.Inputs[0]:
			xb = p
		}
	}
	if xb == nil || yb == nil {
		return nil, nil
	}
	if lim := l.target.StackBytes; lim > 0 && f1.ScratchBytes()+geo.rows*geo.W*geo.C*geo.es > lim {
		return nil, nil // out of place instead: the stage would overrun the stack
	}
	xFull := NewBuffer(xb.Name, xb.DType, l.g.Tensor(n.Inputs[0]).Shape, ScopeParam)
	xFull.Tensor = xb.Tensor
	yFull := NewBuffer(yb.Name, yb.DType, l.g.Tensor(out).Shape, ScopeParam)
	yFull.Tensor, yFull.Writes = yb.Tensor, true
	rowLen := geo.W * geo.C
	stage := NewBuffer(f1.Name+"_rows", xb.DType, []int{geo.rows * rowLen}, ScopeLocal)

	ohV := NewVar("row_s")
	oh := Expr(ohV)
	if geo.pointwise && geo.Cout > geo.C {
		oh = Sub(C(int64(steps-1)), ohV) // backward: see the comment at the top
	}
	outOff := Mul(oh, C(int64(outRows*geo.OW*geo.Cout)))
	body := RewriteStmt(f1.Body, func(s Stmt) Stmt {
		st, ok := s.(*Store)
		if !ok || st.Buf != yb {
			return s
		}
		c := *st
		c.Buf, c.Indices = yFull, []Expr{Add(st.Indices[0], outOff)}
		return &c
	}, func(e Expr) Expr {
		switch x := e.(type) {
		case *Load:
			switch x.Buf {
			case xb:
				c := *x
				c.Buf = stage
				return &c
			case yb:
				c := *x
				c.Buf, c.Indices = yFull, []Expr{Add(x.Indices[0], outOff)}
				return &c
			}
		case *Ptr:
			switch x.Buf {
			case xb:
				return &Ptr{Buf: stage, Index: x.Index}
			case yb:
				return &Ptr{Buf: yFull, Index: Add(x.Index, outOff)}
			}
		}
		return e
	})

	// copyRow: stage row k = input row r (r in range) or the padding value.
	var pad Expr = Imm(xb.DType, 0)
	if xb.DType == F32 {
		pad = F(0)
	} else if q := l.g.Tensor(n.Inputs[0]).Quant; q != nil && len(q.ZeroPoint) > 0 {
		pad = Imm(xb.DType, int64(q.ZeroPoint[0]))
	}
	if xb.DType == I8 {
		pad = CastTo(I32, pad)
	}
	// Rows move with memcpy and memset (gen_copy_s8, gen_fill_s8) for
	// int8, element by element otherwise.
	bytes := xb.DType == I8
	move := func(dst *Buffer, di Expr, src *Buffer, si Expr) Stmt {
		if bytes {
			return &Evaluate{X: Call("gen_"+KCopy8, I32, &Ptr{Buf: dst, Index: di}, &Ptr{Buf: src, Index: si}, C(int64(rowLen)))}
		}
		return Loop("i_r", rowLen, func(i Expr) Stmt {
			return &Store{Buf: dst, Indices: []Expr{Add(di, i)}, Value: &Load{Buf: src, Indices: []Expr{Add(si, i)}, Flat: true}, Flat: true}
		})
	}
	copyRow := func(k int, r Expr) Stmt {
		in := move(stage, C(int64(k*rowLen)), xFull, Mul(r, C(int64(rowLen))))
		if geo.pointwise {
			return in
		}
		var fill Stmt
		if bytes {
			fill = &Evaluate{X: Call("gen_"+KFill8, I32, &Ptr{Buf: stage, Index: C(int64(k * rowLen))}, pad, C(int64(rowLen)))}
		} else {
			fill = Loop("i_p", rowLen, func(i Expr) Stmt {
				return &Store{Buf: stage, Indices: []Expr{Add(C(int64(k*rowLen)), i)}, Value: pad, Flat: true}
			})
		}
		return &IfThenElse{Cond: And(GE(r, C(0)), LT(r, C(int64(geo.H)))), Then: in, Else: fill}
	}
	var stageRows Stmt
	if geo.pointwise {
		rowLen *= geo.rows // one chunk of rows
		stageRows = copyRow(0, oh)
	} else {
		first := func(k int) Expr { return Add(Sub(Mul(oh, C(int64(geo.stride))), C(int64(geo.padTop))), C(int64(k))) }
		var all []Stmt
		for k := 0; k < geo.rows; k++ {
			all = append(all, copyRow(k, first(k)))
		}
		stageRows = Block(all...)
		if keep := geo.rows - geo.stride; keep > 0 && geo.OH > 1 {
			// Row by row, upwards: no copy overlaps itself.
			var next []Stmt
			for k := 0; k < keep; k++ {
				next = append(next, move(stage, C(int64(k*rowLen)), stage, C(int64((k+geo.stride)*rowLen))))
			}
			for k := keep; k < geo.rows; k++ {
				next = append(next, copyRow(k, first(k)))
			}
			stageRows = &IfThenElse{Cond: EQ(ohV, C(0)), Then: stageRows, Else: Block(next...)}
		}
	}
	g := *f1
	g.Params = nil
	for _, p := range f1.Params {
		switch p {
		case xb:
			g.Params = append(g.Params, xFull)
		case yb:
			g.Params = append(g.Params, yFull)
		default:
			g.Params = append(g.Params, p)
		}
	}
	g.Body = &Allocate{Buf: stage, Body: &For{Var: ohV, Min: C(0), Extent: C(int64(steps)), Body: Block(stageRows, body)}}
	g.InPlaceSafe, g.WantInPlace = true, true
	return Finalize(&g), nil
}
