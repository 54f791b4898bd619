package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A raw tensor file given as the model said "not a valid ONNX model:
// ... wire type 1" and nothing more (a .npy was named as one): now that it
// is a tensor file for --input (CLI review).
func TestTensorFileAsModelSaysSo50(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.bin", "x.raw"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte{0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0xff}, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, Options{})
		if err == nil || !strings.Contains(err.Error(), "is a tensor file to give to --input, not a model") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A model named .bin (here a truncated TFLite file) is not called a
	// tensor file (review).
	m, err := os.ReadFile(filepath.Join("..", "testdata", "tflite", "mlp_int8.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "model.bin")
	if err := os.WriteFile(p, m[:len(m)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, Options{}); err == nil || strings.Contains(err.Error(), "tensor file") {
		t.Errorf("a truncated TFLite model named .bin: %v", err)
	}
}
