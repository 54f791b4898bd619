package graph

import (
	"fmt"
	"sort"
	"strings"
)

// MACs is the number of multiply-accumulates a node performs (conv, fully
// connected and matmul; other ops count 0), the figure MLPerf Tiny reports.
func MACs(g *Graph, n *Node) int64 {
	out := g.Out(n, 0)
	w := g.In(n, 1)
	if n.Op == DFT {
		return dftMACs(g, n)
	}
	if out == nil || w == nil {
		return 0
	}
	switch n.Op {
	case Conv2D:
		// Each output element sums KH*KW*(Cin/Group) products.
		taps := w.Shape[1] * w.Shape[2]
		if a, ok := n.Attrs.(*Conv2DAttrs); ok && a != nil {
			taps -= a.ZeroTaps
		}
		return int64(out.NumElements()) * int64(taps*w.Shape[3])
	case ConvTranspose2D:
		// Each input element scatters into KH*KW*(Cout/Group) outputs.
		x := g.In(n, 0)
		groups := max(1, x.Shape[len(x.Shape)-1]/max(1, w.Shape[3]))
		return int64(x.NumElements()) * int64(w.Shape[1]*w.Shape[2]) * int64(w.Shape[0]/groups)
	case FullyConnected:
		if runs := WeightRuns(w); runs != nil && out.DType == Float32 {
			// A banded float FC sums each output's run only.
			var s int64
			for _, r := range runs {
				s += int64(r[1])
			}
			return int64(out.NumElements()/w.Shape[0]) * s
		}
		return int64(out.NumElements()) * int64(w.Shape[1])
	case SVDFFeature:
		// One product per weights_feature element and batch row.
		return int64(g.In(n, 0).Shape[0]) * int64(w.NumElements())
	case SVDFTime:
		// One product per state element.
		return int64(g.In(n, 0).NumElements())
	case BatchMatMul:
		x := g.In(n, 0)
		k := x.Shape[len(x.Shape)-1]
		if a, ok := n.Attrs.(*BatchMatMulAttrs); ok && a.AdjX {
			k = x.Shape[len(x.Shape)-2]
		}
		return int64(out.NumElements()) * int64(k)
	}
	return 0
}

// dftMACs counts a DFT's real multiply-adds as the FFT computes them where
// N factors into FFTFactors (radix 2: N/2 butterflies of one complex
// product, four real ones, a stage; radix p > 2: N/p groups of p-1
// twiddle products and about (p-1)^2 constant ones), and as the direct sum
// otherwise (two per sample and bin for a real signal, four for a complex
// one), plus a window's N products.
func dftMACs(g *Graph, n *Node) int64 {
	a, ok := n.Attrs.(*DFTAttrs)
	x := g.In(n, 0)
	if !ok || a == nil || x == nil || len(x.Shape) < 2 || a.N < 1 {
		return 0
	}
	r := len(x.Shape)
	transforms := int64(x.NumElements() / x.Shape[r-1] / max(1, x.Shape[a.Axis]))
	if a.Frames > 0 {
		transforms = int64(x.Shape[0] * a.Frames)
	}
	nn := int64(a.N)
	per := int64(a.DFTBins()) * nn * 2 * int64(x.Shape[r-1])
	if fs := FFTFactors(a.N); a.N >= 4 && fs != nil {
		per = 0
		for _, p := range fs {
			q := int64(p)
			per += 4 * nn * (q - 1) / q
			if p > 2 {
				per += 4 * nn * (q - 1) * (q - 1) / q
			}
		}
	}
	if g.In(n, 1) != nil {
		per += nn
	}
	return transforms * per
}

// WeightRuns gives, for constant float32 FC weights [N, K] that are zero
// outside one run of each row (a mel filter bank: each filter a triangle
// over a few neighbouring bins), each row's run as (first k, length); nil
// when the runs hold more than a quarter of the weights, or for other
// weights (not float32 constants, N < 2, K < 16). tir lowers such an FC
// as a sum over the runs.
func WeightRuns(w *Tensor) [][2]int {
	if w == nil || w.Data == nil || w.DType != Float32 || len(w.Shape) != 2 || w.Shape[0] < 2 || w.Shape[1] < 16 {
		return nil
	}
	n, k := w.Shape[0], w.Shape[1]
	if len(w.Data.F) != n*k {
		return nil
	}
	runs := make([][2]int, n)
	total := 0
	for j := range n {
		lo, hi := 0, 0
		for kk, v := range w.Data.F[j*k : (j+1)*k] {
			if v != 0 {
				if hi == 0 {
					lo = kk
				}
				hi = kk + 1
			}
		}
		runs[j] = [2]int{lo, hi - lo}
		total += hi - lo
	}
	if 4*total > n*k {
		return nil
	}
	return runs
}

// FFTMaxRadix is the largest prime factor an FFT stage takes (tir unrolls
// each stage's p-point DFT: p^2 constant complex products); a length with
// a larger one is summed directly.
const FFTMaxRadix = 7

// FFTFactors splits n into the FFT's stage radices, the 2s first, or nil
// when a prime factor exceeds FFTMaxRadix or n < 2.
func FFTFactors(n int) []int {
	if n < 2 {
		return nil
	}
	var fs []int
	for _, p := range []int{2, 3, 5, 7} {
		for n%p == 0 {
			fs = append(fs, p)
			n /= p
		}
	}
	if n != 1 {
		return nil
	}
	return fs
}

// TotalMACs sums MACs over every node.
func TotalMACs(g *Graph) int64 {
	var s int64
	for _, n := range g.Nodes {
		s += MACs(g, n)
	}
	return s
}

// WeightBytes is the storage of every constant tensor.
func WeightBytes(g *Graph) int64 {
	var s int64
	for _, t := range g.Tensors {
		if t.IsConst() {
			s += int64(t.Bytes())
		}
	}
	return s
}

// OpCounts counts nodes by op.
func OpCounts(g *Graph) map[string]int {
	m := map[string]int{}
	for _, n := range g.Nodes {
		m[string(n.Op)]++
	}
	return m
}

// TypeString renders a tensor's type: int8[1,49,10,1] q=0.0390625,-128.
func (t *Tensor) TypeString() string {
	var b strings.Builder
	b.WriteString(t.DType.String())
	b.WriteString(shapeString(t.Shape))
	if q := t.Quant; q != nil {
		if q.PerAxis() {
			fmt.Fprintf(&b, " q=per-axis(%d scales, axis %d)", len(q.Scale), q.Axis)
		} else {
			s, z := q.At(0)
			fmt.Fprintf(&b, " q=%g,%d", s, z)
		}
	}
	return b.String()
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Print renders g as text, one line per node, in execution order.
func Print(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph %q (%s): %d nodes, %d MACs, %d weight bytes\n", g.Name, g.Format, len(g.Nodes), TotalMACs(g), WeightBytes(g))
	for _, name := range g.Inputs {
		fmt.Fprintf(&b, "input  %%%s: %s\n", name, g.Tensors[name].TypeString())
	}
	for _, name := range g.Outputs {
		if t := g.Tensors[name]; t != nil {
			fmt.Fprintf(&b, "output %%%s: %s\n", name, t.TypeString())
		}
	}
	for i, n := range g.Nodes {
		args := make([]string, len(n.Inputs))
		for j, in := range n.Inputs {
			t := g.Tensors[in]
			switch {
			case in == "":
				args[j] = "_"
			case t != nil && t.IsConst():
				args[j] = fmt.Sprintf("%%%s<%s>", in, t.TypeString())
			default:
				args[j] = "%" + in
			}
		}
		outs := make([]string, len(n.Outputs))
		for j, o := range n.Outputs {
			outs[j] = "%" + o
		}
		fmt.Fprintf(&b, "%3d %s = %s(%s)", i, strings.Join(outs, ", "), n.Op, strings.Join(args, ", "))
		if a := attrString(n.Attrs); a != "" {
			b.WriteString(" " + a)
		}
		if t := g.Out(n, 0); t != nil {
			fmt.Fprintf(&b, " : %s", t.TypeString())
		}
		fmt.Fprintf(&b, "  # %s\n", n.Name)
	}
	return b.String()
}

func attrString(a any) string {
	switch a := a.(type) {
	case nil:
		return ""
	case *Conv2DAttrs:
		s := fmt.Sprintf("stride=%dx%d dilation=%dx%d pad=%d,%d,%d,%d group=%d", a.Stride[0], a.Stride[1], a.Dilation[0], a.Dilation[1], a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right, a.Group)
		return s + actString(a.Act) + requantString(a.Requant)
	case *PoolAttrs:
		s := fmt.Sprintf("kernel=%dx%d stride=%dx%d pad=%d,%d,%d,%d", a.Kernel[0], a.Kernel[1], a.Stride[0], a.Stride[1], a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right)
		if a.CountIncludePad {
			s += " count_include_pad"
		}
		return s + actString(a.Act)
	case *MaxPoolIndicesAttrs:
		s := fmt.Sprintf("kernel=%dx%d stride=%dx%d dilation=%dx%d pad=%d,%d,%d,%d", a.Kernel[0], a.Kernel[1], a.Stride[0], a.Stride[1],
			a.Dilation[0], a.Dilation[1], a.Pad.Top, a.Pad.Left, a.Pad.Bottom, a.Pad.Right)
		if a.ColumnMajor {
			s += " column_major"
		}
		return s
	case *FullyConnectedAttrs:
		s := ""
		if a.KeepDims {
			s = "keep_dims"
		}
		return strings.TrimSpace(s + actString(a.Act) + requantString(a.Requant))
	case *BinaryAttrs:
		return strings.TrimSpace(actString(a.Act))
	case *ConcatAttrs:
		return fmt.Sprintf("axis=%d", a.Axis) + actString(a.Act)
	}
	// Remaining attribute structs print their fields as Go does.
	s := fmt.Sprintf("%+v", a)
	return strings.TrimPrefix(s, "&")
}

func actString(a Activation) string {
	if a == ActNone {
		return ""
	}
	return " act=" + a.String()
}

func requantString(m RequantMode) string {
	if m == RequantFloat {
		return " requant=float"
	}
	return ""
}

// SortedTensorNames lists tensor names in a deterministic order.
func (g *Graph) SortedTensorNames() []string {
	names := make([]string, 0, len(g.Tensors))
	for n := range g.Tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
