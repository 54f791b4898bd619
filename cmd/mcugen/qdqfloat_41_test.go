package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/needtool"
)

// TestQDQFloatNodesNamed: compiling a QDQ model says which of its nodes
// still compute in float32 (an AveragePool whose output is quantized
// otherwise than its input has no int8 form); a model that folds whole
// gets no such warning.
func TestQDQFloatNodesNamed(t *testing.T) {
	b := onnx.NewBuilder("pool", 14, 3)
	x := b.Input("x", graph.Float32, 1, 2, 4, 4)
	xq := b.Node("QuantizeLinear", []string{x, b.Scalar("x_s", graph.Float32, 0.02), b.Scalar("x_z", graph.Int8, 0)})
	xd := b.Node("DequantizeLinear", []string{xq, "x_s", "x_z"})
	p := b.Node("AveragePool", []string{xd}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2))
	pq := b.Node("QuantizeLinear", []string{p, b.Scalar("p_s", graph.Float32, 0.03), b.Scalar("p_z", graph.Int8, 0)})
	out := b.Node("DequantizeLinear", []string{pq, "p_s", "p_z"})
	b.Output(out, graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "pool.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "o1"))
	if code != 0 || !strings.Contains(errs, "1 node(s) of this QDQ model compute in float32") || !strings.Contains(errs, "(AvgPool2D)") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	// A float Softmax after the model's last DequantizeLinear is its own
	// float tail, not a layer left unfolded: not named.
	tb := onnx.NewBuilder("tail", 14, 3)
	tx := tb.Input("x", graph.Float32, 1, 10)
	tq := tb.Node("QuantizeLinear", []string{tx, tb.Scalar("x_s", graph.Float32, 0.05), tb.Scalar("x_z", graph.Int8, 0)})
	td := tb.Node("DequantizeLinear", []string{tq, "x_s", "x_z"})
	tb.Output(tb.Node("Softmax", []string{td}, onnx.IntAttr("axis", 1)), graph.Float32)
	tail := filepath.Join(dir, "tail.onnx")
	if err := os.WriteFile(tail, tb.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = mcugen(t, "compile", tail, "--board", "mps2-an386", "-o", filepath.Join(dir, "o3"))
	if code != 0 || strings.Contains(errs, "compute in float32") {
		t.Errorf("a float tail: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "compile", "../../testdata/onnx/qdq_conv.onnx", "--board", "mps2-an386", "-o", filepath.Join(dir, "o2"))
	if code != 0 || strings.Contains(errs, "compute in float32") {
		t.Errorf("qdq_conv.onnx: exit %d, stderr %q", code, errs)
	}
	// Its float pool rounds as the firmware's: the reference interpreter
	// summed in float64, and outputs at ties came out one step apart (21
	// of 33 vectors failed).
	needtool.Need(t, "gcc", "gcc")
	code, stdout, errs := mcugen(t, "test", model, "--board", "host", "--random", "40")
	if code != 0 || !strings.Contains(stdout, "43 of 43 vectors passed") {
		t.Errorf("test: exit %d\n%s\n%s", code, stdout, errs)
	}
}
