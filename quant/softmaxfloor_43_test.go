package quant

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// maskGraph is y = Softmax(x + mask) over the last axis: x [1, 8], the
// mask constant with masked value m at its last four elements.
func maskGraph(m float32) *graph.Graph {
	g := graph.New("mask", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 8}})
	d := graph.NewData(graph.Float32, []int{1, 8})
	for i := 4; i < 8; i++ {
		d.F[i] = m
	}
	g.AddTensor(&graph.Tensor{Name: "mask", DType: graph.Float32, Shape: []int{1, 8}, Data: d})
	g.AddTensor(&graph.Tensor{Name: "s", DType: graph.Float32, Shape: []int{1, 8}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 8}})
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"x", "mask"}, Outputs: []string{"s"}, Attrs: &graph.BinaryAttrs{}})
	g.AddNode(&graph.Node{Name: "softmax", Op: graph.Softmax, Inputs: []string{"s"}, Outputs: []string{"y"}, Attrs: &graph.SoftmaxAttrs{Axis: -1, Beta: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// The softmax floor, hand-derived: x uniform in [-2, 2], so every row's
// maximum (over its four unmasked elements, the masked ones being far
// below) is at least the smallest such maximum m0, computed here from the
// samples; the scores' int8 range then starts at m0 - 16 (SoftmaxDepth),
// not at the mask's -1e4 (scale about 39 before: the four real logits a
// step or two), and with a -inf mask there too (it made the range's low
// end the real logits' own, and -inf became 0). Either way the int8 output
// is within four steps (1/256 each) of the float one (the scores' step is
// about 25/255, and half of it moves a probability by up to about 0.05·p(1-p)
// per logit); without the rule (NoSoftmaxHeadroom) it is dozens of steps
// off.
func TestSoftmaxFloor(t *testing.T) {
	samples := uniformSamples(32, 8, map[string][2]float64{"x": {-2, 2}})
	m0 := math.Inf(1)
	for _, s := range samples {
		m := math.Inf(-1)
		for _, v := range s["x"].F[:4] {
			m = math.Max(m, float64(v))
		}
		m0 = math.Min(m0, m)
	}
	for _, mask := range []float32{-1e4, float32(math.Inf(-1))} {
		g := maskGraph(mask)
		q, _, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := int8Range(t, q, "s")
		if math.Abs(lo-(m0-SoftmaxDepth)) > 0.2 || hi < 2 || hi > 2+SoftmaxHeadroom+0.2 {
			t.Errorf("mask %g: scores hold [%g, %g], want the low end at %g (the smallest row maximum %g less %d)", mask, lo, hi, m0-SoftmaxDepth, m0, SoftmaxDepth)
		}
		if e := maxErrSteps(t, g, q, "y", samples); e > 4 {
			t.Errorf("mask %g: softmax output off by %.2f steps", mask, e)
		}
		off, _, err := PTQ(g, samples, Options{Method: MinMax, NoSoftmaxHeadroom: true}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if e := maxErrSteps(t, g, off, "y", samples); e < 20 {
			t.Errorf("mask %g without the rule: off by only %.2f steps", mask, e)
		}
	}
}
