package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The per-channel figure is the median of the channels' own SQNRs
// (hand-worked): channel 0 exact, channels 1 to 3 with noise equal to
// their signal (0 dB) give 0 dB, where the tensor's SQNR is channel 0's
// 250,000.5625 against a noise of 0.5625: 10·log10(444,445.4) = 56.48 dB.
func TestChannelSQNRMedian(t *testing.T) {
	a := &acc{c: 4}
	a.add([]float64{500, 0.5, -0.5, 0.25}, []float64{500, 0, 0, 0})
	if got := round2(SQNR(a.sig, a.noise)); got != 56.48 {
		t.Errorf("SQNR %v, want 56.48", got)
	}
	if c := a.channelSQNR(); c == nil || *c != 0 {
		t.Errorf("channel SQNR %v, want 0", c)
	}
	// A dead channel (no signal) is left out: 999, 0 and 0 give 0; one
	// channel with a signal gives no figure.
	a = &acc{c: 2}
	a.add([]float64{0, 3, 0, 1}, []float64{0, 3, 0, 1})
	if c := a.channelSQNR(); c != nil {
		t.Errorf("one live channel: %v, want none", *c)
	}
}

// A fully connected layer whose channel 0 has a bias of 500 quantizes
// its other channels (values in [-1, 1]) to one int8 step of about 2: its
// SQNR stays high (channel 0's), its median channel falls below 10 dB
// (user-journey finding: the report showed the broken layer at 49.9 dB).
func TestChannelSQNRShowsAWideChannel(t *testing.T) {
	g := graph.New("wide", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddConst("w", f32([]int{4, 4}, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1))
	g.AddConst("b", f32([]int{4}, 500, 0, 0, 0))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	r := rand.New(rand.NewPCG(1, 2))
	var samples []map[string]*graph.Data
	for i := 0; i < 16; i++ {
		v := make([]float32, 4)
		for j := range v {
			v[j] = float32(r.Float64()*2 - 1)
		}
		samples = append(samples, map[string]*graph.Data{"x": f32([]int{1, 4}, v...)})
	}
	_, rep, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rep.Layers {
		if l.Tensor != "y" {
			continue
		}
		if l.SQNRdB < 40 || l.ChannelSQNRdB == nil || *l.ChannelSQNRdB > 10 || math.IsNaN(*l.ChannelSQNRdB) {
			t.Errorf("fc: SQNR %.1f dB, per channel %v: want above 40 and below 10", l.SQNRdB, l.ChannelSQNRdB)
		}
		return
	}
	t.Errorf("no row for y in %+v", rep.Layers)
}

// With one input, a file not named after it beside files that are is
// refused, naming it (user-journey finding: labels.npy beside x_0.npy was
// read as samples, or refused for its dtype); with two inputs whose names
// extend one another, a count mismatch says why.
func TestCalibFileNames(t *testing.T) {
	one := graph.New("one", "onnx")
	one.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2}})
	one.Inputs = []string{"x"}
	dir := t.TempDir()
	writeNpy(t, filepath.Join(dir, "x_0.npy"), f32([]int{1, 2}, 1, 2))
	writeNpy(t, filepath.Join(dir, "labels.npy"), f32([]int{1, 2}, 0, 1))
	_, err := LoadCalib(dir, one)
	if err == nil || !strings.Contains(err.Error(), `labels.npy: its name does not start with the input's, "x", as x_0.npy does`) {
		t.Errorf("labels.npy: %v", err)
	}
	// None named after the input: every file is its data.
	os.Remove(filepath.Join(dir, "x_0.npy"))
	writeNpy(t, filepath.Join(dir, "img_0.npy"), f32([]int{1, 2}, 1, 2))
	if s, err := LoadCalib(dir, one); err != nil || len(s) != 2 {
		t.Errorf("img_0.npy and labels.npy: %d samples, %v", len(s), err)
	}

	two := graph.New("two", "onnx")
	two.AddTensor(&graph.Tensor{Name: "in", DType: graph.Float32, Shape: []int{1, 2}})
	two.AddTensor(&graph.Tensor{Name: "in_2", DType: graph.Float32, Shape: []int{1, 2}})
	two.Inputs = []string{"in", "in_2"}
	dir = t.TempDir()
	for i := 0; i < 3; i++ {
		writeNpy(t, filepath.Join(dir, fmt.Sprintf("in_%d.npy", i)), f32([]int{1, 2}, 1, 2))
		writeNpy(t, filepath.Join(dir, fmt.Sprintf("in_2_%d.npy", i)), f32([]int{1, 2}, 1, 2))
	}
	_, err = LoadCalib(dir, two)
	if err == nil || !strings.Contains(err.Error(), `(a file name that starts with "in_2" belongs to input "in_2", though "in" starts it too`) {
		t.Errorf("in and in_2: %v", err)
	}
}
