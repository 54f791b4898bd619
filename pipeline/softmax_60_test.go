package pipeline

import (
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// An int8 softmax over many classes: once the exponentials sum past 2^9
// (about 500 equal logits) TFLite's RoundingDivideByPOT exponent passes
// 31. Its mask, (1 << e) − 1 taken in 64 bits, is −1 as an int32, every
// value is above the threshold −1 and the shift leaves 0: TFLite (and
// CMSIS-NN) on an Arm core give 1, so 1,000 equal logits all come out at
// the zero point plus 1, −127 (the true 1/1,000 would be 0.256 → −128).
// The C shifted a uint32 by 32 or more: undefined (every output −128 on
// the M4; a crash on the host under the sanitizers; a review's
// 1,000-class ShuffleNet off by 1 on every output). Now the firmware
// gives −127 on the host (ASan, UBSan), the M4 and the M55, as the
// reference interpreter does; 400 classes, where the exponent is 31 and
// the shift is defined, still round to nearest (400 · 256 / 400: 0.64 →
// 1, −127) and 2,000 classes too.
//
// With input scale 0.5 the differences the kernel divides end at about
// 62 steps (diffMin: 31.x / 0.5): 999 logits at 100 and one at −100 give
// −127 for the 999 and the minimum, −128, for the one (a first version
// of the fix gave it −127 too: the helper's 1 for a zero exponential).
func TestSoftmaxManyClasses60(t *testing.T) {
	t.Parallel()
	for _, n := range []int{400, 1000, 2000, -1000} {
		scale := float32(0.1)
		if n < 0 {
			n, scale = -n, 0.5
		}
		g := graph.New("sm", "tflite")
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{scale}, ZeroPoint: []int32{0}}})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{1.0 / 256}, ZeroPoint: []int32{-128}}})
		g.AddNode(&graph.Node{Name: "sm", Op: graph.Softmax, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.SoftmaxAttrs{Axis: -1, Beta: 1}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		flat := graph.NewData(graph.Int8, []int{1, n}) // all 0: equal logits
		low := -1
		if scale == 0.5 {
			for i := range flat.I {
				flat.I[i] = 100
			}
			low, flat.I[n/2] = n/2, -100
		}
		vecs := append([]map[string]*graph.Data{{"x": flat}}, RandomInputs(g, 2, 60)...)
		for _, board := range []string{"host", "mps2-an386", "mps3-an547"} {
			x := runOn60(t, g, "sm", board, vecs)
			for i, v := range x.Outputs[0][0].I {
				want := int64(-127)
				if i == low {
					want = -128
				}
				if v != want {
					t.Errorf("%d logits (scale %g) on %s: output %d is %d, want %d", n, scale, board, i, v, want)
					break
				}
			}
		}
	}
}

// runOn60 compiles g for board (the host's build under ASan and UBSan),
// runs vecs, fails the test where an output differs from the reference
// interpreter, and returns the run.
func runOn60(t *testing.T, g *graph.Graph, name, board string, vecs []map[string]*graph.Data) *Execution {
	t.Helper()
	var o Options
	if board == "host" {
		needTools(t, "host")
		b, err := LoadBoard("host", "")
		if err != nil {
			t.Fatal(err)
		}
		o = Options{Board: b, Version: "test", CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}}
	} else {
		o = Options{Board: qemuBoard(t, board), Version: "test"}
	}
	s, err := CompileGraph(g, name, o)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Execute(vecs, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatalf("%s on %s: %v", name, board, err)
	}
	if !x.AllMatch() {
		t.Errorf("%s on %s: the firmware differs from the reference interpreter", name, board)
	}
	return x
}
