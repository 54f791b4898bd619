package onnx

import (
	"math"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// Session 46's hostile review of the ONNX importer: a structural mutator
// (about 4,500 mutants through inspect, compile, eval, quantize and plan).
// Each case below was accepted, hung or gave a wrong value before.

// An LRN window wider than the channels sums them all; size still divides
// alpha. Channels (1, 2, 3): every sum of squares is 14; alpha 2 and size
// 20,000 give 1 + (2/20000)·14 = 1.0014, beta 1: y = x / 1.0014. Size 2^40
// is the same windows. Before, import made size slices: 20,000 never
// finished, and 2^40 ran out of time everywhere.
func TestLRNWindowWiderThanChannels46(t *testing.T) {
	for _, size := range []int64{20000, 1 << 40} {
		b := NewBuilder("lrn", 13, 1)
		x := b.Input("x", graph.Float32, 1, 3, 1, 1)
		b.Output(b.Node("LRN", []string{x}, IntAttr("size", size), FloatAttr("alpha", 2), FloatAttr("beta", 1), FloatAttr("bias", 1)), graph.Float32)
		start := time.Now()
		g, err := Import("lrn", b.Model(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("size %d: import took %v", size, d)
		}
		out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 3, 1, 1}, F: []float32{1, 2, 3}}})
		if err != nil {
			t.Fatal(err)
		}
		den := 1 + 2/float64(size)*14
		for i, v := range out[g.Outputs[0]].F {
			if want := float64(i+1) / den; math.Abs(float64(v)-want) > 1e-6*want {
				t.Errorf("size %d: y[%d] = %v, want %v", size, i, v, want)
			}
		}
	}
}

// An attribute stored as another type than the operator's schema gives
// it was read as 0 (a FLOAT axis made a Concat join axis 0; an INT alpha
// made LeakyRelu's slope 0); a duplicated attribute took the first.
func TestAttributeTypesChecked46(t *testing.T) {
	one := func(op string, attrs ...*Attribute) *Builder {
		b := NewBuilder("attr", 13, 1)
		x := b.Input("x", graph.Float32, 1, 4)
		ins := []string{x}
		if op == "Concat" {
			ins = []string{x, x}
		}
		b.Output(b.Node(op, ins, attrs...), graph.Float32)
		return b
	}
	refused(t, one("Concat", FloatAttr("axis", 1)), "Concat_1", `attribute "axis" is FLOAT, where Concat wants INT`)
	refused(t, one("LeakyRelu", IntAttr("alpha", 3)), "LeakyRelu_1", `attribute "alpha" is INT, where LeakyRelu wants FLOAT`)
	refused(t, one("Softmax", IntsAttr("axis", 1)), "Softmax_1", `"axis" is INTS`)
	refused(t, one("Softmax", IntAttr("axis", 1), IntAttr("axis", 99)), "Softmax_1", `attribute "axis" is given twice`)
	// UNDEFINED (the oldest exporters) is read as asked.
	b := one("LeakyRelu", &Attribute{Name: "alpha", F: 0.5})
	got := runLocal(t, b, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 4}, F: []float32{-2, -1, 0, 4}}})
	for i, want := range []float32{-1, -0.5, 0, 4} {
		if got.F[i] != want {
			t.Errorf("LeakyRelu with an untyped alpha: y[%d] = %v, want %v", i, got.F[i], want)
		}
	}
}

// runLocal imports b and runs its first output on inputs.
func runLocal(t *testing.T, b *Builder, inputs map[string]*graph.Data) *graph.Data {
	t.Helper()
	g, err := Import("m", b.Model(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.Run(g, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return out[g.Outputs[0]]
}

// Input counts: an Add of one input became an identity, a Relu of three
// was taken, and ReduceMean's axes input at opset 17 (it exists from 18)
// was ignored, reducing every axis.
func TestInputCounts46(t *testing.T) {
	b := NewBuilder("add1", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Add", []string{x}), graph.Float32)
	refused(t, b, "Add_1", "1 input(s), where Add at opset 13 takes 2")

	b = NewBuilder("relu3", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Relu", []string{x, x, x}), graph.Float32)
	refused(t, b, "Relu_1", "3 inputs, where Relu at opset 13 takes 1")

	b = NewBuilder("rm17", 17, 1)
	x = b.Input("x", graph.Float32, 2, 4)
	b.Output(b.Node("ReduceMean", []string{x, b.Ints("axes", 1)}), graph.Float32)
	refused(t, b, "ReduceMean_1", "2 inputs, where ReduceMean at opset 17 takes 1")

	// At 18 the same node reduces axis 1: rows (0..3) and (4..7) give 1.5 and 5.5.
	b = NewBuilder("rm18", 18, 1)
	x = b.Input("x", graph.Float32, 2, 4)
	b.Output(b.Node("ReduceMean", []string{x, b.Ints("axes", 1)}, IntAttr("keepdims", 0)), graph.Float32)
	got := runLocal(t, b, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 4}, F: []float32{0, 1, 2, 3, 4, 5, 6, 7}}})
	if len(got.F) != 2 || got.F[0] != 1.5 || got.F[1] != 5.5 {
		t.Errorf("ReduceMean over axis 1 at opset 18: %v, want [1.5 5.5]", got.F)
	}

	// A trailing empty name is an input left out: Conv with [x, w, ""].
	b = NewBuilder("conv", 13, 1)
	x = b.Input("x", graph.Float32, 1, 1, 3, 3)
	w := b.Rand("w", 1, 1, 1, 1, 1)
	b.Output(b.Node("Conv", []string{x, w, ""}), graph.Float32)
	if _, err := Import("conv", b.Model(), Options{}); err != nil {
		t.Errorf("Conv with an empty third input: %v", err)
	}
}

// Two imports of the ai.onnx opset: the last won, and at 17 a Clip's
// min and max attributes (opset 6's) were dropped. A version of -1 was
// said to be no import at all.
func TestOpsetImports46(t *testing.T) {
	b := NewBuilder("dup", 6, 1)
	b.Model().OpsetImport = append(b.Model().OpsetImport, OpsetID{Domain: "", Version: 17})
	x := b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	if _, err := Import("dup", b.Model(), Options{}); err == nil || err.Error() != "importer: dup: the ai.onnx opset is imported twice (versions 6 and 17)" {
		t.Errorf("got %v", err)
	}
	b.Model().OpsetImport = []OpsetID{{Domain: "", Version: -1}}
	if _, err := Import("neg", b.Model(), Options{}); err == nil || err.Error() != "importer: neg: opset -1 (supported: 1 to 22)" {
		t.Errorf("got %v", err)
	}
}

// Values the schema forbids, which failed later on nodes the importer had
// made (a Mul "n0/Mul_7", a "!= on float32 and bool"), were taken as
// something else (mode "XYZ" as DCR), or were a Go runtime error (Gemm's
// int64 C).
func TestSchemaValues46(t *testing.T) {
	b := NewBuilder("ln", 17, 1)
	x := b.Input("x", graph.Float32, 1, 3, 8)
	b.Output(b.Node("LayerNormalization", []string{x, b.Rand("scale", 1, 5)}), graph.Float32)
	refused(t, b, "LayerNormalization_1", "Scale of shape [5] does not broadcast to X's shape [1 3 8]")

	b = NewBuilder("where", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Where", []string{x, x, x}), graph.Float32)
	refused(t, b, "Where_1", "Where's condition is float32: ONNX wants bool")

	b = NewBuilder("d2s", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4, 2, 2)
	b.Output(b.Node("DepthToSpace", []string{x}, IntAttr("blocksize", 2), StringAttr("mode", "XYZ")), graph.Float32)
	refused(t, b, "DepthToSpace_1", `mode "XYZ": want DCR or CRD`)

	b = NewBuilder("gemm", 13, 1)
	x = b.Input("x", graph.Float32, 1, 3)
	b.Output(b.Node("Gemm", []string{x, b.Rand("w", 1, 3, 4), b.Init("c", &graph.Data{DType: graph.Int64, Shape: []int{4}, I: []int64{1, 2, 3, 4}})}), graph.Float32)
	refused(t, b, "Gemm_1", "Gemm's C is int64")
}

// Constant indices outside their axis were clamped (GatherElements gave
// x[0] for 99) or dropped (ScatterElements, ScatterND); run-time indices
// are still clamped, as documented.
func TestConstantIndicesInRange46(t *testing.T) {
	idx := func(b *Builder, shape []int, v ...int64) string {
		return b.Init("i", &graph.Data{DType: graph.Int64, Shape: shape, I: v})
	}
	b := NewBuilder("ge", 13, 1)
	x := b.Input("x", graph.Float32, 2, 3)
	b.Output(b.Node("GatherElements", []string{x, idx(b, []int{2, 1}, 0, 3)}, IntAttr("axis", 1)), graph.Float32)
	refused(t, b, "GatherElements_1", "constant index 3 (element 1 of the indices) is out of range for axis 1 of size 3")

	b = NewBuilder("se", 13, 1)
	x = b.Input("x", graph.Float32, 2, 3)
	u := b.Init("u", &graph.Data{DType: graph.Float32, Shape: []int{1, 1}, F: []float32{9}})
	b.Output(b.Node("ScatterElements", []string{x, idx(b, []int{1, 1}, -3), u}), graph.Float32)
	refused(t, b, "ScatterElements_1", "constant index -3 (element 0 of the indices) is out of range for axis 0 of size 2")

	b = NewBuilder("snd", 13, 1)
	x = b.Input("x", graph.Float32, 2, 3)
	b.Output(b.Node("ScatterND", []string{x, idx(b, []int{1, 2}, 1, 5), b.Floats("u", 9)}), graph.Float32)
	refused(t, b, "ScatterND_1", "constant index 5 (element 1 of the indices) is out of range for axis 1 of size 3")

	// In range, negative counting from the end: x[1][-1] = 6 becomes 9.
	b = NewBuilder("ok", 13, 1)
	x = b.Input("x", graph.Float32, 2, 3)
	b.Output(b.Node("ScatterND", []string{x, idx(b, []int{1, 2}, 1, -1), b.Floats("u", 9)}), graph.Float32)
	got := runLocal(t, b, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 3}, F: []float32{1, 2, 3, 4, 5, 6}}})
	for i, want := range []float32{1, 2, 3, 4, 5, 9} {
		if got.F[i] != want {
			t.Errorf("ScatterND: y[%d] = %v, want %v", i, got.F[i], want)
		}
	}
}

// A graph input with an initializer of another type or shape became the
// initializer in silence (a float [1,4] input, an int8 [2,2] constant).
func TestInitializerContradictsInput46(t *testing.T) {
	b := NewBuilder("shadow", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	b.Init("x", &graph.Data{DType: graph.Int8, Shape: []int{2, 2}, I: []int64{1, 2, 3, 4}})
	b.Output(b.Node("Neg", []string{x}), graph.Int8)
	if _, err := Import("shadow", b.Model(), Options{}); err == nil || err.Error() != `importer: input "x" is declared FLOAT, but its initializer is INT8` {
		t.Errorf("type: got %v", err)
	}
	b = NewBuilder("shadow2", 13, 1)
	x = b.Input("x", graph.Float32, 1, -1)
	b.Init("x", &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{1, 2, 3, 4}})
	b.Output(b.Node("Neg", []string{x}), graph.Float32)
	if _, err := Import("shadow2", b.Model(), Options{}); err == nil || err.Error() != `importer: input "x" is declared of shape [1 N], but its initializer is [2 2]` {
		t.Errorf("shape: got %v", err)
	}
	// Agreeing (IR 3 lists every initializer as an input): the constant.
	b = NewBuilder("ir3", 13, 1)
	x = b.Input("x", graph.Float32, 2, -1)
	b.Init("x", &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{1, 2, 3, 4}})
	b.Output(b.Node("Neg", []string{x}), graph.Float32)
	if got := runLocal(t, b, nil); len(got.F) != 4 || got.F[3] != -4 {
		t.Errorf("agreeing initializer: %v", got.F)
	}
}

// What a model declares of its outputs was not read: an output declared
// STRING compiled, as did one declared [2^40, 2^40] that computes [1, 4].
// The element type is the caller's buffer, so another one is an error;
// other fixed dimensions are a warning (the firmware writes the computed
// shape); an empty declared shape is unknown.
func TestDeclaredOutputs46(t *testing.T) {
	build := func(dt int32, shape ...Dim) *Builder {
		b := NewBuilder("decl", 13, 1)
		x := b.Input("x", graph.Float32, 1, 4)
		y := b.Node("Relu", []string{x})
		b.Model().Graph.Output = append(b.Model().Graph.Output, &ValueInfo{Name: y, Type: &TypeProto{ElemType: dt, HasShape: true, Shape: shape}})
		return b
	}
	warnings := func(b *Builder) ([]string, error) {
		var ws []string
		_, err := Import("decl", b.Model(), Options{Warn: func(s string) { ws = append(ws, s) }})
		return ws, err
	}
	if _, err := warnings(build(TString, Dim{Value: 1, HasValue: true}, Dim{Value: 4, HasValue: true})); err == nil ||
		err.Error() != `importer: graph output "Relu_1_out0" is declared STRING, but its nodes compute float32` {
		t.Errorf("STRING: got %v", err)
	}
	ws, err := warnings(build(TFloat, Dim{Value: 1 << 40, HasValue: true}, Dim{Value: 1 << 40, HasValue: true}))
	if err != nil || len(ws) != 1 || ws[0] != `graph output "Relu_1_out0" is declared of shape [1099511627776 1099511627776], but its nodes compute [1 4]; the firmware writes [1 4]` {
		t.Errorf("shape: %v, %q", err, ws)
	}
	for _, shape := range [][]Dim{nil, {{Value: 1, HasValue: true}, {Param: "W"}}} {
		if ws, err := warnings(build(TFloat, shape...)); err != nil || len(ws) != 0 {
			t.Errorf("declared %v: %v, %q", shape, err, ws)
		}
	}
}

// The second review of these checks: valid models they refused, and
// messages they made false.
func TestSchemaChecksAcceptValid46(t *testing.T) {
	// LayerNormalization's Scale and B broadcast as Mul and Add do: [1,1,4]
	// over [2,3,4] (the first version wanted the normalized shape [4]).
	// Rows 0..3 normalize to ±1.3416, ±0.4472 (mean 1.5, variance 1.25);
	// scale 2 and bias 1 give 1 ± 2.6833, 1 ± 0.8944.
	b := NewBuilder("ln", 17, 1)
	x := b.Input("x", graph.Float32, 2, 3, 4)
	sc := b.Init("s", &graph.Data{DType: graph.Float32, Shape: []int{1, 1, 4}, F: []float32{2, 2, 2, 2}})
	bi := b.Init("b", &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, 1, 1, 1}})
	b.Output(b.Node("LayerNormalization", []string{x, sc, bi}, FloatAttr("epsilon", 0)), graph.Float32)
	in := &graph.Data{DType: graph.Float32, Shape: []int{2, 3, 4}, F: make([]float32, 24)}
	for i := range in.F {
		in.F[i] = float32(i % 4)
	}
	got := runLocal(t, b, map[string]*graph.Data{"x": in})
	r := 1.5 / math.Sqrt(1.25)
	for i, v := range got.F {
		want := 1 + 2*(float64(i%4)-1.5)/1.5*r
		if math.Abs(float64(v)-want) > 1e-5 {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
	}

	// An IR 3 model lists a DOUBLE initializer as a graph input declared
	// DOUBLE: the file agrees with itself, though mcugen reads it as
	// float32 (the first version compared with that and refused it).
	b = NewBuilder("dbl", 9, 1)
	b.Model().IRVersion = 3
	x = b.Input("x", graph.Float32, 1, 2)
	b.Model().Graph.Input = append(b.Model().Graph.Input, &ValueInfo{Name: "w", Type: &TypeProto{ElemType: TDouble, HasShape: true, Shape: []Dim{{Value: 2, HasValue: true}}}})
	b.Model().Graph.Initializer = append(b.Model().Graph.Initializer, &Tensor{Name: "w", DataType: TDouble, Dims: []int64{2}, DoubleData: []float64{1, 2}})
	b.Output(b.Node("Add", []string{x, b.Node("Cast", []string{"w"}, IntAttr("to", int64(TFloat)))}), graph.Float32)
	got = runLocal(t, b, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 2}, F: []float32{10, 20}}})
	if got.F[0] != 11 || got.F[1] != 22 {
		t.Errorf("DOUBLE initializer input: %v, want [11 22]", got.F)
	}

	// Split-1 had an optional split input that 2 to 12 dropped: refused
	// as not supported, not as a count Split-1 allows.
	b = NewBuilder("split1", 1, 1)
	x = b.Input("x", graph.Float32, 1, 6)
	b.NodeN("Split", []string{x, b.Ints("split", 2, 4)}, 2, IntAttr("axis", 1))
	b.Output("Split_1_out0", graph.Float32)
	refused(t, b, "Split_1", "Split-1's split input")

	// Unsqueeze from opset 13 needs its axes input; Gemm before 11 its C.
	b = NewBuilder("unsq", 13, 1)
	x = b.Input("x", graph.Float32, 4)
	b.Output(b.Node("Unsqueeze", []string{x}), graph.Float32)
	refused(t, b, "Unsqueeze_1", "1 input(s), where Unsqueeze at opset 13 takes 2")
	b = NewBuilder("gemm9", 9, 1)
	x = b.Input("x", graph.Float32, 1, 3)
	b.Output(b.Node("Gemm", []string{x, b.Rand("w", 1, 3, 4)}), graph.Float32)
	refused(t, b, "Gemm_1", "2 input(s), where Gemm at opset 9 takes 3")

	// A wrongly typed attribute is the error said, though the converter
	// failed on the default it went on with (a STRING Concat axis read as
	// 0 gave "axis out of range" here before).
	b = NewBuilder("cat", 13, 1)
	x = b.Input("x", graph.Float32, 4)
	b.Output(b.Node("Concat", []string{x, x}, StringAttr("axis", "1")), graph.Float32)
	refused(t, b, "Concat_1", `attribute "axis" is STRING, where Concat wants INT`)
}

// A Clip at opset 17 with opset 6's min and max attributes clipped nothing.
func TestClipAttributesAfterOpset11_46(t *testing.T) {
	b := NewBuilder("clip", 17, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Clip", []string{x}, FloatAttr("min", 0), FloatAttr("max", 0.5)), graph.Float32)
	refused(t, b, "Clip_1", `attribute "min": Clip takes its bounds as inputs from opset 11 (this model's is 17)`)
	// At opset 6 they are the bounds: (-1, 0.25, 0.75, 2) → (0, 0.25, 0.5, 0.5).
	b = NewBuilder("clip6", 6, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Clip", []string{x}, FloatAttr("min", 0), FloatAttr("max", 0.5)), graph.Float32)
	got := runLocal(t, b, map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{1, 4}, F: []float32{-1, 0.25, 0.75, 2}}})
	for i, want := range []float32{0, 0.25, 0.5, 0.5} {
		if got.F[i] != want {
			t.Errorf("y[%d] = %v, want %v", i, got.F[i], want)
		}
	}
}
