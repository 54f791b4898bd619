package quant

import (
	"path/filepath"
	"strings"
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

// A directory in the test vectors' layout calibrates on its input files and
// leaves the expected outputs out: input_NNN.npy for one input,
// input_NNN_K.npy for input K of several (docs journey: quantize --eval
// on a model's vectors_float/ stopped at output_000.npy).
func TestLoadCalibVectorsLayout(t *testing.T) {
	f32 := func(v ...float32) *graph.Data {
		return &graph.Data{DType: graph.Float32, Shape: []int{1, len(v)}, F: v}
	}
	one := graph.New("one", "test")
	one.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2}})
	one.Inputs = []string{"x"}
	dir := t.TempDir()
	writeNpy(t, filepath.Join(dir, "input_000.npy"), f32(1, 2))
	writeNpy(t, filepath.Join(dir, "input_001.npy"), f32(3, 4))
	writeNpy(t, filepath.Join(dir, "output_000.npy"), f32(9, 9, 9))
	writeNpy(t, filepath.Join(dir, "output_001.npy"), f32(9, 9, 9))
	ss, err := LoadCalib(dir, one)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0]["x"].F[0] != 1 || ss[1]["x"].F[1] != 4 {
		t.Errorf("one input: %d samples %v", len(ss), ss)
	}
	two := graph.New("two", "test")
	two.AddTensor(&graph.Tensor{Name: "a", DType: graph.Float32, Shape: []int{1, 2}})
	two.AddTensor(&graph.Tensor{Name: "b", DType: graph.Float32, Shape: []int{1, 3}})
	two.Inputs = []string{"a", "b"}
	dir = t.TempDir()
	writeNpy(t, filepath.Join(dir, "input_000_0.npy"), f32(1, 2))
	writeNpy(t, filepath.Join(dir, "input_000_1.npy"), f32(5, 6, 7))
	writeNpy(t, filepath.Join(dir, "output_000.npy"), f32(9))
	ss, err = LoadCalib(dir, two)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0]["a"].F[1] != 2 || ss[0]["b"].F[2] != 7 {
		t.Errorf("two inputs: %d samples %v", len(ss), ss)
	}
	// Without the outputs too, and paired by vector number: vector 001
	// lacks input b's file, which is an error, not vector 002's b.
	dir = t.TempDir()
	writeNpy(t, filepath.Join(dir, "input_000_0.npy"), f32(1, 2))
	writeNpy(t, filepath.Join(dir, "input_000_1.npy"), f32(5, 6, 7))
	if ss, err := LoadCalib(dir, two); err != nil || len(ss) != 1 {
		t.Errorf("inputs only: %d samples, %v", len(ss), err)
	}
	writeNpy(t, filepath.Join(dir, "input_001_0.npy"), f32(3, 4))
	writeNpy(t, filepath.Join(dir, "input_002_1.npy"), f32(8, 9, 10))
	if _, err := LoadCalib(dir, two); err == nil || !strings.Contains(err.Error(), `vector 001 has no input_001_1.npy (for input "b")`) {
		t.Errorf("a vector missing a file: %v", err)
	}
}
