package quant

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// The QDQ writer wrote LogSoftmax and Hardmax as Softmax: their QDQ models
// computed probabilities (review finding). After the round trip the
// log-softmax is within a few int8 steps of the value worked in float64
// here, and the hardmax is one-hot at the input's largest element.
func TestQDQSoftmaxModes47(t *testing.T) {
	x := []float32{0.3, -1.2, 2.5, 0.9, -0.4, 1.7}
	for _, mode := range []graph.SoftmaxMode{graph.SoftmaxLog, graph.SoftmaxHard} {
		g := graph.New("sm", "test")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 6}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 6}})
		g.AddNode(&graph.Node{Name: "sm", Op: graph.Softmax, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.SoftmaxAttrs{Axis: 1, Beta: 1, Mode: mode}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		r := rand.New(rand.NewPCG(4, 7))
		samples := make([]map[string]*graph.Data, 8)
		for i := range samples {
			d := graph.NewData(graph.Float32, []int{1, 6})
			for k := range d.F {
				d.F[k] = float32(r.Float64()*6 - 3)
			}
			samples[i] = map[string]*graph.Data{"x": d}
		}
		// Float I/O too: a float input read by a node kept float lost its
		// name to its int8 twin's ("graph input x: no such tensor").
		if _, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{}); err != nil {
			t.Errorf("%s with float I/O: %v", mode, err)
		}
		q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ff := qdqRoundTrip(t, q)
		in := graph.NewData(graph.Float32, []int{1, 6})
		copy(in.F, x)
		out, err := interp.Run(ff, map[string]*graph.Data{ff.Inputs[0]: in})
		if err != nil {
			t.Fatal(err)
		}
		got := out[ff.Outputs[0]].F
		sum := 0.0
		for _, v := range x {
			sum += math.Exp(float64(v))
		}
		for i, v := range x {
			want := float64(v) - math.Log(sum) // log-softmax
			if mode == graph.SoftmaxHard {
				want = 0
				if i == 2 {
					want = 1
				}
			}
			if math.Abs(float64(got[i])-want) > 0.1 {
				t.Errorf("%s: y[%d] = %g after the QDQ round trip, want %.4f", mode, i, got[i], want)
			}
		}
	}
}

// ChooseParams computed (mx - mn)/255 in float32, infinite for a span
// beyond float32's range: the tensor fell back to [0, 1] (review finding).
func TestChooseParamsHugeSpan47(t *testing.T) {
	s, z := ChooseParams(-2e38, 2e38)
	if want := 4e38 / 255; math.Abs(float64(s)-want) > 1e-6*want || (z != 0 && z != -1) {
		t.Errorf("[-2e38, 2e38]: scale %g zero point %d, want %g and 0 or -1 (the middle of int8)", s, z, want)
	}
	// Beyond float32: its largest value.
	if s, z := ChooseParams(0, 1e39); float64(s) != float64(float32(math.MaxFloat32/255)) || z != -128 {
		t.Errorf("[0, 1e39]: scale %g zero point %d, want %g and -128", s, z, float32(math.MaxFloat32/255))
	}
}

// A layer whose float output overflows to +Inf on every sample had the
// range [0, 1], a multiplier of about 2^100 and C that shifted by 100
// (review finding). Its range is now up to the largest float32, and the
// quantized graph validates.
func TestCalibrationOverflowOnly47(t *testing.T) {
	g := graph.New("big", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddConst("w", f32([]int{2, 4}, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", ""}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := make([]map[string]*graph.Data, 4)
	for i := range samples {
		d := graph.NewData(graph.Float32, []int{1, 4})
		for k := range d.F {
			d.F[k] = 1 + float32(i+k)/8
		}
		samples[i] = map[string]*graph.Data{"x": d}
	}
	st, err := Calibrate(g, samples, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ts := st.Tensors["y"]; ts == nil || ts.Max != math.MaxFloat32 || !ts.PosInf {
		t.Fatalf("y's stats %+v, want Max the largest float32 and PosInf", ts)
	}
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Validate(q); err != nil {
		t.Fatal(err)
	}
}

// A bias no int32 holds at the layer's input scale with any float32 weight
// scale was an internal error ("quantization scale +Inf"); it is now one
// line naming the node and the way out (review finding).
func TestBiasBeyondInt8_47(t *testing.T) {
	g := graph.New("fcb", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddConst("w", f32([]int{2, 2}, 0.5, -0.25, 0.125, 1))
	g.AddConst("b", f32([]int{2}, 1e30, 0.5))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := []map[string]*graph.Data{{"x": f32([]int{1, 2}, 1e-20, 2e-20)}, {"x": f32([]int{1, 2}, 3e-20, 1e-21)}}
	_, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err == nil || !strings.Contains(err.Error(), `node "fc": its bias 1e+30 cannot be held in int32`) || !strings.Contains(err.Error(), "(--float fc)") {
		t.Fatalf("error %v, want the node, its bias and --float fc", err)
	}
	if _, _, err := PTQ(g, samples, Options{Float: map[string]bool{"fc": true}}, CalibOptions{}); err != nil {
		t.Errorf("with fc kept in float: %v", err)
	}
}

// A constant Pad took its input's range whatever read it: a -7 pad before
// an average pool was clipped to the input's bottom, 5 dB (review
// finding). Only max pools, which never pick the pad, keep that rule: an
// average pool's input range holds -7.
func TestPadValueKeptForAveragePool47(t *testing.T) {
	for _, op := range []graph.Op{graph.AvgPool2D, graph.MaxPool2D} {
		g, samples := padPool(op, -7)
		q, _, err := PTQ(g, samples, Options{Method: MinMax}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := int8Range(t, q, "p")
		if op == graph.AvgPool2D && lo > -6.9 {
			t.Errorf("average pool: the padded tensor's range starts at %g, want -7 in it", lo)
		}
		if op == graph.MaxPool2D && lo < -1.05 {
			t.Errorf("max pool: the padded tensor's range starts at %g, want the input's (about -1)", lo)
		}
		// The average of a corner window: 4 real values and 5 pads of -7.
		if e := maxErrSteps(t, g, q, "y", samples); e > 1 {
			t.Errorf("%s: output off by %.2f steps", op, e)
		}
	}
}

// A Div (an op quantize keeps in float) was written to the QDQ file as
// any other node, and reading the file back made it an int8 Div: the QDQ
// model and the in-process int8 build differed by up to 9 steps (review
// finding). It is marked as --float's nodes are, and stays float32.
func TestFloatOnlyNodesStayFloatInQDQ47(t *testing.T) {
	g := graph.New("div", "test")
	for _, n := range []string{"x", "d", "y"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Float32, Shape: []int{1, 4}})
	}
	g.AddConst("one", f32([]int{1, 4}, 1, 1, 1, 1))
	g.AddNode(&graph.Node{Name: "den", Op: graph.Add, Inputs: []string{"x", "one"}, Outputs: []string{"d"}})
	g.AddNode(&graph.Node{Name: "div", Op: graph.Div, Inputs: []string{"x", "d"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := []map[string]*graph.Data{{"x": f32([]int{1, 4}, 0.5, 1, 2, 3)}, {"x": f32([]int{1, 4}, 0.1, 1.5, 2.5, 0.2)}}
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ff := qdqRoundTrip(t, q)
	for _, n := range ff.Nodes {
		if n.Op == graph.Div && ff.Tensors[n.Outputs[0]].DType != graph.Float32 {
			t.Errorf("after the QDQ round trip the Div writes %s, want float32 as in the int8 build", ff.Tensors[n.Outputs[0]].DType)
		}
	}
	if !q.KeepFloat["div"] {
		t.Errorf("the Div is not marked to stay float: %v", q.KeepFloat)
	}
}

// A layer whose float output overflows and is clamped after (a Relu6)
// keeps a narrow output range over huge products: its multiplier needs a
// shift of over 31 bits, and the quantized graph was refused as invalid,
// naming no way out (diff review). The line now names the node and
// --float, which works.
func TestOverflowClampedNamesFloat47(t *testing.T) {
	g := graph.New("big6", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "h", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2}})
	g.AddConst("w", f32([]int{2, 4}, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38, 3e38))
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", ""}, Outputs: []string{"h"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.AddNode(&graph.Node{Name: "relu6", Op: graph.Clip, Inputs: []string{"h"}, Outputs: []string{"y"}, Attrs: &graph.ClipAttrs{Min: 0, Max: 6}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := []map[string]*graph.Data{{"x": f32([]int{1, 4}, 1, 2, 3, 4)}, {"x": f32([]int{1, 4}, 2, 1, 4, 3)}}
	_, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err == nil || !strings.Contains(err.Error(), `quant: node "fc" (FullyConnected): its requantization multiplier`) || !strings.HasSuffix(err.Error(), "keep it in float32 (--float fc)") {
		t.Fatalf("error %v, want the node, its multiplier and --float fc", err)
	}
	// Kept float, the fc's overflow reaches the clamp as the largest
	// float32, and the clamp is the next to say so; with both kept float
	// the model quantizes.
	_, _, err = PTQ(g, samples, Options{Float: map[string]bool{"fc": true}}, CalibOptions{})
	if err == nil || !strings.HasSuffix(err.Error(), "keep it in float32 (--float relu6)") {
		t.Errorf("with fc kept in float: %v, want --float relu6 named", err)
	}
	if _, _, err := PTQ(g, samples, Options{Float: map[string]bool{"fc": true, "relu6": true}}, CalibOptions{}); err != nil {
		t.Errorf("with fc and relu6 kept in float: %v", err)
	}
}
