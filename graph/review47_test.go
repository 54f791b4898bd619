package graph

import (
	"strings"
	"testing"
)

// An integer FullyConnected whose input scale is 1e30 compiled to a
// requantization shift of 100, which C leaves undefined (review finding).
// Validate refuses a multiplier that needs a shift of 31 or more (2^30 and
// up, as qmath splits it) and takes an ordinary one.
func TestRequantMultiplierBound47(t *testing.T) {
	build := func(inScale float32) *Graph {
		g := New("fc", "test")
		g.AddTensor(&Tensor{Name: "x", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{inScale}, ZeroPoint: []int32{0}}})
		g.AddTensor(&Tensor{Name: "y", DType: Int8, Shape: []int{1, 2}, Quant: &Quant{Scale: []float32{0.00390625}, ZeroPoint: []int32{-128}}})
		w := NewData(Int8, []int{2, 4})
		for i := range w.I {
			w.I[i] = int64(i*13%200 - 100)
		}
		g.AddTensor(&Tensor{Name: "w", DType: Int8, Shape: []int{2, 4}, Data: w, Quant: &Quant{Scale: []float32{0.003, 0.002}, ZeroPoint: []int32{0, 0}}})
		g.AddNode(&Node{Name: "fc", Op: FullyConnected, Inputs: []string{"x", "w", ""}, Outputs: []string{"y"}, Attrs: &FullyConnectedAttrs{}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		return g
	}
	if err := Validate(build(0.05)); err != nil {
		t.Fatalf("multiplier 0.05 × 0.003 / 0.0039 = 0.038: %v", err)
	}
	// 1e30 × 0.003 / 0.00390625 = 7.68e29.
	err := Validate(build(1e30))
	if err == nil || !strings.Contains(err.Error(), `node "fc" (FullyConnected): its requantization multiplier 7.68e+29`) {
		t.Fatalf("error %v, want the node and its multiplier 7.68e+29", err)
	}
	// ONNX's QLinear form multiplies in float: no shift to bound.
	g := build(1e30)
	g.Nodes[0].Attrs = &FullyConnectedAttrs{Requant: RequantFloat}
	if err := Validate(g); err != nil {
		t.Errorf("QLinear requantization: %v", err)
	}
}

// The same bound for the ops that rescale each input to the output's
// scale: an int8 Relu or Add whose input scale is 2^30 times its output's
// would shift by 31 bits in C (qmath splits 2^30 as 2^30 · 2^(31-31)), and
// is refused; just under 2^30 (a shift of 30) and 100 times are taken.
func TestRescaleBound47(t *testing.T) {
	build := func(op Op, ratio float64) *Graph {
		g := New("r", "test")
		g.AddTensor(&Tensor{Name: "x", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{float32(0.5 * ratio)}, ZeroPoint: []int32{0}}})
		g.AddTensor(&Tensor{Name: "z", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}})
		g.AddTensor(&Tensor{Name: "y", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}})
		ins := []string{"x"}
		if op == Add {
			ins = []string{"z", "x"}
		}
		g.AddNode(&Node{Name: "n", Op: op, Inputs: ins, Outputs: []string{"y"}})
		g.Inputs, g.Outputs = ins, []string{"y"}
		return g
	}
	for _, op := range []Op{Relu, Add} {
		for _, ratio := range []float64{100, 1<<30 - 64} {
			if err := Validate(build(op, ratio)); err != nil {
				t.Errorf("%s, ratio %g: %v", op, ratio, err)
			}
		}
		err := Validate(build(op, 1<<30))
		if want := `node "n" (` + string(op) + `): input "x"'s scale 5.368709e+08 over the output's 0.5 is 1.07e+09: the integer kernels would rescale by it with a left shift of 31 bits or more`; err == nil || err.Error() != want {
			t.Errorf("%s, ratio 2^30: %v, want %q", op, err, want)
		}
	}
}
