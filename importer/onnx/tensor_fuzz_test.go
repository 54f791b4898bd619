package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// FuzzReadTensorProto feeds arbitrary bytes to the .pb tensor reader that
// `--input FILE.pb` uses: a value whose element count matches its shape, or
// an error, never a panic.
func FuzzReadTensorProto(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(backendRoot, "node", "*", "test_data_set_0", "*.pb"))
	for i := 0; i < len(seeds); i += 40 {
		if b, err := os.ReadFile(seeds[i]); err == nil {
			f.Add(b)
		}
	}
	for _, d := range []*graph.Data{
		{DType: graph.Float32, Shape: []int{2, 3}, F: []float32{1, -2, 3.5, 0, 7, -1e-3}},
		{DType: graph.Int8, Shape: []int{4}, I: []int64{-128, 0, 1, 127}},
		{DType: graph.Int64, Shape: []int{}, I: []int64{1 << 40}},
	} {
		f.Add(NewTensor("x", d).Marshal())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, d, err := ReadTensorProto(b)
		if err != nil {
			return
		}
		if d.Len() != graph.NumElements(d.Shape) {
			t.Fatalf("%d elements for shape %v", d.Len(), d.Shape)
		}
	})
}
