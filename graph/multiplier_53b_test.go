package graph

import (
	"strings"
	"testing"
)

// fc53b is an int8 FullyConnected of input scale sx, per-tensor weights of
// scale sw and output scale sy.
func fc53b(sx, sw, sy float32, mode RequantMode) *Graph {
	g := New("fc", "test")
	g.AddTensor(&Tensor{Name: "x", DType: Int8, Shape: []int{1, 4}, Quant: &Quant{Scale: []float32{sx}, ZeroPoint: []int32{0}}})
	g.AddTensor(&Tensor{Name: "y", DType: Int8, Shape: []int{1, 2}, Quant: &Quant{Scale: []float32{sy}, ZeroPoint: []int32{0}}})
	w := NewData(Int8, []int{2, 4})
	for i := range w.I {
		w.I[i] = int64(i - 4)
	}
	g.AddTensor(&Tensor{Name: "w", DType: Int8, Shape: []int{2, 4}, Data: w, Quant: &Quant{Scale: []float32{sw}, ZeroPoint: []int32{0}}})
	g.AddNode(&Node{Name: "fc", Op: FullyConnected, Inputs: []string{"x", "w", ""}, Outputs: []string{"y"}, Attrs: &FullyConnectedAttrs{Requant: mode}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// A per-tensor FullyConnected's multiplier is float(sx · sw) / sy, the
// product in float32 (TFLite's): 1e20 · 1e20 overflows it, though the
// double quotient, 1e40 / 1e38 = 100, needs no large shift. It was
// converted from +Inf as the build machine does; now it is refused. An
// ordinary one (0.5 · 0.25 / 0.125 = 1) is taken.
func TestProductMultiplierOverflow53b(t *testing.T) {
	if err := Validate(fc53b(0.5, 0.25, 0.125, RequantFixedPoint)); err != nil {
		t.Fatalf("multiplier 1: %v", err)
	}
	err := Validate(fc53b(1e20, 1e20, 1e38, RequantFixedPoint))
	if err == nil || !strings.Contains(err.Error(), `node "fc" (FullyConnected): its requantization multiplier +Inf (input scale 1e+20 × weight scale 1e+20 in float32`) {
		t.Fatalf("scales 1e20 · 1e20 / 1e38: %v", err)
	}
}

// ONNX's QLinear form multiplies the accumulator by sx · sw / sy in float32:
// 1e30 · 1e30 overflows it (+Inf, and 0 · Inf is NaN), refused; 1e30 ·
// 0.003 / 0.0039 = 7.7e29 is finite and taken (float requantization has no
// shift to bound).
func TestRequantFloatInfinite53b(t *testing.T) {
	if err := Validate(fc53b(1e30, 0.003, 0.00390625, RequantFloat)); err != nil {
		t.Fatalf("finite float scale: %v", err)
	}
	err := Validate(fc53b(1e30, 1e30, 1, RequantFloat))
	if err == nil || !strings.Contains(err.Error(), `node "fc" (FullyConnected): its requantization scale (input scale 1e+30 × weight scale 1e+30 / output scale 1, in float32 as ONNX Runtime computes it) is +Inf`) {
		t.Fatalf("scale 1e30 · 1e30: %v", err)
	}
}

// SVDF's multipliers are float(s1 · s2) / s3 in float32 (TFLite Micro's):
// 1e30 · 1e30 overflows, refused; 2^20 · 2^20 / 2^-1 = 2^41 needs a shift
// of 42, refused; 0.5 · 0.25 / 0.125 = 1 is taken.
func TestSVDFMultiplier53b(t *testing.T) {
	build := func(op Op, s1, s2, s3 float32) (*Graph, *Node) {
		g := New("svdf", "test")
		q := func(s float32) *Quant { return &Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
		g.AddTensor(&Tensor{Name: "a", DType: Int8, Shape: []int{1, 4}, Quant: q(s1)})
		g.AddTensor(&Tensor{Name: "b", DType: Int8, Shape: []int{2, 4}, Quant: q(s2)})
		g.AddTensor(&Tensor{Name: "c", DType: Int16, Shape: []int{1, 4}, Quant: q(s3)})
		g.AddTensor(&Tensor{Name: "y", DType: Int8, Shape: []int{1, 4}, Quant: q(s3)})
		n := &Node{Name: "s", Op: op, Inputs: []string{"a", "b", "c"}, Outputs: []string{"y"}, Attrs: &SVDFAttrs{Rank: 1, Memory: 2}}
		if op == SVDFTime {
			n.Inputs = []string{"a", "b"}
		}
		g.AddNode(n)
		return g, n
	}
	for _, op := range []Op{SVDFFeature, SVDFTime} {
		if err := CheckMultiplier(build(op, 0.5, 0.25, 0.125)); err != nil {
			t.Errorf("%s, multiplier 1: %v", op, err)
		}
		for _, s := range [][3]float32{{1e30, 1e30, 1}, {1 << 20, 1 << 20, 0.5}} {
			err := CheckMultiplier(build(op, s[0], s[1], s[2]))
			if err == nil || !strings.Contains(err.Error(), "in float32 as TFLite Micro computes it) needs a left shift of 31 bits or more") {
				t.Errorf("%s, scales %v: %v", op, s, err)
			}
		}
	}
}
