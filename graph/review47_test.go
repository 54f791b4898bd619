package graph

import (
	"strings"
	"testing"
)

// An integer FullyConnected whose input scale is 1e30 compiled to a
// requantization shift of 100, which C leaves undefined (review finding).
// Validate refuses a multiplier of 2^30 or more and takes an ordinary one.
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
}

// The same bound for the ops that rescale each input to the output's
// scale: an int8 Relu whose input scale is 2^31 times its output's would
// shift by over 31 bits in C, and is refused; 100 times is taken.
func TestRescaleBound47(t *testing.T) {
	build := func(op Op, ratio float32) *Graph {
		g := New("r", "test")
		g.AddTensor(&Tensor{Name: "x", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.01 * ratio}, ZeroPoint: []int32{0}}})
		g.AddTensor(&Tensor{Name: "z", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.01}, ZeroPoint: []int32{0}}})
		g.AddTensor(&Tensor{Name: "y", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{0.01}, ZeroPoint: []int32{0}}})
		ins := []string{"x"}
		if op == Add {
			ins = []string{"z", "x"}
		}
		g.AddNode(&Node{Name: "n", Op: op, Inputs: ins, Outputs: []string{"y"}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		if op == Add {
			g.Inputs = []string{"z", "x"}
		}
		return g
	}
	for _, op := range []Op{Relu, Add} {
		if err := Validate(build(op, 100)); err != nil {
			t.Errorf("%s, ratio 100: %v", op, err)
		}
		err := Validate(build(op, 1<<31))
		if want := `node "n" (` + string(op) + `): input "x"'s scale`; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "2^30 or more") {
			t.Errorf("%s, ratio 2^31: %v, want %q", op, err, want)
		}
	}
}
