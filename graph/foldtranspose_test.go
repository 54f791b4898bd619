package graph_test

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// FoldTransposeIntoBatchMatMul: a Q·Kᵀ whose Kᵀ is a Transpose of the last
// two axes loses the Transpose; a P·V whose V is a head split
// ([1,T,h,d] → [1,h,T,d]) gets the split written transposed and AdjY. The
// products equal sums worked out here from the inputs, and a Transpose
// read twice, or feeding a BatchMatMul with AdjY already, is left alone.
func TestFoldTransposeIntoBatchMatMul(t *testing.T) {
	// a: [1, 2, 3, 2] (batch 1, heads 2, rows 3, k 2); c: [1, 2, 3, 2] too.
	a := []float32{1, 2, -1, 0, 3, 1, 2, -2, 0.5, 1, -3, 4}
	c := []float32{0.5, -1, 2, 1, 0, 3, -2, 1, 1, 1, 4, -0.5}
	// split: c as [1, 3, 2, 2] (rows, heads, k) transposed to [1, 2, 3, 2].
	cAt := func(split bool, h, r, k int) float32 {
		if split {
			return c[r*4+h*2+k]
		}
		return c[h*6+r*2+k]
	}
	build := func(split, twice, adj bool) *graph.Graph {
		g := graph.New("attn", "onnx")
		g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Float32, Shape: []int{1, 2, 3, 2}})
		cs, perm, ts := []int{1, 2, 3, 2}, []int{0, 1, 3, 2}, []int{1, 2, 2, 3}
		if split {
			cs, perm = []int{1, 3, 2, 2}, []int{0, 2, 3, 1}
		}
		if adj {
			ts, perm = []int{1, 2, 3, 2}, []int{0, 2, 1, 3}
		}
		g.AddTensor(&graph.Tensor{Name: "c", DType: graph.Float32, Shape: cs})
		g.AddTensor(&graph.Tensor{Name: "ct", DType: graph.Float32, Shape: ts})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2, 3, 3}})
		g.AddNode(&graph.Node{Name: "tr", Op: graph.Transpose, Inputs: []string{"c"}, Outputs: []string{"ct"}, Attrs: &graph.TransposeAttrs{Perm: perm}})
		g.AddNode(&graph.Node{Name: "mm", Op: graph.BatchMatMul, Inputs: []string{"a", "ct"}, Outputs: []string{"y"}, Attrs: &graph.BatchMatMulAttrs{AdjY: adj}})
		g.Inputs, g.Outputs = []string{"a", "c"}, []string{"y"}
		if twice {
			g.Outputs = append(g.Outputs, "ct")
		}
		return g
	}
	for _, tc := range []struct {
		name              string
		split, twice, adj bool
		folded, nodes     int
		wantPerm          []int
	}{
		{"q·kᵀ", false, false, false, 1, 1, nil},
		{"head split", true, false, false, 1, 2, []int{0, 2, 1, 3}},
		{"transpose also an output", false, true, false, 0, 2, []int{0, 1, 3, 2}},
		{"adj already", true, false, true, 0, 2, []int{0, 2, 1, 3}},
	} {
		g := build(tc.split, tc.twice, tc.adj)
		if n := graph.FoldTransposeIntoBatchMatMul(g); n != tc.folded || len(g.Nodes) != tc.nodes {
			t.Errorf("%s: folded %d, %d nodes", tc.name, n, len(g.Nodes))
			continue
		}
		if err := graph.Validate(g); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.wantPerm != nil {
			if p := g.Nodes[0].Attrs.(*graph.TransposeAttrs).Perm; !slices.Equal(p, tc.wantPerm) {
				t.Errorf("%s: perm %v, want %v", tc.name, p, tc.wantPerm)
			}
		}
		cshape := []int{1, 2, 3, 2}
		if tc.split {
			cshape = []int{1, 3, 2, 2}
		}
		out, err := interp.Run(g, map[string]*graph.Data{
			"a": {DType: graph.Float32, Shape: []int{1, 2, 3, 2}, F: a},
			"c": {DType: graph.Float32, Shape: cshape, F: c},
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		y := out["y"]
		if !slices.Equal(y.Shape, []int{1, 2, 3, 3}) {
			t.Fatalf("%s: y is %v", tc.name, y.Shape)
		}
		// y[h][i][j] = Σ_k a[h][i][k]·C[h][j][k], C the transposed operand's rows.
		for h := 0; h < 2; h++ {
			for i := 0; i < 3; i++ {
				for j := 0; j < 3; j++ {
					var want float32
					for k := 0; k < 2; k++ {
						want += a[h*6+i*2+k] * cAt(tc.split, h, j, k)
					}
					if got := y.F[h*9+i*3+j]; got != want {
						t.Errorf("%s: y[%d][%d][%d] = %g, want %g", tc.name, h, i, j, got, want)
					}
				}
			}
		}
	}
}

// Removing a Transpose must not disturb the walk over the nodes: two heads
// whose Kᵀ are Transposes of the last two axes, each product followed by a
// Relu (q·kᵀ then Softmax, as PyTorch exports attention), both fold and
// the graph stays valid (the walk deleted while it ranged over g.Nodes and
// then read a nil node: review finding). A Transpose whose input has other
// quantization than its output is kept.
func TestFoldTransposeTwoHeads(t *testing.T) {
	g := graph.New("attn", "onnx")
	for _, s := range []string{"1", "2"} {
		g.AddTensor(&graph.Tensor{Name: "a" + s, DType: graph.Float32, Shape: []int{1, 3, 2}})
		g.AddTensor(&graph.Tensor{Name: "c" + s, DType: graph.Float32, Shape: []int{1, 3, 2}})
		g.AddTensor(&graph.Tensor{Name: "ct" + s, DType: graph.Float32, Shape: []int{1, 2, 3}})
		g.AddTensor(&graph.Tensor{Name: "y" + s, DType: graph.Float32, Shape: []int{1, 3, 3}})
		g.AddTensor(&graph.Tensor{Name: "z" + s, DType: graph.Float32, Shape: []int{1, 3, 3}})
		g.AddNode(&graph.Node{Name: "tr" + s, Op: graph.Transpose, Inputs: []string{"c" + s}, Outputs: []string{"ct" + s}, Attrs: &graph.TransposeAttrs{Perm: []int{0, 2, 1}}})
	}
	for _, s := range []string{"1", "2"} {
		g.AddNode(&graph.Node{Name: "mm" + s, Op: graph.BatchMatMul, Inputs: []string{"a" + s, "ct" + s}, Outputs: []string{"y" + s}, Attrs: &graph.BatchMatMulAttrs{}})
		g.AddNode(&graph.Node{Name: "r" + s, Op: graph.Relu, Inputs: []string{"y" + s}, Outputs: []string{"z" + s}})
	}
	g.Inputs, g.Outputs = []string{"a1", "c1", "a2", "c2"}, []string{"z1", "z2"}
	if n := graph.FoldTransposeIntoBatchMatMul(g); n != 2 || len(g.Nodes) != 4 {
		t.Fatalf("folded %d, %d nodes; want 2 and 4", n, len(g.Nodes))
	}
	if err := graph.Validate(g); err != nil {
		t.Fatal(err)
	}
	for _, nd := range g.Nodes {
		if nd == nil || nd.Op == graph.Transpose {
			t.Fatalf("nodes %v", g.Nodes)
		}
	}
	// Quantized: the Transpose's input and output differ in scale.
	q := graph.New("q", "tflite")
	q.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int8, Shape: []int{1, 3, 2}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{0}}})
	q.AddTensor(&graph.Tensor{Name: "c", DType: graph.Int8, Shape: []int{1, 3, 2}, Quant: &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{0}}})
	q.AddTensor(&graph.Tensor{Name: "ct", DType: graph.Int8, Shape: []int{1, 2, 3}, Quant: &graph.Quant{Scale: []float32{0.2}, ZeroPoint: []int32{0}}})
	q.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 3, 3}, Quant: &graph.Quant{Scale: []float32{0.5}, ZeroPoint: []int32{0}}})
	q.AddNode(&graph.Node{Name: "tr", Op: graph.Transpose, Inputs: []string{"c"}, Outputs: []string{"ct"}, Attrs: &graph.TransposeAttrs{Perm: []int{0, 2, 1}}})
	q.AddNode(&graph.Node{Name: "mm", Op: graph.BatchMatMul, Inputs: []string{"a", "ct"}, Outputs: []string{"y"}, Attrs: &graph.BatchMatMulAttrs{}})
	q.Inputs, q.Outputs = []string{"a", "c"}, []string{"y"}
	graph.FoldTransposeIntoBatchMatMul(q)
	if len(q.Nodes) != 2 || q.Nodes[1].Inputs[1] != "ct" {
		t.Errorf("a requantizing Transpose was removed: %d nodes, product reads %v", len(q.Nodes), q.Nodes[len(q.Nodes)-1].Inputs)
	}
	if err := graph.Validate(q); err != nil {
		t.Fatal(err)
	}
}
