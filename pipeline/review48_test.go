package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// --int8-io with --quantize (session 48 review): the model mcugen
// quantizes has int8 inputs and outputs, and the warning says so; it said
// the flag was ignored, as if the build kept float inputs and outputs.
// Without quantization the old warning stands.
func TestInt8IOWithQuantize48(t *testing.T) {
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join("..", "testdata", "onnx", "cnn.onnx")
	var warns []string
	s, err := Compile(model, Options{Board: b, Version: "test", Quantize: "int8", CalibRandom: 2, Int8IO: true,
		Warn: func(w string) { warns = append(warns, w) }})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warns, "\n")
	if !strings.Contains(all, "--int8-io: a model mcugen quantizes (--quantize) has int8 inputs and outputs already") || strings.Contains(all, "ignored") {
		t.Errorf("warnings:\n%s", all)
	}
	for _, n := range append(append([]string{}, s.Graph.Inputs...), s.Graph.Outputs...) {
		if dt := s.Graph.Tensor(n).DType; dt != graph.Int8 {
			t.Errorf("%s is %v, want int8", n, dt)
		}
	}
	warns = nil
	if _, err := Compile(model, Options{Board: b, Version: "test", Int8IO: true, Warn: func(w string) { warns = append(warns, w) }}); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(warns, "\n"); !strings.Contains(all, "no QuantizeLinear/DequantizeLinear pairs to fold; ignored") {
		t.Errorf("float build with --int8-io, warnings:\n%s", all)
	}
}

// Float HardSwish of large inputs (session 48 review): the C computed
// x · 6 first and overflowed to +Inf above 5.7e37; it is x · (clamp(x + 3,
// 0, 6) / 6) now, x itself from 3 up (hand-worked: -3e38 + 3 clamps to 0,
// and -3e38 · 0 is -0).
func TestHardSwishLargeInputs48(t *testing.T) {
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	needTools(t, "host")
	g := graph.New("hsw", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 5}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 5}})
	g.AddNode(&graph.Node{Name: "hs", Op: graph.HardSwish, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	s, err := CompileGraph(g, "hsw", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	x := graph.NewData(graph.Float32, []int{1, 5})
	copy(x.F, []float32{3e38, 1e38, 6e37, -3e38, 3})
	res, err := s.Execute([]map[string]*graph.Data{{"x": x}}, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Outputs[0][0]
	want := []float32{3e38, 1e38, 6e37, 0, 3}
	for i, w := range want {
		if g := got.F[i]; g != w {
			t.Errorf("hardswish(%g) = %g, want %g", x.F[i], g, w)
		}
	}
}
