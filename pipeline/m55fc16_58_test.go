package pipeline

import (
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// fc16Graph is one int8 fully connected layer k → n with an int16 output,
// as an integer LSTM's gate layers are (TFLite's 8x8→16 FULLY_CONNECTED).
func fc16Graph(seed int64, k, n int) *graph.Graph {
	r := rand.New(rand.NewSource(seed))
	g := graph.New("fc16", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, k}, Quant: &graph.Quant{Scale: []float32{0.0078}, ZeroPoint: []int32{-3}}})
	w := graph.NewData(graph.Int8, []int{n, k})
	for i := range w.I {
		w.I[i] = int64(r.Intn(255) - 127)
	}
	g.AddConst("w", w).Quant = &graph.Quant{Scale: []float32{0.0074}, ZeroPoint: []int32{0}}
	b := graph.NewData(graph.Int32, []int{n})
	for i := range b.I {
		b.I[i] = int64(r.Intn(20000) - 10000)
	}
	g.AddConst("b", b)
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int16, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{1.0 / 4096}, ZeroPoint: []int32{0}}})
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// On the M55 a fully connected layer Helium's schedule declines runs the
// dsp kernels (the core has the DSP extension), not the generic loops: an
// LSTM gate's int8 → int16 layer and a single-output layer, bit-exact and
// in at most 4/5 of the generic target's instructions (session 58 review:
// micro_speech_lstm took 22.6 M instructions on mps3-an547, 6.1 M on the
// M4).
func TestM55FCFallbackDSP58(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps3-an547")
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"int16 out 28→20", func() *graph.Graph { return fc16Graph(1, 28, 20) }},
		{"int16 out 64→256", func() *graph.Graph { return fc16Graph(2, 64, 256) }},
		{"640→1", func() *graph.Graph { return fcChain(3, 640, 1) }},
	} {
		def := checkedRun(t, c.g(), "fc", Options{Board: b, Version: "test"}, 2, 58)
		gen := checkedRun(t, c.g(), "fcg", Options{Board: b, Version: "test", Target: "generic"}, 2, 58)
		if 5*def > 4*gen {
			t.Errorf("%s: %d instructions, the generic target %d: want at most 4/5 of it", c.name, def, gen)
		}
		t.Logf("%s: %d, generic %d", c.name, def, gen)
	}
}
