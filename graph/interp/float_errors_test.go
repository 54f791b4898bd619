package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestMalformedInputsGiveErrors feeds every kernel inputs it must reject and
// checks that it returns an error rather than panicking or computing.
func TestMalformedInputsGiveErrors(t *testing.T) {
	x4 := fd([]int{1, 2, 2, 1}, 1, 2, 3, 4)
	x2 := fd([]int{2, 2}, 1, 2, 3, 4)
	short := &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{1, 2, 3}}
	tests := []struct {
		name  string
		op    graph.Op
		attrs any
		out   []int
		ins   []*graph.Data
	}{
		{"conv rank", graph.Conv2D, nil, []int{2, 2}, []*graph.Data{x2, x2}},
		{"conv no weights", graph.Conv2D, nil, []int{1, 2, 2, 1}, []*graph.Data{x4, nil}},
		{"conv empty kernel", graph.Conv2D, nil, []int{1, 2, 2, 1}, []*graph.Data{x4, graph.NewData(graph.Float32, []int{1, 0, 1, 1})}},
		{"conv negative stride", graph.Conv2D, &graph.Conv2DAttrs{Stride: [2]int{-1, 1}}, []int{1, 2, 2, 1}, []*graph.Data{x4, fd([]int{1, 1, 1, 1}, 1)}},
		{"conv negative pad", graph.Conv2D, &graph.Conv2DAttrs{Pad: graph.Padding{Top: -1}}, []int{1, 1, 2, 1}, []*graph.Data{x4, fd([]int{1, 1, 1, 1}, 1)}},
		{"conv bad act", graph.Conv2D, &graph.Conv2DAttrs{Act: 9}, []int{1, 2, 2, 1}, []*graph.Data{x4, fd([]int{1, 1, 1, 1}, 1)}},
		{"data shorter than shape", graph.Relu, nil, []int{2, 2}, []*graph.Data{short}},
		{"fc weights rank", graph.FullyConnected, nil, []int{2, 2}, []*graph.Data{x2, fd([]int{4}, 1, 2, 3, 4)}},
		{"fc out shape", graph.FullyConnected, nil, []int{2, 3}, []*graph.Data{x2, x2}},
		{"matmul scalar", graph.BatchMatMul, nil, []int{1}, []*graph.Data{fd([]int{}, 1), x2}},
		{"binary missing", graph.Add, nil, []int{2, 2}, []*graph.Data{x2, nil}},
		{"unary out shape", graph.Tanh, nil, []int{3}, []*graph.Data{x2}},
		{"pool rank", graph.MaxPool2D, &graph.PoolAttrs{Kernel: [2]int{1, 1}}, []int{2, 2}, []*graph.Data{x2}},
		{"pool zero kernel", graph.AvgPool2D, &graph.PoolAttrs{}, []int{1, 2, 2, 1}, []*graph.Data{x4}},
		{"softmax scalar", graph.Softmax, nil, []int{}, []*graph.Data{fd([]int{}, 1)}},
		{"softmax out shape", graph.Softmax, nil, []int{4}, []*graph.Data{x2}},
		{"resize rank", graph.Resize, &graph.ResizeAttrs{Mode: "nearest"}, []int{4, 4}, []*graph.Data{x2}},
		{"resize empty axis", graph.Resize, &graph.ResizeAttrs{Mode: "nearest"}, []int{1, 2, 2, 1}, []*graph.Data{graph.NewData(graph.Float32, []int{1, 0, 2, 1})}},
		{"resize negative scale", graph.Resize, &graph.ResizeAttrs{Mode: "nearest", Scale: [2]float32{-1, 1}}, []int{1, 2, 2, 1}, []*graph.Data{x4}},
		{"transpose wrong attrs", graph.Transpose, &graph.SliceAttrs{}, []int{2, 2}, []*graph.Data{x2}},
		{"slice short lists", graph.Slice, &graph.SliceAttrs{Begin: []int{0, 0}, End: []int{1}}, []int{1, 2}, []*graph.Data{x2}},
		{"pad crop below zero", graph.Pad, &graph.PadAttrs{Pads: []int{-2, 0, -1, 0}}, []int{0, 2}, []*graph.Data{x2}},
		{"pad edge of empty", graph.Pad, &graph.PadAttrs{Pads: []int{1, 0}, Mode: "edge"}, []int{1}, []*graph.Data{graph.NewData(graph.Float32, []int{0})}},
		{"reshape missing", graph.Reshape, nil, []int{4}, []*graph.Data{short}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = callKernel(tc.op, tc.attrs, tc.out, tc.ins)
			}()
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
		})
	}
}

// callKernel calls the float kernel of op directly (bypassing the driver's
// own input checks) on a one-node graph with the given output shape.
func callKernel(op graph.Op, attrs any, out []int, ins []*graph.Data) error {
	g := graph.New("t", "test")
	n := &graph.Node{Name: "n", Op: op, Attrs: attrs, Outputs: []string{"out"}}
	for i, d := range ins {
		name := ""
		if d != nil {
			name = "in" + string(rune('0'+i))
			g.AddConst(name, d)
		}
		n.Inputs = append(n.Inputs, name)
	}
	g.AddTensor(&graph.Tensor{Name: "out", DType: graph.Float32, Shape: out})
	k, ok := kernels[key{op, FloatClass}]
	if !ok {
		return nil
	}
	_, err := k(g, n, ins)
	return err
}
