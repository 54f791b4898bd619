package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// quantize of a model whose node the QDQ writer cannot write named the -o
// file as the one at fault (it was never written); the line now names the
// model and says the -o file is not written, after the report. (A grouped
// ConvTranspose: the writer takes ungrouped ones since session 59.)
func TestQuantizeUnwritableNamesTheModel46(t *testing.T) {
	b := onnx.NewBuilder("ct", 13, 1)
	x := b.Input("x", graph.Float32, 1, 2, 3, 3)
	b.Output(b.Node("ConvTranspose", []string{x, b.Rand("w", 1, 2, 1, 2, 2)}, &onnx.Attribute{Name: "group", Type: onnx.AttrInt, I: 2}), graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "ct.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "q", "ct_int8.onnx")
	code, stdout, stderr := mcugen(t, "quantize", model, "--calib-random", "2", "-o", out)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	want := "mcugen: " + model + `: quant: write QDQ: node "ConvTranspose_1" (ConvTranspose2D): grouped ConvTranspose not supported by the QDQ writer, so -o ` + out + " is not written"
	if code != 1 || !strings.HasPrefix(last, want) || !strings.Contains(stdout, "SQNR") {
		t.Errorf("exit %d, last line %q, want it to start %q (and the report on stdout)", code, last, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want it absent", out, err)
	}
}
