package tir_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir"
)

// TestAct16TFLMPrepareEdges: two int16 LOGISTIC / TANH parameter sets that
// TFLite Micro's Prepare (logistic_common.cc, tanh.cc) accepts and mcugen
// refused (review 34): an input scale whose multiplier scale·4096·3 lies in
// (32767, 32768), which TFLite Micro truncates to 32767 (its DCHECK is on
// the int32), and an output scale that is not exactly 2^-15 but that
// CheckedLog2 rounds to -15 within its 1e-3 tolerance (1/32767). The
// expected values come from a C++ program running that Prepare code and
// TFLite's reference_integer_ops::Logistic / Tanh (tflite-micro sources).
// Scales past TFLite Micro's checks stay refused.
func TestAct16TFLMPrepareEdges(t *testing.T) {
	xs := []int64{-32768, -20000, -1000, -13, -1, 0, 1, 2, 3, 7, 13, 100, 1000, 32767}
	for _, c := range []struct {
		name   string
		op     graph.Op
		sx, sy float32
		want   []int64 // nil: refused
		reason string
	}{
		// 2.6666f: multiplier 32767.18 (shift 0) runs as 32767.
		{"logistic_mult_32767.18", graph.Sigmoid, 2.6666, 1.0 / 32768,
			[]int64{1, 1, 1, 1, 2129, 16384, 30639, 32610, 32757, 32767, 32767, 32767, 32767, 32767}, ""},
		{"tanh_mult_32767.18", graph.Tanh, 2.6666, 1.0 / 32768,
			[]int64{-32767, -32767, -32767, -32767, -32453, 0, 32453, 32767, 32767, 32767, 32767, 32767, 32767, 32767}, ""},
		{"logistic_out_1/32767", graph.Sigmoid, 1.0 / 4096, 1.0 / 32767,
			[]int64{11, 247, 14394, 16358, 16382, 16384, 16386, 16388, 16390, 16398, 16410, 16584, 18374, 32757}, ""},
		{"tanh_out_1/32767", graph.Tanh, 1.0 / 4096, 1.0 / 32767,
			[]int64{-32767, -32764, -7845, -104, -8, 0, 8, 16, 24, 56, 104, 800, 7845, 32767}, ""},
		// 2.6667f: multiplier 32768.4, past TFLite Micro's assertion.
		{"tanh_mult_32768", graph.Tanh, 2.6667, 1.0 / 32768, nil, "exceeds 32767"},
		// log2(3.1e-5) = -14.977: not a power of two for CheckedLog2.
		{"logistic_out_3.1e-5", graph.Sigmoid, 1.0 / 4096, 3.1e-5, nil, "gives 2^-15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := len(xs)
			g := graph.New("act16_"+strings.ReplaceAll(c.name, "/", "_"), "tflite")
			q := func(s float32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{0}} }
			g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int16, Shape: []int{n}, Quant: q(c.sx)})
			g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int16, Shape: []int{n}, Quant: q(c.sy)})
			g.AddNode(&graph.Node{Name: "y", Op: c.op, Inputs: []string{"x"}, Outputs: []string{"y"}})
			g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
			x := graph.NewData(graph.Int16, []int{n})
			copy(x.I, xs)
			in := map[string]*graph.Data{"x": x}
			got, err := interp.Run(g, in)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("reference: %v, want a refusal (%q)", err, c.reason)
				}
				generic, err := tir.TargetByName("generic")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := lowerPlanned(t, g, generic); err == nil || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("lowering: %v, want a refusal (%q)", err, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			for i, w := range c.want {
				if got["y"].I[i] != w {
					t.Fatalf("reference: x %d gives %d, TFLite Micro %d", xs[i], got["y"].I[i], w)
				}
			}
			for _, name := range []string{"generic", "dsp", "mve"} {
				target, err := tir.TargetByName(name)
				if err != nil {
					t.Fatal(err)
				}
				out, err := tir.RunModule(lowerRequant(t, g, target), in)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := same(got["y"], out["y"]); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			sanitizedHostMatches(t, g, "act16_r34_"+strings.NewReplacer("/", "_", ".", "_").Replace(c.name), []map[string]*graph.Data{in})
		})
	}
}
