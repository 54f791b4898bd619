package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// A float → int8 Quantize rounding half away from zero (TFLite's) takes
// no branch on a core with an FPU and the DSP extension: trunc, the
// exact remainder doubled and truncated as the rounding's step, and a
// saturating add, and the zero point's clamp to int8 a QADD and an SSAT
// (it took 35 instructions an element on the Cortex-M4, the
// magic-number addition with its range and tie checks, and the clamp's
// compares; 15 now). The
// element's cost is the difference between 1,280 and 640 elements,
// each run checked against the reference interpreter; the results at the
// edges (ties, NaN, infinities, past int32) are TestQuantizeVCVTR59's.
func TestQuantizeAwayBranchless60(t *testing.T) {
	run := func(n int) int64 {
		g := graph.New("q", "tflite")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, n}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{0.40484673}, ZeroPoint: []int32{81}}})
		g.AddNode(&graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.QuantizeAttrs{}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		s, err := CompileGraph(g, "q", Options{Board: qemuBoard(t, "mps2-an386"), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Execute(append(RandomInputs(s.Graph, 2, 60), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.AllMatch() {
			t.Errorf("%d elements: the firmware differs from the reference interpreter", n)
		}
		return x.Instructions()
	}
	a, b := run(640), run(1280)
	per := float64(b-a) / 640
	t.Logf("%d and %d instructions: %.2f an element", a, b, per)
	if per > 16 {
		t.Errorf("%.2f instructions an element, want at most 16 (35 with the branches)", per)
	}
}
