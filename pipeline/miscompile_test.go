package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// TestNoIPAKernelsUnderQEMU: an int8 Conv, ScatterND (add) and Conv,
// quantized by mcugen, is bit-exact on the Cortex-M4 at -O2. With the
// kernels only noinline, gcc 12.2 cloned them for their constant arena
// pointers (.constprop) and the firmware's output was wrong (max abs diff
// 210; right at -O1, with -fno-ipa-cp, or with noipa: user journey,
// session 19). The kernels are noipa on every gcc target now.
func TestNoIPAKernelsUnderQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("a QEMU run")
	}
	needTools(t, "mps2-an386")
	b := onnx.NewBuilder("qscat", 17, 6)
	x := b.Input("x", graph.Float32, 1, 4, 8, 8)
	c := b.Node("Conv", []string{x, b.Rand("w", 0.4, 4, 4, 3, 3), b.Rand("b", 0.1, 4)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
	c = b.Node("Relu", []string{c})
	idx := graph.NewData(graph.Int64, []int{2, 3})
	copy(idx.I, []int64{0, 1, 2, 0, 3, 7})
	s := b.Node("ScatterND", []string{c, b.Init("i", idx), b.Rand("u", 1, 2, 8)}, onnx.StringAttr("reduction", "add"))
	b.Output(b.Node("Conv", []string{s, b.Rand("w2", 0.4, 2, 4, 1, 1), b.Rand("b2", 0.1, 2)}), graph.Float32)
	board, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Compile(writeONNX(t, b, "qscat"), Options{Board: board, Version: "test", CalibRandom: 8})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := st.Execute(RandomInputs(st.Graph, 2, 1), t.TempDir(), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.AllMatch() {
		t.Fatalf("the firmware's outputs differ from the reference interpreter (max abs diff %g)", ex.MaxAbsDiff)
	}
}
