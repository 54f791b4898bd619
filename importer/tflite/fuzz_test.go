package tflite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must return a graph or
// an error, never panic (the recover in Decode is switched off here); a
// decoded graph then goes through graph.PermuteDeadChannels.
func FuzzDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "tflite", "*.tflite"))
	shared := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny")
	seeds = append(seeds, filepath.Join(shared, "kws", "kws_ref_model.tflite"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte("TFL3TFL3TFL3"))
	f.Add([]byte{12, 0, 0, 0, 'T', 'F', 'L', '3', 0, 0, 0, 0})
	recoverPanics = false
	defer func() { recoverPanics = true }()
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode("fuzz", b)
		if err == nil && g == nil {
			t.Fatal("no graph and no error")
		}
		if err == nil {
			// The plan pass's channel reordering runs on every imported
			// graph: it must not panic on one either.
			graph.PermuteDeadChannels(g)
		}
	})
}
