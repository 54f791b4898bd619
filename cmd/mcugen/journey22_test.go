package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// bench --cycles on a Cortex-M4 board without an emulator gets the
// estimate from its QEMU twin, with no warning that it gets none (it was
// warned, then given one: user-journey finding); a Cortex-M3 board is
// warned and gets none.
func TestCyclesOnTwinBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	code, out, errs := mcugen(t, "bench", "../../testdata/tflite/cnn_int8.tflite", "--board", "nucleo-l4r5zi,mps2-an385", "--cycles", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(errs, "nucleo-l4r5zi (cortex-m4) gets none") || !strings.Contains(errs, "--cycles: the cycle estimate is for Cortex-M4 boards; mps2-an385 (cortex-m3) gets none") {
		t.Errorf("warnings:\n%s", errs)
	}
	var r struct {
		Results []struct {
			Board        string `json:"board"`
			Instructions int64  `json:"instructions"`
			Cycles       int64  `json:"m4_cycles_estimate"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	// Every M4 instruction takes at least one cycle.
	if n := r.Results[0]; n.Board != "nucleo-l4r5zi" || n.Instructions <= 0 || n.Cycles < n.Instructions {
		t.Errorf("nucleo-l4r5zi: %+v", n)
	}
	if m := r.Results[1]; m.Cycles != 0 {
		t.Errorf("mps2-an385 got a Cortex-M4 cycle estimate: %+v", m)
	}
}

// run on a board without an emulator runs on its QEMU twin, as test and
// bench do (it refused: user-journey finding), and says where.
func TestRunOnTwinBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	code, out, errs := mcugen(t, "run", "../../testdata/tflite/cnn_int8.tflite", "--board", "nucleo-l4r5zi", "--random", "2", "--json")
	if code != 0 || !strings.Contains(errs, "board nucleo-l4r5zi has no emulator: running on mps2-an386 (same core, cortex-m4)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Board        string `json:"board"`
		MeasuredOn   string `json:"measured_on"`
		Instructions int64  `json:"instructions"`
		Match        bool   `json:"match_reference"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Board != "nucleo-l4r5zi" || r.MeasuredOn != "mps2-an386" || r.Instructions <= 0 || !r.Match {
		t.Errorf("%v %+v\n%s", err, r, out)
	}
}

// --junit naming a pipe (or /dev/stdout) writes through it and leaves it a
// pipe: the temporary file renamed over it would have replaced it (as
// root, the device itself).
func TestJUnitToAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "junit.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := writeJUnit(fifo, []testResult{{Model: "m.tflite", Board: "host", Vectors: 1, Passed: 1}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", st.Mode(), err)
	}
	if s := <-got; !strings.Contains(s, "<testsuite") {
		t.Errorf("the pipe carried %q", s)
	}
}

// A float model's input holding NaN: the reference carries it through, the
// firmware's ReLU and max pool need not; run's error names the input and
// the element instead of "max abs diff +Inf" (user-journey finding).
func TestRunSaysWhereNaNCameFrom(t *testing.T) {
	d := graph.NewData(graph.Float32, []int{1, 3, 16, 16})
	for i := range d.F {
		d.F[i] = float32(i%7) * 0.1
	}
	d.F[5] = float32(math.NaN())
	in := filepath.Join(t.TempDir(), "nan.npy")
	if err := writeNpy(in, d); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "run", "../../testdata/onnx/cnn.onnx", "--board", "host", "--input", in)
	if code == 0 {
		t.Skipf("the firmware carried NaN through as the reference does:\n%s", out)
	}
	if want := "input image holds NaN at element 5"; !strings.Contains(errs, want) || strings.Contains(errs, "+Inf") {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
}
