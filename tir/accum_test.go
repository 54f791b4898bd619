package tir

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func fcGraph(k int, wval int64, bias int64) *graph.Graph {
	g := graph.New("acc", "test")
	q := func(z int32) *graph.Quant { return &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{z}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, k}, Quant: q(127)})
	w := graph.NewData(graph.Int8, []int{1, k})
	for i := range w.I {
		w.I[i] = wval
	}
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.Int8, Shape: []int{1, k}, Data: w, Quant: q(0)})
	b := graph.NewData(graph.Int32, []int{1})
	b.I[0] = bias
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int32, Shape: []int{1}, Data: b})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 1}, Quant: q(0)})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	return g
}

// With the input zero point 127, x - zx reaches -255; weights of -127 make
// every product 32,385. 66,311 of them fit in int32 (2,147,483,647 /
// 32,385 = 66,311.3); one more, or a bias that tips it over, does not.
func TestCheckAccumulation(t *testing.T) {
	if err := CheckAccumulation(fcGraph(66311, -127, 0)); err != nil {
		t.Errorf("K=66311: %v", err)
	}
	err := CheckAccumulation(fcGraph(66312, -127, 0))
	if err == nil || !strings.Contains(err.Error(), `node "fc"`) {
		t.Errorf("K=66312 should be refused, got %v", err)
	}
	if err := CheckAccumulation(fcGraph(66311, -127, 1<<20)); err == nil {
		t.Errorf("K=66311 with a bias of 2^20 should be refused")
	}
	// Small weights leave room: the bound uses the actual constants.
	if err := CheckAccumulation(fcGraph(100000, 1, 0)); err != nil {
		t.Errorf("K=100000 with unit weights: %v", err)
	}
}

// A 16x8 layer (int16 input, int64 bias) is bounded by TFLite's 2^47, and a
// hostile int64 bias cannot wrap the bound: MinInt64 (whose negation
// overflows) and values near MaxInt64 counted as 0 or wrapped the sum
// negative (review finding).
func TestCheckAccumulation16x8Bias(t *testing.T) {
	wide := func(bias int64) *graph.Graph {
		g := fcGraph(16, 127, 0)
		g.Tensors["x"].DType = graph.Int16
		g.Tensors["x"].Quant.ZeroPoint = []int32{0}
		g.Tensors["y"].DType = graph.Int16
		b := graph.NewData(graph.Int64, []int{1})
		b.I[0] = bias
		g.Tensors["b"] = &graph.Tensor{Name: "b", DType: graph.Int64, Shape: []int{1}, Data: b}
		return g
	}
	if err := CheckAccumulation(wide(1 << 40)); err != nil {
		t.Errorf("bias 2^40: %v", err)
	}
	for _, bias := range []int64{1 << 47, -1 << 47, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1000} {
		if err := CheckAccumulation(wide(bias)); err == nil || !strings.Contains(err.Error(), "beyond the 2^47") {
			t.Errorf("bias %d: %v", bias, err)
		}
	}
}

// Constant weights bound the products by each channel's Σ|w − z| (times the
// input's largest offset, plus one for kernels that fold z_x·Σw into the
// bias), not by K times the largest weight: a 102,400-input layer of small
// weights TFLite runs was refused (review finding). Hand-worked: 102,400
// weights, one of -127 and the rest 0, against x − 127: Σ|w| = 127, bound
// 127·256 = 32,512. And a layer refused for its bias says so, not "split
// the layer" (two products cannot be split).
func TestCheckAccumulationChannelSums(t *testing.T) {
	g := fcGraph(102400, 0, 0)
	g.Tensors["w"].Data.I[7] = -127
	if err := CheckAccumulation(g); err != nil {
		t.Errorf("K=102400, one weight: %v", err)
	}
	g = fcGraph(102400, 1, 0) // Σ|w| = 102,400, ×256 = 26,214,400
	if err := CheckAccumulation(g); err != nil {
		t.Errorf("K=102400, unit weights: %v", err)
	}
	err := CheckAccumulation(fcGraph(2, 127, math.MaxInt32-100))
	if err == nil || strings.Contains(err.Error(), "split the layer") || !strings.Contains(err.Error(), "the bias alone is up to 2147483547") {
		t.Errorf("two products and a bias near 2^31: %v", err)
	}
	err = CheckAccumulation(fcGraph(66312, -127, 0))
	if err == nil || !strings.Contains(err.Error(), "split the layer") {
		t.Errorf("K=66312 of -127: %v", err)
	}
}
