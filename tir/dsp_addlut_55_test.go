package tir

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Whole-tensor int8 ADD and SUB take IntrDSPAddLUT by default, one call
// over the contiguous elements (or one per row where a constant repeats
// along the outer axes, if each run is at least four long), with the
// interpreter's results unchanged; an operand that is one constant keeps
// the single table of the generic form (y = table[x], no arithmetic per
// element left), as MUL keeps its arithmetic.
func TestDSPAddLUTForms55(t *testing.T) {
	for _, c := range []struct {
		op     graph.Op
		xs, cs []int
		calls  int // IntrDSPAddLUT calls in the kernel's body (0: declined)
		n      int64
	}{
		{graph.Add, []int{1, 3, 8}, []int{8}, 1, 8},
		{graph.Add, []int{1, 3, 8}, []int{1, 1, 8}, 1, 8},
		{graph.Sub, []int{1, 3, 8}, []int{3, 8}, 1, 24},
		{graph.Add, []int{2, 7}, []int{}, 0, 0},
		// Runs of two (a two-channel constant per pixel) keep the generic
		// form: a call per pixel cost more (a review).
		{graph.Add, []int{1, 24, 2}, []int{2}, 0, 0},
		{graph.Add, []int{1, 6, 4}, []int{4}, 1, 4},
		{graph.Mul, []int{1, 3, 8}, []int{3, 8}, 0, 0},
	} {
		name := fmt.Sprintf("%s_x%v_c%v", c.op, c.xs, c.cs)
		g, nd := constOperand(c.op, c.xs, c.cs)
		f, s := dspKernel(t, g, nd, nil)
		calls, n := 0, int64(0)
		VisitExprs(s.Body, func(e Expr) {
			if in, ok := e.(*Intrinsic); ok && in.Name == IntrDSPAddLUT {
				calls++
				n, _ = IsConst(in.Args[3])
			}
		})
		if calls != c.calls || n != c.n {
			t.Errorf("%s: %d calls of %s over %d elements, want %d over %d\n%s", name, calls, IntrDSPAddLUT, n, c.calls, c.n, s)
		}
		sameResult(t, name, f, s)
	}
	for _, op := range []graph.Op{graph.Add, graph.Sub} {
		g, nd := int8Binary(op)
		f, s := dspKernel(t, g, nd, nil)
		if !usesIntrinsic(s, IntrDSPAddLUT) {
			t.Errorf("%s: no %s:\n%s", op, IntrDSPAddLUT, s)
		}
		sameResult(t, string(op), f, s)
	}
}

// The compile-time check refuses what the C could not compute exactly:
// an output left shift (a multiplier above one), and tables whose
// rescaled values, times 4, leave int32. Where it accepts, the constants
// follow IntrDSPRequant's derivation scaled by 2^j: for ResNet-8's first
// Add (IC, TFLite's converter), j = 2, T = 18 and no sign correction
// (its ReLU clamps every negative sum at the zero point).
func TestDSPAddLUTPlan55(t *testing.T) {
	base := addLUTSpec{oa: 128, ob: -5, ls: 1 << 20, m1: 1 << 30, s1: -1, m2: 1518500250, s2: -2, mo: 1098017566, so: -16, zp: -128, lo: -128, hi: 127}
	_, _, m, A, D, T, ok := base.plan()
	if !ok || m != 1098017566 || T != 17 || D != 0 || A != 1+1<<16-128<<17 {
		t.Errorf("plan: ok %v, m %d, A %d, D %d, T %d; want m 1098017566, A %d, D 0, T 17", ok, m, A, D, T, 1+1<<16-128<<17)
	}
	left := base
	left.so = 1
	if _, _, _, _, _, _, ok := left.plan(); ok {
		t.Error("an output left shift was accepted")
	}
	wide := base
	wide.ls, wide.m1, wide.s1 = 1<<22, 1<<31-1, 0
	if _, _, _, _, _, _, ok := wide.plan(); ok {
		t.Error("tables of |v| up to 2^29 were accepted")
	}
	// Without an activation some output needs the sign correction (the
	// check tries D = 0 first): D = 2^(j-1). TFLite's parameters for input
	// scales 0.05 and 0.08 (zero points -3, 7) into 0.1 (zero point 3):
	// 0.3125 = 0.625·2^-1, 0.5, and 0.16 / (2^20 · 0.1) = 0.8·2^-19.
	none := addLUTSpec{oa: 3, ob: -7, ls: 1 << 20, m1: 1342177280, s1: -1, m2: 1 << 30, s2: 0, mo: 1717986918, so: -19, zp: 3, lo: -128, hi: 127}
	if _, _, _, A, D, T, ok := none.plan(); !ok || D != 2 || T != 20 || A != 1+1<<19+3<<20 {
		t.Errorf("no activation: ok %v, A %d, D %d, T %d; want A %d, D 2, T 20", ok, A, D, T, 1+1<<19+3<<20)
	}
}

// On the M55 the tables are the default from 2,048 elements (2 KB of
// flash the vector form does without); below, the vector form, unless
// knob add_lut asks for them.
func TestMVEAddLUTThreshold55(t *testing.T) {
	for _, c := range []struct {
		shape []int
		knobs map[string]int
		lut   bool
	}{
		{[]int{1, 16, 16, 8}, nil, true},
		{[]int{1, 16, 16, 7}, nil, false},
		{[]int{1, 4, 4, 8}, map[string]int{"add_lut": 1}, true},
		{[]int{1, 32, 32, 8}, map[string]int{"add_lut": 0}, false},
	} {
		g := graph.New("bin", "tflite")
		q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
		g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int8, Shape: c.shape, Quant: q(0.07, -128)})
		g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int8, Shape: c.shape, Quant: q(0.05, 4)})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: c.shape, Quant: q(0.1, -9)})
		n := g.AddNode(&graph.Node{Name: "bin", Op: graph.Add, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{Act: graph.ActRelu}})
		g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
		f := computeFunc(t, g, n)
		if c.knobs != nil {
			f.Knobs = c.knobs
		}
		s, err := MVE.schedule(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := usesIntrinsic(s, IntrMVEAddLUT); got != c.lut {
			t.Errorf("%v %v: %s %v, want %v", c.shape, c.knobs, IntrMVEAddLUT, got, c.lut)
		}
		sameResult(t, fmt.Sprint(c.shape), Finalize(computeFunc(t, g, n)), s)
	}
}
