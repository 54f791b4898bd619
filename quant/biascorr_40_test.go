package quant

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
)

// Bias correction's float values come from a cursor that runs the float
// graph a node at a time over the samples (review finding: every activation
// of every sample at once took VWW 6 MB a sample). The cursor gives each
// Conv2D and FullyConnected output exactly as a whole run does, and holds no
// more than the tensors a node still to run reads or a comparison wants:
// at every step of the CNN, fewer than the whole run's values.
func TestFloatCursor40(t *testing.T) {
	f, err := tflite.Load("../testdata/tflite/cnn_float.tflite")
	if err != nil {
		t.Fatal(err)
	}
	samples := RandomCalib(f, 3, 7)
	st, err := Calibrate(f, samples, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(f, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole := make([]map[string]*graph.Data, len(samples))
	for i, s := range samples {
		if whole[i], err = interp.RunAll(f, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := newFloatCursor(f, q, samples)
	compared, most := 0, 0
	for _, n := range q.Nodes {
		if n.Op != graph.Conv2D && n.Op != graph.FullyConnected {
			continue
		}
		y := n.Outputs[0]
		if f.Tensors[y] == nil {
			continue
		}
		if err := c.upTo(y); err != nil {
			t.Fatal(err)
		}
		for i := range samples {
			got, want := c.vals[i][y], whole[i][y]
			if got == nil || want == nil || !slices.Equal(got.F, want.F) {
				t.Fatalf("sample %d, %s: the cursor's values differ from a whole run's", i, y)
			}
		}
		most = max(most, len(c.vals[0]))
		c.done(y)
		compared++
	}
	if compared < 2 {
		t.Fatalf("%d layers compared: the test shows little", compared)
	}
	all := 0 // the activations of a whole run (RunAll also returns the constants)
	for name := range whole[0] {
		if !f.Tensors[name].IsConst() {
			all++
		}
	}
	t.Logf("the cursor held up to %d tensors a sample; a whole run holds %d", most, all)
	if most >= all {
		t.Errorf("the cursor held up to %d tensors a sample, a whole run %d", most, all)
	}
	if len(c.vals[0]) > 1 {
		t.Errorf("after the last comparison the cursor still holds %d tensors", len(c.vals[0]))
	}
}
