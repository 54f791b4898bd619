package pipeline

import (
	"strings"
	"testing"
)

// An int8 model whose only float is its float inputs' Quantize and outputs'
// Dequantize (a QDQ file, the Dequantize fused into the layout Transpose)
// includes only the contract's headers and asks for no -lm (review finding:
// it included <math.h> and its header said to link with -lm, for no math
// function); a float model that calls the C library's maths keeps both.
func TestMathHeaderOnlyWhereUsed(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model string
		math  bool
	}{
		{"../testdata/onnx/qdq_conv.onnx", false},
		{"../testdata/onnx/qlinear.onnx", false},
		{"../testdata/tflite/cnn_int8.tflite", false},
		{"../testdata/tflite/op_float_logistic.tflite", true},
	} {
		s, err := Compile(c.model, Options{Board: b, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		var src, hdr string
		for name, f := range s.Files {
			switch {
			case strings.HasSuffix(name, ".c"):
				src += string(f)
			case strings.HasSuffix(name, ".h"):
				hdr += string(f)
			}
		}
		if got := strings.Contains(src, "#include <math.h>"); got != c.math {
			t.Errorf("%s: includes <math.h>: %v, want %v", c.model, got, c.math)
		}
		if got := strings.Contains(hdr, "-lm"); got != c.math {
			t.Errorf("%s: header asks for -lm: %v, want %v", c.model, got, c.math)
		}
	}
}
