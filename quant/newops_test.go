package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
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

// A bilinear Resize quantizes to TFLite's integer kernel where that kernel
// takes its coordinates (half_pixel), within a step or two of the float
// result; with pytorch_half_pixel it stays in float between a Dequantize and
// a Quantize.
func TestQuantizeBilinearResize(t *testing.T) {
	for _, tc := range []struct {
		coord string
		int8  bool
	}{{"half_pixel", true}, {"align_corners", true}, {"pytorch_half_pixel", false}} {
		t.Run(tc.coord, func(t *testing.T) {
			g := graph.New("resize", "test")
			g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 3, 4, 2}})
			g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 6, 8, 2}})
			g.AddNode(&graph.Node{Name: "r", Op: graph.Resize, Inputs: []string{"x"}, Outputs: []string{"y"},
				Attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: tc.coord}})
			g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
			r := rand.New(rand.NewPCG(9, 9))
			var samples []map[string]*graph.Data
			for range 8 {
				x := graph.NewData(graph.Float32, []int{1, 3, 4, 2})
				for k := range x.F {
					x.F[k] = float32(r.Float64()*4 - 2)
				}
				samples = append(samples, map[string]*graph.Data{"x": x})
			}
			q, _, err := PTQ(g, samples, Options{NoBiasCorrection: true}, CalibOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var rs *graph.Node
			for _, n := range q.Nodes {
				if n.Op == graph.Resize {
					rs = n
				}
			}
			if got := q.In(rs, 0).DType == graph.Int8; got != tc.int8 {
				t.Fatalf("resize on int8: %v, want %v", got, tc.int8)
			}
			fo, err := interp.Run(g, samples[0])
			if err != nil {
				t.Fatal(err)
			}
			xs, xz := q.Tensors["x"].Quant.At(0)
			qo, err := interp.Run(q, map[string]*graph.Data{"x": QuantizeData(samples[0]["x"], xs, xz)})
			if err != nil {
				t.Fatal(err)
			}
			// The input and output share one scale (about 4/255 over
			// [-2, 2]): rounding the input, the weights and the output stays
			// within two steps.
			ys, yz := q.Tensors["y"].Quant.At(0)
			for i, want := range fo["y"].F {
				got := float64(ys) * float64(qo["y"].I[i]-int64(yz))
				if math.Abs(got-float64(want)) > 2*float64(ys)+1e-6 {
					t.Fatalf("output %d: %v, float %v (scale %v)", i, got, want, ys)
				}
			}
		})
	}
}

// ReduceMax and ReduceMin quantize to int8 with their input's parameters
// (they pick a stored value); ReduceSum stays in float.
func TestQuantizeReductions(t *testing.T) {
	for _, tc := range []struct {
		kind graph.ReduceKind
		int8 bool
	}{{graph.ReduceMax, true}, {graph.ReduceMin, true}, {graph.ReduceSum, false}} {
		g := graph.New("reduce", "test")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, 5}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{2}})
		g.AddNode(&graph.Node{Name: "r", Op: graph.Reduce, Inputs: []string{"x"}, Outputs: []string{"y"},
			Attrs: &graph.ReduceAttrs{Kind: tc.kind, Axes: []int{1}}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		q, _, err := PTQ(g, sineSamples("x", []int{2, 5}, 8), Options{NoBiasCorrection: true}, CalibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var r *graph.Node
		for _, n := range q.Nodes {
			if n.Op == graph.Reduce {
				r = n
			}
		}
		in, out := q.In(r, 0), q.Tensors[r.Outputs[0]]
		if got := in.DType == graph.Int8; got != tc.int8 {
			t.Errorf("%s: int8 %v, want %v", tc.kind, got, tc.int8)
			continue
		}
		if tc.int8 && (in.Quant.Scale[0] != out.Quant.Scale[0] || in.Quant.ZeroPoint[0] != out.Quant.ZeroPoint[0]) {
			t.Errorf("%s: input %+v and output %+v parameters differ", tc.kind, *in.Quant, *out.Quant)
		}
	}
}

// A float graph with Maximum against a constant and a Div quantizes and
// runs: both stay in float (their integer kernels are plain arithmetic, or
// need every operand on one scale), which failed before (session 13).
func TestQuantizeKeepsDivAndMaxInFloat(t *testing.T) {
	g := graph.New("maxdiv", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 6}})
	half := graph.NewData(graph.Float32, nil)
	half.F = []float32{0.5}
	two := graph.NewData(graph.Float32, nil)
	two.F = []float32{2}
	g.AddConst("half", half)
	g.AddConst("two", two)
	g.AddTensor(&graph.Tensor{Name: "m", DType: graph.Float32, Shape: []int{1, 6}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 6}})
	g.AddNode(&graph.Node{Name: "max", Op: graph.Maximum, Inputs: []string{"x", "half"}, Outputs: []string{"m"}, Attrs: &graph.BinaryAttrs{}})
	g.AddNode(&graph.Node{Name: "div", Op: graph.Div, Inputs: []string{"m", "two"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	samples := sineSamples("x", []int{1, 6}, 8)
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range q.Nodes {
		if (n.Op == graph.Maximum || n.Op == graph.Div) && q.In(n, 0).DType != graph.Float32 {
			t.Errorf("%s runs on %s, want float", n.Op, q.In(n, 0).DType)
		}
	}
	xs, xz := q.Tensors["x"].Quant.At(0)
	res, err := interp.Run(q, map[string]*graph.Data{"x": QuantizeData(samples[0]["x"], xs, xz)})
	if err != nil {
		t.Fatal(err)
	}
	ys, yz := q.Tensors["y"].Quant.At(0)
	for i, v := range samples[0]["x"].F {
		want := math.Max(float64(v), 0.5) / 2
		if got := float64(ys) * float64(res["y"].I[i]-int64(yz)); math.Abs(got-want) > 2*float64(ys)+float64(xs) {
			t.Errorf("y[%d] = %v, want %v", i, got, want)
		}
	}
}

// A float model with an integer input (token ids into an embedding) is
// quantized: the ids stay int32 and the looked-up rows become int8.
func TestQuantizeWithIntegerInput(t *testing.T) {
	g := graph.New("embed", "test")
	table := graph.NewData(graph.Float32, []int{4, 3})
	for i := range table.F {
		table.F[i] = float32(i)/4 - 1
	}
	g.AddConst("table", table)
	g.AddTensor(&graph.Tensor{Name: "ids", DType: graph.Int32, Shape: []int{2}})
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2, 3}})
	g.AddTensor(&graph.Tensor{Name: "rows", DType: graph.Float32, Shape: []int{2, 3}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{2, 3}})
	g.AddNode(&graph.Node{Name: "lookup", Op: graph.Gather, Inputs: []string{"table", "ids"}, Outputs: []string{"rows"}, Attrs: &graph.GatherAttrs{}})
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"rows", "x"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"ids", "x"}, []string{"y"}
	var samples []map[string]*graph.Data
	for i, s := range sineSamples("x", []int{2, 3}, 8) {
		ids := graph.NewData(graph.Int32, []int{2})
		ids.I[0], ids.I[1] = int64(i%4), int64((i+1)%4)
		s["ids"] = ids
		samples = append(samples, s)
	}
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dt := q.Tensors["ids"].DType; dt != graph.Int32 {
		t.Errorf("ids became %s", dt)
	}
	if dt := q.Tensors["y"].DType; dt != graph.Int8 {
		t.Errorf("output is %s, want int8", dt)
	}
	xs, xz := q.Tensors["x"].Quant.At(0)
	res, err := interp.Run(q, map[string]*graph.Data{"ids": samples[2]["ids"], "x": QuantizeData(samples[2]["x"], xs, xz)})
	if err != nil {
		t.Fatal(err)
	}
	fo, err := interp.Run(g, samples[2])
	if err != nil {
		t.Fatal(err)
	}
	ys, yz := q.Tensors["y"].Quant.At(0)
	for i, want := range fo["y"].F {
		if got := float64(ys) * float64(res["y"].I[i]-int64(yz)); math.Abs(got-float64(want)) > 3*float64(ys) {
			t.Errorf("y[%d] = %v, want %v", i, got, want)
		}
	}
}
