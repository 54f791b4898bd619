package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

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
