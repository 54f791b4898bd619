package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A one-input model's vectors are input_NNN.npy, or input_NNN_0.npy as a
// model of several names its first input; input_NNN_K.npy for another K
// names an input the model does not have, and is refused as such (a
// review's directory held input_000.npy and input_000_1.npy: the second
// was taken as a vector of its own and refused for its shape), as are two
// files for one vector's input.
func TestVectorsOneInputNames60(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	in := graph.NewData(graph.Int8, []int{1, 16})
	dir := t.TempDir()
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), in)
	mustWriteNpy(t, filepath.Join(dir, "input_000_1.npy"), graph.NewData(graph.Int8, []int{1, 3}))
	code, _, errs := mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0")
	if code != 1 || !strings.Contains(errs, "input_000_1.npy: names input 1 of a vector, and the model has one input") {
		t.Fatalf("input_000_1.npy beside a one-input model: exit %d, stderr:\n%s", code, errs)
	}
	dir = t.TempDir()
	mustWriteNpy(t, filepath.Join(dir, "input_000_0.npy"), in)
	mustWriteNpy(t, filepath.Join(dir, "input_001.npy"), in)
	code, out, errs := mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0")
	if code != 0 || !strings.Contains(out, "5 of 5 vectors passed") { // the two files and the three extreme inputs
		t.Fatalf("input_000_0.npy and input_001.npy: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), in)
	code, _, errs = mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0")
	if code != 1 || !strings.Contains(errs, "vector 000 has two files for its input") {
		t.Fatalf("input_000.npy beside input_000_0.npy: exit %d, stderr:\n%s", code, errs)
	}
}
