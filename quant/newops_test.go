package quant

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func sineSamples(name string, shape []int, n int) []map[string]*graph.Data {
	var out []map[string]*graph.Data
	for i := 0; i < n; i++ {
		d := graph.NewData(graph.Float32, shape)
		for j := range d.F {
			d.F[j] = float32(math.Sin(float64(i*len(d.F)+j)*0.7)) * 2
		}
		out = append(out, map[string]*graph.Data{name: d})
	}
	return out
}

// A float ConvTranspose2D with a bias quantizes like a convolution
// (symmetric per-channel weights, int32 bias on s_in·s_w): the int8 graph
// tracks the float one (a bias stored as int8 on its own scale lost it).
func TestQuantizeConvTranspose(t *testing.T) {
	g := graph.New("ct", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4, 4, 3}})
	w := graph.NewData(graph.Float32, []int{2, 3, 3, 3})
	for i := range w.F {
		w.F[i] = float32(math.Cos(float64(i))) * 0.4
	}
	g.AddConst("w", w)
	g.AddConst("b", f32([]int{2}, 3.5, -2.25))
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32})
	g.AddNode(&graph.Node{Name: "ct", Op: graph.ConvTranspose2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.ConvTransposeAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, OutPad: [2]int{1, 1}, Group: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	q, r, err := PTQ(g, sineSamples("x", []int{1, 4, 4, 3}, 16), Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := q.Nodes[0]
	if n.Op != graph.ConvTranspose2D || q.In(n, 1).DType != graph.Int8 || q.In(n, 2).DType != graph.Int32 {
		t.Fatalf("node %s with weights %s and bias %s, want int8 weights and an int32 bias", n.Op, q.In(n, 1).DType, q.In(n, 2).DType)
	}
	if r.OutputSQNRdB < 30 {
		t.Errorf("output SQNR %.1f dB, want > 30", r.OutputSQNRdB)
	}
}

// CumSum and Mod have only plain-integer kernels: they stay in float. A
// classifier's ArgMax output (int64) quantizes and is evaluated exactly.
func TestQuantizeKeepsPlainOpsAndArgMax(t *testing.T) {
	g := graph.New("plain", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, 6}})
	for _, n := range []string{"r", "c", "m"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Float32})
	}
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int64})
	g.AddConst("d", f32([]int{1}, 0.75))
	g.AddNode(&graph.Node{Name: "relu", Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{"r"}})
	g.AddNode(&graph.Node{Name: "cumsum", Op: graph.CumSum, Inputs: []string{"r"}, Outputs: []string{"c"}, Attrs: &graph.CumSumAttrs{Axis: 1}})
	g.AddNode(&graph.Node{Name: "mod", Op: graph.Mod, Inputs: []string{"c", "d"}, Outputs: []string{"m"}, Attrs: &graph.ModAttrs{Fmod: true}})
	g.AddNode(&graph.Node{Name: "argmax", Op: graph.ArgMax, Inputs: []string{"r"}, Outputs: []string{"a"}, Attrs: &graph.ArgAttrs{Axis: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"m", "a"}
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	q, _, err := PTQ(g, sineSamples("x", []int{2, 6}, 16), Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range q.Nodes {
		switch n.Op {
		case graph.CumSum, graph.Mod:
			if q.In(n, 0).DType != graph.Float32 {
				t.Errorf("%s runs on %s, want float32", n.Op, q.In(n, 0).DType)
			}
		case graph.ArgMax:
			if q.In(n, 0).DType != graph.Int8 || q.Out(n, 0).DType != graph.Int64 {
				t.Errorf("ArgMax %s -> %s, want int8 -> int64", q.In(n, 0).DType, q.Out(n, 0).DType)
			}
		}
	}
}
