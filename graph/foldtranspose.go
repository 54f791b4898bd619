package graph

import "slices"

// FoldTransposeIntoBatchMatMul rewrites a BatchMatMul whose second operand
// B is read with its reduction axis second to last (AdjY false) and comes
// from a Transpose that feeds nothing else: the Transpose writes B with its
// last two axes swapped and the BatchMatMul reads it with AdjY, the same
// product. Where the swapped permutation is the identity (Q·Kᵀ written as
// a Transpose of the last two axes) the Transpose goes. Both operands then
// hold their reduction axis innermost, which is what the SIMD kernels read
// (an attention's Q·Kᵀ and P·V as PyTorch exports them). It returns how
// many it rewrote.
func FoldTransposeIntoBatchMatMul(g *Graph) int {
	n := 0
	prod, cons := g.Producers(), g.Consumers()
	var gone []*Node // removed after the loop, which g.Nodes must outlive
	for _, mm := range slices.Clone(g.Nodes) {
		a, _ := mm.Attrs.(*BatchMatMulAttrs)
		if mm.Op != BatchMatMul || len(mm.Inputs) != 2 || (a != nil && a.AdjY) || mm.Inputs[0] == mm.Inputs[1] {
			continue
		}
		bn := mm.Inputs[1]
		b, tr := g.Tensors[bn], prod[bn]
		if b == nil || tr == nil || tr.Op != Transpose || len(tr.Inputs) != 1 || len(tr.Outputs) != 1 ||
			len(cons[bn]) != 1 || slices.Contains(g.Outputs, bn) || len(b.Shape) < 2 || b.Quant.PerAxis() {
			continue
		}
		ta, _ := tr.Attrs.(*TransposeAttrs)
		r := len(b.Shape)
		if ta == nil || len(ta.Perm) != r {
			continue
		}
		perm := slices.Clone(ta.Perm)
		perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
		na := BatchMatMulAttrs{}
		if a != nil {
			na = *a
		}
		na.AdjY = true
		mm.Attrs = &na
		n++
		if src := g.Tensors[tr.Inputs[0]]; IsIdentityPerm(perm) && src != nil && src.Quant.Equal(b.Quant) && src.DType == b.DType {
			mm.Inputs[1] = tr.Inputs[0]
			gone = append(gone, tr)
			delete(g.Tensors, bn)
			continue
		}
		tr.Attrs = &TransposeAttrs{Perm: perm}
		b.Shape = slices.Clone(b.Shape)
		b.Shape[r-2], b.Shape[r-1] = b.Shape[r-1], b.Shape[r-2]
	}
	g.Nodes = slices.DeleteFunc(g.Nodes, func(x *Node) bool { return slices.Contains(gone, x) })
	return n
}

// IsIdentityPerm reports whether perm leaves every axis where it is.
func IsIdentityPerm(perm []int) bool {
	for i, p := range perm {
		if p != i {
			return false
		}
	}
	return true
}
