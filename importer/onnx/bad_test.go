package onnx

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func readModel(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("../../testdata/onnx", name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTruncated(t *testing.T) {
	b := readModel(t, "cnn")
	for _, n := range []int{1, 7, len(b) / 3, len(b) / 2, len(b) - 1} {
		_, err := Decode("cnn", b[:n], Options{})
		if err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
			continue
		}
		if !strings.HasPrefix(err.Error(), "importer: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("truncated to %d bytes: error %q is not one line with context", n, err)
		}
	}
}

func TestNotONNX(t *testing.T) {
	for name, b := range map[string][]byte{
		"text":  []byte("hello, this is not a model\n"),
		"empty": {},
		"npy":   append([]byte("\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"), make([]byte, 4)...),
		"zeros": make([]byte, 64),
	} {
		_, err := Decode(name, b, Options{})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "ONNX") {
			t.Errorf("%s: error %q does not say it is not ONNX", name, err)
		}
	}
}

func TestUnsupportedOpsListed(t *testing.T) {
	b := NewBuilder("bad", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	y := b.Node("Relu", []string{x})
	y = b.Node("NonZero", []string{y})
	y = b.Node("Unique", []string{y})
	y = b.Node("NonZero", []string{y})
	b.Output(y, graph.Float32)
	_, err := Decode("bad", b.Model().Marshal(), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v is not an UnsupportedError", err)
	}
	want := `importer: unsupported ops: NonZero (nodes "NonZero_2", "NonZero_4"); Unique (nodes "Unique_3")`
	if err.Error() != want {
		t.Errorf("error\n %q, want\n %q", err, want)
	}
}

// A corrupt file's op type prints quoted, as node names do: raw, a byte
// that is not text reached the terminal (user-journey finding).
func TestUnsupportedOpQuoted(t *testing.T) {
	b := NewBuilder("bad", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	y := b.Node("Relu", []string{x})
	m := b.Model()
	m.Graph.Nodes[0].OpType = "Rel\xff"
	b.Output(y, graph.Float32)
	_, err := Decode("bad", b.Model().Marshal(), Options{})
	want := `importer: unsupported ops: "Rel\xff" (nodes "Relu_1")`
	if err == nil || err.Error() != want {
		t.Errorf("error\n %v, want\n %q", err, want)
	}
}

func TestExternalData(t *testing.T) {
	b := NewBuilder("ext", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	w := b.Rand("w", 1, 4)
	m := b.Model()
	m.Graph.Initializer[0] = &Tensor{Name: w, DataType: TFloat, Dims: []int64{4}, DataLocation: 1,
		ExternalData: []KeyValue{{"location", "weights.bin"}, {"offset", "0"}, {"length", "16"}}}
	b.Output(b.Node("Add", []string{x, w}), graph.Float32)
	_, err := Decode("ext", m.Marshal(), Options{})
	if err == nil || !strings.Contains(err.Error(), "external file") || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("error %v, want one naming the tensor and external data", err)
	}
}

func TestBadShapeOption(t *testing.T) {
	b := readModel(t, "cnn")
	for _, s := range [][]int{{1, 3, 16}, {1, 3, 16, 0}, {1, 4, 16, 16}} {
		if _, err := Decode("cnn", b, Options{Shapes: map[string][]int{"image": s}}); err == nil {
			t.Errorf("--shape image=%v: no error", s)
		}
	}
	if _, err := Decode("cnn", b, Options{Shapes: map[string][]int{"image": {1, 3, 16, 16}}}); err != nil {
		t.Errorf("matching --shape: %v", err)
	}
}

func TestReadTensorProto(t *testing.T) {
	d := &graph.Data{DType: graph.Int8, Shape: []int{2, 2}, I: []int64{-128, -1, 0, 127}}
	tp := NewTensor("t", d)
	name, got, err := ReadTensorProto(tp.Marshal())
	if err != nil || name != "t" || got.DType != graph.Int8 || got.I[0] != -128 || got.I[3] != 127 || len(got.Shape) != 2 {
		t.Errorf("ReadTensorProto = %q, %+v, %v", name, got, err)
	}
	// Typed fields instead of raw_data: float_data, int64_data, int32_data for int8.
	for _, tp := range []*Tensor{
		{Name: "f", DataType: TFloat, Dims: []int64{3}, FloatData: []float32{1, -2, 3.5}},
		{Name: "i", DataType: TInt64, Dims: []int64{3}, Int64Data: []int64{1, -2, 3}},
		{Name: "b", DataType: TInt8, Dims: []int64{3}, Int32Data: []int32{1, -2, 3}},
		{Name: "h", DataType: TFloat16, Dims: []int64{3}, Int32Data: []int32{0x3c00, 0xc000, 0x4300}},
	} {
		_, got, err := ReadTensorProto(tp.Marshal())
		if err != nil {
			t.Fatalf("%s: %v", tp.Name, err)
		}
		if got.Float(0) != 1 || got.Float(1) != -2 || got.Float(2) != 3.5 && tp.Name != "i" && tp.Name != "b" {
			t.Errorf("%s: got %v", tp.Name, got)
		}
	}
	if _, _, err := ReadTensorProto([]byte{0x0a, 0x05, 0x01}); err == nil {
		t.Error("truncated tensor: no error")
	}
	if _, _, err := ReadTensorProto((&Tensor{DataType: TFloat, Dims: []int64{4}, RawData: make([]byte, 15)}).Marshal()); err == nil {
		t.Error("short raw_data: no error")
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder and importer: any input
// must give a graph or an error, never a panic.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"cnn", "resnet", "mlp", "matmul", "qdq_conv", "qlinear", "shape_arith", "tf_nhwc"} {
		f.Add(readModel(f, name))
	}
	// A spread of backend test models (every 25th) as further seeds.
	if m, _ := filepath.Glob(filepath.Join(backendRoot, "node", "*", "model.onnx")); len(m) > 0 {
		for i := 0; i < len(m); i += 25 {
			if b, err := os.ReadFile(m[i]); err == nil {
				f.Add(b)
			}
		}
	}
	// And the operators that are compositions with shapes and indices of
	// their own: recurrent layers, GatherND, OneHot, Einsum, TopK, the
	// signal operators, Scatter, control flow, 3-D pools (lowered to 2-D)
	// and the loss functions.
	for _, name := range []string{"test_lstm_with_peepholes", "test_gru_seq_length", "test_rnn_seq_length",
		"test_gathernd_example_int32_batch_dim1", "test_onehot_negative_indices", "test_einsum_batch_matmul",
		"test_top_k_smallest", "test_dynamicquantizelinear",
		"test_dft_inverse", "test_dft_axis", "test_stft_with_window", "test_melweightmatrix",
		"test_scatternd_add", "test_scatter_elements_with_negative_indices",
		"test_if", "test_loop11", "test_scan_sum", "test_scan9_sum",
		"test_maxpool_3d_default", "test_averagepool_3d_default", "test_nllloss_NCd1d2_with_weight_expanded",
		"test_nllloss_NCd1d2d3_sum_weight_high_ii", "test_sce_NCd1d2d3_sum_weight_high_ii_log_prob"} {
		if b, err := os.ReadFile(filepath.Join(backendRoot, "node", name, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
	// Control flow, unrolled at import: a Loop and an If (control.go).
	for _, b := range controlSeeds() {
		f.Add(b)
	}
	// ONNX Runtime's QOperator ops, rewritten before import (msqops.go).
	f.Add(qopSeed())
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode("fuzz", b, Options{})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
		if err == nil {
			if err := graph.Validate(g); err != nil {
				t.Fatalf("imported graph does not validate: %v", err)
			}
		}
		ReadTensorProto(b)
	})
}

// TestScatterRefusals: a Scatter whose operands do not fit says what is
// wrong, naming the node; a constant one folds.
func TestScatterRefusals(t *testing.T) {
	build := func(op string, idx []int, idxDT graph.DType, upd []int, attrs ...*Attribute) error {
		b := NewBuilder("scatter", 18, 1)
		x := b.Input("x", graph.Float32, 2, 3)
		i := b.Input("i", idxDT, idx...)
		u := b.Input("u", graph.Float32, upd...)
		b.Output(b.Node(op, []string{x, i, u}, attrs...), graph.Float32)
		_, err := Decode("scatter", b.Model().Marshal(), Options{})
		return err
	}
	str := func(name, v string) *Attribute { return &Attribute{Name: name, Type: AttrString, S: []byte(v)} }
	for _, c := range []struct {
		name, op string
		idx, upd []int
		idxDT    graph.DType
		attrs    []*Attribute
		want     string
	}{
		{"float indices", "ScatterElements", []int{2, 3}, []int{2, 3}, graph.Float32, nil, "indices are float32"},
		{"shapes differ", "ScatterElements", []int{2, 3}, []int{2, 2}, graph.Int64, nil, "must have one shape"},
		{"larger than data", "ScatterElements", []int{3, 3}, []int{3, 3}, graph.Int64, []*Attribute{IntAttr("axis", 1)}, "exceed data"},
		{"reduction", "ScatterND", []int{1, 1}, []int{1, 3}, graph.Int64, []*Attribute{str("reduction", "mean")}, `reduction "mean"`},
		{"nd depth", "ScatterND", []int{1, 3}, []int{1}, graph.Int64, nil, "index depth 3"},
		{"nd updates", "ScatterND", []int{2, 1}, []int{2, 2}, graph.Int64, nil, "updates [2 2], want [2 3]"},
	} {
		err := build(c.op, c.idx, c.idxDT, c.upd, c.attrs...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.op) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming %s and %q", c.name, err, c.op, c.want)
		}
	}
	if err := build("ScatterND", []int{2, 1}, graph.Int64, []int{2, 3}, str("reduction", "max")); err != nil {
		t.Errorf("a good ScatterND: %v", err)
	}
}

// A --shape naming no input is that error, not the failure its unbound
// dimensions cause further on (user-journey finding: a 5×5 Conv over
// dynamic H and W, set to 1, failed first with "kernel 5 larger than
// padded input 1").
func TestShapeNamingNoInputFirst(t *testing.T) {
	b := NewBuilder("fcn", 13, 1)
	x := b.Input("x", graph.Float32, -1, 3, -1, -1)
	w := b.Rand("w", 0.1, 4, 3, 5, 5)
	b.Output(b.Node("Conv", []string{x, w}), graph.Float32)
	_, err := Decode("fcn", b.Model().Marshal(), Options{Shapes: map[string][]int{"foo": {1, 3, 20, 16}}})
	if err == nil || !strings.Contains(err.Error(), `--shape foo: the model has no input named "foo" (its inputs: x)`) {
		t.Errorf("error %v, want the --shape one naming x", err)
	}
	if _, err := Decode("fcn", b.Model().Marshal(), Options{Shapes: map[string][]int{"x": {1, 3, 20, 16}}}); err != nil {
		t.Errorf("--shape x: %v", err)
	}
	// An initializer is not an input either.
	_, err = Decode("fcn", b.Model().Marshal(), Options{Shapes: map[string][]int{"w": {4, 3, 5, 5}, "x": {1, 3, 20, 16}}})
	if err == nil || !strings.Contains(err.Error(), `--shape w: "w" is an initializer of the model (a constant), not an input: its shape is stored (its inputs: x)`) {
		t.Errorf("--shape w (an initializer): %v", err)
	}
}

// Two initializers of one name are refused, as ONNX's checker refuses
// them (adversarial journey: the last one silently won).
func TestDuplicateInitializer(t *testing.T) {
	b := NewBuilder("dup", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	w := b.Floats("w", 1, 2, 3, 4)
	b.Floats("w", 100, 100, 100, 100)
	b.Output(b.Node("Add", []string{x, w}), graph.Float32)
	_, err := Decode("dup", b.Model().Marshal(), Options{})
	if err == nil || !strings.Contains(err.Error(), `initializer "w" is given twice`) {
		t.Errorf("error %v, want the duplicate initializer named", err)
	}
}

// A NaN attribute is refused, named (adversarial journey: LeakyRelu's
// alpha, and a Clip bound from a NaN initializer, compiled to NaN or
// wrong outputs).
func TestNaNAttributeRefused(t *testing.T) {
	b := NewBuilder("lrelu", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("LeakyRelu", []string{x}, FloatAttr("alpha", float32(math.NaN()))), graph.Float32)
	g, err := Decode("lrelu", b.Model().Marshal(), Options{})
	if err == nil {
		err = graph.Validate(g)
	}
	if err == nil || !strings.Contains(err.Error(), "is NaN") {
		t.Errorf("LeakyRelu alpha NaN: %v, want the NaN attribute named", err)
	}
	b = NewBuilder("clip", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Clip", []string{x, b.Scalar("lo", graph.Float32, math.NaN())}), graph.Float32)
	g, err = Decode("clip", b.Model().Marshal(), Options{})
	if err == nil {
		err = graph.Validate(g)
	}
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("Clip min NaN: %v, want it refused", err)
	}
}

// A QLinearConv's integer input takes the x_scale and x_zero_point the
// node is given (testdata/onnx/qlinear.onnx: 0.03 and 128), so the header
// gives the input's SCALE and ZERO_POINT (microTVM journey finding).
func TestQLinearInputQuant(t *testing.T) {
	b, err := os.ReadFile("../../testdata/onnx/qlinear.onnx")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode("qlinear", b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := g.Tensors["x"]
	if x == nil || x.Quant == nil {
		t.Fatalf("input x: no quantization parameters (%v)", x)
	}
	if s, z := x.Quant.At(0); s != 0.03 || z != 128 {
		t.Errorf("input x: scale %v, zero point %d; want 0.03, 128", s, z)
	}
}
