package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// A float → int8 or int16 Quantize rounding half to even (ONNX's
// QuantizeLinear) takes one VCVTR on a single-precision FPU (it took the
// magic-number addition and range checks: 25.7 instructions an element on
// the Cortex-M4, 13.4 now). On the M4, M7, M33, M55 and M3 (no FPU) the
// firmware gives, for ties, NaN, ±Inf, ±0, subnormals and quotients past
// 2^22, 2^23 and 2^31, what ONNX's definition gives (computed here: the
// quotient in float32, rounded half to even, plus the zero point,
// saturated), and half-away-from-zero rounding (TFLite's) still rounds its
// ties away. An int32 output too (a review: every element came out
// −2146435068, the clamp's bounds past int32 in the C).
func TestQuantizeVCVTR59(t *testing.T) {
	t.Parallel()
	vals := []float32{0, float32(math.Copysign(0, -1)), 0.25, 0.75, 1.25, -1.25, 2.5, -2.5, 3.5, -3.5, 63.5, -64.5, 100.25,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40, 3e38, -3e38,
		2097151.5, -2097152.5, 4194303, 4194305, 8388609, 1.5e9, -1.1e9, 7.25, -7.75}
	const scale, zp = 0.5, -3
	for _, c := range []struct {
		dt   graph.DType
		even bool
	}{{graph.Int8, true}, {graph.Int16, true}, {graph.Int8, false}, {graph.Int32, true}, {graph.Int32, false}} {
		g := graph.New("q", "onnx")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, len(vals)}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: c.dt, Shape: []int{1, len(vals)}, Quant: &graph.Quant{Scale: []float32{scale}, ZeroPoint: []int32{zp}}})
		g.AddNode(&graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.QuantizeAttrs{RoundHalfEven: c.even}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		in := graph.NewData(graph.Float32, []int{1, len(vals)})
		copy(in.F, vals)
		lo, hi := c.dt.Range()
		for _, board := range []string{"mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "mps2-an385"} {
			s, err := CompileGraph(g, "q", Options{Board: qemuBoard(t, board), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			ex, err := s.Execute([]map[string]*graph.Data{{"x": in}}, t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !ex.AllMatch() {
				t.Errorf("%s %v even %v: the firmware differs from the reference interpreter", board, c.dt, c.even)
			}
			for i, v := range vals {
				q := float64(v / float32(scale))
				if c.even {
					q = math.RoundToEven(q)
				} else {
					q = math.Round(q)
				}
				if math.IsNaN(q) {
					q = 0
				}
				want := int64(math.Max(float64(lo), math.Min(float64(hi), q+zp)))
				if got := ex.Outputs[0][0].I[i]; got != want {
					t.Errorf("%s %v even %v: quantize(%g) = %d, want %d", board, c.dt, c.even, v, got, want)
				}
			}
		}
	}
}
