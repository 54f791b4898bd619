package graph

import "slices"

// maxMoveCheck bounds the elements FoldIdentityMoves follows through a
// chain (a compile-time permutation of that many ints).
const maxMoveCheck = 1 << 20

// FoldIdentityMoves replaces a chain of Transposes and Reshapes that
// leaves every element where it was in memory (the chain's last tensor,
// read in row-major order, is its first) by one Reshape, which moves
// nothing. A 1-D convolution exported as Transpose to channels-first,
// Reshape to 2-D and Transpose back to channels-last is such a chain: its
// two copies cost a gesture net 3,888 instructions in int8 (user-journey
// finding). Each node of the chain but the last must feed only the next
// and not be a graph output; the chain's ends must have the same dtype and
// quantization. It returns how many chains it folded.
func FoldIdentityMoves(g *Graph) int {
	n := 0
	for folded := true; folded; {
		folded = false
		prod, cons := g.Producers(), g.Consumers()
		for _, end := range g.Nodes {
			if !isMove(end) {
				continue
			}
			chain := []*Node{end}
			src := end.Inputs[0]
			for {
				p := prod[src]
				if p == nil || !isMove(p) || len(cons[src]) != 1 || slices.Contains(g.Outputs, src) {
					break
				}
				chain = append(chain, p)
				src = p.Inputs[0]
			}
			slices.Reverse(chain)
			if (len(chain) == 1 && end.Op == Reshape) || !keepsOrder(g, src, chain) {
				continue
			}
			for _, c := range chain[:len(chain)-1] {
				delete(g.Tensors, c.Outputs[0])
			}
			g.Nodes = slices.DeleteFunc(g.Nodes, func(x *Node) bool { return x != end && slices.Contains(chain, x) })
			end.Op, end.Inputs, end.Attrs = Reshape, []string{src}, nil
			n++
			folded = true
			break
		}
	}
	return n
}

func isMove(n *Node) bool {
	return (n.Op == Transpose || n.Op == Reshape) && len(n.Inputs) == 1 && len(n.Outputs) == 1
}

// keepsOrder reports whether chain, applied to tensor src, leaves its
// elements in row-major order: it follows the flat index of every element.
func keepsOrder(g *Graph, src string, chain []*Node) bool {
	s, y := g.Tensors[src], g.Tensors[chain[len(chain)-1].Outputs[0]]
	if s == nil || y == nil || s.DType != y.DType || !s.Quant.Equal(y.Quant) || s.IsConst() {
		return false
	}
	size := NumElements(s.Shape)
	if size <= 0 || size > maxMoveCheck || NumElements(y.Shape) != size {
		return false
	}
	for _, d := range s.Shape {
		if d <= 0 {
			return false
		}
	}
	idx := make([]int, size)
	for i := range idx {
		idx[i] = i
	}
	shape := s.Shape
	for _, c := range chain {
		out := g.Tensors[c.Outputs[0]]
		if out == nil || NumElements(out.Shape) != size {
			return false
		}
		if c.Op == Transpose {
			a, _ := c.Attrs.(*TransposeAttrs)
			if a == nil || len(a.Perm) != len(shape) {
				return false
			}
			idx = transposeInts(idx, shape, a.Perm)
		}
		shape = out.Shape
	}
	for i, v := range idx {
		if v != i {
			return false
		}
	}
	return true
}

// transposeInts is x (row-major, shape) with its axes permuted: output axis
// i is input axis perm[i].
func transposeInts(x []int, shape, perm []int) []int {
	r := len(shape)
	oshape := make([]int, r)
	for i, p := range perm {
		oshape[i] = shape[p]
	}
	ist := Strides(shape)
	out := make([]int, len(x))
	o := make([]int, r)
	for k := range out {
		off := 0
		for i := range o {
			off += o[i] * ist[perm[i]]
		}
		out[k] = x[off]
		for i := r - 1; i >= 0; i-- {
			if o[i]++; o[i] < oshape[i] {
				break
			}
			o[i] = 0
		}
	}
	return out
}
