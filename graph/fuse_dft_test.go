package graph

import "testing"

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
// 5 real transforms of 6 points summed directly, 5 x 6 x 6 x 2 = 360.
func TestDFTMACs(t *testing.T) {
	g := New("m", "onnx")
	g.AddTensor(&Tensor{Name: "x", DType: Float32, Shape: []int{1, 64, 1}})
	g.AddTensor(&Tensor{Name: "w", DType: Float32, Shape: []int{16}})
	g.AddTensor(&Tensor{Name: "y", DType: Float32, Shape: []int{1, 3, 9, 2}})
	fft := g.AddNode(&Node{Name: "stft", Op: DFT, Inputs: []string{"x", "w"}, Outputs: []string{"y"},
		Attrs: &DFTAttrs{N: 16, Onesided: true, Frames: 3, Step: 16}})
	g.AddTensor(&Tensor{Name: "r", DType: Float32, Shape: []int{5, 6, 1}})
	g.AddTensor(&Tensor{Name: "z", DType: Float32, Shape: []int{5, 6, 2}})
	direct := g.AddNode(&Node{Name: "dft", Op: DFT, Inputs: []string{"r"}, Outputs: []string{"z"}, Attrs: &DFTAttrs{Axis: 1, N: 6}})
	if m := MACs(g, fft); m != 432 {
		t.Errorf("FFT: %d MACs, want 432", m)
	}
	if m := MACs(g, direct); m != 360 {
		t.Errorf("direct: %d MACs, want 360", m)
	}
}
