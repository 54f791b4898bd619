package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --shape: a TFLite input compiles with the shape the file stores: a
// dynamic batch (shape signature [-1 16], stored [1 16], TFLite's default)
// quietly, another dynamic dimension (signature [1 -1]) with a note; asking
// for another shape, or naming no input of the model (TFLite or ONNX), is
// an error naming the flag, not a silent no-op.
func TestShapesBindOrRefuse(t *testing.T) {
	var warns []string
	warn := func(w string) { warns = append(warns, w) }
	dyn := "../testdata/tflite/mlp_int8_dynamic_batch.tflite"
	g, err := Load(dyn, Options{Warn: warn})
	if err != nil || len(warns) != 0 {
		t.Fatalf("dynamic batch: %v %q", err, warns)
	}
	if got := g.Tensors["input"].Shape; len(got) != 2 || got[0] != 1 || got[1] != 16 {
		t.Errorf("input shape %v", got)
	}
	if _, err := Load("../testdata/tflite/mlp_int8_dynamic_width.tflite", Options{Warn: warn}); err != nil || len(warns) != 1 ||
		!strings.Contains(warns[0], `input "input" has a dynamic dimension (shape signature [1 -1]): compiled with the shape the file stores, [1 16]`) {
		t.Fatalf("dynamic width: %v %q", err, warns)
	}
	warns = nil
	if _, err := Load(dyn, Options{Warn: warn, Shapes: map[string][]int{"input": {1, 16}}}); err != nil {
		t.Errorf("the stored shape: %v", err)
	}
	// The width bound by --shape (its stored value, all TFLite allows):
	// the user's answer, so no warning (user-journey finding).
	if _, err := Load("../testdata/tflite/mlp_int8_dynamic_width.tflite", Options{Warn: warn, Shapes: map[string][]int{"input": {1, 16}}}); err != nil || len(warns) != 0 {
		t.Errorf("dynamic width bound by --shape: %v %q", err, warns)
	}
	onnxAsTFLite := filepath.Join(t.TempDir(), "cnn.tflite")
	if b, err := os.ReadFile("../testdata/onnx/cnn.onnx"); err != nil || os.WriteFile(onnxAsTFLite, b, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model  string
		shapes map[string][]int
		want   string
	}{
		{dyn, map[string][]int{"input": {2, 16}}, `--shape input=[2 16]: a TFLite model's shapes are fixed in the file ("input" is [1 16])`},
		{"../testdata/tflite/cnn_int8.tflite", map[string][]int{"nosuch": {2}}, `--shape nosuch: the model has no input named "nosuch" (its inputs: input)`},
		{"../testdata/onnx/cnn.onnx", map[string][]int{"nosuch": {2}}, `--shape nosuch: the model has no input named "nosuch" (its inputs: image)`},
		// An ONNX model named .tflite: the ONNX reading's answer, not
		// "not a TFLite flatbuffer" (review finding).
		{onnxAsTFLite, map[string][]int{"nosuch": {2}}, `--shape nosuch: the model has no input named "nosuch" (its inputs: image)`},
	} {
		_, err := Load(c.model, Options{Warn: warn, Shapes: c.shapes})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %v: %v, want %q", c.model, c.shapes, err, c.want)
		}
	}
}
