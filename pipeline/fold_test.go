package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A float model one of whose outputs is a weight quantizes and runs.
// Listed as an output itself, the weight stays float32 and exact (it was
// dropped: "graph output is never computed"); through an Identity it is an
// activation like any other, int8, its Quantize of a Reshape of the
// constant folded at compile time (user-journey finding: "tensor has no
// place in the memory plan"). On the host, against the reference
// interpreter.
func TestQuantizedConstOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	board, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, identity := range []bool{false, true} {
		b := onnx.NewBuilder("constout", 13, 1)
		x := b.Input("x", graph.Float32, 1, 8)
		w := b.Rand("W", 0.5, 8, 4)
		b.Output(b.Node("MatMul", []string{x, w}), graph.Float32)
		want := graph.Float32
		if identity {
			w, want = b.Node("Identity", []string{w}), graph.Int8
		}
		b.Output(w, graph.Float32)
		s, err := Compile(writeONNX(t, b, "constout"), Options{Board: board, Version: "test", CalibRandom: 4})
		if err != nil {
			t.Fatalf("identity %v: %v", identity, err)
		}
		if out := s.Graph.Tensors[s.Graph.Outputs[1]]; out.DType != want {
			t.Fatalf("identity %v: the weight output is %v, want %v", identity, out.DType, want)
		}
		ex, err := s.Execute(RandomInputs(s.Graph, 2, 3), t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !ex.AllMatch() {
			t.Fatalf("identity %v: outputs differ from the reference interpreter (max abs diff %g)", identity, ex.MaxAbsDiff)
		}
	}
}
