package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// eval -o names each output's file after the output, and TFLite's fused
// names run past the 255 bytes Linux allows a file name (TFLM's seanet
// models: "file name too long", exit 1, and an empty directory left). Two
// RELUs of x (scale 0.5, zero point 0 in and out, so y = max(x, 0)) whose
// 300-byte names differ only in their last byte: two files, each name
// within the cap, and the values.
func TestEvalLongOutputNames(t *testing.T) {
	long := strings.Repeat("model/conv/BiasAdd;", 16)[:299]
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{4}, Scale: []float32{0.5}, ZeroPoint: []int64{0}})
	ya := m.AddTensor(tg.Tensor{Name: long + "a", Type: tg.Int8, Shape: []int32{4}, Scale: []float32{0.5}, ZeroPoint: []int64{0}})
	yb := m.AddTensor(tg.Tensor{Name: long + "b", Type: tg.Int8, Shape: []int32{4}, Scale: []float32{0.5}, ZeroPoint: []int64{0}})
	m.AddOp(tg.OpRelu, nil, []int32{x}, ya)
	m.AddOp(tg.OpRelu, nil, []int32{x}, yb)
	m.Inputs, m.Outputs = []int32{x}, []int32{ya, yb}
	model := writeTFLite(t, m, "relu2")
	in := graph.NewData(graph.Int8, []int{4})
	copy(in.I, []int64{-7, 3, 0, 127})
	xf := tempNpy(t, "x.npy", in)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := mcugen(t, "eval", model, "--input", xf, "-o", out); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 || ents[0].Name() == ents[1].Name() {
		t.Fatalf("files %v, want two", ents)
	}
	for _, e := range ents {
		if len(e.Name()) > maxFileName+len(".npy") {
			t.Errorf("%s: %d bytes, over the cap", e.Name(), len(e.Name()))
		}
		f, err := os.Open(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d, err := npy.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{0, 3, 0, 127}; len(d.I) != 4 || d.I[0] != want[0] || d.I[1] != want[1] || d.I[2] != want[2] || d.I[3] != want[3] {
			t.Errorf("%s: %v, want %v", e.Name(), d.I, want)
		}
	}
	if a, b := fileName(long+"a"), fileName(long+"b"); a == b || !strings.HasPrefix(a, "model_conv_BiasAdd_") {
		t.Errorf("file names %q and %q", a, b)
	}
}

// test --reset starts every vector of a model with state from its initial
// state: the harness calls <prefix>_reset() before each run (and the
// reference starts a new session: pipeline's TestResetStateEachVector
// checks the values). On a model without state it says it changes nothing.
func TestTestResetFlag(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "keep")
	code, stdout, stderr := mcugen(t, "test", "../../testdata/tflite/op_float_var_acc.tflite", "--board", "host", "--random", "3", "--reset", "--keep", keep)
	if code != 0 {
		t.Fatalf("test --reset: exit %d\n%s%s", code, stdout, stderr)
	}
	glue, err := os.ReadFile(filepath.Join(keep, "build", "mcugen_glue.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(glue), "op_float_var_acc_reset();") {
		t.Errorf("the glue does not reset the model:\n%s", glue)
	}
	code, _, stderr = mcugen(t, "test", "../../testdata/tflite/cnn_int8.tflite", "--board", "host", "--random", "1", "--reset")
	if code != 0 || !strings.Contains(stderr, "keeps no state: --reset changes nothing") {
		t.Errorf("a model without state: exit %d, stderr %q", code, stderr)
	}
}

// inspect says when compile would refuse a node its summary lists: an
// int16 LEAKY_RELU (TFLM's seanet models, before mcugen had the form)
// imported and inspected cleanly, and only compile refused it. One whose
// multiplier mcugen's int16 form still refuses stands in for it.
func TestInspectSaysCompileRefuses(t *testing.T) {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int16, Shape: []int32{1, 4}, Scale: []float32{0.01}, ZeroPoint: []int64{0}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int16, Shape: []int32{1, 4}, Scale: []float32{0.01}, ZeroPoint: []int64{0}})
	m.AddOp(tg.OpLeakyRelu, &tg.Options{Type: tg.OptLeakyRelu, Fields: []tg.Field{tg.F32(0, 0.2)}}, []int32{x}, y)
	// (An output scale of 0.01/65536 makes the identity multiplier 2^16,
	// which mcugen's int16 LeakyRelu refuses: shifts past 15 overflow 32 bits.)
	m.Tensors[y].Scale = []float32{0.01 / 65536}
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	model := writeTFLite(t, m, "leaky16")
	code, stdout, stderr := mcugen(t, "inspect", model)
	if code != 0 || !strings.Contains(stdout, "compile  refused for board host:") || !strings.Contains(stdout, "LeakyRelu") {
		t.Errorf("inspect: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = mcugen(t, "inspect", model, "--json")
	if code != 0 || !strings.Contains(stdout, `"lowers": false`) || !strings.Contains(stdout, `"lower_error"`) {
		t.Errorf("inspect --json: exit %d\n%s", code, stdout)
	}
	// A model compile takes says nothing of the kind.
	code, stdout, _ = mcugen(t, "inspect", "../../testdata/tflite/cnn_int8.tflite", "--json")
	if code != 0 || !strings.Contains(stdout, `"lowers": true`) || strings.Contains(stdout, "lower_error") {
		t.Errorf("inspect --json of a supported model: exit %d\n%s", code, stdout)
	}
}
