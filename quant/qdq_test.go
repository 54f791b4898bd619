package quant

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

func quantSmall(t *testing.T) (*graph.Graph, *graph.Graph, []map[string]*graph.Data) {
	t.Helper()
	g := smallNet()
	samples := smallSamples(8)
	st, err := Calibrate(g, samples, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(g, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range q.Nodes {
		if n.Op == graph.Quantize || n.Op == graph.Dequantize {
			t.Skipf("node %q runs in float: graph/interp has no int8 %s kernel yet", n.Name, n.Op)
		}
	}
	return g, q, samples
}

// A hand-built QDQ graph, as importer/onnx gives it, folds to the same
// int8 graph as Quantize.
func TestFoldQDQHandBuilt(t *testing.T) {
	_, q, samples := quantSmall(t)
	// Rebuild q in QDQ form by hand: float input, Quantize, and every int
	// op as Dequantize -> float op -> Quantize.
	d, _ := handQDQ(q, false)
	folded, err := FoldQDQ(d)
	if err != nil {
		t.Fatal(err)
	}
	ff := IntIO(folded)
	if len(ff.Nodes) != len(q.Nodes) {
		t.Fatalf("folded graph has %d nodes, want %d:\n%s", len(ff.Nodes), len(q.Nodes), graph.Print(ff))
	}
	sameResults(t, q, ff, samples)
}

// handQDQ is q in QDQ form, rebuilt by hand: a float input and its
// Quantize, every int8 op as Dequantize -> float op -> Quantize, the output
// dequantized. With floatBias a Conv's or FullyConnected's int32 bias is a
// float initializer instead (its values times s_x * s_w[c], as QAT exports
// write it); biased counts those.
func handQDQ(q *graph.Graph, floatBias bool) (d *graph.Graph, biased int) {
	d = graph.New("qdq", "onnx")
	for _, tt := range q.Tensors {
		c := *tt
		d.AddTensor(&c)
	}
	x := q.Tensors["x"]
	d.AddTensor(&graph.Tensor{Name: "xf", DType: graph.Float32, Shape: x.Shape})
	d.AddNode(&graph.Node{Name: "qx", Op: graph.Quantize, Inputs: []string{"xf"}, Outputs: []string{"x"}})
	for _, n := range q.Nodes {
		nn := &graph.Node{Name: n.Name, Op: n.Op, Attrs: copyAttrs(n.Attrs)}
		for i, in := range n.Inputs {
			if in == "" {
				nn.Inputs = append(nn.Inputs, in)
				continue
			}
			tt := q.Tensors[in]
			if floatBias && (n.Op == graph.Conv2D || n.Op == graph.FullyConnected) && i == 2 && tt.IsConst() {
				sx, _ := q.Tensors[n.Inputs[0]].Quant.At(0)
				w := q.Tensors[n.Inputs[1]].Quant
				bf := graph.NewData(graph.Float32, tt.Shape)
				for c, v := range tt.Data.I {
					bf.F[c] = float32(float64(v) * float64(sx) * float64(w.Scale[min(c, len(w.Scale)-1)]))
				}
				name := in + "_float"
				d.AddConst(name, bf)
				nn.Inputs = append(nn.Inputs, name)
				biased++
				continue
			}
			fl := in + "_dq"
			d.AddTensor(&graph.Tensor{Name: fl, DType: graph.Float32, Shape: tt.Shape})
			d.AddNode(&graph.Node{Name: fl, Op: graph.Dequantize, Inputs: []string{in}, Outputs: []string{fl}})
			nn.Inputs = append(nn.Inputs, fl)
		}
		o := n.Outputs[0]
		d.AddTensor(&graph.Tensor{Name: o + "_f", DType: graph.Float32, Shape: q.Tensors[o].Shape})
		nn.Outputs = []string{o + "_f"}
		d.AddNode(nn)
		d.AddNode(&graph.Node{Name: o + "_q", Op: graph.Quantize, Inputs: []string{o + "_f"}, Outputs: []string{o}})
	}
	d.AddTensor(&graph.Tensor{Name: "yf", DType: graph.Float32, Shape: q.Tensors["y"].Shape})
	d.AddNode(&graph.Node{Name: "dqy", Op: graph.Dequantize, Inputs: []string{"y"}, Outputs: []string{"yf"}})
	d.Inputs, d.Outputs = []string{"xf"}, []string{"yf"}
	return d, biased
}

func sameResults(t *testing.T, a, b *graph.Graph, samples []map[string]*graph.Data) {
	t.Helper()
	for si, s := range samples {
		in := map[string]*graph.Data{}
		for k, v := range s {
			tt := a.Tensors[k]
			sc, z := tt.Quant.At(0)
			in[k] = QuantizeData(v, sc, z)
		}
		bin := map[string]*graph.Data{}
		for i, k := range b.Inputs {
			bin[k] = in[a.Inputs[i]]
		}
		ra, err := interp.Run(a, in)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := interp.Run(b, bin)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range a.Outputs {
			x, y := ra[o], rb[b.Outputs[i]]
			if x.DType != graph.Int8 || y.DType != graph.Int8 || len(x.I) != len(y.I) {
				t.Fatalf("sample %d output %s: %s%v vs %s%v", si, o, x.DType, x.Shape, y.DType, y.Shape)
			}
			for j := range x.I {
				if x.I[j] != y.I[j] {
					t.Fatalf("sample %d output %s[%d]: %d in memory, %d after the round trip", si, o, j, x.I[j], y.I[j])
				}
			}
		}
	}
}

// The QDQ ONNX file loads back through importer/onnx + FoldQDQ + IntIO and
// gives bit-identical int8 results.
func TestWriteQDQRoundTrip(t *testing.T) {
	_, q, samples := quantSmall(t)
	path := filepath.Join(t.TempDir(), "small.onnx")
	if err := WriteQDQ(q, path); err != nil {
		t.Fatal(err)
	}
	back, err := onnx.Load(path, onnx.Options{})
	var ue *onnx.UnsupportedError
	if errors.As(err, &ue) {
		t.Skipf("importer/onnx cannot load QDQ models yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The file keeps the model's input and output names (it wrote x_float and y_float,
	// so firmware and scripts written against the float model broke).
	if !slices.Equal(back.Inputs, q.Inputs) || !slices.Equal(back.Outputs, q.Outputs) {
		t.Errorf("QDQ file inputs %v outputs %v, want the model's %v %v", back.Inputs, back.Outputs, q.Inputs, q.Outputs)
	}
	if q.Tensors[q.Inputs[0]].DType != graph.Int8 || back.Tensors[back.Inputs[0]].DType != graph.Float32 {
		t.Errorf("input dtypes %s -> %s, want int8 -> float32", q.Tensors[q.Inputs[0]].DType, back.Tensors[back.Inputs[0]].DType)
	}
	folded, err := FoldQDQ(back)
	if err != nil {
		t.Fatal(err)
	}
	ff := IntIO(folded)
	for _, n := range ff.Nodes {
		if n.Op == graph.Quantize || n.Op == graph.Dequantize || n.Op == graph.Transpose {
			t.Errorf("node %q (%s) left after folding:\n%s", n.Name, n.Op, graph.Print(ff))
		}
	}
	sameResults(t, q, ff, samples)
}

// Pad, Mean, Transpose, LeakyRelu and a float fallback (HardSigmoid) also
// survive the QDQ round trip bit for bit, with float inputs and outputs.
func TestWriteQDQRoundTripMoreOps(t *testing.T) {
	g := graph.New("more", "onnx")
	act := func(name string, shape ...int) {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
	}
	act("x", 1, 4, 4, 2)
	act("c", 1, 4, 4, 2)
	act("p", 1, 6, 6, 2)
	act("m", 1, 3, 3, 2)
	act("t", 1, 2, 3, 3)
	act("mean", 1, 1, 1, 3)
	act("f", 1, 3)
	act("l", 1, 3)
	act("h", 1, 3)
	act("y", 1, 2)
	g.AddConst("w", f32([]int{2, 1, 1, 2}, 0.3, -2, 0.5, 0.2))
	g.AddConst("b", f32([]int{2}, 0.1, -0.2))
	g.AddConst("fw", f32([]int{2, 3}, 0.5, -0.25, 1, 0.75, 0.1, -0.6))
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"c"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1, Act: graph.ActRelu6}})
	g.AddNode(&graph.Node{Name: "pad", Op: graph.Pad, Inputs: []string{"c"}, Outputs: []string{"p"},
		Attrs: &graph.PadAttrs{Pads: []int{0, 1, 1, 0, 0, 1, 1, 0}, Mode: "constant"}})
	g.AddNode(&graph.Node{Name: "pool", Op: graph.MaxPool2D, Inputs: []string{"p"}, Outputs: []string{"m"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}}})
	g.AddNode(&graph.Node{Name: "tr", Op: graph.Transpose, Inputs: []string{"m"}, Outputs: []string{"t"}, Attrs: &graph.TransposeAttrs{Perm: []int{0, 3, 1, 2}}})
	g.AddNode(&graph.Node{Name: "mean", Op: graph.Mean, Inputs: []string{"t"}, Outputs: []string{"mean"}, Attrs: &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}})
	g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{"mean"}, Outputs: []string{"f"}})
	g.AddNode(&graph.Node{Name: "leaky", Op: graph.LeakyRelu, Inputs: []string{"f"}, Outputs: []string{"l"}, Attrs: &graph.LeakyReluAttrs{Alpha: 0.1}})
	g.AddNode(&graph.Node{Name: "hsig", Op: graph.HardSigmoid, Inputs: []string{"l"}, Outputs: []string{"h"}, Attrs: &graph.HardSigmoidAttrs{Alpha: 0.2, Beta: 0.5}})
	g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"h", "fw", ""}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	q, ff, samples := ptqRoundTrip(t, g)
	count := func(g *graph.Graph) map[graph.Op]int {
		m := map[graph.Op]int{}
		for _, n := range g.Nodes {
			m[n.Op]++
		}
		return m
	}
	// The importer may absorb the Transpose into its layout (Mean then
	// reduces other axes), so only the float islands are compared.
	if cq, cf := count(q), count(ff); cq[graph.Quantize] != cf[graph.Quantize] || cq[graph.Dequantize] != cf[graph.Dequantize] || cf[graph.HardSigmoid] != 1 {
		t.Errorf("ops in memory %v, after the round trip %v:\n%s", cq, cf, graph.Print(ff))
	}
	sameFloatOutputs(t, q, ff, samples)
}

// ptqRoundTrip validates g (float, one input "x" of smallSamples' shape),
// quantizes it on smallSamples(8) with float I/O and round-trips the result
// (qdqRoundTrip): the int8 graph, its round trip and the samples.
func ptqRoundTrip(t *testing.T, g *graph.Graph) (q, ff *graph.Graph, samples []map[string]*graph.Data) {
	t.Helper()
	if err := graph.Validate(g); err != nil {
		t.Fatal(err)
	}
	samples = smallSamples(8)
	q, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q, qdqRoundTrip(t, q), samples
}

// qdqRoundTrip writes q as a QDQ model, loads it back and folds it.
func qdqRoundTrip(t *testing.T, q *graph.Graph) *graph.Graph {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := WriteQDQ(q, path); err != nil {
		t.Fatal(err)
	}
	back, err := onnx.Load(path, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ff, err := FoldQDQ(back)
	if err != nil {
		t.Fatal(err)
	}
	return ff
}

// sameFloatOutputs: q (float I/O, one input) and its round trip ff give
// bit-identical outputs on every sample.
func sameFloatOutputs(t *testing.T, q, ff *graph.Graph, samples []map[string]*graph.Data) {
	t.Helper()
	for si, s := range samples {
		a, err := interp.Run(q, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := interp.Run(ff, map[string]*graph.Data{ff.Inputs[0]: s[q.Inputs[0]]})
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range q.Outputs {
			x, y := a[o].F, b[ff.Outputs[i]].F
			if len(x) != len(y) {
				t.Fatalf("sample %d output %d: %d values in memory, %d after the round trip", si, i, len(x), len(y))
			}
			for j := range x {
				if x[j] != y[j] {
					t.Fatalf("sample %d output %d [%d] = %v in memory, %v after the round trip", si, i, j, x[j], y[j])
				}
			}
		}
	}
}

// An unrolled bidirectional LSTM with sequence lengths (Slice, Where, Clip,
// the gates' FullyConnected, Add, Mul, Sigmoid, Tanh, Concat) survives the
// QDQ round trip bit for bit.
func TestWriteQDQRoundTripRecurrent(t *testing.T) {
	b := onnx.NewBuilder("lstm", 14, 5)
	x := b.Input("x", graph.Float32, 4, 2, 3)
	outs := b.NodeN("LSTM", []string{x, b.Rand("w", 0.5, 2, 16, 3), b.Rand("r", 0.4, 2, 16, 4), b.Rand("b", 0.3, 2, 32), b.Ints("lens", 4, 2)}, 2,
		onnx.IntAttr("hidden_size", 4), onnx.StringAttr("direction", "bidirectional"), onnx.FloatAttr("clip", 2))
	b.Output(outs[0], graph.Float32)
	b.Output(outs[1], graph.Float32)
	g, err := onnx.Import("lstm", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]map[string]*graph.Data, 6)
	for i := range samples {
		d := graph.NewData(graph.Float32, []int{4, 2, 3})
		for k := range d.F {
			d.F[k] = float32((k*37+i*11)%23-11) / 7
		}
		samples[i] = map[string]*graph.Data{g.Inputs[0]: d}
	}
	q, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameFloatOutputs(t, q, qdqRoundTrip(t, q), samples)
}

// qdqOne is a QDQ graph of one op: x -> Quantize (inQ) -> Dequantize -> op
// -> Quantize (outQ) -> Dequantize -> y. It folds it and reports whether op
// became an int8 op.
func qdqOne(t *testing.T, op graph.Op, attrs any, in, out []int, inQ, outQ *graph.Quant) (*graph.Graph, bool) {
	t.Helper()
	g := graph.New("qdq", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: in})
	g.AddTensor(&graph.Tensor{Name: "xq", DType: graph.Int8, Shape: in, Quant: inQ})
	g.AddTensor(&graph.Tensor{Name: "xd", DType: graph.Float32, Shape: in})
	g.AddTensor(&graph.Tensor{Name: "m", DType: graph.Float32, Shape: out})
	g.AddTensor(&graph.Tensor{Name: "mq", DType: graph.Int8, Shape: out, Quant: outQ})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: out})
	g.AddNode(&graph.Node{Name: "q0", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"xq"}})
	g.AddNode(&graph.Node{Name: "d0", Op: graph.Dequantize, Inputs: []string{"xq"}, Outputs: []string{"xd"}})
	ins := []string{"xd"}
	if op == graph.Add || op == graph.Sub {
		ins = append(ins, "xd") // x + x, x − x
	}
	g.AddNode(&graph.Node{Name: "op", Op: op, Inputs: ins, Outputs: []string{"m"}, Attrs: attrs})
	g.AddNode(&graph.Node{Name: "q1", Op: graph.Quantize, Inputs: []string{"m"}, Outputs: []string{"mq"}})
	g.AddNode(&graph.Node{Name: "d1", Op: graph.Dequantize, Inputs: []string{"mq"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	f, err := FoldQDQ(g)
	if err != nil {
		t.Fatal(err)
	}
	folded := false
	for _, n := range f.Nodes {
		if n.Op == op {
			folded = f.In(n, 0).DType == graph.Int8
		}
	}
	return f, folded
}

// A QDQ model that changes parameters across ReduceMax (or a bilinear
// Resize) keeps the op in float: the integer kernels copy stored values.
// x = [1 2 3 4] at scale 0.1: max over the axis is 0.4, quantized at 0.4 to
// 1 -> 0.4. With equal parameters the op folds to int8.
func TestFoldQDQKeepsCopiesOfChangedParams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		outS   float32
		folded bool
	}{{"changed", 0.4, false}, {"same", 0.1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			q := func(s float32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
			f, folded := qdqOne(t, graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceMax, Axes: []int{1}, KeepDims: true}, []int{1, 4}, []int{1, 1}, q(0.1), q(tc.outS))
			if folded != tc.folded {
				t.Fatalf("ReduceMax folded to int8: %v, want %v", folded, tc.folded)
			}
			x := graph.NewData(graph.Float32, []int{1, 4})
			copy(x.F, []float32{0.1, 0.2, 0.3, 0.4})
			res, err := interp.Run(f, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			if got := res["y"].F[0]; math.Abs(float64(got)-0.4) > 1e-6 {
				t.Errorf("max %v, want 0.4", got)
			}
		})
	}
}

// A model input that is also an output, and an output listed twice, each get a name of
// their own in the QDQ file: keeping the model's names gave the input's name to a
// DequantizeLinear output too, a file ONNX (and mcugen) refuse (review finding).
func TestWriteQDQInputAlsoOutput(t *testing.T) {
	_, q, _ := quantSmall(t)
	in, out := q.Inputs[0], q.Outputs[0]
	q.Outputs = append(q.Outputs, in, out)
	path := filepath.Join(t.TempDir(), "io.onnx")
	if err := WriteQDQ(q, path); err != nil {
		t.Fatal(err)
	}
	back, err := onnx.Load(path, onnx.Options{})
	if err != nil {
		t.Fatalf("the QDQ file does not load: %v", err)
	}
	if len(back.Outputs) != 3 || back.Inputs[0] != in || back.Outputs[0] != out {
		t.Fatalf("inputs %v outputs %v", back.Inputs, back.Outputs)
	}
	seen := map[string]bool{in: true}
	for _, o := range back.Outputs {
		if seen[o] {
			t.Errorf("name %q used twice among %v %v", o, back.Inputs, back.Outputs)
		}
		seen[o] = true
	}
}

// A transformer's ops (user-journey finding: quantize failed on the first
// Math node, and its report was lost with the model): Exp, an attention
// BatchMatMul with the second operand transposed, Div, Pow, Rsqrt (as
// Sqrt and Reciprocal) and Square (as Mul) survive the QDQ round trip bit
// for bit.
func TestWriteQDQRoundTripTransformerOps(t *testing.T) {
	g := graph.New("attn", "onnx")
	act := func(name string, shape ...int) {
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: shape})
	}
	act("x", 1, 4, 4, 2)
	act("r", 1, 4, 8)
	act("e", 1, 4, 8)
	act("s", 1, 4, 4)
	act("d", 1, 4, 4)
	act("p", 1, 4, 4)
	act("a", 1, 4, 4)
	act("q", 1, 4, 4)
	act("y", 1, 4, 4)
	g.AddConst("three", f32([]int{1}, 3))
	g.AddConst("two", f32([]int{1}, 2))
	g.AddConst("one", f32([]int{1}, 1))
	g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{"x"}, Outputs: []string{"r"}})
	g.AddNode(&graph.Node{Name: "exp", Op: graph.Math, Inputs: []string{"r"}, Outputs: []string{"e"}, Attrs: &graph.MathAttrs{Fn: graph.MathExp}})
	g.AddNode(&graph.Node{Name: "qk", Op: graph.BatchMatMul, Inputs: []string{"e", "r"}, Outputs: []string{"s"}, Attrs: &graph.BatchMatMulAttrs{AdjY: true}})
	g.AddNode(&graph.Node{Name: "div", Op: graph.Div, Inputs: []string{"s", "three"}, Outputs: []string{"d"}, Attrs: &graph.BinaryAttrs{}})
	g.AddNode(&graph.Node{Name: "pow", Op: graph.Pow, Inputs: []string{"d", "two"}, Outputs: []string{"p"}})
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"p", "one"}, Outputs: []string{"a"}, Attrs: &graph.BinaryAttrs{}})
	g.AddNode(&graph.Node{Name: "rsqrt", Op: graph.Math, Inputs: []string{"a"}, Outputs: []string{"q"}, Attrs: &graph.MathAttrs{Fn: graph.MathRsqrt}})
	g.AddNode(&graph.Node{Name: "sq", Op: graph.Math, Inputs: []string{"q"}, Outputs: []string{"y"}, Attrs: &graph.MathAttrs{Fn: graph.MathSquare}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	if err := graph.Validate(g); err != nil {
		t.Fatal(err)
	}
	samples := smallSamples(8)
	q, _, err := PTQ(g, samples, Options{FloatIO: true}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameFloatOutputs(t, q, qdqRoundTrip(t, q), samples)
}

// A QDQ Max or Min whose operands are quantized differently stays in float:
// the int8 kernels compare raw values (as TFLite's), which is the real max
// only when the parameters agree. a = 0.6 at scale 0.1 is 6, b = 0.5 at
// scale 0.01 is 50: a raw max gives 50, read at the output's scale 0.1 as
// 5.0, and a raw min 6, read as 0.6; max(0.6, 0.5) = 0.6, min 0.5. With b
// at 0.1 too the op folds.
func TestFoldQDQKeepsMaxOfChangedParams(t *testing.T) {
	for _, op := range []graph.Op{graph.Maximum, graph.Minimum} {
		for _, tc := range []struct {
			name   string
			bS     float32
			folded bool
		}{{"changed", 0.01, false}, {"same", 0.1, true}} {
			t.Run(string(op)+"/"+tc.name, func(t *testing.T) {
				g := graph.New("qdq", "onnx")
				q := func(s float32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
				for _, tn := range []*graph.Tensor{
					{Name: "a", DType: graph.Float32, Shape: []int{1}},
					{Name: "b", DType: graph.Float32, Shape: []int{1}},
					{Name: "aq", DType: graph.Int8, Shape: []int{1}, Quant: q(0.1)},
					{Name: "bq", DType: graph.Int8, Shape: []int{1}, Quant: q(tc.bS)},
					{Name: "ad", DType: graph.Float32, Shape: []int{1}},
					{Name: "bd", DType: graph.Float32, Shape: []int{1}},
					{Name: "m", DType: graph.Float32, Shape: []int{1}},
					{Name: "mq", DType: graph.Int8, Shape: []int{1}, Quant: q(0.1)},
					{Name: "y", DType: graph.Float32, Shape: []int{1}},
				} {
					g.AddTensor(tn)
				}
				g.AddNode(&graph.Node{Name: "qa", Op: graph.Quantize, Inputs: []string{"a"}, Outputs: []string{"aq"}})
				g.AddNode(&graph.Node{Name: "qb", Op: graph.Quantize, Inputs: []string{"b"}, Outputs: []string{"bq"}})
				g.AddNode(&graph.Node{Name: "da", Op: graph.Dequantize, Inputs: []string{"aq"}, Outputs: []string{"ad"}})
				g.AddNode(&graph.Node{Name: "db", Op: graph.Dequantize, Inputs: []string{"bq"}, Outputs: []string{"bd"}})
				g.AddNode(&graph.Node{Name: "mm", Op: op, Inputs: []string{"ad", "bd"}, Outputs: []string{"m"}})
				g.AddNode(&graph.Node{Name: "q1", Op: graph.Quantize, Inputs: []string{"m"}, Outputs: []string{"mq"}})
				g.AddNode(&graph.Node{Name: "d1", Op: graph.Dequantize, Inputs: []string{"mq"}, Outputs: []string{"y"}})
				g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
				f, err := FoldQDQ(g)
				if err != nil {
					t.Fatal(err)
				}
				folded := false
				for _, n := range f.Nodes {
					if n.Op == op {
						folded = f.In(n, 0).DType == graph.Int8
					}
				}
				if folded != tc.folded {
					t.Fatalf("%s folded to int8: %v, want %v", op, folded, tc.folded)
				}
				a, b := graph.NewData(graph.Float32, []int{1}), graph.NewData(graph.Float32, []int{1})
				a.F[0], b.F[0] = 0.6, 0.5
				res, err := interp.Run(f, map[string]*graph.Data{"a": a, "b": b})
				if err != nil {
					t.Fatal(err)
				}
				want := 0.6
				if op == graph.Minimum {
					want = 0.5
				}
				if got := res["y"].F[0]; math.Abs(float64(got)-want) > 1e-6 {
					t.Errorf("%s(0.6, 0.5) = %v, want %v", op, got, want)
				}
			})
		}
	}
}

// A QDQ AveragePool across changed parameters stays in float: the int8
// kernel (TFLite's) averages the stored values unscaled. x = [1 2 3 4] at
// scale 0.1 averages to 0.25, which is 5 at the output's scale 0.05; the
// unscaled average of the stored values, 3, would read as 0.15. An output
// scale one float32 step away folds, as TFLite Micro's pools take it.
func TestFoldQDQKeepsAvgPoolOfChangedParams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		outS   float32
		folded bool
	}{{"changed", 0.05, false}, {"same", 0.1, true}, {"one float32 step", math.Nextafter32(0.1, 1), true}} {
		t.Run(tc.name, func(t *testing.T) {
			q := func(s float32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
			f, folded := qdqOne(t, graph.AvgPool2D, &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}, []int{1, 2, 2, 1}, []int{1, 1, 1, 1}, q(0.1), q(tc.outS))
			if folded != tc.folded {
				t.Fatalf("AveragePool folded to int8: %v, want %v", folded, tc.folded)
			}
			if tc.folded {
				return
			}
			x := graph.NewData(graph.Float32, []int{1, 2, 2, 1})
			copy(x.F, []float32{0.1, 0.2, 0.3, 0.4})
			res, err := interp.Run(f, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			if got := res["y"].F[0]; math.Abs(float64(got)-0.25) > 1e-6 {
				t.Errorf("average %v, want 0.25", got)
			}
		})
	}
}

// A QDQ Sigmoid whose output is quantized otherwise than TFLite's int8
// LOGISTIC writes (1/256, -128) does not fold to LOGISTIC, whose integer
// kernel ignores the output's scale (ONNX's quantizers often give 1/255):
// it becomes an int8 Math table of the float nodes' values (session 59;
// it stayed in float before), and nothing computes in float.
func TestFoldQDQKeepsSigmoidOfOtherEncoding(t *testing.T) {
	for _, tc := range []struct {
		name   string
		outS   float32
		folded bool
	}{{"1/255", 1.0 / 255, false}, {"1/256", 1.0 / 256, true}} {
		t.Run(tc.name, func(t *testing.T) {
			q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
			f, folded := qdqOne(t, graph.Sigmoid, nil, []int{1, 4}, []int{1, 4}, q(0.05, 0), q(tc.outS, -128))
			if folded != tc.folded {
				t.Fatalf("Sigmoid folded to int8 LOGISTIC: %v, want %v", folded, tc.folded)
			}
			for _, n := range f.Nodes {
				if n.Op == graph.Sigmoid && f.In(n, 0).DType == graph.Float32 {
					t.Errorf("%s computes in float", n.Name)
				}
				if a, ok := n.Attrs.(*graph.MathAttrs); ok && (tc.folded || a.Fn != graph.MathSigmoid || !a.Float32Island) {
					t.Errorf("%s: Math %+v", n.Name, a)
				}
			}
		})
	}
}

// A QDQ Add or Sub whose output scale makes TFLite's output multiplier
// 2 · max(input scales) / (2^20 · output scale) reach 1 stays in float:
// there is no int8 kernel for it. Inputs at 0.1: an output scale of
// 0.1 / 2^19 gives exactly 1, 0.1 / 2^18 gives 0.5 and folds.
func TestFoldQDQKeepsAddOfOutputMultiplierOne(t *testing.T) {
	q := func(s float32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
	for _, op := range []graph.Op{graph.Add, graph.Sub} {
		for _, tc := range []struct {
			outS   float32
			folded bool
		}{{0.1 / (1 << 19), false}, {0.1 / (1 << 18), true}} {
			if _, folded := qdqOne(t, op, nil, []int{1, 4}, []int{1, 4}, q(0.1), q(tc.outS)); folded != tc.folded {
				t.Errorf("%v with output scale %g folded to int8: %v, want %v", op, tc.outS, folded, tc.folded)
			}
		}
	}
}
