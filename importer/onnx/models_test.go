package onnx_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/testdata/gen/onnxmodels"
)

var update = flag.Bool("update", false, "rewrite testdata/onnx/*.onnx from testdata/gen/onnxmodels")

const modelDir = "../../testdata/onnx"

// TestModelFiles checks that the committed test models are what the builder
// writes (deterministic), and that they decode and re-encode byte for byte.
func TestModelFiles(t *testing.T) {
	for _, m := range onnxmodels.All() {
		b := m.Model.Marshal()
		path := filepath.Join(modelDir, m.Name+".onnx")
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./importer/onnx -run TestModelFiles -update)", err)
		}
		if !bytes.Equal(old, b) {
			t.Errorf("%s differs from what onnxmodels writes (rerun with -update and review)", path)
		}
		dm, err := onnx.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if !bytes.Equal(dm.Marshal(), b) {
			t.Errorf("%s: decode+encode does not round-trip", m.Name)
		}
	}
}

func load(t *testing.T, name string, opts onnx.Options) *graph.Graph {
	t.Helper()
	g, err := onnx.Load(filepath.Join(modelDir, name+".onnx"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Validate(g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return g
}

type io struct {
	name  string
	dt    graph.DType
	shape []int
}

// TestModelFacts checks inspect-level facts: inputs, outputs, canonical op
// counts and MACs (hand-counted in the model comments of onnxmodels).
func TestModelFacts(t *testing.T) {
	cases := []struct {
		model   string
		inputs  []io
		outputs []io
		ops     map[string]int
		macs    int64
	}{
		{"cnn", []io{{"image", graph.Float32, []int{1, 3, 16, 16}}}, []io{{"Softmax_11_out0", graph.Float32, []int{1, 10}}},
			// input NCHW->NHWC Transpose; BatchNorm folded; GAP->Flatten is one Reshape.
			map[string]int{"Transpose": 1, "Conv2D": 3, "Relu": 1, "MaxPool2D": 1, "Clip": 1, "Mean": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1}, 68256},
		{"mlp", []io{{"features", graph.Float32, []int{1, 64}}}, []io{{"Sigmoid_7_out0", graph.Float32, []int{1, 4}}},
			// The Add of a constant after MatMul is folded into its FullyConnected bias.
			map[string]int{"FullyConnected": 3, "Relu": 1, "Tanh": 1, "Sigmoid": 1}, 2624},
		{"resnet", []io{{"input", graph.Float32, []int{1, 4, 8, 8}}}, []io{{"MatMul_28_out0", graph.Float32, []int{1, 6}}},
			map[string]int{"Transpose": 1, "Conv2D": 5, "Relu": 3, "Add": 1, "Concat": 1, "HardSwish": 1, "LeakyRelu": 1,
				"AvgPool2D": 1, "Pad": 1, "Resize": 1, "Sigmoid": 1, "Mul": 1, "Sub": 1, "Div": 1, "Maximum": 1, "Minimum": 1,
				"HardSigmoid": 1, "Slice": 1, "Mean": 1, "Reshape": 2, "Tanh": 1, "FullyConnected": 1}, 113120},
		{"matmul", []io{{"a", graph.Float32, []int{3, 4, 8}}, {"b", graph.Float32, []int{3, 8, 5}}}, []io{{"Softmax_4_out0", graph.Float32, []int{3, 4, 5}}},
			map[string]int{"BatchMatMul": 1, "Reshape": 2, "Softmax": 1}, 3 * 4 * 5 * 8},
		{"qdq_conv", []io{{"x", graph.Float32, []int{1, 3, 8, 8}}}, []io{{"DequantizeLinear_8_out0", graph.Float32, []int{1, 4, 8, 8}}},
			map[string]int{"Transpose": 2, "Quantize": 2, "Dequantize": 4, "Conv2D": 1, "Relu": 1}, 6912},
		{"qlinear", []io{{"x", graph.UInt8, []int{1, 2, 6, 6}}}, []io{{"DequantizeLinear_4_out0", graph.Float32, []int{1, 5}}},
			map[string]int{"Transpose": 2, "Conv2D": 1, "Reshape": 1, "FullyConnected": 1, "Dequantize": 1}, 1104},
		{"shape_arith", []io{{"x", graph.Float32, []int{1, 8, 4, 4}}}, []io{{"Gemm_11_out0", graph.Float32, []int{1, 3}}},
			map[string]int{"Transpose": 2, "Conv2D": 1, "Reshape": 1, "FullyConnected": 1}, 4800},
		// The NHWC->NCHW->NHWC transposes cancel: no Transpose node at all.
		{"tf_nhwc", []io{{"input_1", graph.Float32, []int{1, 6, 6, 3}}}, []io{{"MatMul_7_out0", graph.Float32, []int{1, 5}}},
			map[string]int{"Conv2D": 2, "Relu": 1, "Reshape": 1, "FullyConnected": 1}, 5364},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			var warnings []string
			g := load(t, c.model, onnx.Options{Shapes: shapesFor(c.model), Warn: func(s string) { warnings = append(warnings, s) }})
			check := func(what string, names []string, want []io) {
				if len(names) != len(want) {
					t.Fatalf("%s: %v, want %d", what, names, len(want))
				}
				for i, w := range want {
					tt := g.Tensors[names[i]]
					if names[i] != w.name || tt.DType != w.dt || !equalInts(tt.Shape, w.shape) {
						t.Errorf("%s %d: %s %s %v, want %s %s %v", what, i, names[i], tt.DType, tt.Shape, w.name, w.dt, w.shape)
					}
				}
			}
			check("input", g.Inputs, c.inputs)
			check("output", g.Outputs, c.outputs)
			got := graph.OpCounts(g)
			for op, n := range c.ops {
				if got[op] != n {
					t.Errorf("%s: %d nodes, want %d (all: %v)", op, got[op], n, got)
				}
			}
			for op := range got {
				if _, ok := c.ops[op]; !ok {
					t.Errorf("unexpected %d %s nodes (all: %v)", got[op], op, got)
				}
			}
			if m := graph.TotalMACs(g); m != c.macs {
				t.Errorf("MACs %d, want %d", m, c.macs)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings: %v", warnings)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMatMulFreeDim checks that a free batch dimension defaults to 1 with a warning.
func TestMatMulFreeDim(t *testing.T) {
	var warnings []string
	g := load(t, "matmul", onnx.Options{Warn: func(s string) { warnings = append(warnings, s) }})
	if len(warnings) != 2 {
		t.Errorf("warnings %q, want one per input", warnings)
	}
	if s := g.Tensors["a"].Shape; !equalInts(s, []int{1, 4, 8}) {
		t.Errorf("a: shape %v, want [1 4 8]", s)
	}
}

func initializer(t *testing.T, m *onnx.Model, name string) *graph.Data {
	for _, tp := range m.Graph.Initializer {
		if tp.Name == name {
			d, err := tp.ToData()
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("no initializer %q", name)
	return nil
}

// TestMLPReference runs the MLP through the importer and interpreter and
// compares with a direct evaluation of the ONNX definition on the
// initializers (Gemm with transB, MatMul, Gemm with alpha and beta).
func TestMLPReference(t *testing.T) {
	m := onnxmodels.MLP()
	g, err := onnx.Import("mlp", m, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := graph.NewData(graph.Float32, []int{1, 64})
	for i := range x.F {
		x.F[i] = float32(math.Sin(float64(i)))
	}
	out, err := interp.Run(g, map[string]*graph.Data{"features": x})
	if err != nil {
		t.Fatal(err)
	}
	w1, b1 := initializer(t, m, "fc1.w"), initializer(t, m, "fc1.b")
	w2, b2 := initializer(t, m, "fc2.w"), initializer(t, m, "fc2.b")
	w3, b3 := initializer(t, m, "fc3.w"), initializer(t, m, "fc3.b")
	h1 := make([]float64, 32)
	for n := 0; n < 32; n++ {
		s := float64(b1.F[n])
		for k := 0; k < 64; k++ {
			s += float64(x.F[k]) * float64(w1.F[n*64+k]) // B is [N,K] (transB=1)
		}
		h1[n] = math.Max(s, 0)
	}
	h2 := make([]float64, 16)
	for n := 0; n < 16; n++ {
		s := 0.0
		for k := 0; k < 32; k++ {
			s += h1[k] * float64(w2.F[k*16+n]) // MatMul B is [K,N]
		}
		h2[n] = math.Tanh(s + float64(b2.F[n]))
	}
	for n := 0; n < 4; n++ {
		s := 0.0
		for k := 0; k < 16; k++ {
			s += h2[k] * float64(w3.F[k*4+n])
		}
		want := 1 / (1 + math.Exp(-(0.5*s + 2*float64(b3.F[n]))))
		got := float64(out[g.Outputs[0]].F[n])
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("y[%d] = %v, want %v", n, got, want)
		}
	}
}

// TestBatchNormFold checks that folding BatchNormalization into the conv
// gives the same result as evaluating it as Mul+Add (forced by making the
// conv output a graph output too).
func TestBatchNormFold(t *testing.T) {
	folded, err := onnx.Import("cnn", onnxmodels.CNN(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := onnxmodels.CNN()
	m.Graph.Output = append(m.Graph.Output, &onnx.ValueInfo{Name: m.Graph.Nodes[0].Output[0], Type: &onnx.TypeProto{ElemType: onnx.TFloat}})
	unfolded, err := onnx.Import("cnn", m, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := graph.OpCounts(folded)["Mul"]; n != 0 {
		t.Errorf("folded graph has %d Mul nodes", n)
	}
	if n := graph.OpCounts(unfolded)["Mul"]; n != 1 {
		t.Errorf("unfolded graph has %d Mul nodes, want 1", n)
	}
	x := graph.NewData(graph.Float32, []int{1, 3, 16, 16})
	for i := range x.F {
		x.F[i] = float32(math.Cos(float64(i) * 0.37))
	}
	a, err := interp.Run(folded, map[string]*graph.Data{"image": x})
	if err != nil {
		t.Fatal(err)
	}
	b, err := interp.Run(unfolded, map[string]*graph.Data{"image": x})
	if err != nil {
		t.Fatal(err)
	}
	name := folded.Outputs[0]
	for i, v := range a[name].F {
		if w := b[name].F[i]; math.Abs(float64(v-w)) > 1e-6 {
			t.Errorf("y[%d]: folded %v, Mul+Add %v", i, v, w)
		}
	}
}

func clampRound(v float64, lo, hi float64) float64 {
	return math.Max(lo, math.Min(hi, math.RoundToEven(v)))
}

// TestQLinearReference runs the QLinearConv/QLinearMatMul model and compares
// with the ONNX definitions evaluated directly on the model's integers.
func TestQLinearReference(t *testing.T) {
	m := onnxmodels.QLinear()
	g, err := onnx.Import("qlinear", m, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := graph.NewData(graph.UInt8, []int{1, 2, 6, 6})
	for i := range x.I {
		x.I[i] = int64((i*71 + 13) % 256)
	}
	out, err := interp.Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	w, wz, bias := initializer(t, m, "w"), initializer(t, m, "w.zp"), initializer(t, m, "bias")
	ws := initializer(t, m, "w.scale")
	conv := make([]float64, 3*4*4) // NCHW [1,3,4,4]
	for o := 0; o < 3; o++ {
		for oh := 0; oh < 4; oh++ {
			for ow := 0; ow < 4; ow++ {
				acc := bias.I[o]
				for c := 0; c < 2; c++ {
					for kh := 0; kh < 3; kh++ {
						for kw := 0; kw < 3; kw++ {
							xv := x.I[(c*6+oh+kh)*6+ow+kw] - 128
							wv := w.I[((o*2+c)*3+kh)*3+kw] - wz.I[o]
							acc += xv * wv
						}
					}
				}
				conv[(o*4+oh)*4+ow] = clampRound(float64(acc)*float64(float32(0.03)*ws.F[o])/float64(float32(0.4)), -100, 155) + 100
			}
		}
	}
	mm := initializer(t, m, "m")
	got := out[g.Outputs[0]]
	for n := 0; n < 5; n++ {
		var acc int64
		for k := 0; k < 48; k++ {
			acc += (int64(conv[k]) - 100) * (mm.I[k*5+n] - 127)
		}
		q := clampRound(float64(acc)*float64(float32(0.4)*float32(0.01))/float64(float32(0.5)), -90, 165) + 90
		want := float32((q - 90) * 0.5)
		if got.F[n] != want {
			t.Errorf("y[%d] = %v, want %v", n, got.F[n], want)
		}
	}
}

// refInput is the deterministic input of ort_reference.js.
func refInput(dt graph.DType, shape []int, salt int) *graph.Data {
	d := graph.NewData(dt, shape)
	for i := 0; i < d.Len(); i++ {
		if dt == graph.UInt8 {
			d.I[i] = int64((i*71 + 13 + salt) % 256)
		} else {
			d.F[i] = float32(float64((i*37+salt)%101-50) / 50)
		}
	}
	return d
}

// TestAgainstOnnxruntime compares the importer + reference interpreter with
// onnxruntime's outputs on the test models (testdata/onnx/ort_reference.json,
// written by testdata/gen/onnxmodels/ort_reference.js).
func TestAgainstOnnxruntime(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(modelDir, "ort_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]struct {
		Output string
		Shape  []int
		Data   []float64
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]io{
		"cnn":         {{"image", graph.Float32, []int{1, 3, 16, 16}}},
		"resnet":      {{"input", graph.Float32, []int{1, 4, 8, 8}}},
		"mlp":         {{"features", graph.Float32, []int{1, 64}}},
		"matmul":      {{"a", graph.Float32, []int{3, 4, 8}}, {"b", graph.Float32, []int{3, 8, 5}}},
		"qdq_conv":    {{"x", graph.Float32, []int{1, 3, 8, 8}}},
		"qlinear":     {{"x", graph.UInt8, []int{1, 2, 6, 6}}},
		"shape_arith": {{"x", graph.Float32, []int{1, 8, 4, 4}}},
		"tf_nhwc":     {{"input_1", graph.Float32, []int{1, 6, 6, 3}}},
	}
	for name, ins := range inputs {
		r, ok := ref[name]
		if !ok {
			t.Fatalf("%s: no reference", name)
		}
		g := load(t, name, onnx.Options{Shapes: shapesFor(name)})
		feeds := map[string]*graph.Data{}
		for i, in := range ins {
			feeds[in.name] = refInput(in.dt, in.shape, 7*i)
		}
		out, err := interp.Run(g, feeds)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := out[r.Output]
		if got == nil || !equalInts(got.Shape, r.Shape) {
			t.Fatalf("%s: output %q = %v, want shape %v", name, r.Output, got, r.Shape)
		}
		for i, w := range r.Data {
			if g := float64(got.F[i]); math.Abs(g-w) > 1e-5+1e-4*math.Abs(w) {
				t.Errorf("%s: y[%d] = %v, onnxruntime %v", name, i, g, w)
			}
		}
	}
}

// TestBatchNormAfterIdentity: a conv output read both directly and through
// Identity -> BatchNormalization must not get the BatchNorm folded into it.
func TestBatchNormAfterIdentity(t *testing.T) {
	b := onnx.NewBuilder("bn_alias", 13, 9)
	x := b.Input("x", graph.Float32, 1, 2, 3, 3)
	c := b.Node("Conv", []string{x, b.Rand("w", 1, 2, 2, 1, 1)})
	i := b.Node("Identity", []string{c})
	scale, bias := []float32{2, -1}, []float32{0.5, 3}
	bn := b.Node("BatchNormalization", []string{i, b.Floats("s", scale...), b.Floats("b", bias...), b.Floats("m", 0, 0), b.Floats("v", 1, 1)}, onnx.FloatAttr("epsilon", 0))
	b.Output(c, graph.Float32)
	b.Output(bn, graph.Float32)
	g, err := onnx.Import("bn_alias", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.Run(g, map[string]*graph.Data{"x": refInput(graph.Float32, []int{1, 2, 3, 3}, 0)})
	if err != nil {
		t.Fatal(err)
	}
	cv, bv := out[g.Outputs[0]], out[g.Outputs[1]]
	for k := range cv.F {
		ch := k / 9 // NCHW
		want := cv.F[k]*scale[ch] + bias[ch]
		if math.Abs(float64(bv.F[k]-want)) > 1e-5 {
			t.Fatalf("bn[%d] = %v, want %v (conv %v)", k, bv.F[k], want, cv.F[k])
		}
	}
}

// TestChannelConstFold: Conv -> Mul by [C,1,1] -> Add [C,1,1] folds into the
// conv, and gives what the unfolded graph (conv output also a graph output)
// computes.
func TestChannelConstFold(t *testing.T) {
	build := func(exposeConv bool) *graph.Graph {
		b := onnx.NewBuilder("fold", 13, 11)
		x := b.Input("x", graph.Float32, 1, 3, 5, 5)
		c := b.Node("Conv", []string{x, b.Rand("w", 1, 4, 3, 3, 3), b.Rand("b", 1, 4)}, onnx.IntsAttr("kernel_shape", 3, 3))
		m := b.Node("Mul", []string{c, b.Rand("s", 2, 4, 1, 1)})
		y := b.Node("Add", []string{m, b.Rand("k", 2, 4, 1, 1)})
		b.Output(y, graph.Float32)
		if exposeConv {
			b.Output(c, graph.Float32)
		}
		g, err := onnx.Import("fold", b.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	folded, plain := build(false), build(true)
	if n := graph.OpCounts(folded); n["Mul"] != 0 || n["Add"] != 0 {
		t.Errorf("folded graph: %v", n)
	}
	if n := graph.OpCounts(plain); n["Mul"] != 1 || n["Add"] != 1 {
		t.Errorf("unfolded graph: %v", n)
	}
	in := map[string]*graph.Data{"x": refInput(graph.Float32, []int{1, 3, 5, 5}, 3)}
	a, err := interp.Run(folded, in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := interp.Run(plain, in)
	if err != nil {
		t.Fatal(err)
	}
	y := folded.Outputs[0]
	for i, v := range a[y].F {
		if w := b[y].F[i]; math.Abs(float64(v-w)) > 1e-5*(1+math.Abs(float64(w))) {
			t.Fatalf("y[%d]: folded %v, unfolded %v", i, v, w)
		}
	}
}

// shapesFor binds the matmul model's dynamic inputs; the others take no
// --shape (a name that is not an input is an error).
func shapesFor(model string) map[string][]int {
	if model == "matmul" {
		return map[string][]int{"a": {3, 4, 8}, "b": {3, 8, 5}}
	}
	return nil
}
