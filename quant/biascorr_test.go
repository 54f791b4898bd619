package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// meanErr is the per-channel mean of dequantized int8 minus float output of
// a one-FC graph, computed independently of CorrectBias.
func meanErr(t *testing.T, f, q *graph.Graph, samples []map[string]*graph.Data) []float64 {
	t.Helper()
	out := make([]float64, 4)
	for _, s := range samples {
		fo, err := interp.Run(f, s)
		if err != nil {
			t.Fatal(err)
		}
		x := q.Tensors["x"]
		sc, z := x.Quant.At(0)
		qo, err := interp.Run(q, map[string]*graph.Data{"x": QuantizeData(s["x"], sc, z)})
		if err != nil {
			t.Fatal(err)
		}
		ys, yz := q.Tensors["y"].Quant.At(0)
		for j, v := range fo["y"].F {
			out[j%4] += float64(ys)*float64(qo["y"].I[j]-int64(yz)) - float64(v)
		}
	}
	for c := range out {
		out[c] /= float64(len(samples))
	}
	return out
}

func TestCorrectBiasRemovesMeanError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	g := graph.New("fc", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 16}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	w := graph.NewData(graph.Float32, []int{4, 16})
	for i := range w.F {
		w.F[i] = float32(r.NormFloat64())
	}
	w.F[0] = 9 // an outlier weight makes channel 0's scale coarse
	g.AddConst("w", w)
	g.AddConst("b", f32([]int{4}, 0.3, -0.2, 0.1, 0))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	var samples []map[string]*graph.Data
	for i := 0; i < 64; i++ {
		d := graph.NewData(graph.Float32, []int{1, 16})
		for j := range d.F {
			d.F[j] = float32(r.Float64()*2 - 0.5) // mean 0.5: weight errors do not average out
		}
		samples = append(samples, map[string]*graph.Data{"x": d})
	}
	st, err := Calibrate(g, samples, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(g, st, Options{Method: MinMax})
	if err != nil {
		t.Fatal(err)
	}
	if q.Nodes[0].Op != graph.FullyConnected || q.In(q.Nodes[0], 0).DType != graph.Int8 {
		t.Skip("no int8 FullyConnected kernel")
	}
	before := meanErr(t, g, q, samples)
	if err := CorrectBias(g, q, samples); err != nil {
		t.Fatal(err)
	}
	after := meanErr(t, g, q, samples)
	ys, _ := q.Tensors["y"].Quant.At(0)
	for c := range after {
		// What is left is below one output step (the bias moves in steps of
		// s_in*s_w, far finer; the requantization rounds to s_out).
		if math.Abs(after[c]) > float64(ys) || math.Abs(after[c]) > math.Abs(before[c])+float64(ys)/4 {
			t.Errorf("channel %d: mean error %.5f before, %.5f after (output step %.5f)", c, before[c], after[c], ys)
		}
	}
}

func TestSQNR(t *testing.T) {
	if got := SQNR(100, 1); got != 20 {
		t.Errorf("SQNR(100, 1) = %v, want 20", got)
	}
	if got := SQNR(5, 0); got != MaxSQNR {
		t.Errorf("SQNR without noise = %v, want %v", got, MaxSQNR)
	}
}

// TestCorrectBiasIgnoresClippedOutputs: values beyond the int8 output range
// saturate whatever the bias; their clipping error must not move the bias
// (that would shift every unclipped value). y = x_0 (x_1 only widens the
// input range to [-10, 10]), output range [-1, 1] from calibration; one of
// eight correction samples has y = 9, clipped by 8: counted, it would move
// the bias by 1 on average, 128 output steps.
func TestCorrectBiasIgnoresClippedOutputs(t *testing.T) {
	g := graph.New("fc", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 1}})
	g.AddConst("w", f32([]int{1, 2}, 1, 0))
	g.AddConst("b", f32([]int{1}, 0))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	calib := []map[string]*graph.Data{{"x": f32([]int{1, 2}, -1, 10)}, {"x": f32([]int{1, 2}, 1, -10)}}
	st, err := Calibrate(g, calib, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(g, st, Options{Method: MinMax})
	if err != nil {
		t.Fatal(err)
	}
	if q.Nodes[0].Op != graph.FullyConnected || q.In(q.Nodes[0], 0).DType != graph.Int8 {
		t.Skip("no int8 FullyConnected kernel")
	}
	var samples []map[string]*graph.Data
	for i := 0; i < 8; i++ {
		v := float32(i)/4 - 0.9 // -0.9 .. 0.85, inside the output range
		if i == 7 {
			v = 9
		}
		samples = append(samples, map[string]*graph.Data{"x": f32([]int{1, 2}, v, 0)})
	}
	bq := q.Tensor(q.Nodes[0].Inputs[2])
	before := bq.Data.I[0]
	if err := CorrectBias(g, q, samples); err != nil {
		t.Fatal(err)
	}
	ys, _ := q.Tensors["y"].Quant.At(0)
	moved := math.Abs(float64(bq.Data.I[0]-before)) * float64(bq.Quant.Scale[0])
	if moved > float64(ys) {
		t.Errorf("bias moved by %.4f (output step %.4f): the clipped sample's error was corrected", moved, ys)
	}
}
