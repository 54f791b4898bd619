package graph

import (
	"slices"
	"testing"
)

// FuseDFTPower folds a sum of squares over re and im into the DFT that is
// its only input's producer, and nothing else: not when the spectrum is
// also read elsewhere, not over another axis, not with keepdims.
func TestFuseDFTPower(t *testing.T) {
	build := func(axes []int, keep, alsoOutput bool) *Graph {
		g := New("f", "onnx")
		g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 64, 1}})
		g.Inputs = []string{"x"}
		g.AddTensor(&Tensor{Name: "spec", DType: Float32, Shape: []int{1, 3, 9, 2}})
		g.AddNode(&Node{Name: "stft", Op: DFT, Inputs: []string{"x"}, Outputs: []string{"spec"},
			Attrs: &DFTAttrs{N: 16, Onesided: true, Frames: 3, Step: 16}})
		g.AddTensor(&Tensor{Name: "pow", DType: Float32})
		g.AddNode(&Node{Name: "sq", Op: Reduce, Inputs: []string{"spec"}, Outputs: []string{"pow"},
			Attrs: &ReduceAttrs{Kind: ReduceSumSquare, Axes: axes, KeepDims: keep}})
		g.Outputs = []string{"pow"}
		if alsoOutput {
			g.Outputs = append(g.Outputs, "spec")
		}
		if err := InferShapes(g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := build([]int{3}, false, false)
	if n := FuseDFTPower(g); n != 1 || len(g.Nodes) != 1 || g.Tensors["spec"] != nil {
		t.Fatalf("fused %d, nodes %d", n, len(g.Nodes))
	}
	a := g.Nodes[0].Attrs.(*DFTAttrs)
	if !a.Power || g.Nodes[0].Outputs[0] != "pow" || len(g.Tensors["pow"].Shape) != 3 || g.Tensors["pow"].Shape[2] != 9 {
		t.Errorf("fused node %+v -> %v %v", *a, g.Nodes[0].Outputs, g.Tensors["pow"].Shape)
	}
	if err := InferShapes(g); err != nil {
		t.Errorf("the fused graph's shapes: %v", err)
	}
	for name, g := range map[string]*Graph{
		"another axis":       build([]int{2}, false, false),
		"keepdims":           build([]int{3}, true, false),
		"spectrum also read": build([]int{3}, false, true),
	} {
		if n := FuseDFTPower(g); n != 0 || len(g.Nodes) != 2 {
			t.Errorf("%s: fused %d", name, n)
		}
	}
}

// A DFT's multiply-adds (inspect's MACs, bench's MACs per instruction):
// 3 windowed real frames of 16 points as FFTs, 3 x (2 x 16 x 4 + 16) = 432;
// 5 transforms of 6 = 2 x 3 points by a radix-2 stage (3 butterflies of 4)
// and a radix-3 one (2 groups of 2 twiddle products and 4 constant ones,
// 4 real products each): 5 x (12 + 48) = 300; 5 real transforms of 11
// points (prime) summed directly, 5 x 11 x 11 x 2 = 1210.
func TestDFTMACs(t *testing.T) {
	g := New("m", "onnx")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 64, 1}})
	g.AddTensor(&Tensor{Name: "w", DType: Float32, Shape: []int{16}})
	g.AddTensor(&Tensor{Name: "y", DType: Float32, Shape: []int{1, 3, 9, 2}})
	fft := g.AddNode(&Node{Name: "stft", Op: DFT, Inputs: []string{"x", "w"}, Outputs: []string{"y"},
		Attrs: &DFTAttrs{N: 16, Onesided: true, Frames: 3, Step: 16}})
	g.AddTensor(&Tensor{Name: "r", DType: Float32, Shape: []int{5, 6, 1}})
	g.AddTensor(&Tensor{Name: "z", DType: Float32, Shape: []int{5, 6, 2}})
	mixed := g.AddNode(&Node{Name: "dft", Op: DFT, Inputs: []string{"r"}, Outputs: []string{"z"}, Attrs: &DFTAttrs{Axis: 1, N: 6}})
	g.AddTensor(&Tensor{Name: "p", DType: Float32, Shape: []int{5, 11, 1}})
	g.AddTensor(&Tensor{Name: "q", DType: Float32, Shape: []int{5, 11, 2}})
	direct := g.AddNode(&Node{Name: "prime", Op: DFT, Inputs: []string{"p"}, Outputs: []string{"q"}, Attrs: &DFTAttrs{Axis: 1, N: 11}})
	if m := MACs(g, fft); m != 432 {
		t.Errorf("FFT: %d MACs, want 432", m)
	}
	if m := MACs(g, mixed); m != 300 {
		t.Errorf("mixed radix: %d MACs, want 300", m)
	}
	if m := MACs(g, direct); m != 1210 {
		t.Errorf("direct: %d MACs, want 1210", m)
	}
}

// WeightRuns on a hand-made filter bank of 4 rows over 20 inputs: row 0
// weighs k 2..5 (k 4 zero inside the run), row 1 nothing, row 2 k 6..8,
// row 3 k 19: runs (2,4), (0,0), (6,3), (19,1), 8 of 80 weights, so an FC
// of 3 rows counts 3 x 8 = 24 MACs. Filling row 1 with 17 more weights
// (25 > 80/4) makes the weights dense.
func TestWeightRuns(t *testing.T) {
	d := NewData(Float32, []int{4, 20})
	for _, k := range []int{2, 3, 5} {
		d.F[k] = 1
	}
	d.F[40+6], d.F[40+8] = 0.5, -0.25
	d.F[60+19] = 3
	g := New("m", "onnx")
	w := g.AddConst("w", d)
	want := [][2]int{{2, 4}, {0, 0}, {6, 3}, {19, 1}}
	if got := WeightRuns(w); !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{3, 20}})
	g.AddTensor(&Tensor{Name: "y", DType: Float32, Shape: []int{3, 4}})
	fc := g.AddNode(&Node{Name: "fc", Op: FullyConnected, Inputs: []string{"x", "w"}, Outputs: []string{"y"}, Attrs: &FullyConnectedAttrs{}})
	if m := MACs(g, fc); m != 24 {
		t.Errorf("banded FC: %d MACs, want 24", m)
	}
	for k := 1; k < 18; k++ {
		d.F[20+k] = 1
	}
	if got := WeightRuns(w); got != nil {
		t.Errorf("25 of 80 weights in runs: %v, want dense (nil)", got)
	}
	if m := MACs(g, fc); m != 240 {
		t.Errorf("dense FC: %d MACs, want 240", m)
	}
}
