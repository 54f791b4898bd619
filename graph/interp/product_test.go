package interp

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A 1×1 fully connected layer of per-tensor weights at a near-tie: TFLite's
// float32 scale product gives the multiplier 1231985669 (shift -10); the
// accumulator 174031 times it, doubled and rounded to its high word, is
// 99,839.502 → 99,840, and 99,840 / 2^10 = 97.5 rounds to 98. The double
// product's 1231985630 gives 99,839.499 → 99,839 and 97 (bit-exactness
// fuzzing, worked out with TFLite's rules outside mcugen). A 1×1
// convolution of the same numbers multiplies in double, as TFLite's
// convolutions do: 97.
func TestFullyConnectedProductMultiplier(t *testing.T) {
	for _, c := range []struct {
		op   graph.Op
		want int64
	}{{graph.FullyConnected, 98}, {graph.Conv2D, 97}} {
		g := graph.New("fc", "tflite")
		shape, wshape := []int{1, 1}, []int{1, 1}
		var attrs any = &graph.FullyConnectedAttrs{}
		if c.op == graph.Conv2D {
			shape, wshape = []int{1, 1, 1, 1}, []int{1, 1, 1, 1}
			attrs = &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}
		}
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{0.18490859866142273}, ZeroPoint: []int32{0}}})
		w := graph.NewData(graph.Int8, wshape)
		w.I[0] = 1
		g.AddConst("w", w).Quant = &graph.Quant{Scale: []float32{0.05615375563502312}, ZeroPoint: []int32{0}}
		b := graph.NewData(graph.Int32, []int{1})
		b.I[0] = 174031
		g.AddConst("b", b)
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{18.533613204956055}, ZeroPoint: []int32{0}}})
		g.AddNode(&graph.Node{Name: "n", Op: c.op, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: attrs})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		out, err := Run(g, map[string]*graph.Data{"x": graph.NewData(graph.Int8, shape)})
		if err != nil {
			t.Fatal(err)
		}
		if got := out["y"].I[0]; got != c.want {
			t.Errorf("%s: y = %d, want %d", c.op, got, c.want)
		}
	}
}
