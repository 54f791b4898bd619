package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A float layer whose two channels' weights are 10^9 apart (2604, -1397
// against 4.9e-6, -1.6e-6): the tiny channel's bias scale made bias
// correction move its int32 bias to 2,147,483,491, and the compiler refused
// the quantizer's own layer (review finding). Corrected biases stay within
// ±2^30, AdjustForBias's headroom, and the layer compiles and runs.
func TestBiasCorrectionKeepsHeadroom(t *testing.T) {
	b := onnx.NewBuilder("k2n2", 13, 1)
	x := b.Input("x", graph.Float32, 1, 2)
	w := b.Init("w", &graph.Data{DType: graph.Float32, Shape: []int{2, 2}, F: []float32{2604.3, 4.85e-6, -1396.5, -1.57e-6}})
	bias := b.Floats("bias", -0.323, 2.042)
	b.Output(b.Node("Add", []string{b.Node("MatMul", []string{x, w}), bias}), graph.Float32)
	model := filepath.Join(t.TempDir(), "k2n2.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	board, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(model, Options{Board: board, Version: "test", CalibRandom: 8})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, n := range s.Graph.Nodes {
		if n.Op != graph.FullyConnected || len(n.Inputs) < 3 {
			continue
		}
		for ch, v := range s.Graph.Tensors[n.Inputs[2]].Data.I {
			checked++
			if v > 1<<30 || v < -(1<<30) {
				t.Errorf("channel %d: bias %d, past ±2^30", ch, v)
			}
		}
	}
	if checked != 2 {
		t.Fatalf("%d bias values checked, want 2", checked)
	}
	if !testing.Short() {
		runCount(t, s)
	}
}
