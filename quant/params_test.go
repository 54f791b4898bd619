package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// QuantizeInput rounds as the Quantize at a quantized model's input: the
// quotient in float32, ties to even, clamped. By hand with scale 0.5 and
// zero point 3: 0.25 → 0.5 → 0 (+3), 0.75 → 1.5 → 2, 1.25 → 2.5 → 2,
// -0.25 → -0.5 → -0, -0.75 → -1.5 → -2, 100 → 203 → 127, -100 → -197 → -128.
func TestQuantizeInputTiesToEven(t *testing.T) {
	d := &graph.Data{DType: graph.Float32, Shape: []int{7}, F: []float32{0.25, 0.75, 1.25, -0.25, -0.75, 100, -100}}
	got := QuantizeInput(d, 0.5, 3)
	want := []int64{3, 5, 5, 3, 1, 127, -128}
	for i := range want {
		if got.I[i] != want[i] {
			t.Errorf("x = %v: q = %d, want %d", d.F[i], got.I[i], want[i])
		}
	}
}
