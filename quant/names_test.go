package quant

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// namedCNN is a float ONNX model whose nodes carry the user's names:
// conv1 -> relu1 -> pool1 -> flatten -> dense1 -> relu2 -> dense2 -> softmax.
func namedCNN() *onnx.Model {
	b := onnx.NewBuilder("named", 13, 3)
	name := func(n string) {
		nodes := b.Model().Graph.Nodes
		nodes[len(nodes)-1].Name = n
	}
	x := b.Input("input", graph.Float32, 1, 2, 8, 8)
	v := b.Node("Conv", []string{x, b.Rand("w1", 0.5, 4, 2, 3, 3), b.Rand("b1", 0.1, 4)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
	name("conv1")
	v = b.Node("Relu", []string{v})
	name("relu1")
	v = b.Node("MaxPool", []string{v}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2))
	name("pool1")
	v = b.Node("Flatten", []string{v})
	name("flatten")
	v = b.Node("Gemm", []string{v, b.Rand("w2", 0.3, 12, 64), b.Rand("b2", 0.1, 12)}, onnx.IntAttr("transB", 1))
	name("dense1")
	v = b.Node("Relu", []string{v})
	name("relu2")
	v = b.Node("Gemm", []string{v, b.Rand("w3", 0.3, 5, 12), b.Rand("b3", 0.1, 5)}, onnx.IntAttr("transB", 1))
	name("dense2")
	v = b.Node("Softmax", []string{v})
	name("softmax")
	b.Output(v, graph.Float32)
	return b.Model()
}

// Quantizing a float model whose nodes are named keeps the names (user-journey
// finding: the QDQ model read back had Conv_15, MaxPool_19, Gemm_46, and the
// report listed the convolution under its fused Relu's name, and a Reshape
// row named after the convolution that measured the input's quantization).
// The report names a fused conv+relu by both, the input by its own name, and
// has no row for the int8 relayouts the importer adds (they add no error);
// the QDQ file names each computing node after its float node and the
// QuantizeLinear/DequantizeLinear around it after it too; read back and
// folded, the int8 graph has the user's names.
func TestQuantizeKeepsLayerNames(t *testing.T) {
	g, err := onnx.Import("named", namedCNN(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, rep, err := PTQ(g, RandomCalib(g, 8, 1), Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range rep.Layers {
		rows = append(rows, l.Name+" "+l.Op)
	}
	want := []string{"input Input", "conv1+relu1 Conv2D+Relu", "pool1 MaxPool2D", "dense1+relu2 FullyConnected+Relu", "dense2 FullyConnected", "softmax Softmax"}
	if strings.Join(rows, ", ") != strings.Join(want, ", ") {
		t.Errorf("report rows:\n got %q\nwant %q", rows, want)
	}

	path := filepath.Join(t.TempDir(), "named_q.onnx")
	if err := WriteQDQ(q, path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]string{}
	auto := regexp.MustCompile(`^[A-Za-z]+_[0-9]+$`)
	for _, n := range m.Graph.Nodes {
		if _, dup := ops[n.Name]; dup {
			t.Errorf("QDQ model: two nodes named %q", n.Name)
		}
		ops[n.Name] = n.OpType
		if auto.MatchString(n.Name) {
			t.Errorf("QDQ model: node %q (%s) has a made-up name", n.Name, n.OpType)
		}
	}
	for name, op := range map[string]string{"conv1": "Conv", "conv1/quant": "QuantizeLinear", "pool1": "MaxPool", "dense1": "Gemm",
		"dense2": "Gemm", "softmax": "Softmax", "input/quant": "QuantizeLinear"} {
		if ops[name] != op {
			t.Errorf("QDQ model: node %q is %q, want %s", name, ops[name], op)
		}
	}

	back, err := onnx.Load(path, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ff, err := FoldQDQ(back)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]graph.Op{}
	for _, n := range ff.Nodes {
		got[n.Name] = n.Op
	}
	for name, op := range map[string]graph.Op{"conv1": graph.Conv2D, "pool1": graph.MaxPool2D, "dense1": graph.FullyConnected,
		"dense2": graph.FullyConnected, "softmax": graph.Softmax} {
		if got[name] != op {
			t.Errorf("QDQ model read back: node %q is %q, want %s (nodes %v)", name, got[name], op, got)
		}
	}
}

// WriteQDQ goes through a temporary file renamed over the output: a failed
// write leaves nothing behind (here the rename onto a directory fails), a
// successful one replaces the file whole, and a symbolic link is written
// through to its file.
func TestWriteQDQAtomic(t *testing.T) {
	q := namedInt8(t)
	dir := t.TempDir()
	list := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	blocked := filepath.Join(dir, "out.onnx")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteQDQ(q, blocked); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if names := list(); len(names) != 1 || names[0] != "out.onnx" {
		t.Errorf("a failed write left %v", names)
	}
	if err := WriteQDQ(q, filepath.Join(dir, "missing", "out.onnx")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}

	file := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(file, []byte("old contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.onnx")
	if err := os.Symlink("model.onnx", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteQDQ(q, link); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode changed to %v", st.Mode().Perm())
	}
	if _, err := onnx.Load(file, onnx.Options{}); err != nil {
		t.Errorf("the file written through the link: %v", err)
	}
	if names := list(); strings.Join(names, " ") != "link.onnx model.onnx out.onnx" {
		t.Errorf("files left: %v", names)
	}
}

// A path that is not a regular file (a pipe here; /dev/full or /dev/stdout
// for a user) is written, not replaced by a renamed temporary file: run as
// root, the rename put a regular file in place of /dev/full (review
// finding).
func TestWriteQDQToAPipe(t *testing.T) {
	q := namedInt8(t)
	fifo := filepath.Join(t.TempDir(), "model.onnx")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan int)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- len(b)
	}()
	if err := WriteQDQ(q, fifo); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", st.Mode(), err) // (its reader is left waiting)
	}
	if n := <-got; n == 0 {
		t.Errorf("nothing came through the pipe")
	}
}

// namedInt8 is namedCNN quantized from two random samples.
func namedInt8(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := onnx.Import("named", namedCNN(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := PTQ(g, RandomCalib(g, 2, 1), Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}
