package tir

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// IntrDSPWidenIL widens int8 values plus off into int16 pair words as
// IntrDSPWiden does, each group of four into the two words at step·g:
//
//	dsp_widen_il_s8(dst *int32, src *int8, n, off, step), n % 4 == 0:
//	dst[step·g] = (src[4g] + off, src[4g+2] + off), dst[step·g+1] = (src[4g+1] + off, src[4g+3] + off)
//
// With step 2c it writes one channel of a block of c in DSPPackWeights'
// layout: an operand packed at run time for the DSPMacName micro-kernels.
const IntrDSPWidenIL = "dsp_widen_il_s8"

func init() {
	extIntrinsics[IntrDSPWidenIL] = func(a []val) val {
		dst, src, n, off, step := a[0], a[1], a[2].i, a[3].i, a[4].i
		if n%4 != 0 || n < 0 || step < 2 {
			panic(fmt.Sprintf("%s: n = %d, step = %d", IntrDSPWidenIL, n, step))
		}
		for g := int64(0); g < n/4; g++ {
			s := func(k int64) int64 { return src.p.I[src.i+4*g+k] + off }
			dst.p.I[dst.i+step*g] = pack16(s(0), s(2))
			dst.p.I[dst.i+step*g+1] = pack16(s(1), s(3))
		}
		return val{}
	}
}

// BMMPackBytes bounds the stack one int8 batch_matmul kernel takes for its
// packed second operand: columns are packed in chunks of at most this many
// bytes (at least one block of columns), each chunk reused by every row.
const BMMPackBytes = 2048

// scheduleBMMDSP: an int8 product of two activations (an attention's Q·Kᵀ
// and P·V) whose operands both hold the reduction axis innermost (A
// without AdjX, B with AdjY: graph.FoldTransposeIntoBatchMatMul arranges
// that for PyTorch's exports). For each batch, the columns of B are
// widened with B's offset into DSPPackWeights' layout (IntrDSPWidenIL, in
// chunks of at most BMMPackBytes), then each block of block_rows rows of
// A is widened with A's offset (IntrDSPWiden) and every block of
// block_oc columns is one DSPMacName call, with the requantization in the
// epilogue, as the fully connected schedule does with weights packed at
// compile time. K not a multiple of four is padded with values that
// widen to zero. Knobs block_rows (1 or 2), block_oc (1, 2 or 4; 2 where
// rows pair, else 4), unroll_k. Other forms keep the generic nest.
func scheduleBMMDSP(f *PrimFunc) (*PrimFunc, error) {
	if floatKernel(f) {
		return f, nil
	}
	bn, ok := parseBMM(f)
	if !ok {
		return f, nil
	}
	a, M, N, K, iV, jV, A, B := bn.acc, bn.M, bn.N, bn.K, bn.iV, bn.jV, bn.A, bn.B
	K4 := (K + 3) / 4 * 4
	// 2x2 blocks, as a fully connected layer with rows to pair: the 2x4
	// block's eight accumulators spill (a keyword transformer's Q·Kᵀ
	// 298,272 → 262,798 instructions on the M4, P·V 238,899 → 220,973).
	ocDef := 2
	if M < 2 {
		ocDef = 4
	}
	br, bc, unroll := knob(f, "block_rows", 2), knob(f, "block_oc", ocDef), knob(f, "unroll_k", 8)
	if M < br {
		br = 1
	}
	if !isBlock(br, bc) {
		return nil, fmt.Errorf("tir: %s: no %dx%d micro-kernel (block_rows, block_oc)", f.Name, br, bc)
	}
	// Columns per packed chunk: whole blocks, within BMMPackBytes.
	chunk := max(bc, BMMPackBytes/(2*K4)/bc*bc)
	chunk = min(chunk, N)
	u := unrollFor(unroll, K4)
	store := fastRequant(a.store)
	at := bn.at
	// widen writes row src[si..si+K) plus off at dst[di], step words per
	// group of four (a staged copy padded with -off when K % 4 != 0).
	widen := func(dst *Buffer, di Expr, src *Buffer, si Expr, off int64, step int) Stmt {
		call := func(s *Buffer, sj Expr) Stmt {
			if step == 2 {
				return dspWiden(dst, di, s, sj, K4, off)
			}
			return &Evaluate{X: Call(IntrDSPWidenIL, I32, ptr(dst, di), ptr(s, sj), C(int64(K4)), C(off), C(int64(step)))}
		}
		if K%4 == 0 {
			return call(src, si)
		}
		stage := NewBuffer(f.Name+"_row", graph.Int8, []int{K4}, ScopeLocal)
		cp := loopK("k", K, Serial, func(k Expr) Stmt {
			return flatStore(stage, k, &Load{Buf: src, Indices: []Expr{Add(si, k)}, Flat: true})
		})
		var tail []Stmt
		for k := K; k < K4; k++ {
			tail = append(tail, flatStore(stage, C(int64(k)), &IntImm{T: graph.Int8, V: -off}))
		}
		return &Allocate{Buf: stage, Body: Block(cp, Block(tail...), call(stage, C(0)))}
	}
	var body []Stmt
	for j0 := 0; j0 < N; j0 += chunk {
		cn := min(chunk, N-j0)
		wb := NewBuffer(f.Name+"_cols", I32, []int{cn * K4 / 2}, ScopeLocal)
		// Pack the chunk's columns, block by block.
		var pack []Stmt
		for _, bl := range channelBlocks(cn, bc, nil) {
			c, from := bl.c, bl.from
			pack = append(pack, loopK("jo", bl.count, Serial, func(o Expr) Stmt {
				first := Add(Mul(o, C(int64(c))), C(int64(from)))
				var ss []Stmt
				for j := 0; j < c; j++ {
					col := Add(first, C(int64(j0+j)))
					ss = append(ss, widen(wb, Add(Mul(first, C(int64(K4/2))), C(int64(2*j))), B, at(B, C(0), col), a.wOff, 2*c))
				}
				return Block(ss...)
			}))
		}
		// The chunk's columns as the spec's channels: j = j0 + jc.
		jc := NewVar("jc")
		st := Substitute(store, map[*Var]Expr{jV: Add(jc, C(int64(j0)))}).(*Store)
		mk := func(R int, rowAt func(i int) Expr) Stmt {
			xw := NewBuffer(f.Name+"_xw", I32, []int{R * K4 / 2}, ScopeLocal)
			var fill []Stmt
			for i := 0; i < R; i++ {
				fill = append(fill, widen(xw, C(int64(i*K4/2)), A, at(A, rowAt(i), C(0)), a.xOff, 2))
			}
			g := &gemmSpec{R: R, C: bc, U: u, K4: K4, Cout: cn, w: wb, ocVar: jc, init: a.init, store: st, acc: a.acc, xb: xw,
				consts: constCache{}, pix: func(s Stmt, i int) Stmt { return Substitute(s, map[*Var]Expr{iV: rowAt(i)}) }}
			return &Allocate{Buf: xw, Body: Block(Block(fill...), g.build(f.Name))}
		}
		rows := []Stmt{}
		if full := M / br; full > 0 {
			v := NewVar("i_o")
			rows = append(rows, &For{Var: v, Min: C(0), Extent: C(int64(full)),
				Body: mk(br, func(i int) Expr { return Add(Mul(v, C(int64(br))), C(int64(i))) })})
		}
		for i := M - M%br; i < M; i++ {
			rows = append(rows, mk(1, func(int) Expr { return C(int64(i)) }))
		}
		body = append(body, &Allocate{Buf: wb, Body: Block(Block(pack...), Block(rows...))})
	}
	g := *f
	g.Body = bn.inBatch(Block(body...))
	return &g, nil
}

// bmmNest is an int8 batch_matmul's compute definition whose operands both
// hold the reduction axis innermost: A[batch..., i, k] and B[batch..., k, j]
// with unit strides along k (B read with AdjY), accumulating from zero.
type bmmNest struct {
	acc      *accNest
	nb       int // batch dimensions
	M, N, K  int
	iV, jV   *Var
	A, B     *Buffer
	batchIdx []Expr
}

// parseBMM takes a batch_matmul kernel apart (false: not that form).
func parseBMM(f *PrimFunc) (*bmmNest, bool) {
	a, err := parseAccNestAny(f)
	if err != nil || len(a.outer) < 2 || len(a.red) != 1 || a.cond != nil || a.wOffE != nil {
		return nil, false
	}
	oe, err := a.extents(a.outer)
	if err != nil {
		return nil, false
	}
	if v, ok := IsConst(a.init); !ok || v != 0 {
		return nil, false
	}
	nb := len(a.outer) - 2
	n := &bmmNest{acc: a, nb: nb, M: oe[nb], N: oe[nb+1], K: int(mustConst(a.red[0].Extent)),
		iV: a.outer[nb].Var, jV: a.outer[nb+1].Var, A: a.x.Buf, B: a.w.Buf}
	kV := a.red[0].Var
	for d := 0; d < nb; d++ {
		n.batchIdx = append(n.batchIdx, a.outer[d].Var)
	}
	idxIs := func(l *Load, p, q *Var) bool {
		return len(l.Indices) == nb+2 && slices.Equal(l.Indices[:nb], n.batchIdx) && l.Indices[nb] == Expr(p) && l.Indices[nb+1] == Expr(q)
	}
	if n.A == n.B || n.A.DType != graph.Int8 || n.B.DType != graph.Int8 || !idxIs(a.x, n.iV, kV) || !idxIs(a.w, kV, n.jV) ||
		n.A.Strides[nb+1] != 1 || n.B.Strides[nb] != 1 {
		return nil, false
	}
	return n, true
}

// at is the flat index of b[batch..., p, q] in the current batch.
func (n *bmmNest) at(b *Buffer, p, q Expr) Expr {
	return flatIndex(b, append(append([]Expr{}, n.batchIdx...), p, q))
}

// inBatch wraps s in the kernel's batch loops.
func (n *bmmNest) inBatch(s Stmt) Stmt {
	for d := n.nb - 1; d >= 0; d-- {
		l := *n.acc.outer[d]
		l.Body = s
		s = &l
	}
	return s
}
