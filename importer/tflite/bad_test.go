package tflite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

func mustErr(t *testing.T, what string, b []byte, want string) {
	t.Helper()
	g, err := tflite.Decode(what, b)
	if err == nil {
		t.Fatalf("%s: decoded to a graph of %d nodes, want an error", what, len(g.Nodes))
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "tflite: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
		t.Errorf("%s: error %q, want one line starting with \"tflite: \" containing %q", what, msg, want)
	}
}

func TestBadInputs(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(genDir, "cnn_int8.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	mustErr(t, "empty", nil, "too short")
	mustErr(t, "text", []byte("this is not a flatbuffer at all, just text"), "not a TFLite flatbuffer")
	mustErr(t, "onnx-ish", []byte{0x08, 0x07, 0x12, 0x04, 't', 'e', 's', 't'}, "not a TFLite flatbuffer")
	// Every truncation of a real model fails cleanly (none panics).
	for n := 8; n < len(good); n += 7 {
		if _, err := tflite.Decode("truncated", good[:n]); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", n, len(good))
		}
	}
	mustErr(t, "truncated", good[:len(good)/2], "outside")
	// A root offset past the end.
	b := append([]byte(nil), good[:64]...)
	b[0], b[1], b[2], b[3] = 0xff, 0xff, 0, 0
	mustErr(t, "root", b, "outside")

	// A buffer stored after the flatbuffer whose offset+size runs past the file.
	ext := mlp().float()
	ext.External = true
	eb := ext.Bytes()
	mustErr(t, "external", eb[:len(eb)-64], "outside the")

	// An unsupported builtin op names the op and the operator index.
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 4}})
	ax := m.AddTensor(tg.Tensor{Name: "axis", Type: tg.Int32, Shape: []int32{}, Data: tg.I32Bytes(1)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 4}})
	a := m.AddTensor(tg.Tensor{Name: "a", Type: tg.Float32, Shape: []int32{1, 2}})
	c := m.AddTensor(tg.Tensor{Name: "c", Type: tg.Float32, Shape: []int32{1, 2}})
	m.Inputs, m.Outputs = []int32{x}, []int32{a}
	m.AddOp(tg.OpRelu, nil, []int32{x}, y)
	m.AddOp(136, nil, []int32{ax, y}, a, c) // HASHTABLE
	mustErr(t, "hashtable", m.Bytes(), "operator 1 (HASHTABLE): op not supported")
	// A WHILE without its options names no subgraph to run.
	m.Ops[1] = tg.Operator{Code: 119, Inputs: []int32{ax, y}, Outputs: []int32{a, c}}
	mustErr(t, "while", m.Bytes(), "operator 1 (WHILE): condition (subgraph 0), iteration 0: the model has 1 subgraphs")
	m.Ops[1] = tg.Operator{Code: tg.OpCustom, Custom: "MyOp", Inputs: []int32{y}, Outputs: []int32{a}}
	mustErr(t, "custom", m.Bytes(), `operator 1 (CUSTOM "MyOp"): op not supported`)
	// Vela's NPU command stream says where the way out is (session 58).
	m.Ops[1] = tg.Operator{Code: tg.OpCustom, Custom: "ethos-u", Inputs: []int32{y}, Outputs: []int32{a}}
	mustErr(t, "ethos-u", m.Bytes(), `operator 1 (CUSTOM "ethos-u"): op not supported: a model compiled by Vela for an Arm Ethos-U NPU; give mcugen the model from before Vela`)

	// A tensor index out of range.
	m.Ops[1] = tg.Operator{Code: tg.OpRelu, Inputs: []int32{42}, Outputs: []int32{a}}
	mustErr(t, "index", m.Bytes(), "tensor index 42 out of range")

	if _, err := tflite.Load(filepath.Join(t.TempDir(), "missing.tflite")); err == nil || !strings.HasPrefix(err.Error(), "tflite: ") {
		t.Errorf("missing file: %v", err)
	}
}

// TestOpNames spot-checks the operator name table against schema.fbs.
func TestOpNames(t *testing.T) {
	for code, name := range map[int32]string{0: "ADD", 4: "DEPTHWISE_CONV_2D", 49: "SPLIT", 97: "RESIZE_NEAREST_NEIGHBOR", 114: "QUANTIZE", 117: "HARD_SWISH", 126: "BATCH_MATMUL", 161: "RIGHT_SHIFT", 999: "BUILTIN_999"} {
		if got := tflite.OpName(code); got != name {
			t.Errorf("OpName(%d) = %s, want %s", code, got, name)
		}
	}
}

// fcModel is x [1,2] -> FULLY_CONNECTED with weights w [2,2] produced by
// DEQUANTIZE of the constant wq (or w itself when wq is the weights).
func fcModel(wq tg.Tensor, dequantize bool) *tg.Model {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 2}})
	w := m.AddTensor(wq)
	if dequantize {
		wf := m.AddTensor(tg.Tensor{Name: "w_float", Type: tg.Float32, Shape: []int32{2, 2}})
		m.AddOp(tg.OpDequantize, nil, []int32{w}, wf)
		w = wf
	}
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 2}})
	m.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(tg.ActNone, false), []int32{x, w, -1}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	return m
}

// TestDequantizedWeights: DEQUANTIZE of constant float16 or int8 weights is
// folded into a float32 constant at import.
func TestDequantizedWeights(t *testing.T) {
	// float16 1.0, -2.0, 0.5, 2^-24 (the smallest subnormal).
	f16 := tg.Tensor{Name: "w16", Type: tg.Float16, Shape: []int32{2, 2}, Data: []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0x01, 0x00}}
	// int8 per-axis (axis 0, scales 0.5 and 0.25, zero points 0 and 2): [2,-4], [6,-2] -> [1,-2], [1,-1].
	i8 := tg.Tensor{Name: "w8", Type: tg.Int8, Shape: []int32{2, 2}, Data: tg.I8Bytes(2, -4, 6, -2), Scale: []float32{0.5, 0.25}, ZeroPoint: []int64{0, 2}}
	for _, c := range []struct {
		w    tg.Tensor
		want string
	}{{f16, "[1 -2 0.5 5.9604645e-08]"}, {i8, "[1 -2 1 -1]"}} {
		g, err := tflite.Decode("deq", fcModel(c.w, true).Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Nodes) != 1 || g.Nodes[0].Op != graph.FullyConnected {
			t.Fatalf("nodes %v, want the DEQUANTIZE folded away", g.Nodes)
		}
		w := g.Tensors[g.Nodes[0].Inputs[1]]
		if !w.IsConst() || fmt.Sprint(w.Data.F) != c.want {
			t.Errorf("%s: folded weights %v, want %s", c.w.Name, w.Data, c.want)
		}
	}
	// Integer weights straight into a float FULLY_CONNECTED (a hybrid
	// model) import dequantized (TestHybridModels), but TFLite's hybrid
	// kernels ignore a zero point, so one is refused.
	mustErr(t, "hybrid", fcModel(i8, false).Bytes(), `operator 0 (FULLY_CONNECTED): integer weights "w8" with zero point 2 in a float operator (TFLite's hybrid kernels take it to be 0)`)
	// A float16 activation.
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float16, Shape: []int32{2}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float16, Shape: []int32{2}})
	m.AddOp(tg.OpRelu, nil, []int32{x}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	mustErr(t, "f16", m.Bytes(), "float16 activations are not supported")
}

// TestOperatorCodeFields: a file with only the deprecated int8 builtin code
// decodes like one with both fields; a code above 127 lives only in the
// int32 field (the int8 one then holds the placeholder 127).
func TestOperatorCodeFields(t *testing.T) {
	m := mlp().float()
	a, err := tflite.Decode("new", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m.OldOpCodes = true
	b, err := tflite.Decode("old", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(graph.OpCounts(a)) != fmt.Sprint(graph.OpCounts(b)) || len(b.Nodes) != 2 {
		t.Errorf("ops %v with both code fields, %v with the deprecated one only", graph.OpCounts(a), graph.OpCounts(b))
	}
	m.OldOpCodes = false
	m.Ops[0].Code = 147 // BUCKETIZE (a code past 127: the extended field)
	mustErr(t, "bucketize", m.Bytes(), "operator 0 ("+tflite.OpName(147)+"): op not supported")
}

// oneOp is the model x -> op -> y, x its input and y its output.
func oneOp(code int32, opts *tg.Options, x, y tg.Tensor) *tg.Model {
	m := &tg.Model{}
	xi, yi := m.AddTensor(x), m.AddTensor(y)
	m.AddOp(code, opts, []int32{xi}, yi)
	m.Inputs, m.Outputs = []int32{xi}, []int32{yi}
	return m
}

// A stored output shape that differs from the computed one in more than
// axes of 1 is refused, even with the same number of elements
// (adversarial journey: a RELU whose [2,6] output the file called [6,2]
// compiled, its header giving the wrong shape); one that differs by axes
// of 1 (a squeeze) is taken as stored.
func TestStoredShapeMustMatch(t *testing.T) {
	build := func(out []int32) []byte {
		return oneOp(tg.OpRelu, nil, tg.Tensor{Name: "x", Type: 0, Shape: []int32{2, 6}}, tg.Tensor{Name: "y", Type: 0, Shape: out}).Bytes()
	}
	_, err := tflite.Decode("perm", build([]int32{6, 2}))
	if err == nil || !strings.Contains(err.Error(), `tensor "y": the file says shape [6 2], the operator computes [2 6]`) {
		t.Errorf("[6,2] for [2,6]: %v", err)
	}
	g, err := tflite.Decode("ones", build([]int32{1, 2, 6}))
	if err != nil {
		t.Fatalf("[1,2,6] for [2,6]: %v", err)
	}
	if s := g.Tensors["y"].Shape; fmt.Sprint(s) != "[1 2 6]" {
		t.Errorf("[1,2,6] for [2,6]: shape %v, want the file's", s)
	}
}

// A subgraph input listed twice, and a Softmax of a scalar, are refused
// at import (adversarial journey: the first compiled to two API members
// for one tensor, the second failed only when run).
func TestInputTwiceAndScalarSoftmax(t *testing.T) {
	m := oneOp(tg.OpRelu, nil, tg.Tensor{Name: "x", Type: 0, Shape: []int32{2, 6}}, tg.Tensor{Name: "y", Type: 0, Shape: []int32{2, 6}})
	m.Inputs = append(m.Inputs, m.Inputs[0])
	if _, err := tflite.Decode("twice", m.Bytes()); err == nil || !strings.Contains(err.Error(), `subgraph input "x" is listed twice`) {
		t.Errorf("input twice: %v", err)
	}
	m = oneOp(tg.OpSoftmax, &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}}, tg.Tensor{Name: "x", Type: 0, Shape: []int32{}}, tg.Tensor{Name: "y", Type: 0, Shape: []int32{}})
	if _, err := tflite.Decode("scalar", m.Bytes()); err == nil || !strings.Contains(err.Error(), "Softmax of a scalar") {
		t.Errorf("softmax of a scalar: %v", err)
	}
}

// A float op whose output the file types int8 without a scale is refused
// (adversarial journey: a float FullyConnected's int8 output compiled,
// and run found NaNs).
func TestFloatOpIntOutputRefused(t *testing.T) {
	m := oneOp(tg.OpRelu, nil, tg.Tensor{Name: "x", Type: 0, Shape: []int32{2, 6}}, tg.Tensor{Name: "y", Type: 9, Shape: []int32{2, 6}})
	if _, err := tflite.Decode("lie", m.Bytes()); err == nil || !strings.Contains(err.Error(), `output "y" is int8 without quantization parameters, but the op computes float32 from "x"`) {
		t.Errorf("float Relu with an int8 output: %v", err)
	}
}
