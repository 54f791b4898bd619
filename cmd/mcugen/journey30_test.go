package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// tempNpy writes d to name in a test's temporary directory and returns its path.
func tempNpy(t *testing.T, name string, d *graph.Data) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := writeNpy(p, d); err != nil {
		t.Fatal(err)
	}
	return p
}

// A float input far outside the range the calibration gave the int8 input
// saturates: run says so (data scaled 0..255 where the calibration saw
// about -1..1 matched the reference and meant nothing), and keeps quiet for
// data inside it.
func TestRunWarnsSaturatedInput(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	big := &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 16, 16}, F: make([]float32, 768)}
	for i := range big.F {
		big.F[i] = 1000 + float32(i%7)
	}
	in := tempNpy(t, "big.npy", big)
	code, _, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", in)
	want := "mcugen: warning: " + in + `: input "image": 768 of its 768 values (100.0%) lie outside [`
	if code != 0 || !strings.Contains(errs, want) || !strings.Contains(errs, "and saturate: is the data scaled as the calibration data was?") {
		t.Errorf("exit %d, stderr %q; want a line starting %q", code, errs, want)
	}
	zero := tempNpy(t, "zero.npy", &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 16, 16}, F: make([]float32, 768)})
	code, _, errs = mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", zero)
	if code != 0 || strings.Contains(errs, "saturate") {
		t.Errorf("zeros: exit %d, stderr %q", code, errs)
	}
}
