package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// quantize -o naming the input model is refused before any work, in one
// line naming the file, and the float model is left as it was (user-journey
// finding: it exited 0 and replaced the float model with the QDQ one): the
// same path, another spelling of it, a symbolic link to it, a hard link.
func TestQuantizeRefusesToOverwriteItsInput(t *testing.T) {
	src, err := os.ReadFile("../../testdata/onnx/cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "copy_f32.onnx")
	if err := os.WriteFile(model, src, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.onnx")
	if err := os.Symlink("copy_f32.onnx", link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.onnx")
	if err := os.Link(model, hard); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, out string }{
		{model, model},
		{model, filepath.Join(dir, "sub", "..", ".", "copy_f32.onnx")},
		{model, link},
		{link, model},
		{model, hard},
	} {
		code, out, errs := mcugen(t, "quantize", tc.in, "--calib-random", "2", "-o", tc.out)
		oneErrorLine(t, tc.in+" -o "+tc.out, code, errs, 2, "is an input of this command; writing an ONNX model there would replace it", "-o "+filepath.Dir(tc.out))
		if out != "" {
			t.Errorf("-o %s: printed %q", tc.out, out)
		}
		if b, _ := os.ReadFile(model); !bytes.Equal(b, src) {
			t.Fatalf("-o %s: the input model changed", tc.out)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 3 {
		t.Errorf("files left: %v", es)
	}
	// Another file is written.
	out := filepath.Join(dir, "copy_int8.onnx")
	if code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", out); code != 0 {
		t.Fatalf("-o %s: exit %d: %s", out, code, errs)
	}
}

// quantize keeps a float ONNX model's node names: the report names a conv
// and its fused Relu by both and the input by its own name, with no row for
// a relayout; the QDQ model read back has the user's layer names (user-journey
// finding: Conv_15, MaxPool_19, Gemm_46; "relu1" for the conv; a Reshape row
// named "conv1").
func TestQuantizeKeepsLayerNames(t *testing.T) {
	b := onnx.NewBuilder("named", 13, 3)
	name := func(n string) {
		nodes := b.Model().Graph.Nodes
		nodes[len(nodes)-1].Name = n
	}
	x := b.Input("input", graph.Float32, 1, 1, 8, 8)
	v := b.Node("Conv", []string{x, b.Rand("w1", 0.5, 4, 1, 3, 3), b.Rand("b1", 0.1, 4)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
	name("conv1")
	v = b.Node("Relu", []string{v})
	name("relu1")
	v = b.Node("MaxPool", []string{v}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2))
	name("pool1")
	v = b.Node("Flatten", []string{v})
	name("flatten")
	v = b.Node("Gemm", []string{v, b.Rand("w2", 0.3, 10, 64), b.Rand("b2", 0.1, 10)}, onnx.IntAttr("transB", 1))
	name("dense1")
	b.Output(v, graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "named.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(dir, "named_q.onnx")
	code, out, errs := mcugen(t, "quantize", model, "--calib-random", "4", "-o", q)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []string
	for _, l := range strings.Split(out, "\n")[2:] {
		if f := strings.Fields(l); len(f) == 6 && strings.HasPrefix(f[4], "[") {
			rows = append(rows, f[0]+" "+f[1])
		}
	}
	if want := "input Input, conv1+relu1 Conv2D+Relu, pool1 MaxPool2D, dense1 FullyConnected"; strings.Join(rows, ", ") != want {
		t.Errorf("report rows %q, want %s\n%s", rows, want, out)
	}
	code, out, errs = mcugen(t, "inspect", q, "--ir", "quant")
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errs)
	}
	for _, want := range []string{"= Conv2D(", "# conv1\n", "= MaxPool2D(", "# pool1\n", "= FullyConnected(", "# dense1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the QDQ model read back does not say %q:\n%s", want, out)
		}
	}
}

// A model whose calibration data sits exactly on the int8 grid quantizes
// with no noise at all: the report says "exact" for those rows and for the
// output, not a capped figure that was never measured. The input holds
// k/2 for k = -128..127: min -64 and max 63.5 give scale 0.5 and zero point
// 0 (asymmetric, (max-min)/255), so every value is a grid point, and a max
// pool of grid points is one too.
func TestQuantizeReportsExactLayers(t *testing.T) {
	b := onnx.NewBuilder("grid", 13, 3)
	x := b.Input("input", graph.Float32, 1, 1, 16, 16)
	v := b.Node("MaxPool", []string{x}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2))
	b.Model().Graph.Nodes[0].Name = "pool"
	b.Output(v, graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "grid.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	calib := filepath.Join(dir, "calib")
	if err := os.Mkdir(calib, 0o755); err != nil {
		t.Fatal(err)
	}
	d := graph.NewData(graph.Float32, []int{1, 1, 16, 16})
	for i := range d.F {
		// A fixed shuffle of the grid, so the pool's windows mix signs.
		d.F[i] = float32((i*37)%256-128) / 2
	}
	if err := writeNpy(filepath.Join(calib, "input.npy"), d); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "quantize", model, "--calib", calib, "-o", filepath.Join(dir, "grid_q.onnx"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n")[2:] {
		if f := strings.Fields(l); len(f) == 6 && strings.HasPrefix(f[4], "[") {
			rows[f[0]] = f[2]
		}
	}
	if rows["input"] != "exact" || rows["pool"] != "exact" {
		t.Errorf("rows %v: want input and pool exact\n%s", rows, out)
	}
	// The input's int8 range is the grid's: scale 0.5, zero point 0.
	if !strings.Contains(out, "[-64, 63.5]") {
		t.Errorf("the input's range [-64, 63.5] is not shown:\n%s", out)
	}
	if !strings.Contains(out, "output SQNR exact (median exact)") {
		t.Errorf("the output's SQNR is not reported exact:\n%s", out)
	}
	// A grid that does not fit: the same values plus a quarter are not
	// grid points, and the report gives a measured figure in dB.
	for i := range d.F {
		d.F[i] += 0.25
	}
	if err := writeNpy(filepath.Join(calib, "input.npy"), d); err != nil {
		t.Fatal(err)
	}
	code, out, errs = mcugen(t, "quantize", model, "--calib", calib, "-o", filepath.Join(dir, "grid_q2.onnx"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "exact") || !strings.Contains(out, " dB (median ") {
		t.Errorf("off-grid calibration reported as exact, or without dB:\n%s", out)
	}
}
