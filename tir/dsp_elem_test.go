package tir

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// constOperand builds y = x op c for an int8 x of shape xs and a constant
// int8 c of shape cs (broadcast), per-tensor parameters.
func constOperand(op graph.Op, xs, cs []int) (*graph.Graph, *graph.Node) {
	g := graph.New("k", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: xs, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{2}}})
	c := graph.NewData(graph.Int8, cs)
	for i := range c.I {
		c.I[i] = int64((i*37+11)%255 - 127)
	}
	g.AddConst("c", c).Quant = &graph.Quant{Scale: []float32{0.02}, ZeroPoint: []int32{-1}}
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: xs, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{3}}})
	n := g.AddNode(&graph.Node{Name: "op", Op: op, Inputs: []string{"x", "c"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g, n
}

// The dsp element-wise schedule folds constants at compile time and keeps
// the results: an Add of a constant vector along the last axis reads its
// rescaled elements from a table over that axis (no requant of the
// constant per output element); a Mul or Add by a scalar constant becomes
// one table of the 256 results (no intrinsic left per element); a constant
// that varies along two axes keeps its arithmetic.
func TestDSPElemConstTables(t *testing.T) {
	for _, c := range []struct {
		op         graph.Op
		xs, cs     []int
		tables     int  // int32 tables of the kernel
		requantsOf bool // a requant of the constant still runs per element
		intrinsics bool // any intrinsic per element
	}{
		{graph.Add, []int{1, 3, 8}, []int{8}, 2, false, true},
		{graph.Add, []int{1, 3, 8}, []int{1, 1, 8}, 2, false, true},
		{graph.Mul, []int{1, 2, 3, 5}, []int{1}, 1, false, false},
		{graph.Add, []int{2, 7}, []int{}, 1, false, false},
		{graph.Sub, []int{1, 3, 8}, []int{3, 8}, 1, true, true},
	} {
		name := fmt.Sprintf("%s_x%v_c%v", c.op, c.xs, c.cs)
		g, n := constOperand(c.op, c.xs, c.cs)
		// The generic tables (a whole-tensor ADD or SUB otherwise takes
		// IntrDSPAddLUT: TestDSPAddLUTForms55).
		f, s := dspKernel(t, g, n, map[string]int{"add_lut": 0})
		tables, constRequant, intr := 0, false, false
		for _, b := range s.Consts() {
			if b.DType == I32 && len(b.Shape) == 1 {
				tables++
			}
		}
		VisitStmts(s.Body, func(st Stmt) {
			sto, ok := st.(*Store)
			if !ok {
				return
			}
			VisitExprs(&Evaluate{X: sto.Value}, func(e Expr) {
				in, ok := e.(*Intrinsic)
				if !ok {
					return
				}
				intr = true
				VisitExprs(&Evaluate{X: in}, func(x Expr) {
					if l, ok := x.(*Load); ok && l.Buf.Name == "c" && in.Name == IntrRequant {
						constRequant = true
					}
				})
			})
		})
		if tables != c.tables || constRequant != c.requantsOf || intr != c.intrinsics {
			t.Errorf("%s: %d tables, requant of c per element %v, intrinsics %v; want %d, %v, %v\n%s", name, tables, constRequant, intr, c.tables, c.requantsOf, c.intrinsics, s)
		}
		sameResult(t, name, f, s)
	}
}
